/**
 * GET /contracts/{contractAddress}/quote (relative to /api/bets-usdc/offers): what a take-best of
 * an amount at no worse than given odds would take from the book now (service/read/quote.ts).
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Custody } from "../../service/custody/custody";
import { apiErrorResponse } from "../../service/api-error";
import { ContractAddressPath } from "../../service/read/book-params";
import { contractQuote } from "../../service/read/quote";
import { QuoteQuery, quoteParams } from "../../service/read/quote-params";
import { jsonOnce, viewerGate } from "./read-routes";
import { ERRORS, Odds, ok } from "./schemas";
import { validationHook } from "./validation-hook";
import type { RequestReads } from "../read-admission";
import type { ErrorLog } from "../../service/observability/log";

const READ_FALLBACK = "temporarily unavailable; retry with backoff";

const micros = (description: string) =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/)
    .meta({ description: `${description}, micro-units as a decimal string` });

export const QuoteFill = z
  .object({
    offer: z.string().meta({ description: "the offer's address" }),
    odds: Odds,
    amountMicros: micros("the taker's stake on this offer"),
    creatorMatchedMicros: micros("creator stake matched by it"),
    feeBps: z.number().int().meta({ description: "the offer's fee on the matched stake, fixed when it was created" }),
  })
  .meta({ id: "QuoteFill" });

export const Quote = z
  .object({
    contract: z.string(),
    side: z.enum(["sideA", "sideB"]).meta({ description: "the outcome the taker backs" }),
    amountMicros: micros("the amount asked"),
    worstOdds: Odds.nullable().meta({ description: "the limit asked (taker odds), null for any" }),
    fills: z.array(QuoteFill).meta({ description: "the offers a take-best would use now, in the order taken" }),
    filledMicros: micros("the sum of the fills' amounts"),
    creatorMatchedMicros: micros("the sum of the creator stake matched"),
    unfilledMicros: micros("what the book cannot fill within the limit"),
    averageOdds: Odds.nullable().meta({ description: "(filled + matched) : filled, exact; null when nothing is taken" }),
    feeIfWinMicros: micros("the fee on the matched stake if the taker wins"),
    returnIfWinMicros: micros("what the taker receives if the taker wins: stake + matched - fee"),
  })
  .meta({ id: "Quote" });

const quoteRoute = createRoute({
  tags: ["offers"],
  method: "get",
  path: "/contracts/{contractAddress}/quote",
  operationId: "contractQuote",
  summary: "What a take-best of an amount at no worse than given odds would take from the contract's book now",
  security: [{}, { bearer: [] }],
  request: { params: ContractAddressPath, query: QuoteQuery },
  responses: { 200: ok("the quote", Quote), 400: ERRORS[400], 401: ERRORS[401], 404: ERRORS[404], 429: ERRORS[429], 503: ERRORS[503] },
});

export function quoteRoutes(reads: RequestReads, custody: Custody | null, opts: { log?: ErrorLog } = {}): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false, defaultHook: validationHook(READ_FALLBACK) });
  const json = jsonOnce(new WeakMap());
  const { signedIn, viewer: viewerOf } = viewerGate(custody, opts.log);
  app.openapi({ ...quoteRoute, middleware: [signedIn] }, (async (c: Context) => {
    try {
      const viewer = viewerOf(c);
      const q = quoteParams(c.req.param("contractAddress") ?? "", {
        side: c.req.query("side"),
        amountMicros: c.req.query("amountMicros"),
        worstOdds: c.req.query("worstOdds"),
      });
      return json(c, await contractQuote(reads(c), q, viewer?.wallet ?? null));
    } catch (e) {
      return apiErrorResponse(c, e, READ_FALLBACK, opts.log);
    }
  }) as never);
  return app;
}
