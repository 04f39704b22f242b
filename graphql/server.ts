/**
 * The HTTP server: the spec's REST routes (offers reads and writes under /api/bets-usdc/offers,
 * the pool embed under /api/embed/v1), GraphQL at /graphql (GraphiQL outside production) and
 * the HTML pages shared links open (/offers/<address>, /polls/<slug>), all on one hono app over node:http. REST and GraphQL share ReadService and WriteService.
 */
import { encodeGlobalID } from "@pothos/plugin-relay";
import { serve, type ServerType } from "@hono/node-server";
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { createYoga } from "graphql-yoga";
import { useCompiledQueries } from "./compiled-queries";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { isIPv6, type AddressInfo } from "node:net";
import type { Server } from "node:http";
import type { Custody } from "../service/custody/custody";
import { clientAddress, rateLimit, type RateLimitOptions } from "./rate-limit";
import type { RequestLimiter } from "../service/rate/request-limiter";
import { observabilityRoutes, observeRequests, requestIdOf, RETRY_AFTER_SECONDS } from "./http-observability";
import { maskError, useUnexpectedErrorLog } from "./error-log";
import { Observability } from "../service/observability/observability";
import type { ErrorLog } from "../service/observability/log";
import { addReadQueries } from "./schema/read-schema";
import { createBuilder, type ApiBuilder, type ReadContext } from "./schema/builder";
import { viewerWallet, type ReadTypes } from "./schema/read-types";
import { graphqlResponseCache } from "./response-cache";
import { registerCacheMetrics } from "./cache-metrics";
import type { ChangeFeed } from "../indexer";
import type { ReadService } from "../service/read/read-service";
import { resolveViewer, type ReadViewer } from "../service/read/viewer";
import { ApiError, errorJson } from "../service/api-error";
import { addWriteMutations } from "./schema/write-schema";
import type { DeadManSwitches } from "../service/writes/dead-man-switch";
import { addPortfolioSchema } from "./schema/portfolio-schema";
import { addWebhookSchema } from "./schema/webhook-schema";
import type { Webhooks } from "../service/webhooks/endpoints";
import { quoteTypeOf } from "./schema/quote-types";
import { EMBED_BASE, OFFERS_BASE, restApi } from "./rest/rest-api";
import { sharePages } from "./pages/share-pages";
import { ACTIONS_BASE, actionRoutes } from "./actions/action-routes";
import { actionsCors } from "./actions/actions-cors";
import { SelfCustodyWrites, type SelfCustodyDeps } from "../service/actions/self-custody-writes";
import { corsAllowList } from "./cors";
import type { WriteService } from "../service/writes/write-service";
import { LIVE_LIMITS, LiveUpdates, type LiveLimits } from "../service/read/live-updates";
import { addSubscriptions } from "./schema/subscription-schema";
import { registerLive, serveLive } from "./live-ws";
import { useSharedSubscriptionEvents } from "./shared-subscription-events";
import { useSseEvents } from "./sse-events";
import { useVariablesDepthLimit } from "./variables-depth";
import { callerReads, registerAdmissionMetrics, useReadAdmission } from "./read-admission";
import type { ReadAdmission } from "../service/rate/admission";

export { EMBED_BASE, OFFERS_BASE, OPENAPI_PATH } from "./rest/rest-api";

