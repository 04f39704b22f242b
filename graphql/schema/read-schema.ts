/**
 * The read API over GraphQL (Pothos, code-first), on the same ReadService as REST. Lists are
 * Relay connections with keyset cursors (`first`/`after` forward, `last`/`before` backward; a
 * page holds 1 to 50 items, default 20; `totalCount`). Errors carry `extensions.code` naming the
 * REST status (BAD_REQUEST, UNAUTHENTICATED, NOT_FOUND, SERVICE_UNAVAILABLE) and
 * `extensions.status` the number; bad arguments fail at validation (enums and scalars, see
 * scalars.ts). A page's contracts, creator profiles and viewer positions are loaded in one batched
 * query each by ReadService.shapeOffers (no N+1); node(s) loads a type's ids in one query.
 */
import { GraphQLError } from "graphql";
import type { PageInfoShape } from "@pothos/plugin-relay";
import { ApiError, apiGraphQLError } from "../../service/api-error";
import { browseParams, type BrowseParams } from "../../service/read/params";
import type { KeysetPage, KeysetResult } from "../../service/read/read-service";
import { SPORTS } from "../../service/read/sports";
import type { ApiBuilder, ReadContext } from "./builder";
import { fillCursor, oddsCursor, offerCursor, type Cursor } from "./cursor";
import { addBook } from "./book-types";
import { addHistory } from "./history-types";
import { addWalletQueries } from "./wallet-schema";
import { addQuote } from "./quote-types";
import { defineReadTypes, viewerWallet, type ReadDeps, type ReadTypes } from "./read-types";

export type { ReadContext } from "./builder";

export function gqlApiError(e: unknown): GraphQLError {
  return apiGraphQLError(e, "temporarily unavailable; retry with backoff");
}

interface PageArgs {
  first?: number | null;
  last?: number | null;
  after?: Cursor | null;
  before?: Cursor | null;
}

type KeyOf<K extends Cursor["kind"]> = Extract<Cursor, { kind: K }>["key"];

/** `first`/`after` or `last`/`before` -> a keyset page of the cursor's kind. */
function keysetPage<K extends Cursor["kind"]>(a: PageArgs, kind: K): KeysetPage<KeyOf<K>> {
  if ((a.first != null || a.after != null) && (a.last != null || a.before != null))
    throw new ApiError(400, "page forward (first/after) or backward (last/before), not both");
  const forward = a.last == null && a.before == null;
  const c = forward ? a.after : a.before;
  if (c && c.kind !== kind) throw new ApiError(400, `${forward ? "after" : "before"}: not a cursor of this list`);
  return { forward, limit: (forward ? a.first : a.last) ?? 20, key: (c?.key ?? null) as KeyOf<K> | null };
}

/** A keyset result as a Relay connection with a complete PageInfo. */
function toConnection<T, K>(r: KeysetResult<T, K>, page: KeysetPage<K>, cursor: (k: K) => string) {
  // Each edge's cursor is encoded when a query reads it (a page of offers asked for without
  // cursors encoded 50 it never sent).
  const edges = r.items.map((node, i) => ({
    node,
    get cursor() {
      return cursor(r.keys[i]);
    },
  }));
  const pageInfo: PageInfoShape = {
    // Paging forward from a cursor, the cursor's item lies before the page (and backward, after it).
    hasNextPage: page.forward ? r.more : page.key !== null,
    hasPreviousPage: page.forward ? page.key !== null : r.more,
    startCursor: edges[0]?.cursor ?? null,
    endCursor: edges.at(-1)?.cursor ?? null,
  };
  return { edges, pageInfo, totalCount: r.total };
}

/** The read types, with the Book (added beside the queries, sent by the book subscription too). */
export type ReadSchemaTypes = ReadTypes & { BookT: ReturnType<typeof addBook> };

