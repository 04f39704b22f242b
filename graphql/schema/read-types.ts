/**
 * The read API's GraphQL types: enums (the spec's own spellings, all valid GraphQL names, so the
 * JSON values are the REST ones), typed object refs, and the Relay `Node` types with global ids.
 * `defineReadTypes(builder)` registers them on a builder and returns the refs, so other parts of
 * the schema (mutations, subscriptions) return the same types.
 *
 * Node types and their raw id: Offer, ShareableOffer and ViewerPosition (the account address),
 * Contract (address), PoolAggregate (bet address), Fill (`<offer>:<revision>`). Value objects
 * (limits, outcomes, the viewer block, settlement sums) have no id of their own: clients store
 * them inside their parent.
 */
import type {
  Contract,
  CreatorSettlement,
  Offer,
  ReadService,
  SettlementOutcome,
  Settings,
  ShareableOffer,
  Viewer,
  ViewerPosition,
} from "../../service/read/read-service";
import { resolveViewer } from "../../service/read/viewer";
import type { Custody } from "../../service/custody/custody";
import type { DerivedFill, PoolAggregate } from "../../indexer";
import type { ContractStatus, PositionStatusName } from "../../idl/client/offers";
import { SPORTS } from "../../service/read/sports";
import { brandWithType } from "@pothos/core";
import type { ApiBuilder, ReadContext } from "./builder";
import { enumsOf } from "./enums";
import { defineOddsTypes } from "./odds-types";

export interface ReadDeps {
  read: ReadService;
  custody: Custody | null;
}

/** The caller's wallet, resolved once per request (the server resolves it before yoga runs). */
export const viewerWallet = async (ctx: ReadContext, custody: Custody | null): Promise<string | null> =>
  (await (ctx.viewer ??= resolveViewer(custody, ctx.request.headers.get("authorization"))))?.wallet ?? null;

export function fillId(f: Pick<DerivedFill, "offer" | "revision">): string {
  return `${f.offer}:${f.revision}`;
}

