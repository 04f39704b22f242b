/**
 * The read API over GraphQL (Pothos, code-first), on the same ReadService as REST. Lists are
 * Relay-style connections (`first` 1..50, default 20; `after` an opaque cursor; `totalCount`).
 * Errors carry `extensions.code` naming the REST status (BAD_REQUEST, UNAUTHENTICATED,
 * NOT_FOUND, SERVICE_UNAVAILABLE) and `extensions.status` the number. Amounts are decimal
 * strings, times ISO 8601. A page's contracts, creator profiles and viewer positions are loaded
 * in one batched query each (no N+1).
 */
import { GraphQLError } from "graphql";
import type { Custody } from "../../service/custody/custody";
import { ApiError, apiGraphQLError } from "../../service/api-error";
import { browseParams, mineParams, offerAddress, type BrowseParams } from "../../service/read/params";
import type { Contract, CreatorSettlement, Offer, ReadService, Settings, Viewer, ViewerPosition } from "../../service/read/read-service";
import { SPORTS } from "../../service/read/sports";
import { resolveViewer, type ReadViewer } from "../../service/read/viewer";
import type { DerivedFill, PoolAggregate } from "../../indexer";

export interface ReadContext {
  request: Request;
  viewer?: Promise<ReadViewer | null>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyBuilder = any;

export function gqlApiError(e: unknown, log?: (e: unknown) => void): GraphQLError {
  return apiGraphQLError(e, "temporarily unavailable; retry with backoff", log);
}

const encodeCursor = (offset: number) => Buffer.from(`o:${offset}`).toString("base64url");
function decodeCursor(c: string | null | undefined): number {
  if (c === null || c === undefined) return 0;
  const m = /^o:(\d{1,9})$/.exec(Buffer.from(c, "base64url").toString());
  if (!m) throw new ApiError(400, "after: not a cursor returned by this API");
  return Number(m[1]) + 1;
}

/** The object types other parts of the schema reuse (subscriptions send what the queries return). */
export interface ReadRefs {
  Offer: unknown;
  Fill: unknown;
  PoolAggregate: unknown;
}

export function addReadQueries(builder: AnyBuilder, read: ReadService, custody: Custody | null, opts: { log?: (e: unknown) => void } = {}): ReadRefs {
  const viewerOf = (ctx: ReadContext) => (ctx.viewer ??= resolveViewer(custody, ctx.request.headers.get("authorization")));
  const guard = <T>(fn: () => Promise<T>) =>
    fn().catch((e) => {
      throw gqlApiError(e, opts.log);
    });

  const Limits = builder.objectRef("Limits").implement({
    fields: (t: AnyBuilder) =>
      Object.fromEntries(
        [
          "minimumCreatorMicros",
          "minimumTakeMicros",
          "maximumWagerMicros",
          "warningRatioNumerator",
          "warningRatioDenominator",
          "minimumOddsNumerator",
          "minimumOddsDenominator",
          "maximumOddsNumerator",
          "maximumOddsDenominator",
        ].map((f) => [f, t.exposeString(f)]),
      ),
  });
  const SettingsT = builder.objectRef("Settings").implement({
    description: "Service settings (refreshed from chain about every 30 s).",
    fields: (t: AnyBuilder) => ({
      feeBps: t.exposeInt("feeBps"),
      offersEnabled: t.exposeBoolean("offersEnabled"),
      limits: t.field({ type: Limits, resolve: (s: Settings) => s.limits }),
    }),
  });
  const Outcome = builder
    .objectRef("ContractOutcome")
    .implement({ fields: (t: AnyBuilder) => ({ side: t.exposeString("side"), label: t.exposeString("label") }) });
  const Visual = builder.objectRef("Visual").implement({ fields: (t: AnyBuilder) => ({ src: t.exposeString("src"), alt: t.exposeString("alt") }) });
  const ContractT = builder.objectRef("Contract").implement({
    fields: (t: AnyBuilder) => ({
      ...Object.fromEntries(
        ["address", "templateId", "eventId", "title", "description", "event", "competition", "startsAt", "cutoffAt", "resolutionDeadline", "status"].map(
          (f) => [f, t.exposeString(f)],
        ),
      ),
      sport: t.exposeString("sport", { description: `One of: ${SPORTS.join(", ")}.` }),
      result: t.exposeString("result", { nullable: true, description: "sideA or sideB (the side that won) or void; null while the contract has no result." }),
      outcomes: t.field({ type: [Outcome], resolve: (c: Contract) => c.outcomes }),
      visuals: t.field({ type: [Visual], resolve: (c: Contract) => c.visuals }),
    }),
  });
  const PositionT = builder.objectRef("ViewerPosition").implement({
    description: "The caller's position on an offer (role taker).",
    fields: (t: AnyBuilder) => ({
      ...Object.fromEntries(["address", "takerAmountMicros", "creatorMatchedMicros", "status", "createdAt"].map((f) => [f, t.exposeString(f)])),
      fillCount: t.exposeInt("fillCount"),
      settledAt: t.exposeString("settledAt", { nullable: true }),
      payoutMicros: t.exposeString("payoutMicros", { nullable: true, description: "What the taker received at settlement." }),
      feeMicros: t.exposeString("feeMicros", { nullable: true }),
    }),
  });
  const SettlementOutcomeT = builder.objectRef("SettlementOutcome").implement({
    description: "The offer's settled positions of one status, summed.",
    fields: (t: AnyBuilder) => ({
      status: t.exposeString("status", { description: "SettledCreatorWin, SettledTakerWin or Refunded" }),
      positionCount: t.exposeInt("positionCount"),
      ...Object.fromEntries(
        ["takerMicros", "creatorMatchedMicros", "creatorPayoutMicros", "takerPayoutMicros", "feeMicros"].map((f) => [f, t.exposeString(f)]),
      ),
    }),
  });
  const SettlementT = builder.objectRef("CreatorSettlement").implement({
    description: "How settlement went for the creator of the offer.",
    fields: (t: AnyBuilder) => ({
      settledPositionCount: t.exposeInt("settledPositionCount"),
      paidOutMicros: t.exposeString("paidOutMicros", { description: "Paid to the creator on positions the creator's side won." }),
      feeMicros: t.exposeString("feeMicros", { description: "The fee taken from those winnings." }),
      refundedMicros: t.exposeString("refundedMicros", { description: "Unmatched stake returned at close plus matched stake of voided positions." }),
      receivedMicros: t.exposeString("receivedMicros", { description: "paidOutMicros + refundedMicros." }),
      outcomes: t.field({ type: [SettlementOutcomeT], resolve: (x: CreatorSettlement) => x.outcomes }),
    }),
  });
  const ViewerT = builder.objectRef("Viewer").implement({
    description: "The offer relative to the caller: role none | creator | taker.",
    fields: (t: AnyBuilder) => ({
      role: t.exposeString("role"),
      canTake: t.exposeBoolean("canTake", { description: "A take of at least the minimum (or of the remainder) could pass every check now." }),
      maxTakeMicros: t.exposeString("maxTakeMicros", { description: "The most the caller may take now; 0 when canTake is false." }),
      takeLimit: t.exposeString("takeLimit", {
        description: "remaining (the offer's remainder) or maximumWager (the caller's room under maximumWagerMicros).",
      }),
      takeRefusal: t.exposeString("takeRefusal", {
        nullable: true,
        description:
          "Why canTake is false: offerNotOpen, contractClosed, offersDisabled, ownOffer, callerBlocked, creatorBlocked, maximumWager, tooSmallToMatch.",
      }),
      canClose: t.exposeBoolean("canClose"),
      returnMicros: t.exposeString("returnMicros", {
        nullable: true,
        description: "Before a result: what the caller receives if their side wins. After: what the caller receives under the result (0 on a loss).",
      }),
      position: t.field({ type: PositionT, nullable: true, resolve: (v: Viewer) => v.position as ViewerPosition | null }),
      settlement: t.field({
        type: SettlementT,
        nullable: true,
        description: "The creator's settlement summary (null for others).",
        resolve: (v: Viewer) => v.settlement,
      }),
    }),
  });
  const Creator = builder
    .objectRef("CreatorProfile")
    .implement({ fields: (t: AnyBuilder) => ({ displayName: t.exposeString("displayName"), profileImageUrl: t.exposeString("profileImageUrl") }) });
  const Guardrail = builder
    .objectRef("TermsGuardrail")
    .implement({ fields: (t: AnyBuilder) => ({ status: t.exposeString("status", { description: "normal, or warning above the warning ratio either way" }) }) });
  const OfferT = builder.objectRef("Offer").implement({
    fields: (t: AnyBuilder) => ({
      ...Object.fromEntries(
        [
          "address",
          "creatorOutcome",
          "creatorSideLabel",
          "takerSideLabel",
          "creatorTotalMicros",
          "creatorAllocatedMicros",
          "takerTargetMicros",
          "takerFilledMicros",
          "remainingTakerMicros",
          "minimumTakeMicros",
          "status",
          "revision",
          "createdAt",
        ].map((f) => [f, t.exposeString(f)]),
      ),
      feeBps: t.exposeInt("feeBps"),
      fillCount: t.exposeInt("fillCount"),
      positionCount: t.exposeInt("positionCount"),
      settledPositionCount: t.exposeInt("settledPositionCount"),
      closedAt: t.exposeString("closedAt", { nullable: true }),
      contract: t.field({ type: ContractT, resolve: (o: Offer) => o.contract }),
      creator: t.field({ type: Creator, resolve: (o: Offer) => o.creator }),
      termsGuardrail: t.field({ type: Guardrail, resolve: (o: Offer) => o.termsGuardrail }),
      viewer: t.field({ type: ViewerT, resolve: (o: Offer) => o.viewer }),
    }),
  });
  const FillT = builder.objectRef("Fill").implement({
    description: "One take on an offer (an OfferTaken event).",
    fields: (t: AnyBuilder) =>
      Object.fromEntries(
        [
          "offer",
          "revision",
          "taker",
          "position",
          "takeMicros",
          "creatorMatchedMicros",
          "takerFilledMicros",
          "creatorAllocatedMicros",
          "filledAt",
          "signature",
        ].map((f) => [f, t.exposeString(f)]),
      ),
  });
  const Shareable = builder.objectRef("ShareableOffer").implement({
    fields: (t: AnyBuilder) => ({
      address: t.exposeString("address"),
      text: t.exposeString("text"),
      url: t.exposeString("url"),
      offer: t.field({ type: OfferT, resolve: (s: { offer: Offer }) => s.offer }),
    }),
  });
  const PoolOutcome = builder.objectRef("PoolOutcome").implement({
    fields: (t: AnyBuilder) => ({
      outcomeIndex: t.exposeInt("outcomeIndex"),
      label: t.exposeString("label"),
      totalOiMicros: t.exposeString("totalOiMicros"),
      shareBps: t.exposeInt("shareBps"),
      wagerCount: t.exposeInt("wagerCount"),
      isResolved: t.exposeBoolean("isResolved"),
    }),
  });
  const Pool = builder.objectRef("PoolAggregate").implement({
    description: "Aggregate numbers of a public pool (area B); never individual participants.",
    fields: (t: AnyBuilder) => ({
      schemaVersion: t.exposeInt("schemaVersion"),
      id: t.exposeString("id"),
      slug: t.exposeString("slug", { nullable: true }),
      question: t.exposeString("question"),
      version: t.exposeInt("version"),
      state: t.exposeString("state"),
      cancelReason: t.exposeString("cancelReason", {
        nullable: true,
        description:
          "Why the pool was canceled (CANCELED, or REFUNDED after a cancel): CREATOR (withdrawn while picks were open), ESCALATION (the authority canceled it, or left it undecided for 7 days), NO_PICKS (closed without a pick); null otherwise.",
      }),
      outcomes: t.field({ type: [PoolOutcome], resolve: (p: PoolAggregate) => p.outcomes }),
      totalOiMicros: t.exposeString("totalOiMicros"),
      participantCount: t.exposeInt("participantCount"),
      closesAt: t.exposeString("closesAt", { nullable: true }),
      resolutionAt: t.exposeString("resolutionAt", { nullable: true }),
      resolutionCriteria: t.exposeString("resolutionCriteria", { nullable: true }),
      coverImageUrl: t.exposeString("coverImageUrl", { nullable: true }),
      updatedAt: t.exposeString("updatedAt"),
      canonicalUrl: t.exposeString("canonicalUrl"),
      revision: t.exposeString("revision"),
    }),
  });
  const PageInfo = builder
    .objectRef("PageInfo")
    .implement({ fields: (t: AnyBuilder) => ({ hasNextPage: t.exposeBoolean("hasNextPage"), endCursor: t.exposeString("endCursor", { nullable: true }) }) });
  const connection = (name: string, node: unknown) => {
    const Edge = builder.objectRef(`${name}Edge`).implement({
      fields: (t: AnyBuilder) => ({ cursor: t.exposeString("cursor"), node: t.field({ type: node, resolve: (e: { node: unknown }) => e.node }) }),
    });
    return builder.objectRef(`${name}Connection`).implement({
      fields: (t: AnyBuilder) => ({
        edges: t.field({ type: [Edge], resolve: (c: { edges: unknown[] }) => c.edges }),
        pageInfo: t.field({ type: PageInfo, resolve: (c: { pageInfo: unknown }) => c.pageInfo }),
        totalCount: t.exposeInt("totalCount"),
      }),
    });
  };
  const OfferConnection = connection("Offer", OfferT);
  const FillConnection = connection("Fill", FillT);
  const ShareableConnection = connection("ShareableOffer", Shareable);
  const Meta = builder
    .objectRef("Meta")
    .implement({ fields: (t: AnyBuilder) => ({ indexedSlot: t.exposeString("indexedSlot", { description: "Highest chain slot applied by the indexer." }) }) });

  /** `first`/`after` -> the service's page params (offset-based underneath). */
  const window = (a: { first?: number | null; after?: string | null }) => {
    const first = a.first ?? 20;
    if (!Number.isInteger(first) || first < 1 || first > 50) throw new ApiError(400, "first must be an integer from 1 to 50");
    return { pageSize: first, offset: decodeCursor(a.after) };
  };
  const toConnection = <T>(items: T[], offset: number, total: number) => ({
    edges: items.map((node, i) => ({ cursor: encodeCursor(offset + i), node })),
    pageInfo: { hasNextPage: offset + items.length < total, endCursor: items.length ? encodeCursor(offset + items.length - 1) : null },
    totalCount: total,
  });
  const listArgs = (t: AnyBuilder) => ({
    first: t.arg.int({ description: "Page size, 1 to 50 (default 20)." }),
    after: t.arg.string(),
    sport: t.arg.string({ description: `One of: ${SPORTS.join(", ")} (any case).` }),
    query: t.arg.string({ description: "Text search over title, event, competition and side labels." }),
    status: t.arg.string({ description: "Open, Filled, Closed or Settled." }),
    view: t.arg.string({ description: "browse (open offers) or results (Closed and Settled)." }),
  });
  const filters = (a: Record<string, unknown>): BrowseParams => {
    const w = window(a as { first?: number; after?: string });
    const p = browseParams({
      sport: a.sport as string | undefined,
      query: a.query as string | undefined,
      status: a.status as string | undefined,
      view: a.view as string | undefined,
    });
    return { ...p, page: 1, pageSize: w.pageSize, offset: w.offset };
  };

  builder.queryFields((t: AnyBuilder) => ({
    settings: t.field({ type: SettingsT, resolve: () => guard(() => read.settings()) }),
    contracts: t.field({ type: [ContractT], description: "Open contracts before their cutoff.", resolve: () => guard(() => read.openContracts()) }),
    offers: t.field({
      type: OfferConnection,
      args: listArgs(t),
      resolve: (_r: unknown, a: Record<string, unknown>, ctx: ReadContext) =>
        guard(async () => {
          const p = filters(a);
          const r = await read.browse(p, (await viewerOf(ctx))?.wallet ?? null);
          return toConnection(r.offers, p.offset!, r.pagination.total);
        }),
    }),
    offer: t.field({
      type: OfferT,
      args: { address: t.arg.string({ required: true }) },
      resolve: (_r: unknown, a: { address: string }, ctx: ReadContext) =>
        guard(async () => {
          const o = await read.offer(offerAddress(a.address), (await viewerOf(ctx))?.wallet ?? null);
          if (!o) throw new ApiError(404, "offer not found");
          return o;
        }),
    }),
    fills: t.field({
      type: FillConnection,
      args: { offerAddress: t.arg.string({ required: true }), first: t.arg.int(), after: t.arg.string() },
      resolve: (_r: unknown, a: { offerAddress: string; first?: number; after?: string }) =>
        guard(async () => {
          const w = window(a);
          const r = await read.fills(offerAddress(a.offerAddress), { page: 1, pageSize: w.pageSize, offset: w.offset });
          return toConnection<DerivedFill>(r.fills, w.offset, r.pagination.total);
        }),
    }),
    mine: t.field({
      type: OfferConnection,
      args: { ...listArgs(t), role: t.arg.string({ description: "creator or taker: only the offers of that role (default both)." }) },
      description: "Offers the caller created or took (needs a token).",
      resolve: (_r: unknown, a: Record<string, unknown>, ctx: ReadContext) =>
        guard(async () => {
          const v = await viewerOf(ctx);
          if (!v) throw new ApiError(401, "mine needs a token: Authorization: Bearer <token>");
          const p = { ...filters(a), role: mineParams({ role: a.role as string | undefined }).role };
          const r = await read.mine(p, v.wallet);
          return toConnection(r.offers, p.offset!, r.pagination.total);
        }),
    }),
    shareable: t.field({
      type: ShareableConnection,
      args: listArgs(t),
      resolve: (_r: unknown, a: Record<string, unknown>) =>
        guard(async () => {
          const p = filters(a);
          const r = await read.shareable(p);
          return toConnection(r.offers, p.offset!, r.pagination.total);
        }),
    }),
    poll: t.field({
      type: Pool,
      args: { identifier: t.arg.string({ required: true, description: "Pool slug or bet address." }) },
      resolve: (_r: unknown, a: { identifier: string }) =>
        guard(async () => {
          const p = await read.poolAggregate(a.identifier);
          if (!p) throw new ApiError(404, "Poll not found");
          return p;
        }),
    }),
    _meta: t.field({ type: Meta, resolve: () => guard(async () => ({ indexedSlot: String(await read.indexedSlot()) })) }),
  }));
  return { Offer: OfferT, Fill: FillT, PoolAggregate: Pool };
}
