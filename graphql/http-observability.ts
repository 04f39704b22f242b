/**
 * The HTTP side of observability on the hono app:
 * - request id: hono's requestId middleware takes an incoming `X-Request-Id` (up to 255 of
 *   [A-Za-z0-9_=-]) or makes a UUID, and echoes it in the response's `X-Request-Id`;
 * - access log: one pino line per request (requestId, method, route pattern, path, status,
 *   durationMs); probes and scrapes (/healthz, /readyz, /metrics) log at debug;
 * - request metrics (@hono/prometheus, labelled by route pattern, never the raw URL);
 * - `GET /metrics` (Prometheus text exposition) and `GET /readyz`.
 */
import { RETRY_AFTER_SECONDS } from "../service/api-error";
import type { Hono } from "hono";
import { requestId } from "hono/request-id";
import { routePath } from "hono/route";
import { inRequest, type Logger } from "../service/observability/log";
import type { Observability } from "../service/observability/observability";

const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

/** Seconds a client or balancer should wait before asking again after a 503 (one value for the whole API). */
export { RETRY_AFTER_SECONDS };

/** Request id, access log and request metrics on every route registered after this call. */
export function observeRequests(app: Hono, obs: Observability): void {
  app.use(requestId());
  app.use(async (c, next) => {
    const id = c.get("requestId" as never) as string;
    // The request's child logger is made when something logs through it, not for every request:
    // making one per request was a measurable part of a small read's cost (BENCHMARKS.md, issue 21).
    let child: Logger | undefined;
    const scope = {
      requestId: id,
      get log() {
        return (child ??= obs.log.child({ requestId: id }));
      },
    };
    const start = performance.now();
    await inRequest(scope, next);
    // Handlers that build their own Response (GraphQL) drop headers set before them. Set it on
    // that response's headers: c.header would rebuild the response around its body as a stream.
    if (c.res.headers.get("x-request-id") !== id) {
      try {
        c.res.headers.set("X-Request-Id", id);
      } catch {
        c.header("X-Request-Id", id); // immutable headers (a fetched response)
      }
    }
    const status = c.res.status;
    const level = QUIET.has(c.req.path) ? "debug" : status >= 500 ? "warn" : "info";
    if (!obs.log.isLevelEnabled(level)) return;
    const line = { method: c.req.method, route: routePath(c), path: c.req.path, status, durationMs: Math.round((performance.now() - start) * 10) / 10 };
    scope.log[level](line, "request");
  });
  app.use(obs.metrics.httpMiddleware);
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
