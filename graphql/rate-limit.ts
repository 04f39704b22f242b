/**
 * The HTTP side of the request limits (service/rate/request-limiter.ts): every request takes one
 * from its client address's bucket, and one from its bearer token's bucket when it carries an
 * Authorization header (keyed by a hash of the token as authentication parses it, whatever the
 * scheme's case or spacing: service/rate/caller-key.ts; the token itself is never stored, and an
 * invalid token is limited like a valid one). Refused: 429 `{error}` with `Retry-After`. Probes
 * and scrapes (/healthz, /readyz, /metrics) are not limited.
 */
import type { Context, MiddlewareHandler } from "hono";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { RequestLimiter } from "../service/rate/request-limiter";
import { errorJson } from "../service/api-error";
import { addressGroup, tokenBucketKey } from "../service/rate/caller-key";

export { tokenBucketKey };

const UNLIMITED = new Set(["/healthz", "/readyz", "/metrics"]);

export interface RateLimitOptions {
  /** Take the client address from the first `X-Forwarded-For` entry (only behind a proxy that sets it). */
  trustProxy?: boolean;
}

/**
 * The address group a request counts in (service/rate/caller-key.ts: IPv6 by /64): the first
 * `X-Forwarded-For` entry behind a trusted proxy, else the peer's address. One rule for HTTP and
 * WebSocket.
 */
export function clientAddressOf(forwardedFor: string | null | undefined, remote: string | null | undefined, o: RateLimitOptions = {}): string {
  const fwd = o.trustProxy ? forwardedFor?.split(",")[0]?.trim() : "";
  return addressGroup(fwd || remote || "unknown");
}

/** The address group of a request served by hono. */
export function clientAddress(c: Context, o: RateLimitOptions = {}): string {
  let remote: string | undefined;
  try {
    remote = getConnInfo(c).remote.address;
  } catch {
    // Not served by @hono/node-server (app.request in-process): one shared bucket.
  }
  return clientAddressOf(c.req.header("x-forwarded-for"), remote, o);
}

export function rateLimit(limiter: RequestLimiter, o: RateLimitOptions = {}): MiddlewareHandler {
  return async (c, next) => {
    if (UNLIMITED.has(c.req.path)) return next();
    // A refused request's body is never read: with one pending, the connection closes after the
    // answer (as for 413), or node would read the whole body (1 GB streamed) to keep it alive.
    const pendingBody = c.req.header("transfer-encoding") !== undefined || Number(c.req.header("content-length") ?? 0) > 0;
    const refuse = (what: string, seconds: number) =>
      errorJson(c, 429, `too many requests from this ${what}; retry in ${seconds} s`, {
        "retry-after": String(seconds),
        ...(pendingBody ? { connection: "close" } : {}),
      });
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
