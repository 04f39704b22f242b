/**
 * The read routes of the spec on hono: the offers GETs (relative to /api/bets-usdc/offers) and
 * the pool aggregate embed endpoint. Each is a createRoute: the zod schemas that validate its
 * parameters are the ones docs/openapi.json publishes. Parsing and shaping only; ReadService holds
 * the logic.
 */
import { createRoute, OpenAPIHono, z, type RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Custody } from "../../service/custody/custody";
import { ApiError, apiErrorResponse, errorJson } from "../../service/api-error";
import {
  BrowseQuery,
  MineQuery,
  OfferAddressPath,
  OffersQuery,
  PageQuery,
  WalletAddressPath,
  browseParams,
  mineParams,
  offersParams,
  pageParams,
  walletAddressParam,
} from "../../service/read/params";
import type { ReadService } from "../../service/read/read-service";
import { resolveViewer, type ReadViewer } from "../../service/read/viewer";
import { validationHook } from "./validation-hook";
import { callerGate } from "./caller-gate";
import { ContractsResponse, EmbedResponse, ERRORS, documentedError, FillPage, Offer, OfferPage, ShareablePage, WalletPositions, ok } from "./schemas";
import { requestIdOf } from "../http-observability";
import type { RequestReads } from "../read-admission";
import type { ErrorLog } from "../../service/observability/log";

export const EMBED_CACHE_CONTROL = "public, max-age=5, s-maxage=15, stale-while-revalidate=30";

const READ_FALLBACK = "temporarily unavailable; retry with backoff";
const errorResponse = (c: Context, e: unknown, log?: ErrorLog) => apiErrorResponse(c, e, READ_FALLBACK, log);

/**
 * The viewer of a read, resolved by a middleware before the parameters are checked (one rule with
 * GraphQL: a bad token is 401 whatever else is wrong); the handler reads it back with `viewer`.
 * Shared by every read route that shows viewer fields (offers, book, quote).
 */
export function viewerGate(custody: Custody | null, log?: ErrorLog) {
  const { gate, callerOf } = callerGate<ReadViewer | null>((c, e) => errorResponse(c, e, log));
  const signedIn = gate((c) => resolveViewer(custody, c.req.header("authorization")));
  const viewer = (c: Context) => callerOf(c) ?? null;
  return { signedIn, viewer };
}

/** Reads take a token or none: none is anonymous, a bad one is 401. */
const OPTIONAL_BEARER: Record<string, string[]>[] = [{}, { bearer: [] }];
const { 400: e400, 401: e401, 404: e404, 429: e429, 503: e503 } = ERRORS;

/** From an offer in a response (a JSON pointer to it) to the operations on it, at its current revision. */
function offerLinks(at: string) {
  const address = { address: `${at}/address` };
  const revision = { expectedRevision: `${at}/revision` };
  return {
    GetOffer: { operationId: "getOffer", parameters: address },
    OfferFills: { operationId: "offerFills", parameters: address },
    TakeOffer: { operationId: "takeOffer", parameters: address, requestBody: { ...revision, takeAmountMicros: `${at}/minimumTakeMicros` } },
    CloseOffer: { operationId: "closeOffer", parameters: address, requestBody: revision },
  };
}

const route = <R extends RouteConfig>(r: R) => createRoute({ tags: ["offers"], ...r });

