/**
 * GraphQL over WebSocket (graphql-ws protocol, `graphql-transport-ws`) at /graphql, on the same
 * node:http server as the app. Every operation runs through the app's yoga instance (its parse,
 * validation with graphql-armor's limits, execution and error masking), so a subscription over
 * WebSocket is checked and answered exactly as one over SSE.
 *
 * Authentication: the token goes in the connection_init payload (`connectionParams.authorization`,
 * "Bearer pat_..."); none is anonymous, a refused one closes the socket with 4401 before anything
 * runs (the WebSocket's 401).
 */
import type { Server } from "node:http";
import type { YogaServerInstance } from "graphql-yoga";
import { GraphQLError, getOperationAST, parse as parseDocument, type ExecutionArgs } from "graphql";
import type { IncomingMessage } from "node:http";
import { WebSocketServer, type WebSocket } from "ws";
import { useServer } from "graphql-ws/use/ws";
import type { Custody } from "../service/custody/custody";
import { ApiError } from "../service/api-error";
import type { LiveUpdates } from "../service/read/live-updates";
import type { LiveConnectionShare } from "../service/read/live-shares";
import { resolveViewer, type ReadViewer } from "../service/read/viewer";
import type { RequestLimiter } from "../service/rate/request-limiter";
import { tooDeep } from "./variables-depth";
import { liveStreamOfContext } from "./live-event-ids";
import { clientAddressOf, tokenBucketKey, type RateLimitOptions } from "./rate-limit";

export interface LiveTransport {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  yoga: YogaServerInstance<any, any>;
  live: LiveUpdates;
  custody: Custody | null;
  /** Largest message accepted from a client (bytes); larger closes the socket (1009). */
  maxPayload: number;
  /** WebSocket ping interval (ms); a peer that does not answer within it is dropped. */
  keepAliveMs?: number;
  /** The HTTP request limits, applied to each subscribe message as to each request. */
  requestLimiter?: RequestLimiter | null;
  rateLimit?: RateLimitOptions;
}

const transports = new WeakMap<object, LiveTransport>();

/** Records what `serveLive` needs of an app (createApp calls it; the app itself knows nothing of sockets). */
export function registerLive(app: object, t: LiveTransport): void {
  transports.set(app, t);
}

const REFUSED_DOCUMENT = parseDocument("subscription Refused { __typename }");

/**
 * An operation refused before it ran, answered as a result with the errors and then `complete`
 * (as over SSE). Returning the errors themselves would make graphql-ws check them with
 * `instanceof` against its own copy of graphql, which need not be ours.
 */
function refused(errors: readonly GraphQLError[]): ExecutionArgs {
  const answer = () => ({ errors });
  return { schema: undefined as never, document: REFUSED_DOCUMENT, rootValue: { execute: answer, subscribe: answer } };
}

/** The live updates an app serves (its subscriptions' figures), or null. */
export function liveOf(app: object): LiveUpdates | null {
  return transports.get(app)?.live ?? null;
}

/** A node:http header as one string (the first of repeated ones). */
function headerValue(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}

/** The close code of a refused token: the WebSocket's 401 (graphql-ws clients do not retry it). */
export const CLOSE_UNAUTHORIZED = 4401;

/** The close code of a connection over its caller's share (live-shares.ts): the WebSocket's 429. */
export const CLOSE_TOO_MANY = 4429;

/**
 * Attaches graphql-ws at /graphql to `server` when `app` was created with live updates; returns
 * what stops it (the sockets close with 1001 and every subscription, SSE included, completes).
 */
