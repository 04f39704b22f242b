/**
 * The HTTP side of observability on the hono app:
 * - request id: an incoming `X-Request-Id` (up to 255 of [A-Za-z0-9_=-], hono's requestId rule)
 *   or a new UUID, echoed in the response's `X-Request-Id`; handlers read it (`requestIdOf`) and
 *   pass it to what logs on the request's behalf (errors, the write service's transactions),
 *   rather than an AsyncLocalStorage scope, whose promise hooks cost every promise of the process
 *   (docs/service-guide.md, "Request ids");
 * - access log: one pino line per request (requestId, method, route pattern, path, status,
 *   durationMs); probes and scrapes (/healthz, /readyz, /metrics) log at debug;
 * - request metrics (http_requests_total, http_request_duration_seconds: service/observability/metrics.ts),
 *   labelled by route pattern, never the raw URL;
 * - `GET /metrics` (Prometheus text exposition) and `GET /readyz`.
 */
import { RETRY_AFTER_SECONDS } from "../service/api-error";
import { randomUUID } from "node:crypto";
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import { routePath } from "hono/route";
import type { Observability } from "../service/observability/observability";

declare module "hono" {
  interface ContextVariableMap {
    /** The request's id (observeRequests). */
    requestId: string;
  }
}

const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

/** Seconds a client or balancer should wait before asking again after a 503 (one value for the whole API). */
export { RETRY_AFTER_SECONDS };

/** The id of the request `c` serves (none outside the app's middleware, e.g. a route tested alone). */
export const requestIdOf = (c: Context): string | undefined => c.get("requestId");

/** An incoming request id is kept when it is at most this long and made of [A-Za-z0-9_=-] (hono's requestId rule). */
const REQUEST_ID = /^[\w\-=]{1,255}$/;

/**
 * Request id, access log and request metrics on every route registered after this call: one
 * layer, one clock reading for the log line and the duration histogram.
 */
export function observeRequests(app: Hono, obs: Observability): void {
  app.use(async (c, next) => {
    // Served by node:http, the request's headers as node parsed them and the socket's response.
    const node = c.env as HttpBindings | undefined;
    const incoming = node?.incoming ? node.incoming.headers["x-request-id"] : c.req.header("x-request-id");
    const id = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    c.set("requestId", id);
    // On node:http the header goes on the socket's response, which node merges into whatever the
    // handler answers: hono's c.header would turn every answer's headers into a fetch Headers
    // object, which node-server then reads back entry by entry. Elsewhere (app.request in tests),
    // on the answer itself.
    if (node?.outgoing) node.outgoing.setHeader("X-Request-Id", id);
    const start = performance.now();
    await next();
    if (!node?.outgoing) {
      try {
        c.res.headers.set("X-Request-Id", id);
      } catch {
        c.header("X-Request-Id", id); // immutable headers (a fetched response)
      }
    }
    const ms = performance.now() - start;
    const status = c.res.status;
    const route = routePath(c);
    obs.metrics.httpRequest(c.req.method, route, status, ms / 1000);
    const level = QUIET.has(c.req.path) ? "debug" : status >= 500 ? "warn" : "info";
    if (!obs.log.isLevelEnabled(level)) return;
    const line = { requestId: id, method: c.req.method, route, path: c.req.path, status, durationMs: Math.round(ms * 10) / 10 };
    obs.log[level](line, "request");
  });
}

/** `/metrics` and `/readyz`; `store` reads the indexed slot (the store check). */
export function observabilityRoutes(app: Hono, obs: Observability, store: () => Promise<number>): void {
  app.get("/metrics", async (c) => {
    const { body, contentType } = await obs.metrics.expose();
    return c.body(body, 200, { "content-type": contentType });
  });
  app.get("/readyz", async (c) => {
    const r = await obs.readiness(store);
    if (r.ready) return c.json(r, 200);
    return c.json(r, 503, { "retry-after": String(RETRY_AFTER_SECONDS) });
  });
}