const contractsRoute = route({
  method: "get",
  path: "/contracts",
  operationId: "listContracts",
  summary: "Open contracts available for offers, plus settings",
  security: OPTIONAL_BEARER,
  responses: {
    200: {
      ...ok("contracts and settings", ContractsResponse),
      links: {
        CreateOnContract: {
          operationId: "createOffer",
          requestBody: {
            contractAddress: "$response.body#/contracts/0/address",
            expectedFeeBps: "$response.body#/feeBps",
            creatorTotalMicros: "8000000",
            takerTargetMicros: "10000000",
            minimumTakeMicros: "1000000",
          },
          description: "the spec's worked example (a stake of 8 units against a target of 10) on the first open contract at the current fee",
        },
      },
    },
    401: e401,
    429: e429,
    503: e503,
  },
});
const browseRoute = route({
  method: "get",
  path: "/",
  operationId: "browseOffers",
  summary: "Browse offers, paginated: newest first, or the taker's odds best first (sort=bestOdds)",
  security: OPTIONAL_BEARER,
  request: { query: OffersQuery },
  responses: {
    200: { ...ok("a page of offers", OfferPage), links: offerLinks("$response.body#/offers/0") },
    400: e400,
    401: e401,
    429: e429,
    503: e503,
  },
});
const mineRoute = route({
  method: "get",
  path: "/mine",
  operationId: "myOffers",
  summary: "Offers the caller created or took",
  security: [{ bearer: [] }],
  request: { query: MineQuery },
  responses: { 200: ok("a page of the caller's offers", OfferPage), 400: e400, 401: e401, 429: e429, 503: e503 },
});
const shareableRoute = route({
  method: "get",
  path: "/shareable",
  operationId: "shareableOffers",
  summary: "Open offers formatted for sharing into a chat",
  security: [],
  request: { query: BrowseQuery },
  responses: { 200: ok("a page of shareable offers", ShareablePage), 400: e400, 429: e429, 503: e503 },
});
const walletPositionsRoute = route({
  method: "get",
  path: "/wallets/{address}/positions",
  operationId: "walletPositions",
  summary: "Any wallet's positions and pool picks (public on chain; for takers who keep their own keys)",
  security: [],
  request: { params: WalletAddressPath, query: BrowseQuery },
  responses: { 200: ok("the offers the wallet took, with its position, and its pool picks", WalletPositions), 400: e400, 429: e429, 503: e503 },
});
const offerRoute = route({
  method: "get",
  path: "/{address}",
  operationId: "getOffer",
  summary: "One offer with the viewer's position if signed in",
  security: OPTIONAL_BEARER,
  request: { params: OfferAddressPath },
  responses: { 200: { ...ok("the offer", Offer), links: offerLinks("$response.body#") }, 400: e400, 401: e401, 404: e404, 429: e429, 503: e503 },
});
const fillsRoute = route({
  method: "get",
  path: "/{address}/fills",
  operationId: "offerFills",
  summary: "Fills on one offer, paginated",
  security: OPTIONAL_BEARER,
  request: { params: OfferAddressPath, query: PageQuery },
  responses: { 200: ok("a page of fills, oldest first", FillPage), 400: e400, 401: e401, 404: e404, 429: e429, 503: e503 },
});

/**
 * A JSON answer, serialised once per object: the read service hands out the same object for as
 * long as it keeps it (a shared page, a caller's overlay, a pool's aggregate), so a page of 20-50
 * offers is stringified once per change instead of once per request. Kept as UTF-8 bytes, which
 * node writes as they are: a string is measured and encoded again on every answer (31 KB for a
 * signed-in browse page; the cached browse row gained about 10 %, BENCHMARKS.md, issue 21).
 * A read service that keeps nothing (both TTLs 0) hands out a new object every time: its answers
 * skip the memo and go out through hono's c.json, as a string, rather than paying a WeakMap
 * entry and a UTF-8 copy for an object never seen again.
 */
const UTF8 = new TextEncoder();

export function jsonOnce(serialized: WeakMap<object, Uint8Array<ArrayBuffer>>) {
  /** `kept`: false when `value` is known to be new and never handed out again. */
  return (c: Context, value: object, kept = true) => {
    if (!kept) return c.json(value, 200);
    let body = serialized.get(value);
    if (body === undefined) serialized.set(value, (body = UTF8.encode(JSON.stringify(value))));
    return c.body(body, 200, { "content-type": "application/json" });
  };
}