export interface AppDeps {
  /** The reads; compliance blocks come from its own options (stack/app.ts builds it with custody's), never set here. */
  read: ReadService;
  custody: Custody | null;
  /** Without it the write routes and mutations answer 503. */
  writes?: WriteService | null;
  /** The dead-man switches (issue #26); without it their routes answer 503. */
  deadMan?: DeadManSwitches | null;
  /** The users' webhooks (issue #26); without it their routes and fields answer 503. */
  webhooks?: Webhooks | null;
  graphiql?: boolean;
  /** Unexpected errors, with the id of the request they happened in; default: logged by `obs` (Observability.unexpectedError). */
  log?: ErrorLog;
  /** Logger, metrics, lag and readiness of this service instance (default: a fresh one, no chain watched). */
  obs?: Observability;
  /** How long a GraphQL query's answer is reused (default 1000 ms; see response-cache.ts); 0 turns that off. */
  responseCacheTtlMs?: number;
  /** Ceiling of the GraphQL answers kept, in estimated bytes (default RESPONSE_CACHE_MAX_BYTES, 32 MiB). */
  responseCacheMaxBytes?: number;
  /**
   * The indexer's announced writes: the GraphQL response cache follows them at once (else it polls
   * the indexed slot), and they feed the subscriptions (without it those answer 503).
   */
  changes?: ChangeFeed | null;
  /** Per-address and per-token request limits (429 with Retry-After); none without it. */
  requestLimiter?: RequestLimiter | null;
  /** Where the client address comes from (`trustProxy`: X-Forwarded-For). */
  rateLimit?: RateLimitOptions;
  /**
   * Turns for expensive reads, fair per caller (service/rate/admission.ts): GraphQL query executions
   * wait here, REST routes read as their request's caller (the read service built with its `admit`). None without it.
   */
  admission?: ReadAdmission | null;
  /** Largest request body in bytes on every route (default 64 KiB); larger is 413 before it is read. */
  maxBodyBytes?: number;
  /** Browser origins (`https://app.example`) allowed to call the offers API and /graphql; none (same-origin only) by default. */
  corsOrigins?: readonly string[];
  /** Subscription limits (default: LIVE_LIMITS; the entry points read them from flags and environment, stack/config). */
  live?: Partial<LiveLimits>;
  /**
   * Solana Actions (/actions.json, /api/actions/...): the chain their transactions are built on and
   * the cluster's CAIP-2 id (X-Blockchain-Ids); without it those routes are not served.
   */
  actions?: (SelfCustodyDeps & { blockchainId: string }) | null;
}

/**
 * 64 KiB: a GraphQL document within the armor's 2,000 tokens, or a write's JSON, is a few KiB;
 * nothing the API takes comes near it.
 */
export const MAX_BODY_BYTES = 65_536;

/**
 * The GraphQL schema; resolvers reach the services only when a request runs. `extend` adds to it
 * on the same builder, with the read API's types (subscriptions return the same objects).
 */
export function buildSchema(
  d: Pick<AppDeps, "read" | "custody" | "writes" | "log" | "webhooks">,
  live: LiveUpdates | null = null,
  extend?: (builder: ApiBuilder, types: ReadTypes) => void,
): GraphQLSchema {
  const builder = createBuilder();
  builder.queryType({});
  builder.mutationType({});
  const types = addReadQueries(builder, { read: d.read, custody: d.custody });
  addWriteMutations(
    builder,
    () => {
      if (!d.writes) throw new Error("writes are not configured");
      return d.writes;
    },
    {
      log: d.log,
      offer: { type: types.OfferT, load: async (address, ctx) => d.read.offer(address, await viewerWallet(ctx, d.custody)) },
      quote: quoteTypeOf(builder),
    },
  );
  addSubscriptions(builder, types, live, d.custody);
  addPortfolioSchema(builder, { db: () => d.read.db, custody: d.custody, writes: () => d.writes ?? null });
  addWebhookSchema(builder, { custody: d.custody, webhooks: () => d.webhooks ?? null });
  extend?.(builder, types);
  return builder.toSchema();
}

/** schema.graphql as committed: the SDL sorted, so the file changes only when the schema does. */
export function schemaSdl(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema)) + "\n";
}

/**
 * yoga builds its responses with the global Response of the moment the request is answered:
 * @hono/node-server's lightweight one once serve() installed it, which node-server writes to the
 * socket as the string it holds (yoga's default, the @whatwg-node ponyfill, is read back through a
 * web stream), and undici's where nothing installed one (app.request in tests). yoga copies its
 * fetchAPI when created, before serve() runs, hence the class resolved per call.
 */
const servedResponse = function Response(body?: BodyInit | null, init?: ResponseInit) {
  return new globalThis.Response(body, init);
} as unknown as typeof Response;

