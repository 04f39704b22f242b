/**
 * The bounds of live updates (./live-updates.ts) as numbers, with the per-caller shares that
 * ./live-shares.ts enforces. Apart from the registry so the entry points' settings
 * (stack/config/settings.ts) read the defaults without loading it.
 */
export interface LiveShareLimits {
  /** Subscriptions all anonymous callers of one address group may hold at once. */
  anonymousSubscriptionsPerAddress: number;
  /** Subscriptions all callers of one address group (anonymous and signed in) may hold at once. */
  subscriptionsPerAddress: number;
  /** Subscriptions one token may hold at once, from any address. */
  subscriptionsPerToken: number;
  /** Subscriptions all anonymous callers together may hold: the rest of maxPerProcess stays for signed-in ones. */
  anonymousSubscriptionsPerProcess: number;
  /** WebSocket connections one address group may hold open, anonymous or not (refused 429 at the upgrade). */
  connectionsPerAddress: number;
  /** Anonymous WebSocket connections one address group may hold open. */
  anonymousConnectionsPerAddress: number;
  /** WebSocket connections one token may hold open. */
  connectionsPerToken: number;
  /** What a refused caller is told to wait (s): a share frees only when the caller lets one go. */
  shareRetryAfterSeconds: number;
}

/**
 * A browser tab follows a handful of offers; a signed-in integration a few hundred. 50 anonymous
 * subscriptions per address leave room for a household or an office behind one address, and 50
 * attacking addresses then hold 2,500 of the 10,000 a process serves.
 */
export const LIVE_SHARES: LiveShareLimits = {
  anonymousSubscriptionsPerAddress: 50,
  subscriptionsPerAddress: 500,
  subscriptionsPerToken: 200,
  anonymousSubscriptionsPerProcess: 8_000,
  connectionsPerAddress: 64,
  anonymousConnectionsPerAddress: 16,
  connectionsPerToken: 16,
  shareRetryAfterSeconds: 5,
};

/** The process's bounds; the per-caller shares are live-shares.ts's (LIVE_SHARES), overridable here too. */
export interface LiveLimits extends LiveShareLimits {
  /** Subscriptions one connection may hold at once (a WebSocket; an SSE request holds one). */
  maxPerConnection: number;
  /** Subscriptions this process serves at once, all connections together. */
  maxPerProcess: number;
  /** Values one subscription keeps (undelivered, then delivered ones for a resume) before the oldest are dropped. */
  queueLimit: number;
  /** How long a subscription whose client went away is kept, fed, for a resume (ms). */
  resumeWindowMs: number;
  /** Subscriptions kept for a resume at once, all callers together (the oldest goes first). */
  maxDetachedPerProcess: number;
  /** How often the tokens of signed-in subscriptions are checked again (ms). */
  authRecheckMs: number;
}

export const LIVE_LIMITS: LiveLimits = {
  maxPerConnection: 25,
  maxPerProcess: 10_000,
  queueLimit: 64,
  resumeWindowMs: 60_000,
  maxDetachedPerProcess: 2_000,
  authRecheckMs: 5_000,
  ...LIVE_SHARES,
};
