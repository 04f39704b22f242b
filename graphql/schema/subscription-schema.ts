/**
 * GraphQL subscriptions (Pothos, code-first): live updates of what the queries return, over
 * Server-Sent Events (graphql-yoga's own, at /graphql with `Accept: text/event-stream`) and over
 * WebSocket (graphql-ws, graphql/live-ws.ts). Each field parses its arguments as the matching
 * query does, then hands a topic (service/read/live-topics.ts) to the service's LiveUpdates, which
 * decides what to send and when (service/read/live-updates.ts, live-dispatch.ts). Without a change feed the fields answer SERVICE_UNAVAILABLE.
 */
import { GraphQLError } from "graphql";
import type { Custody } from "../../service/custody/custody";
import { ApiError, unexpectedCauseOf, withUnexpectedCause } from "../../service/api-error";
import type { LiveUpdates } from "../../service/read/live-updates";
import { liveTopics, type LiveTopic } from "../../service/read/live-topics";
import { LiveEnded, LiveReread } from "../../service/read/live-subscription";
import { recordLiveStream } from "../live-event-ids";
import { browseParams, offerAddress, type BrowseParams } from "../../service/read/params";
import { SPORTS } from "../../service/read/sports";
import { resolveViewer, type ReadViewer } from "../../service/read/viewer";
import type { ApiBuilder, ReadContext } from "./builder";
import { gqlApiError, type ReadSchemaTypes } from "./read-schema";
import { bookParams } from "../../service/read/book-params";

/**
 * The pool subscription's argument: `identifier`, as the poll query and the embed path name it;
 * `slug`, its first name, still works (deprecated) for clients written against it. Exactly one.
 */
export function poolIdentifier(a: { identifier?: string | null; slug?: string | null }): string {
  if (a.identifier != null && a.slug != null) throw new ApiError(400, "give identifier or slug (deprecated), not both");
  const id = a.identifier ?? a.slug;
  if (id == null) throw new ApiError(400, "pool needs identifier: the pool's slug or bet address");
  return id;
}

/** The code of the error event that tells a resuming client it missed events: read the state again (docs/api-guide.md, "Resuming"). */
export const LIVE_REREAD_CODE = "REREAD";

const AFTER_DESCRIPTION =
  "Resume: the eventId of the last event received (SSE: sent as Last-Event-ID instead). Every event after it is sent first, or a REREAD error event when they are no longer kept.";