export function addReadQueries(builder: ApiBuilder, d: ReadDeps): ReadSchemaTypes {
  const types = defineReadTypes(builder, d);
  const { read } = d;
  const { enums } = types;
  const wallet = (ctx: ReadContext) => viewerWallet(ctx, d.custody);
  const guard = <T>(fn: () => Promise<T>) =>
    fn().catch((e) => {
      throw gqlApiError(e);
    });

  const pageArgs = builder.args((t) => ({
    first: t.field({ type: "PageSize", required: false, description: "Page size forward, 1 to 50 (default 20)." }),
    after: t.field({ type: "Cursor", required: false }),
    last: t.field({ type: "PageSize", required: false, description: "Page size backward, 1 to 50." }),
    before: t.field({ type: "Cursor", required: false }),
  }));
  const listArgs = builder.args((t) => ({
    ...pageArgs,
    sport: t.string({ description: `One of: ${SPORTS.join(", ")} (any case).` }),
    query: t.string({ description: "Text search over title, event, competition and side labels (at most 200 characters)." }),
    status: t.field({ type: enums.OfferStatus, required: false }),
    view: t.field({ type: enums.OfferView, required: false }),
  }));
  const filters = (a: { sport?: string | null; query?: string | null; status?: BrowseParams["status"] | null; view?: BrowseParams["view"] | null }) => {
    const { page: _p, pageSize: _s, ...f } = browseParams({ sport: a.sport ?? undefined, query: a.query ?? undefined });
    return { ...f, status: a.status ?? undefined, view: a.view ?? undefined };
  };

  builder.queryFields((t) => ({
    settings: t.field({ type: types.SettingsT, resolve: () => guard(() => read.settings()) }),
    contracts: t.field({ type: [types.ContractT], description: "Open contracts before their cutoff.", resolve: () => guard(() => read.openContracts()) }),
    offers: t.field({
      type: types.OfferConnection,
      args: { ...listArgs, sort: t.arg({ type: enums.OfferSort, description: "The order (default newest); a cursor pages only the order it came from." }) },
      description: "Offers, newest first, or by the taker's odds (sort: bestOdds).",
      resolve: (_r, a, ctx) =>
        guard(async () => {
          if (a.sort === "bestOdds") {
            const byOdds = keysetPage(a, "odds");
            return toConnection(await read.offersByOddsKeyset(filters(a), byOdds, { viewerWallet: await wallet(ctx) }), byOdds, oddsCursor);
          }
          const page = keysetPage(a, "offer");
          return toConnection(await read.offersKeyset(filters(a), page, { viewerWallet: await wallet(ctx) }), page, offerCursor);
        }),
    }),
    offer: t.field({
      type: types.OfferT,
      args: { address: t.arg({ type: "Address", required: true }) },
      resolve: (_r, a, ctx) =>
        guard(async () => {
          const o = await read.offer(a.address, await wallet(ctx));
          if (!o) throw new ApiError(404, "offer not found");
          return o;
        }),
    }),
    fills: t.field({
      type: types.FillConnection,
      args: { offerAddress: t.arg({ type: "Address", required: true }), ...pageArgs },
      description: "An offer's fills in revision order.",
      resolve: (_r, a) =>
        guard(async () => {
          const page = keysetPage(a, "fill");
          return toConnection(await read.fillsKeyset(a.offerAddress, page), page, fillCursor);
        }),
    }),
    mine: t.field({
      type: types.OfferConnection,
      args: { ...listArgs, role: t.arg({ type: enums.MineRole, description: "Only the offers of that role (default both)." }) },
      description: "Offers the caller created or took, newest first (needs a token).",
      resolve: (_r, a, ctx) =>
        guard(async () => {
          const w = await wallet(ctx);
          if (!w) throw new ApiError(401, "mine needs a token: Authorization: Bearer <token>");
          const page = keysetPage(a, "offer");
          return toConnection(await read.offersKeyset({ ...filters(a), role: a.role ?? undefined }, page, { viewerWallet: w, mineOf: w }), page, offerCursor);
        }),
    }),
    walletPositions: t.field({
      type: types.OfferConnection,
      args: { wallet: t.arg({ type: "Address", required: true }), ...listArgs },
      description: "The offers any wallet took, each with that wallet's position, newest first (public on chain; no token needed).",
      resolve: (_r, a) =>
        guard(async () => {
          const page = keysetPage(a, "offer");
          return toConnection(
            await read.offersKeyset({ ...filters(a), role: "taker" }, page, { viewerWallet: a.wallet, mineOf: a.wallet, publicRead: true }),
            page,
            offerCursor,
          );
        }),
    }),
    shareable: t.field({
      type: types.ShareableConnection,
      args: listArgs,
      description: "Open offers as a line of chat text and a link each, newest first.",
      resolve: (_r, a) =>
        guard(async () => {
          const page = keysetPage(a, "offer");
          const r = await read.offersKeyset({ ...filters(a), view: "browse" }, page, { viewerWallet: null });
          return toConnection({ ...r, items: r.items.map((o) => read.shareableOf(o)) }, page, offerCursor);
        }),
    }),
    poll: t.field({
      type: types.PoolT,
      args: { identifier: t.arg.string({ required: true, description: "Pool slug or bet address." }) },
      resolve: (_r, a) =>
        guard(async () => {
          const p = await read.poolAggregate(a.identifier);
          if (!p) throw new ApiError(404, "Poll not found");
          return p;
        }),
    }),
    _meta: t.field({ type: types.Meta, resolve: () => guard(async () => ({ indexedSlot: String(await read.indexedSlot()) })) }),
  }));
  const BookT = addBook(builder, d, types, guard);
  addHistory(builder, d, types, guard);
  addQuote(builder, d, types, guard);
  addWalletQueries(builder, d, types, guard);
  return { ...types, BookT };
}