export function serveLive(app: object, server: Server): (() => Promise<void>) | null {
  const t = transports.get(app);
  if (!t) return null;
  const addressOf = (req: IncomingMessage) => clientAddressOf(headerValue(req.headers["x-forwarded-for"]), req.socket.remoteAddress, t.rateLimit);
  const shares = t.live.shares;
  const wss = new WebSocketServer({
    server,
    path: "/graphql",
    maxPayload: t.maxPayload,
    // An address holding its share of connections is refused before the upgrade: 429, no socket.
    verifyClient: (info, done) => {
      const refused = shares.connectionRefused(addressOf(info.req));
      if (refused) done(false, 429, `${refused}; close one first`, { "retry-after": String(shares.limits.shareRetryAfterSeconds) });
      else done(true);
    },
  });
  /** Per socket: its share of the connections (known once connection_init names the caller). */
  const connectionShares = new WeakMap<WebSocket, LiveConnectionShare>();
  // Before graphql-ws's own listener: the exact count (upgrades racing past verifyClient are closed here).
  wss.on("connection", (socket, req) => {
    try {
      const share = shares.openConnection(addressOf(req));
      connectionShares.set(socket, share);
      socket.once("close", () => share.release());
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      socket.close(CLOSE_TOO_MANY, e.message.slice(0, 120));
    }
  });
  /** Per socket: the request standing for the connection (its Authorization), its viewer, the client's address group. */
  const sockets = new WeakMap<WebSocket, { request: Request; viewer: Promise<ReadViewer | null>; address: string }>();
  /** Seconds to wait when this subscribe exceeds the address's or the token's request limit, else 0. */
  const limited = async (upgrade: IncomingMessage, authorization: string | null): Promise<number> => {
    const limiter = t.requestLimiter;
    if (!limiter) return 0;
    const ipWait = await limiter.ip(addressOf(upgrade));
    if (ipWait > 0 || !authorization) return ipWait;
    return limiter.token(tokenBucketKey(authorization));
  };
  const disposable = useServer(
    {
      onConnect: async (ctx) => {
        const raw = ctx.connectionParams?.authorization;
        const authorization = typeof raw === "string" && raw !== "" ? raw : null;
        try {
          if (raw !== undefined && raw !== null && typeof raw !== "string")
            throw new ApiError(401, "connectionParams.authorization must be a string: Bearer <token>");
          const viewer = await resolveViewer(t.custody, authorization);
          const share = connectionShares.get(ctx.extra.socket);
          if (!share) return false; // closed already: over the address's share
          try {
            share.identify(authorization ? tokenBucketKey(authorization) : null);
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            ctx.extra.socket.close(CLOSE_TOO_MANY, e.message.slice(0, 120));
            return false;
          }
          const request = new Request("http://live.invalid/graphql", { headers: authorization ? { authorization } : {} });
          sockets.set(ctx.extra.socket, { request, viewer: Promise.resolve(viewer), address: addressOf(ctx.extra.request) });
          return true;
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          ctx.extra.socket.close(CLOSE_UNAUTHORIZED, e.message.slice(0, 120));
          return false;
        }
      },
      onSubscribe: async (ctx, _id, payload) => {
        const conn = sockets.get(ctx.extra.socket)!;
        const wait = await limited(ctx.extra.request, conn.request.headers.get("authorization"));
        if (wait > 0)
          return refused([
            new GraphQLError(`too many requests; retry in ${wait} s`, { extensions: { code: "TOO_MANY_REQUESTS", status: 429, retryAfter: wait } }),
          ]);
        const deep = tooDeep(payload);
        if (deep) return refused([deep]);
        const { schema, execute, subscribe, contextFactory, parse, validate } = t.yoga.getEnveloped({
          request: conn.request,
          viewer: conn.viewer,
          address: conn.address,
          params: payload,
        });
        let document;
        try {
          document = parse(payload.query);
        } catch (e) {
          if ((e as Error).name === "GraphQLError") return refused([e as GraphQLError]);
          throw e;
        }
        let errors: readonly GraphQLError[];
        try {
          errors = validate(schema, document);
        } catch (e) {
          // graphql-armor's limits reject by throwing.
          if ((e as Error).name === "GraphQLError") return refused([e as GraphQLError]);
          throw e;
        }
        if (errors.length > 0) return refused(errors);
        // Queries and mutations go over HTTP, where the response cache, body limits and access logs are.
        if (getOperationAST(document, payload.operationName)?.operation !== "subscription")
          return refused([
            new GraphQLError("only subscriptions over WebSocket; send queries and mutations over HTTP", { extensions: { code: "BAD_REQUEST", status: 400 } }),
          ]);
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        } satisfies ExecutionArgs;
      },
      // extensions.http is the SSE response's status, internal to yoga (which strips it there too);
      // extensions.eventId is what `after` takes to resume (graphql/live-event-ids.ts).
      onNext: (_ctx, _id, _payload, args, result) => {
        const eventId = liveStreamOfContext(args.contextValue)?.lastEventId;
        const errors = result.errors?.some((e) => e.extensions?.http)
          ? result.errors.map((e) => {
              const { http: _http, ...extensions } = e.extensions ?? {};
              return new GraphQLError(e.message, { path: e.path, extensions });
            })
          : result.errors;
        return { ...result, errors, extensions: eventId === undefined ? result.extensions : { ...result.extensions, eventId } };
      },
      // The enveloped execute/subscribe of this operation (plugins, masking) travel in rootValue.
      execute: (args: ExecutionArgs) => (args.rootValue as { execute: (a: ExecutionArgs) => unknown }).execute(args) as never,
      subscribe: (args: ExecutionArgs) => (args.rootValue as { subscribe: (a: ExecutionArgs) => unknown }).subscribe(args) as never,
    },
    wss,
    t.keepAliveMs,
  );
  return async () => {
    await t.live.close();
    await disposable.dispose();
  };
}
