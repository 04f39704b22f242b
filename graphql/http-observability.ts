/**
 * The HTTP side of observability on the hono app:
 * - request id: hono's requestId middleware takes an incoming `X-Request-Id` (up to 255 of
 *   [A-Za-z0-9_=-]) or makes a UUID, and echoes it in the response's `X-Request-Id`; handlers
 *   read it (`requestIdOf`) and pass it to what logs on the request's behalf (errors, the write
 *   service's transactions), rather than an AsyncLocalStorage scope, whose promise hooks cost
 *   every promise of the process (docs/service-guide.md, "Request ids");
 * - access log: one pino line per request (requestId, method, route pattern, path, status,
 *   durationMs); probes and scrapes (/healthz, /readyz, /metrics) log at debug;
 * - request metrics (@hono/prometheus, labelled by route pattern, never the raw URL);
 * - `GET /metrics` (Prometheus text exposition) and `GET /readyz`.
 */
import { RETRY_AFTER_SECONDS } from "../service/api-error";
import type { Context, Hono } from "hono";
import { requestId } from "hono/request-id";
import { routePath } from "hono/route";
import type { Observability } from "../service/observability/observability";

const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

/** Seconds a client or balancer should wait before asking again after a 503 (one value for the whole API). */
export { RETRY_AFTER_SECONDS };

/** The id of the request `c` serves (none outside the app's middleware, e.g. a route tested alone). */
export const requestIdOf = (c: Context): string | undefined => c.get("requestId");

/** Request id, access log and request metrics on every route registered after this call. */
export function observeRequests(app: Hono, obs: Observability): void {
  app.use(requestId());
  app.use(async (c, next) => {
    const id = c.get("requestId");
    const start = performance.now();
    await next();
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
    const line = {
      requestId: id,
      method: c.req.method,
      route: routePath(c),
      path: c.req.path,
      status,
      durationMs: Math.round((performance.now() - start) * 10) / 10,
    };
    obs.log[level](line, "request");
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
