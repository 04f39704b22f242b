/**
 * The HTTP server: the spec's REST routes (offers reads and writes under /api/bets-usdc/offers,
 * the pool embed under /api/embed/v1) and GraphQL at /graphql (GraphiQL outside production),
 * all on one hono app over node:http. REST and GraphQL share ReadService and WriteService.
 */
import SchemaBuilder from "@pothos/core";
import { serve, type ServerType } from "@hono/node-server";
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { GraphQLError, lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { createYoga } from "graphql-yoga";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AddressInfo } from "node:net";
import type { Custody } from "../service/custody/custody";
import { rateLimit, type RateLimitOptions } from "./rate-limit";
import type { RequestLimiter } from "../service/rate/request-limiter";
import { observabilityRoutes, observeRequests, RETRY_AFTER_SECONDS } from "./http-observability";
import { Observability } from "../service/observability/observability";
import { addReadQueries, type ReadContext } from "./schema/read-schema";
import { embedRoutes, readRoutes } from "./rest/read-routes";
import type { ReadService } from "../service/read/read-service";
import { resolveViewer, type ReadViewer } from "../service/read/viewer";
import { ApiError } from "../service/api-error";
import { addWriteMutations } from "./schema/write-schema";
import { writeRoutes } from "./rest/write-routes";
import type { WriteService } from "../service/writes/write-service";

export const OFFERS_BASE = "/api/bets-usdc/offers";
export const EMBED_BASE = "/api/embed/v1";

export interface AppDeps {
  read: ReadService;
  custody: Custody | null;
  /** Without it the write routes and mutations answer 503. */
  writes?: WriteService | null;
  graphiql?: boolean;
  /** Unexpected errors; default: logged by `obs` with the request id. */
  log?: (e: unknown) => void;
  /** Logger, metrics, lag and readiness of this service instance (default: a fresh one, no chain watched). */
  obs?: Observability;
  /** Anonymous GraphQL queries share ReadService's cache; 0 turns that off. */
  responseCacheTtlMs?: number;
  /** Per-address and per-token request limits (429 with Retry-After); none without it. */
  requestLimiter?: RequestLimiter | null;
  /** Where the client address comes from (`trustProxy`: X-Forwarded-For). */
  rateLimit?: RateLimitOptions;
  /** Largest request body in bytes on every route (default 64 KiB); larger is 413 before it is read. */
  maxBodyBytes?: number;
}

/**
 * 64 KiB: a GraphQL document within the armor's 2,000 tokens, or a write's JSON, is a few KiB;
 * nothing the API takes comes near it.
 */
export const MAX_BODY_BYTES = 65_536;

/** The GraphQL schema; resolvers reach the services only when a request runs. */
export function buildSchema(d: Pick<AppDeps, "read" | "custody" | "writes" | "log">): GraphQLSchema {
  // Fields are non-null unless marked nullable: clients can rely on what the spec always sends.
  const builder = new SchemaBuilder<{ Context: ReadContext; DefaultFieldNullability: false }>({ defaultFieldNullability: false });
  builder.queryType({});
  builder.mutationType({});
  addReadQueries(builder, d.read, d.custody, { log: d.log });
  addWriteMutations(
    builder,
    () => {
      if (!d.writes) throw new Error("writes are not configured");
      return d.writes;
    },
    { log: d.log },
  );
  return builder.toSchema();
}

/** schema.graphql as committed: the SDL sorted, so the file changes only when the schema does. */
export function schemaSdl(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema)) + "\n";
}

/** A GraphQL answer that must not be shared (an error, or a non-200 status): passed through as is. */
class UncacheableResponse {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly contentType: string | null,
  ) {}
}

/**
 * Errors the API raises on purpose (coded GraphQLErrors: parse, validation, limits, REST-status
 * errors of the services) pass; anything else is masked, so no internal detail leaks.
 */
function maskError(error: unknown, message: string): Error {
  // Duck-typed: yoga and this module may hold different copies (ESM/CJS) of graphql's classes.
  const isGql = (e: unknown): e is GraphQLError => !!e && (e as Error).name === "GraphQLError";
  if (isGql(error) && (!error.originalError || isGql(error.originalError))) return error;
  return new GraphQLError(message, { extensions: { code: "INTERNAL_SERVER_ERROR", status: 500 } });
}

