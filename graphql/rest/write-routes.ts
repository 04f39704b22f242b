/**
 * The spec's write routes on hono, mounted under `/api/bets-usdc/offers`:
 * POST `/`, POST `/:address/take`, POST `/:address/close`, POST `/contracts/:contractAddress/take-best`. Each is a createRoute whose body and
 * path schemas (service/writes/validate.ts) validate the request and are published in
 * docs/openapi.json. Order of checks: token (401), then Content-Type, size and JSON (400), then the
 * fields (400), then the rules in WriteService. Errors are `{error: message}` with the spec's
 * statuses; anything unexpected is logged and answered 503 without detail (no stack, no SQL, no
 * key material).
 */
import { createRoute, OpenAPIHono, z, type RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError, apiErrorResponse } from "../../service/api-error";
import type { ErrorLog } from "../../service/observability/log";
import { requestIdOf } from "../http-observability";
import type { Principal } from "../../service/custody/custody";
import { CloseBody, CreateBody, OfferPath, TakeBestBody, TakeBody } from "../../service/writes/validate";
import { ContractAddressPath } from "../../service/read/book-params";
import { Quote } from "./quote-routes";
import type { WriteService } from "../../service/writes/write-service";
import { validationHook } from "./validation-hook";
import { callerGate } from "./caller-gate";
import { CONTENT_TYPE } from "./json-body";
import { CloseReceipt, CreateReceipt, ERRORS, TakeReceipt, ok } from "./schemas";

const WRITE_FALLBACK = "temporarily unavailable; retry with the same idempotencyKey";

const writeErrorResponse = (c: Context, e: unknown, log?: ErrorLog) => apiErrorResponse(c, e, WRITE_FALLBACK, log);

const body = (schema: typeof CreateBody | typeof TakeBody | typeof CloseBody | typeof TakeBestBody) => ({
  required: true,
  content: { "application/json": { schema } },
});
const { 400: e400, 401: e401, 403: e403, 404: e404, 409: e409, 413: e413, 429: e429, 503: e503 } = ERRORS;
const errors = { 400: e400, 401: e401, 403: e403, 404: e404, 409: e409, 413: e413, 429: e429, 503: e503 };
const route = <R extends RouteConfig>(r: R) => createRoute({ tags: ["offers"], security: [{ bearer: [] }], ...r });

const createOffer = route({
  method: "post",
  path: "/",
  operationId: "createOffer",
  summary: "Create an offer (asynchronous: poll GET /{offerAddress} until viewer.role is creator)",
  request: { body: body(CreateBody) },
  responses: {
    200: {
      ...ok("submitted; a replay with the same idempotencyKey and body returns the original result", CreateReceipt),
      links: {
        GetCreated: { operationId: "getOffer", parameters: { address: "$response.body#/offerAddress" } },
        CloseCreated: { operationId: "closeOffer", parameters: { address: "$response.body#/offerAddress" }, requestBody: { expectedRevision: "1" } },
      },
    },
    ...errors,
  },
});
const takeOffer = route({
  method: "post",
  path: "/{address}/take",
  operationId: "takeOffer",
  summary: "Take part or all of an offer",
  request: { params: OfferPath, body: body(TakeBody) },
  responses: { 200: ok("submitted", TakeReceipt), ...errors },
});
const closeOffer = route({
  method: "post",
  path: "/{address}/close",
  operationId: "closeOffer",
  summary: "Withdraw the unmatched part of an offer",
  request: { params: OfferPath, body: body(CloseBody) },
  responses: { 200: ok("submitted", CloseReceipt), ...errors },
});

const TakeBestReceipt = z
  .object({
    signature: z.string().meta({ description: "the last transaction sent (the one a replay of the key follows)" }),
    signatures: z
      .array(z.string())
      .meta({ description: "every transaction sent, in order: one, or under fill-and-kill up to 4 when the plan needs more offers than one holds" }),
    status: z.literal("pending"),
    mode: z.enum(["fill-and-kill", "fill-or-kill"]),
    plan: Quote.meta({ description: "what the transactions were built to take; the positions show what they took" }),
  })
  .meta({ id: "TakeBestResponse" });

const takeBestRoute = route({
  method: "post",
  path: "/contracts/{contractAddress}/take-best",
  operationId: "takeBest",
  summary: "Take up to an amount from the contract's book at no worse than given odds, best offers first (asynchronous: positions appear)",
  request: { params: ContractAddressPath, body: body(TakeBestBody) },
  responses: { 200: ok("submitted; a replay with the same idempotencyKey and body returns the original result", TakeBestReceipt), ...errors },
});

/** Routes relative to the offers base path. */
export function writeRoutes(service: WriteService, opts: { log?: ErrorLog } = {}): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false, defaultHook: validationHook(WRITE_FALLBACK) });
  // Any status the service raises is answered here; the routes' responses document them all.
  const { gate, handle } = callerGate<Principal>((c, e) => writeErrorResponse(c, e, opts.log));
  /** Token first (401), then the body read and parsed (400) before the schemas see it. */
  const signedIn = gate((c) => service.authorize(c.req.header("authorization")), { body: true });
  const json = (c: Context) => c.req.json<unknown>();
  app.openapi(
    { ...createOffer, middleware: [signedIn] },
    handle(async (c, p) => service.create(p, await json(c), requestIdOf(c))),
  );
  app.openapi(
    { ...takeOffer, middleware: [signedIn] },
    handle(async (c, p) => service.take(p, c.req.param("address") ?? "", await json(c), requestIdOf(c))),
  );
  app.openapi(
    { ...closeOffer, middleware: [signedIn] },
    handle(async (c, p) => service.close(p, c.req.param("address") ?? "", await json(c), requestIdOf(c))),
  );
  app.openapi(
    { ...takeBestRoute, middleware: [signedIn] },
    handle(async (c, p) => service.takeBest(p, c.req.param("contractAddress") ?? "", await json(c), requestIdOf(c))),
  );
  // The schemas' media-type gate answers 415 for what jsonBody accepts with odd spacing: the same 400.
  app.onError((e, c) => {
    if (e instanceof HTTPException && e.status === 415) return writeErrorResponse(c, new ApiError(400, CONTENT_TYPE));
    return writeErrorResponse(c, e, opts.log);
  });
  return app;
}
