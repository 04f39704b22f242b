/**
 * The CORS allow-list of the offers API and /graphql (off unless configured: `CORS_ORIGINS`).
 * The embed endpoint never gets it: the spec keeps it for servers.
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";

/**
 * What a browser frontend on another origin sends: a token for signed-in reads and writes, JSON
 * bodies, an idempotency key header, a request id to correlate with the logs.
 */
export const CORS_ALLOW_HEADERS = ["Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id"];
/** What such a frontend may read from an answer: when to retry (429, 503) and the request id. */
export const CORS_EXPOSE_HEADERS = ["Retry-After", "X-Request-Id"];

/**
 * hono's cors for the listed origins only. Another origin gets no Access-Control-* header at all
 * (hono's own middleware would still send the allowed methods and exposed headers), and every
 * answer varies by Origin so a shared cache never hands one origin's answer to another.
 */
export function corsAllowList(origins: readonly string[]): MiddlewareHandler {
  const allowed = new Set(origins);
  const allow = cors({
    origin: [...allowed],
    allowMethods: ["GET", "POST", "OPTIONS"],
    allowHeaders: CORS_ALLOW_HEADERS,
    exposeHeaders: CORS_EXPOSE_HEADERS,
    maxAge: 600,
  });
  return async (c, next) => {
    if (allowed.has(c.req.header("origin") ?? "")) return allow(c, next);
    await next();
    c.header("Vary", "Origin", { append: true });
  };
}

/** `CORS_ORIGINS`: comma-separated origins (`https://app.example,http://localhost:5173`); each must be a bare origin. */
export function parseCorsOrigins(v: string | undefined): string[] {
  const list = (v ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
  for (const o of list) {
    let u: URL | null = null;
    try {
      u = new URL(o);
    } catch {
      /* reported below */
    }
    if (!u || !/^https?:$/.test(u.protocol) || u.origin !== o)
      throw new Error(`CORS_ORIGINS: ${JSON.stringify(o)} is not an origin (scheme://host[:port], no path or trailing slash)`);
  }
  return list;
}