export function createApp(deps: AppDeps): Hono {
  const obs = deps.obs ?? new Observability();
  const d: AppDeps = { ...deps, log: deps.log ?? ((e) => obs.current.error({ err: e }, "unexpected error")) };
  const app = new Hono({ strict: false });
  const custody = d.custody;
  if (custody) {
    d.read.blockedWallets = (wallets) => custody.blockedWallets(wallets);
    d.read.blockedVersion = () => custody.readAuth.version;
  }
  observeRequests(app, obs);
  // Every 503 tells the client when to come back, whichever route or error produced it.
  app.use("*", async (c, next) => {
    await next();
    if (c.res.status === 503 && !c.res.headers.has("retry-after")) {
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("retry-after", String(RETRY_AFTER_SECONDS));
    }
  });
  if (d.requestLimiter) app.use("*", rateLimit(d.requestLimiter, d.rateLimit));
  // Before any route reads a body: a declared length over the limit is refused unread, a
  // streamed one as soon as it passes the limit (hono's bodyLimit buffers at most maxSize).
  const maxBody = d.maxBodyBytes ?? MAX_BODY_BYTES;
  app.use(
    "*",
    bodyLimit({ maxSize: maxBody, onError: (c) => c.json({ error: `request body too large: at most ${maxBody} bytes` }, 413, { connection: "close" }) }),
  );
  if (d.writes) app.route(OFFERS_BASE, writeRoutes(d.writes, { log: d.log }));
  app.route(OFFERS_BASE, readRoutes(d.read, d.custody, { log: d.log }));
  app.route(EMBED_BASE, embedRoutes(d.read, { log: d.log }));
  const yoga = createYoga<{ viewer?: Promise<ReadViewer | null> }, ReadContext>({
    schema: buildSchema(d),
    graphqlEndpoint: "/graphql",
    graphiql: d.graphiql ?? process.env.NODE_ENV !== "production",
    // Same-origin by default, like the embed endpoint; put a proxy with an allow-list in front to widen it.
    cors: false,
    landingPage: false,
    maskedErrors: { maskError },
    plugins: [
      EnvelopArmorPlugin({
        // 7 = the deepest path of the schema (shareable.edges.node.offer.viewer.position.address).
        maxDepth: { n: 7 },
        maxAliases: { n: 10 },
        costLimit: { maxCost: 5_000 },
        maxTokens: { n: 2_000 },
        blockFieldSuggestion: { enabled: process.env.NODE_ENV === "production" },
      }),
    ],
    context: ({ request, viewer }) => ({ request, viewer }),
  });
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
    // Anonymous queries are answered from ReadService's shared cache (1 s, dropped on a newer
    // indexed slot) before yoga parses anything; signed-in requests, mutations (and anything
    // mentioning the word) and error answers always go through yoga.
    const raw = c.req.raw;
    if (raw.headers.get("authorization")) {
      const auth = await signedIn(raw);
      return auth instanceof Response ? auth : yoga.fetch(raw, auth);
    }
    if (raw.method !== "POST" || (d.responseCacheTtlMs ?? 1_000) <= 0) return yoga.fetch(raw, {});
    const text = await raw.text();
    const forward = () => yoga.fetch(new Request(raw.url, { method: "POST", headers: raw.headers, body: text }), {});
    if (text.length > 16_384 || /\bmutation\b/i.test(text)) return forward();
    const body = await d.read
      .anonymous(`gql:${text}`, async () => {
        const r = await forward();
        const out = await r.text();
        if (r.status !== 200 || out.includes('"errors"')) throw new UncacheableResponse(r.status, out, r.headers.get("content-type"));
        return out;
      })
      .catch((e: unknown) => {
        if (e instanceof UncacheableResponse) return e;
        throw e;
      });
    if (body instanceof UncacheableResponse)
      return new Response(body.body, { status: body.status, headers: { "content-type": body.contentType ?? "application/json" } });
    return new Response(body, { status: 200, headers: { "content-type": "application/json; charset=utf-8" } });
  });
  // Liveness: the process answers (an orchestrator restarts it when not). Whether it should get
  // traffic is /readyz (store, chain, indexer lag).
  // indexedSlot is informative only: a store outage must not get a live process restarted.
  app.get("/healthz", async (c) => c.json({ ok: true, indexedSlot: await d.read.indexedSlot().catch(() => null) }));
  observabilityRoutes(app, obs, () => d.read.indexedSlot());
  app.notFound((c) => c.json({ error: "not found" }, 404));
  app.onError((e, c) => {
    d.log?.(e);
    return c.json({ error: "temporarily unavailable; retry with backoff" }, 503, { "retry-after": String(RETRY_AFTER_SECONDS) });
  });
  return app;
}

/** Serves the app on node:http; port 0 picks a free one. */
export async function listen(app: Hono, opts: { port?: number; hostname?: string } = {}): Promise<{ server: ServerType; url: string; close(): Promise<void> }> {
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname: opts.hostname ?? "127.0.0.1" }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://${opts.hostname ?? "127.0.0.1"}:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}
