/**
 * The API's enums, with the spec's own spellings (all valid GraphQL enum names, so the JSON
 * values are the REST ones). Registered once per builder: reads and writes share them.
 */
import { VIEWS, MINE_ROLES, OFFER_SORTS } from "../../service/read/params";
import { TAKE_REFUSALS } from "../../service/read/offer-viewer";
import { ContractStatus, OfferStatus as OFFER_STATUSES, PositionStatus as POSITION_STATUSES, SETTLEMENT_STATUSES } from "../../idl/client/offers";
import { POOL_STATES } from "../../idl/client/pools-rules";
import { POOL_CANCEL_REASONS } from "../../indexer";
import type { ApiBuilder } from "./builder";

function defineEnums(builder: ApiBuilder) {
  const OfferStatus = builder.enumType("OfferStatus", { values: OFFER_STATUSES, description: "An offer's status (the spec's values)." });
  const OfferView = builder.enumType("OfferView", { values: VIEWS, description: "browse: open offers; results: Closed and Settled." });
  const OfferSort = builder.enumType("OfferSort", {
    values: OFFER_SORTS,
    description: "newest: newest first; bestOdds: the taker's odds best first (exact ratios), then oldest, then address.",
  });
  const MineRole = builder.enumType("MineRole", { values: MINE_ROLES, description: "The caller's part in an offer, for `mine`." });
  const ViewerRole = builder.enumType("ViewerRole", { values: ["none", "creator", "taker"] as const, description: "The caller's part in an offer." });
  const Side = builder.enumType("Side", { values: ["sideA", "sideB"] as const, description: "A side of a two-sided contract." });
  const ContractResult = builder.enumType("ContractResult", { values: ["sideA", "sideB", "void"] as const, description: "The side that won, or void." });
  const ContractStatusE = builder.enumType("ContractStatus", { values: ContractStatus, description: "A contract's status on chain." });
  const PositionStatus = builder.enumType("PositionStatus", { values: POSITION_STATUSES, description: "Open until settled." });
  const SettlementStatus = builder.enumType("SettlementStatus", { values: SETTLEMENT_STATUSES });
  const GuardrailStatus = builder.enumType("GuardrailStatus", {
    values: ["normal", "warning"] as const,
    description: "warning above the warning ratio either way.",
  });
  const TakeLimit = builder.enumType("TakeLimit", {
    values: ["remaining", "maximumWager"] as const,
    description: "remaining (the offer's remainder) or maximumWager (the caller's room under maximumWagerMicros).",
  });
  const TakeRefusal = builder.enumType("TakeRefusal", { values: TAKE_REFUSALS, description: "Why canTake is false." });
  const PoolState = builder.enumType("PoolState", { values: POOL_STATES, description: "The spec's embed states." });
  const PoolCancelReason = builder.enumType("PoolCancelReason", {
    values: POOL_CANCEL_REASONS,
    description:
      "CREATOR (withdrawn while picks were open), AUTHORITY (escalated, canceled by the authority), TIMEOUT (escalated, left undecided for 7 days, then canceled), NO_PICKS (closed without a pick).",
  });

  return {
    OfferStatus,
    OfferView,
    OfferSort,
    MineRole,
    ViewerRole,
    Side,
    ContractResult,
    ContractStatus: ContractStatusE,
    PositionStatus,
    SettlementStatus,
    GuardrailStatus,
    TakeLimit,
    TakeRefusal,
    PoolState,
    PoolCancelReason,
  };
}

export type ApiEnums = ReturnType<typeof defineEnums>;
const registered = new WeakMap<ApiBuilder, ApiEnums>();

export function enumsOf(builder: ApiBuilder): ApiEnums {
  let e = registered.get(builder);
  if (!e) registered.set(builder, (e = defineEnums(builder)));
  return e;
}
