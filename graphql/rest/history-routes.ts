/**
 * GET /contracts/{contractAddress}/history (relative to /api/bets-usdc/offers): a contract's price
 * history for one taker side, per interval (service/read/history.ts holds the logic).
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { apiErrorResponse } from "../../service/api-error";
import { ContractAddressPath } from "../../service/read/book-params";
import { contractHistory } from "../../service/read/history";
import { HistoryQuery, historyParams } from "../../service/read/history-params";
import { jsonOnce } from "./read-routes";
import { ERRORS, Odds, ok } from "./schemas";
import { validationHook } from "./validation-hook";
import type { RequestReads } from "../read-admission";
import type { ErrorLog } from "../../service/observability/log";

const READ_FALLBACK = "temporarily unavailable; retry with backoff";

const micros = () =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/)
    .meta({ description: "amount in micro-units, a decimal string" });

export const HistoryPoint = z
  .object({
    start: z.string().meta({ format: "date-time" }),
    end: z.string().meta({ format: "date-time", description: "exclusive" }),
    volumeMicros: micros().meta({ description: "sum of the takers' stakes matched in the interval" }),
    fillCount: z.number().int(),
    volumeWeightedOdds: Odds.nullable().meta({ description: "(Σ take + Σ creator matched) : Σ take over the interval's fills; null without fills" }),
    lastOdds: Odds.nullable().meta({ description: "taker odds of the interval's last fill; null without fills" }),
    bestOdds: Odds.nullable().meta({ description: "best taker odds of the book in the interval's last second; null when nothing could be taken" }),
  })
  .meta({ id: "HistoryPoint" });

export const ContractHistory = z
  .object({
    contract: z.string(),
    side: z.enum(["sideA", "sideB"]).meta({ description: "the outcome the takers backed" }),
    interval: z.enum(["1m", "5m", "1h", "1d"]),
    intervalSeconds: z.number().int(),
    points: z.array(HistoryPoint).meta({ description: "oldest first, every interval of the window present" }),
  })
  .meta({ id: "ContractHistory" });

const historyRoute = createRoute({
  tags: ["offers"],
  method: "get",
  path: "/contracts/{contractAddress}/history",
  operationId: "contractHistory",
  summary: "A contract's price history for one taker side: matched volume, volume-weighted, last and best taker odds per interval",
  security: [{}],
  request: { params: ContractAddressPath, query: HistoryQuery },
  responses: { 200: ok("the history", ContractHistory), 400: ERRORS[400], 404: ERRORS[404], 429: ERRORS[429], 503: ERRORS[503] },
});

export function historyRoutes(reads: RequestReads, opts: { log?: ErrorLog } = {}): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false, defaultHook: validationHook(READ_FALLBACK) });
  const json = jsonOnce(new WeakMap());
  app.openapi(historyRoute, (async (c: Context) => {
    try {
      const p = historyParams(c.req.param("contractAddress") ?? "", {
        side: c.req.query("side"),
        interval: c.req.query("interval"),
        points: c.req.query("points"),
      });
      return json(c, await contractHistory(reads(c), p.contract, p.side, p.interval, p.points));
    } catch (e) {
      return apiErrorResponse(c, e, READ_FALLBACK, opts.log);
    }
  }) as never);
  return app;
}
