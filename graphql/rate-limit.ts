/**
 * The HTTP side of the request limits (service/rate/request-limiter.ts): every request takes one
 * from its client address's bucket, and one from its bearer token's bucket when it carries an
 * Authorization header (keyed by a hash of the header: the token itself is never stored, and an
 * invalid token is limited like a valid one). Refused: 429 `{error}` with `Retry-After`. Probes
 * and scrapes (/healthz, /readyz, /metrics) are not limited.
 */
import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { RequestLimiter } from "../service/rate/request-limiter";
import { errorJson } from "../service/api-error";

const UNLIMITED = new Set(["/healthz", "/readyz", "/metrics"]);

export interface RateLimitOptions {
  /** Take the client address from the first `X-Forwarded-For` entry (only behind a proxy that sets it). */
  trustProxy?: boolean;
}

function clientAddress(c: Context, o: RateLimitOptions): string {
  if (o.trustProxy) {
    const fwd = c.req.header("x-forwarded-for")?.split(",")[0]?.trim();
    if (fwd) return fwd;
  }
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    // Not served by @hono/node-server (app.request in-process): one shared bucket.
    return "unknown";
  }
}

/** The token bucket's key: a hash of the Authorization header, never the token. */
export function tokenBucketKey(authorization: string): string {
  return createHash("sha256").update(authorization).digest("hex").slice(0, 32);
}

export function rateLimit(limiter: RequestLimiter, o: RateLimitOptions = {}): MiddlewareHandler {
  return async (c, next) => {
    if (UNLIMITED.has(c.req.path)) return next();
    const refuse = (what: string, seconds: number) =>
      errorJson(c, 429, `too many requests from this ${what}; retry in ${seconds} s`, { "retry-after": String(seconds) });
    const ipWait = await limiter.ip(clientAddress(c, o));
    if (ipWait > 0) return refuse("address", ipWait);
    const auth = c.req.header("authorization");
    if (auth) {
      const tokenWait = await limiter.token(tokenBucketKey(auth));
      if (tokenWait > 0) return refuse("token", tokenWait);
    }
    return next();
  };
}