export function addSubscriptions(builder: ApiBuilder, types: ReadSchemaTypes, live: LiveUpdates | null, custody: Custody | null): void {
  const { enums, OfferT, FillT, PoolT, BookT } = types;
  builder.subscriptionType({
    description:
      "Live updates, over SSE (Accept: text/event-stream) or graphql-ws at /graphql. Authentication as for queries (WebSocket: connectionParams.authorization).",
  });

  /**
   * The caller is the one the request (SSE) or the connection (WebSocket) authenticated; the
   * request object stands for the connection in the per-connection limit (graphql/live-ws.ts
   * gives all subscriptions of one socket the same one).
   */
  const open = async <T>(
    ctx: ReadContext,
    info: { fieldName: string },
    args: { after?: string | null },
    topic: (viewer: ReadViewer | null) => LiveTopic<T>,
  ): Promise<AsyncIterable<T | LiveEnded | LiveReread>> => {
    try {
      if (!live) throw new ApiError(503, "live updates are not available on this server");
      const authorization = ctx.request.headers.get("authorization");
      const viewer = await (ctx.viewer ??= resolveViewer(custody, authorization));
      // EventSource resends the id it saw last as Last-Event-ID; a graphql-ws client passes it as `after`.
      const { after, ...rest } = args;
      const eventId = ctx.request.headers.get("last-event-id") || after || null;
      if (eventId !== null && eventId.length > 64) throw new ApiError(400, "after / Last-Event-ID: at most 64 characters");
      const resume = { eventId, key: `${info.fieldName}:${JSON.stringify(rest)}` };
      const consumer = live.subscribe(topic(viewer), { connection: ctx.request, authorization, address: ctx.address }, resume);
      recordLiveStream(ctx.request, ctx, consumer.subscription as never);
      return consumer;
    } catch (e) {
      // Refused before it started: over SSE the response carries the status (yoga reads extensions.http, and strips it).
      const g = gqlApiError(e);
      const retryAfter = g.extensions.retryAfter;
      const headers = retryAfter === undefined ? undefined : { "retry-after": String(retryAfter) };
      throw withUnexpectedCause(
        new GraphQLError(g.message, { extensions: { ...g.extensions, http: { status: g.extensions.status as number, headers } } }),
        unexpectedCauseOf(g),
      );
    }
  };
  const signedIn = (field: string) => (viewer: ReadViewer | null) => {
    if (!viewer) throw new ApiError(401, `${field} needs a token: Authorization: Bearer <token>`);
    return viewer.wallet;
  };
  /** A subscription that ended on an error sends it as its last event; a resume that failed says so first (code REREAD). */
  const payload = <T>(value: T | LiveEnded | LiveReread): T => {
    if (value instanceof LiveEnded) throw gqlApiError(value.error);
    if (value instanceof LiveReread) throw new GraphQLError(value.reason, { extensions: { code: LIVE_REREAD_CODE } });
    return value;
  };

  builder.subscriptionFields((t) => ({
    offer: t.field({
      type: OfferT,
      description: "The offer as the offer query returns it: now, then after each change to it, its contract or the settings.",
      args: { address: t.arg({ type: "Address", required: true }), after: t.arg.string({ description: AFTER_DESCRIPTION }) },
      subscribe: (_r, a, ctx, info) => open(ctx, info, a, (v) => liveTopics.offer(offerAddress(a.address), v?.wallet ?? null)),
      resolve: payload,
    }),
    offers: t.field({
      type: OfferT,
      description: "Offers created or changed that match the filters (those of the offers query), one event per offer; the list itself is a query.",
      args: {
        after: t.arg.string({ description: AFTER_DESCRIPTION }),
        sport: t.arg.string({ description: `One of: ${SPORTS.join(", ")} (any case).` }),
        query: t.arg.string({ description: "Text search over title, event, competition and side labels." }),
        status: t.arg({ type: enums.OfferStatus }),
        view: t.arg({ type: enums.OfferView }),
      },
      // The filters are parsed inside open(): a refused one is the query's BAD_REQUEST, not an internal error.
      subscribe: (_r, a, ctx, info) =>
        open(ctx, info, a, (v) => {
          const { page: _p, pageSize: _s, ...f } = browseParams({ sport: a.sport ?? undefined, query: a.query ?? undefined });
          const filters: Partial<BrowseParams> = { ...f, status: a.status ?? undefined, view: a.view ?? undefined };
          return liveTopics.offers(filters, v?.wallet ?? null);
        }),
      resolve: payload,
    }),
    offerFills: t.field({
      type: FillT,
      description: "Each new fill (take) of the offer, oldest first.",
      args: { address: t.arg({ type: "Address", required: true }), after: t.arg.string({ description: AFTER_DESCRIPTION }) },
      subscribe: (_r, a, ctx, info) => open(ctx, info, a, () => liveTopics.offerFills(offerAddress(a.address))),
      resolve: payload,
    }),
    myPositions: t.field({
      type: OfferT,
      args: { after: t.arg.string({ description: AFTER_DESCRIPTION }) },
      description: "The caller's offers (created or taken) each time one changes, with the caller's viewer block (needs a token).",
      subscribe: (_r, a, ctx, info) => open(ctx, info, a, (v) => liveTopics.myPositions(signedIn("myPositions")(v))),
      resolve: payload,
    }),
    mySettlements: t.field({
      type: OfferT,
      args: { after: t.arg.string({ description: AFTER_DESCRIPTION }) },
      description:
        "The caller's offers when a settlement reaches the caller: the caller's position settled or refunded, or one more position of the caller's offer settled (needs a token).",
      subscribe: (_r, a, ctx, info) => open(ctx, info, a, (v) => liveTopics.mySettlements(signedIn("mySettlements")(v))),
      resolve: payload,
    }),
    book: t.field({
      type: BookT,
      description:
        "A contract's book as Contract.book(depth) answers it (the caller's own and blocked creators' offers left out when signed in): now, then each time its revision changes (a take, a close, a new offer, the cutoff passing); never the same revision twice.",
      args: {
        after: t.arg.string({ description: AFTER_DESCRIPTION }),
        contractAddress: t.arg({ type: "Address", required: true }),
        depth: t.arg.int({ description: "Levels per side, 1 to 100 (default 10)." }),
      },
      subscribe: (_r, a, ctx, info) =>
        open(ctx, info, a, (v) => {
          const { contract, depth } = bookParams(a.contractAddress, { depth: a.depth == null ? null : String(a.depth) });
          return liveTopics.book(contract, depth, v?.wallet ?? null);
        }),
      resolve: payload,
    }),
    pool: t.field({
      type: PoolT,
      description: "A public pool's aggregate (the embed's data, never participants): now, then after each change to the pool.",
      args: {
        after: t.arg.string({ description: AFTER_DESCRIPTION }),
        identifier: t.arg.string({ description: "Pool slug or bet address, as the poll query (and the embed path) takes it." }),
        slug: t.arg.string({ deprecationReason: "Use identifier (the spec's word, as in poll(identifier:)); it takes the same values." }),
      },
      subscribe: (_r, a, ctx, info) => open(ctx, info, a, () => liveTopics.pool(poolIdentifier(a))),
      resolve: payload,
    }),
    indexedSlot: t.string({
      args: { after: t.arg.string({ description: AFTER_DESCRIPTION }) },
      description: "The highest chain slot the indexer has applied: now, then after every applied write.",
      subscribe: (_r, a, ctx, info) => open(ctx, info, a, () => liveTopics.indexedSlot()),
      resolve: payload,
    }),
  }));
}
