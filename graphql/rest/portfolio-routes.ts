/**
 * The tools of those who hold many offers (issue #26), under `/api/bets-usdc/offers`, each needing
 * a token: GET `/portfolio` (service/read/portfolio.ts; any scope), POST `/close-all`
 * (service/writes/bulk-close.ts) and the dead-man switch GET/POST `/dead-man-switch`, POST
 * `/dead-man-switch/heartbeat`, POST `/dead-man-switch/disarm` (service/writes/dead-man-switch.ts;
 * bet:write). Mounted before the read routes, whose `/{address}` would otherwise take these paths.
 * Limits (docs/service-guide.md): the request limits per address and token of every route, bodies
 * of at most 16 KiB, a bulk close of at most MAX_BULK_CLOSE offers with one write each from the
 * caller's write bucket.
 */
import { createRoute, OpenAPIHono, z, type RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError, apiErrorResponse } from "../../service/api-error";
import { requestIdOf } from "../http-observability";
import type { Principal } from "../../service/custody/custody";
import type { Custody } from "../../service/custody/custody";
import { resolveViewer } from "../../service/read/viewer";
import { portfolio, portfolioRange, PortfolioQuery } from "../../service/read/portfolio";
import type { Kysely } from "kysely";
import type { Database } from "../../indexer/store/schema";
import { BulkClose, CloseAllBody } from "../../service/writes/bulk-close";
import { ArmBody, type DeadManSwitches } from "../../service/writes/dead-man-switch";
import type { WriteService } from "../../service/writes/write-service";
import { claimBalance } from "../../service/writes/claim-balance";
import { validationHook } from "./validation-hook";
import { ERRORS, ok } from "./schemas";
import { BulkCloseAnswer, DeadManSwitchAnswer, PortfolioAnswer } from "./portfolio-schemas";
import { callerGate } from "./caller-gate";
import type { ErrorLog } from "../../service/observability/log";

const FALLBACK = "temporarily unavailable; retry with backoff (and the same idempotencyKey)";
const { 400: e400, 401: e401, 409: e409, 413: e413, 429: e429, 503: e503 } = ERRORS;
const route = <R extends RouteConfig>(r: R) => createRoute({ tags: ["offers"], security: [{ bearer: [] }], ...r });
const body = (schema: z.ZodType) => ({ required: true, content: { "application/json": { schema } } });

const portfolioRoute = route({
  method: "get",
  path: "/portfolio",
  operationId: "myPortfolio",
  summary: "The caller's exposure per contract and outcome, and totals (stake at risk, pending payouts, realised P&L)",
  request: { query: PortfolioQuery },
  responses: { 200: ok("the caller's portfolio", PortfolioAnswer), 400: e400, 401: e401, 429: e429, 503: e503 },
});
const closeAllRoute = route({
  method: "post",
  path: "/close-all",
  operationId: "closeAllOffers",
  summary: "Close every open offer of the caller in a scope (contract, event, sport or all): one transaction per offer, each answered",
  request: { body: body(CloseAllBody) },
  responses: { 200: ok("each offer with its signature or its refusal", BulkCloseAnswer), 400: e400, 401: e401, 413: e413, 429: e429, 503: e503 },
});
const switchRoute = (method: "get" | "post", path: string, operationId: string, summary: string, withBody = false) =>
  route({
    method,
    path,
    operationId,
    summary,
    ...(withBody ? { request: { body: body(ArmBody) } } : {}),
    responses: { 200: ok("the switch as stored", DeadManSwitchAnswer), 400: e400, 401: e401, 409: e409, 413: e413, 429: e429, 503: e503 },
  });
const statusRoute = switchRoute(
  "get",
  "/dead-man-switch",
  "deadManSwitch",
  "The caller's dead-man switch: state, deadline, and why and what it closed when it fired",
);
const armRoute = switchRoute("post", "/dead-man-switch", "armDeadManSwitch", "Arm (or re-arm) the dead-man switch with a timeout of 10 to 600 seconds", true);
const heartbeatRoute = switchRoute("post", "/dead-man-switch/heartbeat", "deadManHeartbeat", "Heartbeat: the deadline moves to now + timeout");
const disarmRoute = switchRoute("post", "/dead-man-switch/disarm", "disarmDeadManSwitch", "Disarm the dead-man switch");

export interface PortfolioRouteDeps {
  db: Kysely<Database>;
  custody: Custody | null;
  /** Without it only the portfolio is served (without claims) and the others answer 503. */
  writes: WriteService | null;
  deadMan: DeadManSwitches | null;
  log?: ErrorLog;
}

export function portfolioRoutes(d: PortfolioRouteDeps): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false, defaultHook: validationHook(FALLBACK) });
  let bulkClose: BulkClose | null = null;
  const bulk = () => (bulkClose ??= new BulkClose(d.writes!));
  const fail = (c: Context, e: unknown) => apiErrorResponse(c, e, FALLBACK, d.log);
  const { gate, handle } = callerGate<Principal>(fail);
  const writer = (withBody: boolean) =>
    gate(
      async (c) => {
        if (!d.writes) throw new ApiError(503, "writes are not configured");
        return d.writes.authorize(c.req.header("authorization"));
      },
      { body: withBody },
    );
  const switches = () => {
    if (!d.deadMan) throw new ApiError(503, "the dead-man switch is not configured");
    return d.deadMan;
  };

  app.openapi(portfolioRoute, (async (c: Context) => {
    try {
      const v = await resolveViewer(d.custody, c.req.header("authorization"));
      if (!v) throw new ApiError(401, "GET /portfolio needs a token: Authorization: Bearer <token>");
      const range = portfolioRange(c.req.query());
      const claims = d.writes ? () => claimBalance(d.writes!, v.wallet) : undefined;
      return c.json(await portfolio(d.db, v.wallet, range, claims), 200);
    } catch (e) {
      return fail(c, e);
    }
  }) as never);
  app.openapi(
    { ...closeAllRoute, middleware: [writer(true)] },
    handle(async (c, p) => bulk().closeAll(p, await c.req.json<unknown>(), "request", requestIdOf(c))),
  );
  app.openapi(
    { ...statusRoute, middleware: [writer(false)] },
    handle(async (_c, p) => switches().status(p)),
  );
  app.openapi(
    { ...armRoute, middleware: [writer(true)] },
    handle(async (c, p) => switches().arm(p, await c.req.json<unknown>())),
  );
  app.openapi(
    { ...heartbeatRoute, middleware: [writer(false)] },
    handle(async (_c, p) => switches().heartbeat(p)),
  );
  app.openapi(
    { ...disarmRoute, middleware: [writer(false)] },
    handle(async (_c, p) => switches().disarm(p)),
  );
  return app;
}