/** `reads`: the read service as the request's caller (graphql/read-admission.ts). */
export function readRoutes(reads: RequestReads, custody: Custody | null, opts: { log?: ErrorLog } = {}): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false, defaultHook: validationHook(READ_FALLBACK) });
  const json = jsonOnce(new WeakMap());
  // Any status the service raises is answered here; the routes' responses document them all.
  const handle = (op: (c: Context, read: ReadService) => Promise<unknown>) =>
    (async (c: Context) => {
      try {
        const read = reads(c);
        return json(c, (await op(c, read)) as object, read.keepsAnswers);
      } catch (e) {
        return errorResponse(c, e, opts.log);
      }
    }) as never;
  const { signedIn, viewer } = viewerGate(custody, opts.log);
  // hono passes the raw query; the validated copy holds the same strings.
  const query = (c: Context) => c.req.query();

  app.openapi(
    { ...contractsRoute, middleware: [signedIn] },
    handle(async (_c, read) => {
      const [settings, contracts] = await Promise.all([read.settings(), read.openContracts()]);
      return { contracts, ...settings };
    }),
  );
  app.openapi(
    { ...browseRoute, middleware: [signedIn] },
    handle(async (c, read) => read.browse(offersParams(query(c)), viewer(c)?.wallet ?? null)),
  );
  app.openapi(
    { ...mineRoute, middleware: [signedIn] },
    handle(async (c, read) => {
      const v = viewer(c);
      if (!v) throw new ApiError(401, "GET /mine needs a token: Authorization: Bearer <token>");
      return read.mine(mineParams(query(c)), v.wallet);
    }),
  );
  app.openapi(
    shareableRoute,
    handle(async (c, read) => read.shareable(browseParams(query(c)))),
  );
  app.openapi(
    walletPositionsRoute,
    handle(async (c, read) => read.walletPositions(browseParams(query(c)), walletAddressParam(c.req.param("address") ?? ""))),
  );
  app.openapi(
    { ...offerRoute, middleware: [signedIn] },
    handle(async (c, read) => {
      const o = await read.offer(c.req.param("address") ?? "", viewer(c)?.wallet ?? null);
      if (!o) throw new ApiError(404, "offer not found");
      return o;
    }),
  );
  app.openapi(
    { ...fillsRoute, middleware: [signedIn] },
    handle(async (c, read) => read.fills(c.req.param("address") ?? "", pageParams(query(c)))),
  );
  return app;
}

const embedRoute = createRoute({
  method: "get",
  path: "/polls/{identifier}",
  operationId: "pollAggregate",
  tags: ["embed"],
  summary: "Aggregate numbers of a public pool market (server-to-server; no CORS allowance)",
  security: [],
  request: { params: z.object({ identifier: z.string().meta({ description: "pool slug or bet address" }) }) },
  responses: {
    200: ok("the pool's aggregate", EmbedResponse, { "Cache-Control": z.string().meta({ example: EMBED_CACHE_CONTROL }) }),
    404: documentedError(404, "unknown, private, deleted, flagged or malformed identifier (indistinguishable on purpose)", { "Cache-Control": z.string() }),
    429: ERRORS[429],
    500: documentedError(500, "temporary; retry with backoff and keep the last good response"),
  },
});

/**
 * GET /api/embed/v1/polls/:identifier. Unknown, private, deleted, flagged and malformed
 * identifiers are the same 404; no CORS allowance is ever sent (server-to-server endpoint).
 */
export function embedRoutes(reads: RequestReads, opts: { log?: ErrorLog } = {}): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false });
  // The same aggregate object is served until it changes: serialise it once.
  const json = jsonOnce(new WeakMap());
  const bodies = new WeakMap<object, object>();
  const notFound = (c: Context) => {
    c.header("Cache-Control", EMBED_CACHE_CONTROL);
    return errorJson(c, 404, "Poll not found");
  };
  app.openapi(embedRoute, (async (c: Context) => {
    try {
      const data = await reads(c).poolAggregate(c.req.param("identifier") ?? "");
      if (!data) return notFound(c);
      c.header("Cache-Control", EMBED_CACHE_CONTROL);
      let body = bodies.get(data);
      if (body === undefined) bodies.set(data, (body = { data, error: null }));
      return json(c, body);
    } catch (e) {
      opts.log?.(e, requestIdOf(c));
      c.header("Cache-Control", "no-store");
      return errorJson(c, 500, "Internal server error");
    }
  }) as never);
  // Any other path under /polls/ (none, or more than one segment) names no pool: the same 404.
  app.get("/polls", notFound);
  app.get("/polls/*", notFound);
  return app;
}
