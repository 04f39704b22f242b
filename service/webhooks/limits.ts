/**
 * Every number of the webhooks (docs/service-guide.md, "Webhooks"): the per-user bounds of the
 * API, and the delivery's timeout, concurrency, retry schedule and finality. The entry points
 * read them (stack/config/settings.ts) without loading the service.
 */
export interface WebhookLimits {
  /** Endpoints one user may hold (disabled ones count). */
  maxEndpointsPerUser: number;
  /** Characters of an endpoint's URL. */
  maxUrlLength: number;
  /** Bytes of one delivery's body: an event larger than this is recorded failed, never sent. */
  maxBodyBytes: number;
  /** One attempt's time for the receiver to answer (ms). */
  timeoutMs: number;
  /** Attempts in flight at once per endpoint. */
  concurrencyPerEndpoint: number;
  /** Attempts in flight at once in the acting worker. */
  concurrencyTotal: number;
  /** Replays one user may ask at once, then per minute. */
  replayBurst: number;
  replaysPerMinute: number;
  /** Delay before the first retry (ms); doubles per attempt, with jitter, up to `maxRetryDelayMs`. */
  firstRetryMs: number;
  maxRetryDelayMs: number;
  /** How long a delivery is retried after it was enqueued (or replayed) before it is recorded failed (ms). */
  retryForMs: number;
  /** How often the acting worker derives new events and sends what is due (ms). */
  pollMs: number;
  /** Slots an event's transaction must be behind the indexed head before it is sent (see ./dispatcher.ts). */
  finalitySlots: number;
  /**
   * Allow http:// and loopback, private and link-local targets (tests, the local stack); off, an
   * endpoint must be https:// to a public address, checked at registration and at every send.
   */
  allowLocalTargets: boolean;
  /** Deliveries one list answers at most. */
  maxListed: number;
}

export const WEBHOOK_LIMITS: WebhookLimits = {
  maxEndpointsPerUser: 10,
  maxUrlLength: 2_048,
  maxBodyBytes: 64 * 1024,
  timeoutMs: 5_000,
  concurrencyPerEndpoint: 4,
  concurrencyTotal: 32,
  replayBurst: 10,
  replaysPerMinute: 30,
  firstRetryMs: 5_000,
  maxRetryDelayMs: 3_600_000,
  retryForMs: 24 * 3_600_000,
  pollMs: 500,
  finalitySlots: 0,
  allowLocalTargets: false,
  maxListed: 100,
};

/**
 * The finality margin against an RPC node at "confirmed": a fork is found once its slot is the
 * RPC source's `orphanSlots` (160) behind the node, and its retraction rewinds FORK_MARGIN_SLOTS
 * (64) before it (indexer/sources/rpc/delivery-ledger.ts), so an event 224 slots (about 90 s)
 * behind the indexed head can no longer be retracted. The in-process chain has no forks (0).
 */
export const RPC_FINALITY_SLOTS = 160 + 64;
