/**
 * The `viewer` block of an offer: the offer relative to the caller, derived from the indexed
 * offer, its contract, the caller's position (or, for the creator, every position of the offer)
 * and the compliance flags of the caller and the creator. Decisions in docs/service-guide.md
 * ("Read API").
 */
import type { ConfigTable, PositionsTable } from "../../indexer";
import type { OfferFields } from "./contracts";
import { iso } from "../../indexer";
import { SETTLEMENT_STATUSES, type SettlementStatusName } from "../../idl/client/offers";
import {
  closeRefusal,
  creatorWinReturn,
  payouts,
  takeRefusal,
  takerWinReturn,
  type ContractTiming,
  type OfferTerms,
  type TakeRefusalName,
} from "../../idl/client/offers-rules";

export type ContractResult = "sideA" | "sideB" | "void";

/** The viewer's position on an offer. */
export interface ViewerPosition {
  address: string;
  takerAmountMicros: string;
  creatorMatchedMicros: string;
  status: string;
  fillCount: number;
  createdAt: string;
  settledAt: string | null;
  payoutMicros: string | null;
  feeMicros: string | null;
}

/** Settled positions of one outcome, summed. */
export interface SettlementOutcome {
  status: SettlementStatusName;
  positionCount: number;
  takerMicros: string;
  creatorMatchedMicros: string;
  creatorPayoutMicros: string;
  takerPayoutMicros: string;
  feeMicros: string;
}

/** How settlement went for the creator of an offer (from the indexed positions). */
export interface CreatorSettlement {
  settledPositionCount: number;
  /** Paid to the creator on the positions the creator's side won. */
  paidOutMicros: string;
  /** The fee taken from those winnings. */
  feeMicros: string;
  /** Stake returned: the unmatched part at close plus the matched part of voided positions. */
  refundedMicros: string;
  /** paidOutMicros + refundedMicros. */
  receivedMicros: string;
  /** One entry per settlement status, always all three. */
  outcomes: SettlementOutcome[];
}

/** Why the caller cannot take, when canTake is false (the API's enum: GraphQL and OpenAPI take it from here). */
export const TAKE_REFUSALS = [
  "offerNotOpen",
  "offerExpired",
  "contractClosed",
  "offersDisabled",
  "ownOffer",
  "callerBlocked",
  "creatorBlocked",
  "maximumWager",
  "tooSmallToMatch",
] as const;
export type TakeRefusal = (typeof TAKE_REFUSALS)[number];

export interface Viewer {
  role: "none" | "creator" | "taker";
  canTake: boolean;
  /** The most the caller may take now ("0" when canTake is false). */
  maxTakeMicros: string;
  /** Which limit sets maxTakeMicros: the offer's remaining amount or the caller's room under maximumWagerMicros. */
  takeLimit: "remaining" | "maximumWager";
  takeRefusal: TakeRefusal | null;
  canClose: boolean;
  returnMicros: string | null;
  position: ViewerPosition | null;
  settlement: CreatorSettlement | null;
}

export interface ViewerInput {
  offer: OfferFields;
  wallet: string | null;
  position: PositionsTable | null;
  /** Every position of the offer when the caller is its creator, else empty. */
  creatorPositions: PositionsTable[];
  contract: ContractTiming;
  result: ContractResult | null;
  now: number;
  config: ConfigTable | null;
  callerBlocked: boolean;
  creatorBlocked: boolean;
}

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

/** A position's payouts: as settled, else as the contract's result will settle it. */
function positionPayouts(p: PositionsTable, result: ContractResult, creatorSide: string, feeBps: number): [bigint, bigint] {
  if (p.status !== "Open") return [BigInt(p.creator_payout_micros), BigInt(p.taker_payout_micros)];
  const [c, t] = payouts(result === "void" ? null : result === creatorSide, feeBps, BigInt(p.creator_matched_micros), BigInt(p.taker_micros));
  return [c, t];
}

export function creatorSettlement(o: OfferFields, positions: PositionsTable[]): CreatorSettlement {
  const settled = positions.filter((p) => p.status !== "Open");
  const outcomes = SETTLEMENT_STATUSES.map((status) => {
    const ps = settled.filter((p) => p.status === status);
    const total = (f: (p: PositionsTable) => string) => sum(ps.map((p) => BigInt(f(p)))).toString();
    return {
      status,
      positionCount: ps.length,
      takerMicros: total((p) => p.taker_micros),
      creatorMatchedMicros: total((p) => p.creator_matched_micros),
      creatorPayoutMicros: total((p) => p.creator_payout_micros),
      takerPayoutMicros: total((p) => p.taker_payout_micros),
      feeMicros: total((p) => p.fee_micros),
    };
  });
  const [win, , voided] = outcomes;
  const paidOut = BigInt(win.creatorPayoutMicros);
  const refunded = BigInt(o.creator_refunded_micros) + BigInt(voided.creatorPayoutMicros);
  return {
    settledPositionCount: settled.length,
    paidOutMicros: paidOut.toString(),
    feeMicros: win.feeMicros,
    refundedMicros: refunded.toString(),
    receivedMicros: (paidOut + refunded).toString(),
    outcomes,
  };
}

