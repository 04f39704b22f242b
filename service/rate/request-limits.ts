/**
 * The request limits per client address and per bearer token (./request-limiter.ts) as numbers:
 * what each is and its default. Apart from the limiter so the entry points' settings
 * (stack/config/settings.ts) read the defaults without loading it.
 */
export interface RequestLimits {
  /** Requests one client address may make at once (0: no per-address limit). */
  ipBurst: number;
  /** Requests per minute per address after the burst (0: no per-address limit). */
  ipPerMinute: number;
  /** Requests one bearer token may make at once (0: no per-token limit). */
  tokenBurst: number;
  /** Requests per minute per token after the burst (0: no per-token limit). */
  tokenPerMinute: number;
  /** Solana Actions (/api/actions/..., GET and POST): requests one address may make at once, and per minute after (0: none). */
  actionIpBurst?: number;
  actionIpPerMinute?: number;
  /** Solana Actions POSTs (a transaction built, a signature read) naming one wallet `account`: at once, and per minute after (0: none). */
  actionAccountBurst?: number;
  actionAccountPerMinute?: number;
}

/** Generous for people and well-behaved integrations; a scraper or a loop meets them. */
export const DEFAULT_REQUEST_LIMITS: RequestLimits = { ipBurst: 120, ipPerMinute: 600, tokenBurst: 120, tokenPerMinute: 600 };

/**
 * The action routes are public and a POST builds a transaction (chain reads and a blockhash), so
 * they have buckets of their own, tighter than the general ones and taken in addition to them: a
 * client rendering blinks asks a few GETs per link, and a person signs a few takes a minute.
 * Per account too, so many addresses cannot have transactions built for one wallet in a loop.
 */
export const DEFAULT_ACTION_LIMITS = { actionIpBurst: 30, actionIpPerMinute: 120, actionAccountBurst: 10, actionAccountPerMinute: 30 } as const;
