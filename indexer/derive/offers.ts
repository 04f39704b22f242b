/**
 * Offer fields of the spec, derived from stored rows. Pure functions: the API calls them on
 * rows it read; the tests compare them with the on-chain accounts read directly.
 */
import { LRUCache } from "lru-cache";
import { termsGuardrail, type WarningRatio } from "../../idl/client/offers-rules";
import type { OfferStatusName, PositionStatusName } from "../../idl/client/offers";
import type { ConfigTable, FillsTable, OffersTable, PositionsTable } from "../store/schema";

// The rules live in one module (mirroring programs/offers/src/math.rs); re-exported for the API.
export { takerWinReturn, termsGuardrail, type WarningRatio } from "../../idl/client/offers-rules";

export type GuardrailStatus = "normal" | "warning";

/**
 * Instants formatted already. A page of 50 offers formats about 150 of them, mostly the same ones
 * on every read (creation times, a contract's cut-off): toISOString was 3-4% of an uncached page's
 * CPU (BENCHMARKS.md, issue 21), a cache lookup a tenth of that.
 */
const isoOf = new LRUCache<number, string>({ max: 50_000 });

/** Unix seconds -> ISO 8601 UTC. */
export function iso(unix: number | bigint | null | undefined): string | null {
  if (unix === null || unix === undefined) return null;
  const s = Number(unix);
  let t = isoOf.get(s);
  if (t === undefined) isoOf.set(s, (t = new Date(s * 1000).toISOString()));
  return t;
}

export function warningRatioOf(config: Pick<ConfigTable, "warning_ratio_numerator" | "warning_ratio_denominator">): WarningRatio {
  return { numerator: BigInt(config.warning_ratio_numerator), denominator: BigInt(config.warning_ratio_denominator) };
}

/** The chain-derived part of the spec's Offer (contract, creator profile and viewer are joined by the API). */
export interface DerivedOffer {
  address: string;
  contract: string;
  creator: string;
  creatorOutcome: "sideA" | "sideB";
  creatorTotalMicros: string;
  creatorAllocatedMicros: string;
  takerTargetMicros: string;
  takerFilledMicros: string;
  remainingTakerMicros: string;
  minimumTakeMicros: string;
  feeBps: number;
  termsGuardrail: { status: GuardrailStatus };
  status: OfferStatusName;
  fillCount: number;
  positionCount: number;
  settledPositionCount: number;
  revision: string;
  createdAt: string;
  closedAt: string | null;
  /** When the offer stops taking takes (anyone may close it then); null: at the contract's cutoff only. */
  expiresAt: string | null;
}

/** `config` null (not indexed yet): the launch warning ratio. */
/** The offer's columns deriveOffer reads (a read may select no more than these). */
export type DerivableOffer = Omit<OffersTable, "creator_token" | "rent_payer" | "nonce" | "slot" | "write_version" | "deleted" | "creator_refunded_micros">;

export function deriveOffer(o: DerivableOffer, config: Pick<ConfigTable, "warning_ratio_numerator" | "warning_ratio_denominator"> | null): DerivedOffer {
  const target = BigInt(o.taker_target_micros);
  const filled = BigInt(o.taker_filled_micros);
  // "Amount still open to takers": nothing once the offer is no longer Open.
  const remaining = o.status === "Open" && target > filled ? target - filled : 0n;
  return {
    address: o.address,
    contract: o.contract,
    creator: o.creator,
    creatorOutcome: o.side as "sideA" | "sideB",
    creatorTotalMicros: o.creator_total_micros,
    creatorAllocatedMicros: o.creator_allocated_micros,
    takerTargetMicros: o.taker_target_micros,
    takerFilledMicros: o.taker_filled_micros,
    remainingTakerMicros: remaining.toString(),
    minimumTakeMicros: o.minimum_take_micros,
    feeBps: Number(o.fee_bps),
    termsGuardrail: { status: termsGuardrail(BigInt(o.creator_total_micros), target, config ? warningRatioOf(config) : undefined) },
    status: o.status as DerivedOffer["status"],
    fillCount: Number(o.fill_count),
    positionCount: Number(o.position_count),
    settledPositionCount: Number(o.settled_position_count),
    revision: String(o.revision),
    createdAt: iso(o.created_at)!,
    closedAt: iso(o.closed_at),
    expiresAt: iso(o.expires_at),
  };
}

/** Side labels of an offer, from the contract catalog's labels. */
export function sideLabels(creatorOutcome: "sideA" | "sideB", labels: { side_a_label: string; side_b_label: string }) {
  return creatorOutcome === "sideA"
    ? { creatorSideLabel: labels.side_a_label, takerSideLabel: labels.side_b_label }
    : { creatorSideLabel: labels.side_b_label, takerSideLabel: labels.side_a_label };
}

export interface DerivedFill {
  offer: string;
  revision: string;
  taker: string;
  position: string;
  takeMicros: string;
  creatorMatchedMicros: string;
  takerFilledMicros: string;
  creatorAllocatedMicros: string;
  filledAt: string;
  signature: string;
}

export function deriveFill(f: FillsTable): DerivedFill {
  return {
    offer: f.offer,
    revision: String(f.revision),
    taker: f.taker,
    position: f.position,
    takeMicros: f.take_micros,
    creatorMatchedMicros: f.creator_matched_micros,
    takerFilledMicros: f.taker_filled_micros,
    creatorAllocatedMicros: f.creator_allocated_micros,
    filledAt: iso(f.filled_at)!,
    signature: f.signature,
  };
}

export interface DerivedPosition {
  address: string;
  offer: string;
  taker: string;
  takerMicros: string;
  creatorMatchedMicros: string;
  status: PositionStatusName;
  fillCount: number;
  createdAt: string;
  settledAt: string | null;
  creatorPayoutMicros: string;
  takerPayoutMicros: string;
  feeMicros: string;
}

export function derivePosition(p: PositionsTable): DerivedPosition {
  return {
    address: p.address,
    offer: p.offer,
    taker: p.taker,
    takerMicros: p.taker_micros,
    creatorMatchedMicros: p.creator_matched_micros,
    status: p.status as DerivedPosition["status"],
    fillCount: Number(p.fill_count),
    createdAt: iso(p.created_at)!,
    settledAt: iso(p.settled_at),
    creatorPayoutMicros: p.creator_payout_micros,
    takerPayoutMicros: p.taker_payout_micros,
    feeMicros: p.fee_micros,
  };
}
