/**
 * GET /contracts/{contractAddress}/book (relative to /api/bets-usdc/offers): a contract's book,
 * levels of equal taker odds per outcome, best first (service/read/book.ts holds the logic).
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Custody } from "../../service/custody/custody";
import { apiErrorResponse } from "../../service/api-error";
import { contractBook } from "../../service/read/book";
import { BookQuery, ContractAddressPath, bookParams } from "../../service/read/book-params";
import { jsonOnce, viewerGate } from "./read-routes";
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
const side = () => z.enum(["sideA", "sideB"]);

export const BookLevel = z
  .object({
    odds: Odds,
    availableMicros: micros().meta({ description: "sum of the level's remainingTakerMicros" }),
    offerCount: z.number().int(),
    offers: z.array(z.string()).meta({ description: "the level's offer addresses, oldest first" }),
  })
  .meta({ id: "BookLevel", description: "offers with exactly the same taker odds" });

export const Book = z
  .object({
    contract: z.string(),
    revision: z.string().meta({ description: "changes whenever the book changes (a digest of the offers in it and the matched volume)" }),
    updatedAt: z.string().nullable().meta({ format: "date-time", description: "the latest offer created or closed, fill, or the cutoff once passed" }),
    sides: z.array(
      z
        .object({
          side: side().meta({ description: "the outcome a taker on this side backs" }),
          label: z.string(),
          best: Odds.nullable(),
          availableMicros: micros().meta({ description: "across every level, not only the depth shown" }),
          offerCount: z.number().int(),
          levels: z.array(BookLevel).meta({ description: "best (highest taker odds) first, at most `depth`" }),
        })
        .meta({ id: "BookSide" }),
    ),
    lastMatch: z
      .object({
        side: side().meta({ description: "the side the taker backed" }),
        odds: Odds,
        amountMicros: micros(),
        at: z.string().meta({ format: "date-time" }),
      })
      .nullable(),
    matchedVolumeMicros: micros().meta({ description: "sum of every take on the contract's offers" }),
  })
  .meta({ id: "Book" });

const bookRoute = createRoute({
  tags: ["offers"],
  method: "get",
  path: "/contracts/{contractAddress}/book",
  operationId: "contractBook",
  summary: "A contract's book: per outcome, the offers a taker can take grouped by equal odds, best first",
  security: [{}, { bearer: [] }],
  request: { params: ContractAddressPath, query: BookQuery },
  responses: { 200: ok("the book", Book), 400: ERRORS[400], 401: ERRORS[401], 404: ERRORS[404], 429: ERRORS[429], 503: ERRORS[503] },
});

export function bookRoutes(reads: RequestReads, custody: Custody | null, opts: { log?: ErrorLog } = {}): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false, defaultHook: validationHook(READ_FALLBACK) });
  const json = jsonOnce(new WeakMap());
  const { signedIn, viewer: viewerOf } = viewerGate(custody, opts.log);
  app.openapi({ ...bookRoute, middleware: [signedIn] }, (async (c: Context) => {
    try {
      const viewer = viewerOf(c);
      const { contract, depth } = bookParams(c.req.param("contractAddress") ?? "", { depth: c.req.query("depth") });
      return json(c, await contractBook(reads(c), contract, depth, viewer?.wallet ?? null));
    } catch (e) {
      return apiErrorResponse(c, e, READ_FALLBACK, opts.log);
    }
  }) as never);
  return app;
}
