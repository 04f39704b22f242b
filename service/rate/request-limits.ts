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
}

/** Generous for people and well-behaved integrations; a scraper or a loop meets them. */
export const DEFAULT_REQUEST_LIMITS: RequestLimits = { ipBurst: 120, ipPerMinute: 600, tokenBurst: 120, tokenPerMinute: 600 };