export function createApp(deps: AppDeps): Hono {
  const obs = deps.obs ?? new Observability();
  const d: AppDeps = { ...deps, log: deps.log ?? obs.unexpectedError };
  const app = new Hono({ strict: false });
  const custody = d.custody;
  observeRequests(app, obs);
  // First, so that every answer of these routes (429, 413 and 503 included) is readable by an allowed origin.
  if (d.corsOrigins?.length) for (const path of [OFFERS_BASE, `${OFFERS_BASE}/*`, "/graphql"]) app.use(path, corsAllowList(d.corsOrigins));
  // The Actions' own CORS (any origin), on their routes only, first for the same reason.
  if (d.actions) for (const path of ["/actions.json", ACTIONS_BASE, `${ACTIONS_BASE}/*`]) app.use(path, actionsCors(d.actions.blockchainId));
  // The request limits answer 429 and throw nothing: whatever 503 a request gets comes from inside
  // the layer below, which gives it its Retry-After.
  if (d.requestLimiter) app.use("*", rateLimit(d.requestLimiter, d.rateLimit));
  // Before any route reads a body: a declared length over the limit is refused unread, a
  // streamed one as soon as it passes the limit (hono's bodyLimit buffers at most maxSize).
  const maxBody = d.maxBodyBytes ?? MAX_BODY_BYTES;
  const tooLarge = (c: Context) => errorJson(c, 413, `request body too large: at most ${maxBody} bytes`, { connection: "close" });
  const limitBody = bodyLimit({ maxSize: maxBody, onError: tooLarge });
  // A declared length is judged from the headers alone (node:http never delivers more than it
  // declares): hono's limit asks for the request's body first, which on node-server builds a full
  // fetch Request and a web stream, and takes the route off node-server's direct body read. A
  // streamed body goes through the limit; on GET and HEAD, where no body is read, it is refused.
  // HTTP/1.1 only (listen serves nothing else): there, a request with neither header has no body.
  // One layer with the Retry-After rule (each layer is a dispatch and an awaited next() on every
  // request): every 503 tells the client when to come back, whichever route or error produced it.
  app.use("*", async (c, next) => {
    const length = c.req.header("content-length");
    if (c.req.header("transfer-encoding") === undefined) {
      if (length !== undefined && !(Number(length) <= maxBody)) return tooLarge(c);
      await next();
    } else if (c.req.method === "GET" || c.req.method === "HEAD") return tooLarge(c);
    else {
      const refused = await limitBody(c, next); // its 413, when the body passed the limit
      if (refused) return refused;
    }
    if (c.res.status === 503 && !c.res.headers.has("retry-after")) {
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("retry-after", String(RETRY_AFTER_SECONDS));
    }
  });
  if (d.admission) registerAdmissionMetrics(obs.metrics.registry, d.admission);
  app.route("/", restApi({ ...d, reads: d.admission ? callerReads(d.read, d.rateLimit) : undefined }));
  if (d.actions)
    app.route("/", actionRoutes({ read: d.read, writes: new SelfCustodyWrites(d.actions), log: d.log, limiter: d.requestLimiter, rateLimit: d.rateLimit }));
  app.route("/", sharePages(d.read, { offersBase: OFFERS_BASE, embedBase: EMBED_BASE, log: d.log }));
  const responseCache = graphqlResponseCache({
    read: d.read,
    ttlMs: d.responseCacheTtlMs ?? 1_000,
    changes: d.changes,
    globalId: encodeGlobalID,
    maxBytes: d.responseCacheMaxBytes,
  });
  registerCacheMetrics(obs.metrics.registry, { rest: () => d.read.cache.stats(), graphql: () => responseCache.store.stats() });
  const live = d.changes
    ? new LiveUpdates({ read: d.read, feed: d.changes, custody, limits: { ...LIVE_LIMITS, ...d.live }, log: d.log, metrics: obs.metrics.registry })
    : null;
  const yoga = createYoga<{ viewer?: Promise<ReadViewer | null>; address?: string; requestId?: string }, ReadContext>({
    schema: buildSchema(d, live),
    graphqlEndpoint: "/graphql",
    graphiql: d.graphiql ?? process.env.NODE_ENV !== "production",
    // Self-hosted: the editor's scripts and styles come with the page, so it works offline.
    renderGraphiQL,
    // CORS is hono's (corsAllowList above), the same allow-list as the offers API.
    cors: false,
    // The body limit is hono's (above, every route): a declared length is judged from the
    // headers, a streamed body goes through hono's bodyLimit. yoga's own would read the body as a
    // web stream through a TransformStream into a new Request, instead of node-server's direct read.
    maxRequestBodySize: false,
    // Responses in the Response class that serves them (see servedResponse).
    fetchAPI: { Response: servedResponse },
    landingPage: false,
    // Masked here, logged with the request id by useUnexpectedErrorLog (./error-log.ts).
    maskedErrors: { maskError },
    plugins: [
      ...(d.log ? [useUnexpectedErrorLog(d.log)] : []),
      useVariablesDepthLimit(),
      EnvelopArmorPlugin({
        // 7 = the deepest path of the schema (shareable.edges.node.offer.viewer.position.address).
        maxDepth: { n: 7 },
        maxAliases: { n: 10 },
        costLimit: { maxCost: 5_000 },
        maxTokens: { n: 2_000 },
        blockFieldSuggestion: { enabled: process.env.NODE_ENV === "production" },
      }),
      // Before the response cache, which runs (and keeps) what the compiled query answers.
      useCompiledQueries(),
      // After the compiled queries (it wraps their execution); a response cache hit never executes,
      // and the cache wraps this (a refused query counts as executed, its answer not kept).
      ...(d.admission ? [useReadAdmission(d.admission)] : []),
      responseCache.plugin,
      // Subscribers of one offer share each event's execution and JSON (last: it sets the subscribe function yoga runs).
      ...(live ? [useSharedSubscriptionEvents(live.events), useSseEvents()] : []),
    ],
    context: ({ request, viewer, address, requestId }) => ({ request, viewer, address, requestId }),
  });
  if (live) registerLive(app, { yoga, live, custody, maxPayload: maxBody, requestLimiter: d.requestLimiter, rateLimit: d.rateLimit });
  /**
   * One rule for REST and GraphQL: no token is anonymous, a token that is malformed, unknown,
   * revoked or expired is 401 (UNAUTHENTICATED) for any operation, before anything runs.
   */
  const signedIn = async (raw: Request): Promise<Response | { viewer: Promise<ReadViewer | null> }> => {
    try {
      return { viewer: Promise.resolve(await resolveViewer(d.custody, raw.headers.get("authorization"))) };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const error = { message: e.message, extensions: { code: e.code, status: e.status } };
      return new Response(JSON.stringify({ errors: [error] }), {
        status: e.status,
        headers: { "content-type": "application/json; charset=utf-8", "www-authenticate": "Bearer" },
      });
    }
  };
  app.on(["GET", "POST"], "/graphql", async (c) => {
    // The token is checked before yoga: the response cache keys signed-in answers by the wallet.
    const raw = c.req.raw;
    const address = clientAddress(c, d.rateLimit);
    const requestId = requestIdOf(c);
    if (!raw.headers.get("authorization")) return yoga.fetch(raw, { address, requestId });
    const auth = await signedIn(raw);
    return auth instanceof Response ? auth : yoga.fetch(raw, { ...auth, address, requestId });
  });
  // Liveness: the process answers (an orchestrator restarts it when not). Whether it should get
  // traffic is /readyz (store, chain, indexer lag).
  // indexedSlot is informative only: a store outage must not get a live process restarted.
  app.get("/healthz", async (c) => c.json({ ok: true, indexedSlot: await d.read.indexedSlot().catch(() => null) }));
  observabilityRoutes(app, obs, () => d.read.indexedSlot());
  app.notFound((c) => errorJson(c, 404, "not found"));
  app.onError((e, c) => {
    d.log?.(e, requestIdOf(c));
    return errorJson(c, 503, "temporarily unavailable; retry with backoff", { "retry-after": String(RETRY_AFTER_SECONDS) });
  });
  return app;
}

/**
 * Serves the app on node:http at `hostname` (default 127.0.0.1; 0.0.0.0 or :: for every
 * interface); port 0 picks a free one. A port that cannot be bound rejects (EADDRINUSE...).
 */
export async function listen(app: Hono, opts: { port?: number; hostname?: string } = {}): Promise<{ server: ServerType; url: string; close(): Promise<void> }> {
  const hostname = opts.hostname ?? "127.0.0.1";
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname }, () => {
      s.off("error", reject);
      resolve(s);
    });
    s.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  // GraphQL over WebSocket on the same port; stopping it first completes every open subscription.
  const stopLive = serveLive(app, server as Server);
  return {
    server,
    url: `http://${reachableHost(hostname)}:${port}`,
    close: async () => {
      await stopLive?.();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** How a local client reaches a server bound to `host`: the wildcard addresses through loopback, IPv6 in brackets. */
function reachableHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return isIPv6(host) ? `[${host}]` : host;
}
