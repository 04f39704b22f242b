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
import { GraphQLError, type ExecutionArgs } from "graphql";
import { WebSocketServer, type WebSocket } from "ws";
import { useServer } from "graphql-ws/use/ws";
import type { Custody } from "../service/custody/custody";
import { ApiError } from "../service/api-error";
import type { LiveUpdates } from "../service/read/live-updates";
import { resolveViewer, type ReadViewer } from "../service/read/viewer";

export interface LiveTransport {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  yoga: YogaServerInstance<any, any>;
  live: LiveUpdates;
  custody: Custody | null;
  /** Largest message accepted from a client (bytes); larger closes the socket (1009). */
  maxPayload: number;
  /** WebSocket ping interval (ms); a peer that does not answer within it is dropped. */
  keepAliveMs?: number;
}

const transports = new WeakMap<object, LiveTransport>();

/** Records what `serveLive` needs of an app (createApp calls it; the app itself knows nothing of sockets). */
export function registerLive(app: object, t: LiveTransport): void {
  transports.set(app, t);
}

/** The live updates an app serves (its subscriptions' figures), or null. */
export function liveOf(app: object): LiveUpdates | null {
  return transports.get(app)?.live ?? null;
}

/** The close code of a refused token: the WebSocket's 401 (graphql-ws clients do not retry it). */
export const CLOSE_UNAUTHORIZED = 4401;

/**
 * Attaches graphql-ws at /graphql to `server` when `app` was created with live updates; returns
 * what stops it (the sockets close with 1001 and every subscription, SSE included, completes).
 */
export function serveLive(app: object, server: Server): (() => Promise<void>) | null {
  const t = transports.get(app);
  if (!t) return null;
  const wss = new WebSocketServer({ server, path: "/graphql", maxPayload: t.maxPayload });
  /** Per socket: the request standing for the connection (its Authorization) and its viewer. */
  const sockets = new WeakMap<WebSocket, { request: Request; viewer: Promise<ReadViewer | null> }>();
  const disposable = useServer(
    {
      onConnect: async (ctx) => {
        const raw = ctx.connectionParams?.authorization;
        const authorization = typeof raw === "string" && raw !== "" ? raw : null;
        try {
          if (raw !== undefined && raw !== null && typeof raw !== "string")
            throw new ApiError(401, "connectionParams.authorization must be a string: Bearer <token>");
          const viewer = await resolveViewer(t.custody, authorization);
          const request = new Request("http://live.invalid/graphql", { headers: authorization ? { authorization } : {} });
          sockets.set(ctx.extra.socket, { request, viewer: Promise.resolve(viewer) });
          return true;
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          ctx.extra.socket.close(CLOSE_UNAUTHORIZED, e.message.slice(0, 120));
          return false;
        }
      },
      onSubscribe: async (ctx, _id, payload) => {
        const conn = sockets.get(ctx.extra.socket)!;
        const { schema, execute, subscribe, contextFactory, parse, validate } = t.yoga.getEnveloped({
          request: conn.request,
          viewer: conn.viewer,
          params: payload,
        });
        let document;
        try {
          document = parse(payload.query);
        } catch (e) {
          if ((e as Error).name === "GraphQLError") return [e as GraphQLError];
          throw e;
        }
        let errors: readonly GraphQLError[];
        try {
          errors = validate(schema, document);
        } catch (e) {
          // graphql-armor's limits reject by throwing.
          if ((e as Error).name === "GraphQLError") return [e as GraphQLError];
          throw e;
        }
        if (errors.length > 0) return errors;
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        } satisfies ExecutionArgs;
      },
      // extensions.http is the SSE response's status, internal to yoga (which strips it there too).
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors?.some((e) => e.extensions?.http)
          ? {
              ...result,
              errors: result.errors.map((e) => {
                const { http: _http, ...extensions } = e.extensions ?? {};
                return new GraphQLError(e.message, { path: e.path, extensions });
              }),
            }
          : undefined,
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