export function defineReadTypes(builder: ApiBuilder, d: ReadDeps) {
  const wallet = (ctx: ReadContext) => viewerWallet(ctx, d.custody);

  const enums = enumsOf(builder);
  const { OfferStatus, Side, ContractResult, PositionStatus, SettlementStatus, GuardrailStatus, TakeLimit, TakeRefusal, PoolState, PoolCancelReason } = enums;
  const ContractStatusE = enums.ContractStatus;
  const ViewerRole = enums.ViewerRole;
  const { OddsT, TakerOddsT } = defineOddsTypes(builder);

  // ---- value objects ------------------------------------------------------------------------
  const Limits = builder.objectRef<Settings["limits"]>("Limits").implement({
    fields: (t) => ({
      minimumCreatorMicros: t.expose("minimumCreatorMicros", { type: "Amount" }),
      minimumTakeMicros: t.expose("minimumTakeMicros", { type: "Amount" }),
      maximumWagerMicros: t.expose("maximumWagerMicros", { type: "Amount" }),
      warningRatioNumerator: t.exposeString("warningRatioNumerator"),
      warningRatioDenominator: t.exposeString("warningRatioDenominator"),
      minimumOddsNumerator: t.exposeString("minimumOddsNumerator"),
      minimumOddsDenominator: t.exposeString("minimumOddsDenominator"),
      maximumOddsNumerator: t.exposeString("maximumOddsNumerator"),
      maximumOddsDenominator: t.exposeString("maximumOddsDenominator"),
    }),
  });
  const SettingsT = builder.objectRef<Settings>("Settings").implement({
    description: "Service settings (refreshed from chain about every 30 s).",
    fields: (t) => ({
      feeBps: t.exposeInt("feeBps"),
      offersEnabled: t.exposeBoolean("offersEnabled"),
      limits: t.expose("limits", { type: Limits }),
    }),
  });
  const Outcome = builder
    .objectRef<Contract["outcomes"][number]>("ContractOutcome")
    .implement({ fields: (t) => ({ side: t.expose("side", { type: Side }), label: t.exposeString("label") }) });
  const Visual = builder
    .objectRef<Contract["visuals"][number]>("Visual")
    .implement({ fields: (t) => ({ src: t.exposeString("src"), alt: t.exposeString("alt") }) });
  const SettlementOutcomeT = builder.objectRef<SettlementOutcome>("SettlementOutcome").implement({
    description: "The offer's settled positions of one status, summed.",
    fields: (t) => ({
      status: t.expose("status", { type: SettlementStatus }),
      positionCount: t.exposeInt("positionCount"),
      takerMicros: t.expose("takerMicros", { type: "Amount" }),
      creatorMatchedMicros: t.expose("creatorMatchedMicros", { type: "Amount" }),
      creatorPayoutMicros: t.expose("creatorPayoutMicros", { type: "Amount" }),
      takerPayoutMicros: t.expose("takerPayoutMicros", { type: "Amount" }),
      feeMicros: t.expose("feeMicros", { type: "Amount" }),
    }),
  });
  const SettlementT = builder.objectRef<CreatorSettlement>("CreatorSettlement").implement({
    description: "How settlement went for the creator of the offer.",
    fields: (t) => ({
      settledPositionCount: t.exposeInt("settledPositionCount"),
      paidOutMicros: t.expose("paidOutMicros", { type: "Amount", description: "Paid to the creator on positions the creator's side won." }),
      feeMicros: t.expose("feeMicros", { type: "Amount", description: "The fee taken from those winnings." }),
      refundedMicros: t.expose("refundedMicros", {
        type: "Amount",
        description: "Unmatched stake returned at close plus matched stake of voided positions.",
      }),
      receivedMicros: t.expose("receivedMicros", { type: "Amount", description: "paidOutMicros + refundedMicros." }),
      outcomes: t.expose("outcomes", { type: [SettlementOutcomeT] }),
    }),
  });
  const Creator = builder.objectRef<Offer["creator"]>("CreatorProfile").implement({
    fields: (t) => ({ displayName: t.exposeString("displayName"), profileImageUrl: t.exposeString("profileImageUrl") }),
  });
  const Guardrail = builder
    .objectRef<Offer["termsGuardrail"]>("TermsGuardrail")
    .implement({ fields: (t) => ({ status: t.expose("status", { type: GuardrailStatus }) }) });
  const PoolOutcome = builder.objectRef<PoolAggregate["outcomes"][number]>("PoolOutcome").implement({
    fields: (t) => ({
      outcomeIndex: t.exposeInt("outcomeIndex"),
      label: t.exposeString("label"),
      totalOiMicros: t.expose("totalOiMicros", { type: "Amount" }),
      shareBps: t.exposeInt("shareBps"),
      wagerCount: t.exposeInt("wagerCount"),
      isResolved: t.exposeBoolean("isResolved"),
    }),
  });
  const Meta = builder.objectRef<{ indexedSlot: string }>("Meta").implement({
    fields: (t) => ({ indexedSlot: t.exposeString("indexedSlot", { description: "Highest chain slot applied by the indexer." }) }),
  });

  // ---- nodes --------------------------------------------------------------------------------
  /**
   * Every loaded node carries its type as it leaves its loader. Pothos brands it only after a whole
   * batch loaded, while node(id:) and nodes(ids:) asking for the same id share one cached load:
   * the second field could resolve the value first, unbranded, and Node's resolveType failed
   * ("Abstract type Node must resolve to an Object type").
   */
  const branded =
    <I, T>(typename: string, load: (id: I, ctx: ReadContext) => Promise<T> | T) =>
    async (id: I, ctx: ReadContext): Promise<T> => {
      const v = await load(id, ctx);
      for (const x of Array.isArray(v) ? v : [v]) brandWithType(x, typename as never);
      return v;
    };
  const ContractT = builder.node(builder.objectRef<Contract>("Contract"), {
    id: { resolve: (c) => c.address },
    loadMany: branded("Contract", async (ids: string[]) => {
      const found = await d.read.contractsByAddress(ids);
      return ids.map((id) => found.get(id) ?? null);
    }),
    fields: (t) => ({
      address: t.expose("address", { type: "Address" }),
      templateId: t.exposeString("templateId"),
      eventId: t.exposeString("eventId"),
      title: t.exposeString("title"),
      description: t.exposeString("description"),
      event: t.exposeString("event"),
      competition: t.exposeString("competition"),
      startsAt: t.expose("startsAt", { type: "DateTime" }),
      cutoffAt: t.expose("cutoffAt", { type: "DateTime" }),
      resolutionDeadline: t.expose("resolutionDeadline", { type: "DateTime" }),
      status: t.field({ type: ContractStatusE, resolve: (c) => c.status as (typeof ContractStatus)[number] }),
      sport: t.exposeString("sport", { description: `One of: ${SPORTS.join(", ")}.` }),
      result: t.expose("result", { type: ContractResult, nullable: true, description: "null while the contract has no result." }),
      outcomes: t.expose("outcomes", { type: [Outcome] }),
      visuals: t.expose("visuals", { type: [Visual] }),
    }),
  });
  const PositionT = builder.node(builder.objectRef<ViewerPosition>("ViewerPosition"), {
    description: "The caller's position on an offer (role taker); node(id:) finds it for its taker only.",
    id: { resolve: (p) => p.address },
    loadOne: branded("ViewerPosition", async (id: string, ctx: ReadContext) => (await d.read.positionOf(id, await wallet(ctx)))?.position ?? null),
    fields: (t) => ({
      address: t.expose("address", { type: "Address" }),
      takerAmountMicros: t.expose("takerAmountMicros", { type: "Amount" }),
      creatorMatchedMicros: t.expose("creatorMatchedMicros", { type: "Amount" }),
      status: t.field({ type: PositionStatus, resolve: (p) => p.status as PositionStatusName }),
      createdAt: t.expose("createdAt", { type: "DateTime" }),
      fillCount: t.exposeInt("fillCount"),
      settledAt: t.expose("settledAt", { type: "DateTime", nullable: true }),
      payoutMicros: t.expose("payoutMicros", { type: "Amount", nullable: true, description: "What the taker received at settlement." }),
      feeMicros: t.expose("feeMicros", { type: "Amount", nullable: true }),
    }),
  });
  const ViewerT = builder.objectRef<Viewer>("Viewer").implement({
    description: "The offer relative to the caller (anonymous: role none).",
    fields: (t) => ({
      role: t.expose("role", { type: ViewerRole }),
      canTake: t.exposeBoolean("canTake", { description: "A take of at least the minimum (or of the remainder) could pass every check now." }),
      maxTakeMicros: t.expose("maxTakeMicros", { type: "Amount", description: "The most the caller may take now; 0 when canTake is false." }),
      takeLimit: t.expose("takeLimit", { type: TakeLimit }),
      takeRefusal: t.expose("takeRefusal", { type: TakeRefusal, nullable: true }),
      canClose: t.exposeBoolean("canClose"),
      returnMicros: t.expose("returnMicros", {
        type: "Amount",
        nullable: true,
        description: "Before a result: what the caller receives if their side wins. After: what the caller receives under the result (0 on a loss).",
      }),
      position: t.expose("position", { type: PositionT, nullable: true }),
      settlement: t.expose("settlement", { type: SettlementT, nullable: true, description: "The creator's settlement summary (null for others)." }),
    }),
  });
  const OfferT = builder.node(builder.objectRef<Offer>("Offer"), {
    id: { resolve: (o) => o.address },
    loadMany: branded("Offer", async (ids: string[], ctx: ReadContext) => {
      const found = await d.read.offersByAddress(ids, await wallet(ctx));
      return ids.map((id) => found.get(id) ?? null);
    }),
    fields: (t) => ({
      address: t.expose("address", { type: "Address" }),
      creatorOutcome: t.expose("creatorOutcome", { type: Side }),
      creatorSideLabel: t.exposeString("creatorSideLabel"),
      takerSideLabel: t.exposeString("takerSideLabel"),
      creatorTotalMicros: t.expose("creatorTotalMicros", { type: "Amount" }),
      creatorAllocatedMicros: t.expose("creatorAllocatedMicros", { type: "Amount" }),
      takerTargetMicros: t.expose("takerTargetMicros", { type: "Amount" }),
      takerFilledMicros: t.expose("takerFilledMicros", { type: "Amount" }),
      remainingTakerMicros: t.expose("remainingTakerMicros", { type: "Amount" }),
      minimumTakeMicros: t.expose("minimumTakeMicros", { type: "Amount" }),
      status: t.expose("status", { type: OfferStatus }),
      revision: t.exposeString("revision"),
      createdAt: t.expose("createdAt", { type: "DateTime" }),
      feeBps: t.exposeInt("feeBps"),
      fillCount: t.exposeInt("fillCount"),
      positionCount: t.exposeInt("positionCount"),
      settledPositionCount: t.exposeInt("settledPositionCount"),
      closedAt: t.expose("closedAt", { type: "DateTime", nullable: true }),
      expiresAt: t.expose("expiresAt", {
        type: "DateTime",
        nullable: true,
        description: "From this time the offer takes no takes and anyone may close it; null: none (the contract's cutoff only).",
      }),
      contract: t.expose("contract", { type: ContractT }),
      creator: t.expose("creator", { type: Creator }),
      termsGuardrail: t.expose("termsGuardrail", { type: Guardrail }),
      takerOdds: t.expose("takerOdds", { type: TakerOddsT, description: "The taker's odds (T + S) : T." }),
      creatorOdds: t.expose("creatorOdds", { type: OddsT, description: "The creator's odds (S + T) : S." }),
      viewer: t.expose("viewer", { type: ViewerT }),
    }),
  });
  const FillT = builder.node(builder.objectRef<DerivedFill>("Fill"), {
    description: "One take on an offer (an OfferTaken event).",
    id: { resolve: fillId },
    loadOne: branded("Fill", async (id: string) => {
      const m = /^([1-9A-HJ-NP-Za-km-z]{32,44}):(\d{1,15})$/.exec(id);
      return m ? d.read.fill(m[1], Number(m[2])) : null;
    }),
    fields: (t) => ({
      offer: t.expose("offer", { type: "Address" }),
      revision: t.exposeString("revision"),
      taker: t.expose("taker", { type: "Address" }),
      position: t.expose("position", { type: "Address" }),
      takeMicros: t.expose("takeMicros", { type: "Amount" }),
      creatorMatchedMicros: t.expose("creatorMatchedMicros", { type: "Amount" }),
      takerFilledMicros: t.expose("takerFilledMicros", { type: "Amount" }),
      creatorAllocatedMicros: t.expose("creatorAllocatedMicros", { type: "Amount" }),
      filledAt: t.expose("filledAt", { type: "DateTime" }),
      signature: t.exposeString("signature"),
    }),
  });
  const ShareableT = builder.node(builder.objectRef<ShareableOffer>("ShareableOffer"), {
    id: { resolve: (s) => s.address },
    loadMany: branded("ShareableOffer", async (ids: string[]) => {
      const found = await d.read.offersByAddress(ids, null);
      return ids.map((id) => {
        const o = found.get(id);
        return o ? d.read.shareableOf(o) : null;
      });
    }),
    fields: (t) => ({
      address: t.expose("address", { type: "Address" }),
      text: t.exposeString("text"),
      url: t.exposeString("url"),
      offer: t.expose("offer", { type: OfferT }),
    }),
  });
  const PoolT = builder.node(builder.objectRef<PoolAggregate>("PoolAggregate"), {
    description:
      "Aggregate numbers of a public pool (area B); never individual participants. `id` is the Relay id: the spec's `id` (the bet address) is `address` here.",
    id: { resolve: (p) => p.id },
    loadOne: branded("PoolAggregate", (id: string) => d.read.poolAggregate(id)),
    fields: (t) => ({
      address: t.expose("id", { type: "Address", description: "The bet address (the spec's `id`)." }),
      schemaVersion: t.exposeInt("schemaVersion"),
      slug: t.exposeString("slug", { nullable: true }),
      question: t.exposeString("question"),
      version: t.exposeInt("version"),
      state: t.expose("state", { type: PoolState }),
      cancelReason: t.expose("cancelReason", {
        type: PoolCancelReason,
        nullable: true,
        description: "Why the pool was canceled (CANCELED, or REFUNDED after a cancel); null otherwise.",
      }),
      outcomes: t.expose("outcomes", { type: [PoolOutcome] }),
      totalOiMicros: t.expose("totalOiMicros", { type: "Amount" }),
      participantCount: t.exposeInt("participantCount"),
      closesAt: t.expose("closesAt", { type: "DateTime", nullable: true }),
      resolutionAt: t.expose("resolutionAt", { type: "DateTime", nullable: true }),
      resolutionCriteria: t.exposeString("resolutionCriteria", { nullable: true }),
      coverImageUrl: t.exposeString("coverImageUrl", { nullable: true }),
      updatedAt: t.expose("updatedAt", { type: "DateTime" }),
      canonicalUrl: t.exposeString("canonicalUrl"),
      revision: t.exposeString("revision"),
    }),
  });

  // ---- connections --------------------------------------------------------------------------
  /** A connection whose resolver also returns the count of every match. */
  const counted = <T extends typeof OfferT | typeof FillT | typeof ShareableT>(type: T, name: string) =>
    builder.connectionObject<T, { totalCount: number }>(
      {
        type,
        name: `${name}Connection`,
        fields: (t) => ({ totalCount: t.exposeInt("totalCount", { description: "Items matching the filters, across all pages." }) }),
      },
      { name: `${name}Edge` },
    );
  const OfferConnection = counted(OfferT, "Offer");
  const FillConnection = counted(FillT, "Fill");
  const ShareableConnection = counted(ShareableT, "ShareableOffer");

  return {
    enums,
    SettingsT,
    Meta,
    ContractT,
    OfferT,
    PositionT,
    ViewerT,
    FillT,
    ShareableT,
    PoolT,
    OfferConnection,
    FillConnection,
    ShareableConnection,
    OddsT,
    TakerOddsT,
  };
}

export type ReadTypes = ReturnType<typeof defineReadTypes>;