/**
 * The viewer's name for each refusal of the take rule (idl/client/offers-rules.ts). The viewer
 * asks about the most the caller may take (`maxTakeMicros`), so a refusal of that amount is the
 * caller's room under maximumWagerMicros; RevisionMismatch cannot happen (a read holds no revision).
 */
export const TAKE_REFUSAL_OF: Record<TakeRefusalName, TakeRefusal> = {
  CallerBlocked: "callerBlocked",
  CreatorBlocked: "creatorBlocked",
  OffersDisabled: "offersDisabled",
  ContractNotOpen: "contractClosed",
  CutoffPassed: "contractClosed",
  OfferNotOpen: "offerNotOpen",
  OfferExpired: "offerExpired",
  SelfTake: "ownOffer",
  RevisionMismatch: "offerNotOpen",
  ZeroAmount: "maximumWager",
  AmountExceedsRemaining: "maximumWager",
  TakeBelowMinimum: "maximumWager",
  TakeTooSmallToMatch: "tooSmallToMatch",
  PositionAboveMaximum: "maximumWager",
};

/** An indexed offer as the take and close rules read it. */
function offerTerms(o: OfferFields): OfferTerms {
  return {
    status: o.status,
    creator: o.creator,
    creatorTotal: BigInt(o.creator_total_micros),
    creatorAllocated: BigInt(o.creator_allocated_micros),
    takerTarget: BigInt(o.taker_target_micros),
    takerFilled: BigInt(o.taker_filled_micros),
    minimumTake: BigInt(o.minimum_take_micros),
    revision: BigInt(o.revision),
    expiresAt: o.expires_at,
  };
}

/**
 * canTake holds when a take of the most the caller may take (the offer's remainder, or the
 * caller's room under maximumWagerMicros when smaller) passes the take rule from indexed state.
 * The caller's balance is not indexed and is not part of it.
 */
function takeRoom(i: ViewerInput, terms: OfferTerms, held: bigint): Pick<Viewer, "canTake" | "maxTakeMicros" | "takeLimit" | "takeRefusal"> {
  const remaining = terms.takerTarget - terms.takerFilled;
  const maxWager = i.config ? BigInt(i.config.maximum_wager_micros) : remaining;
  const room = maxWager - held;
  const takeLimit = room < remaining ? ("maximumWager" as const) : ("remaining" as const);
  const cap = room < remaining ? room : remaining;
  const refused = takeRefusal({
    offer: terms,
    contract: i.contract,
    taker: { wallet: i.wallet, blocked: i.callerBlocked, held },
    creatorBlocked: i.creatorBlocked,
    amount: cap,
    now: i.now,
    config: i.config ? { offersEnabled: Number(i.config.offers_enabled) === 1, maximumWager: maxWager } : null,
  });
  const refusal = refused === null ? null : TAKE_REFUSAL_OF[refused];
  return { canTake: refusal === null, maxTakeMicros: refusal === null ? cap.toString() : "0", takeLimit, takeRefusal: refusal };
}

/**
 * returnMicros: before the contract has a result, what the caller receives if their side wins
 * (creator: matched stake + all takes - the fee on each take; taker: stake + matched - the fee on
 * the matched part); once it has one, what the caller receives under it (the recorded payouts of
 * settled positions: 0 on a loss, the stake on a void). The creator's unmatched refund is not
 * part of it (see `settlement`).
 */
export function viewerOf(i: ViewerInput): Viewer {
  const o = i.offer;
  const { wallet, position, result } = i;
  const isCreator = wallet !== null && wallet === o.creator;
  const terms = offerTerms(o);
  const canClose = wallet !== null && closeRefusal({ offer: terms, contract: i.contract, caller: wallet, now: i.now }) === null;
  const feeBps = Number(o.fee_bps);
  const take = takeRoom(i, terms, position ? BigInt(position.taker_micros) : 0n);
  if (isCreator) {
    const ret =
      result === null
        ? creatorWinReturn(
            { creatorAllocated: BigInt(o.creator_allocated_micros), takerFilled: BigInt(o.taker_filled_micros) },
            i.creatorPositions.map((p) => BigInt(p.taker_micros)),
            feeBps,
          )
        : sum(i.creatorPositions.map((p) => positionPayouts(p, result, o.side, feeBps)[0]));
    return { role: "creator", ...take, canClose, returnMicros: ret.toString(), position: null, settlement: creatorSettlement(o, i.creatorPositions) };
  }
  if (position) {
    const settled = position.status !== "Open";
    const ret =
      result === null
        ? takerWinReturn(BigInt(position.taker_micros), BigInt(position.creator_matched_micros), feeBps)
        : positionPayouts(position, result, o.side, feeBps)[1];
    return {
      role: "taker",
      ...take,
      canClose,
      returnMicros: ret.toString(),
      position: {
        address: position.address,
        takerAmountMicros: position.taker_micros,
        creatorMatchedMicros: position.creator_matched_micros,
        status: position.status,
        fillCount: Number(position.fill_count),
        createdAt: iso(position.created_at)!,
        settledAt: iso(position.settled_at),
        payoutMicros: settled ? position.taker_payout_micros : null,
        feeMicros: settled ? position.fee_micros : null,
      },
      settlement: null,
    };
  }
  return { role: "none", ...take, canClose, returnMicros: null, position: null, settlement: null };
}
