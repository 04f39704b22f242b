/**
 * take_best's rules in TypeScript: the odds limit and the whole sweep, exactly as
 * programs/offers/src/instructions/take_best.rs applies them (math.rs `odds_at_least` and
 * `sweep_take`). The quote and the write (service/) plan with `planTakeBest`; the program then
 * does the same on the accounts as they are when the transaction lands.
 *
 * programs/offers/take-best-vectors.json is the table both sides are tested against: the Rust
 * test `take_best_vectors::vectors_file_matches_rust` recomputes every row with math.rs,
 * tests/offers/take-best-rules.test.ts with this module.
 */
import { contractRefusal, matchedForTake, offerRefusal, ratioLe, type ContractTiming, type OfferTerms } from "./offers-rules";
import { TAKE_BEST_MAX_OFFERS, TakeBestMode as TakeBestModeCode, type SideName, type TakeBestModeName } from "./offers";

export { TAKE_BEST_MAX_OFFERS };
/** How a sweep ends: take what the limit allows and leave the rest, or all of it or nothing. */
export type TakeBestMode = TakeBestModeName;
export const TAKE_BEST_MODES = Object.keys(TakeBestModeCode) as TakeBestMode[];

/** A taker's odds `numerator : denominator` (stake and winnings : stake), an exact ratio. */
export interface OddsRatio {
  numerator: bigint;
  denominator: bigint;
}

/** The taker's odds of an offer: `(takerTarget + creatorTotal) : takerTarget`. */
export function takerOdds(o: { creatorTotal: bigint; takerTarget: bigint }): OddsRatio {
  return { numerator: o.takerTarget + o.creatorTotal, denominator: o.takerTarget };
}

/**
 * math::odds_at_least: whether an offer's taker odds `(T + S) : T` are at least the limit
 * `numerator : denominator`, i.e. `(T + S) * den >= num * T`, compared as `S * den >= (num - den) * T`
 * (true when `num <= den`) like the program, whose products must stay 64x64 bits.
 */
export function oddsAtLeast(creatorTotal: bigint, takerTarget: bigint, limit: OddsRatio): boolean {
  const { numerator: n, denominator: d } = limit;
  return n <= d || ratioLe(n - d, takerTarget, creatorTotal, d);
}

/** Why the program passes over an offer of the list (never a failure), math::Skip; `AmountTaken`: the total was reached before it. */
export const SWEEP_SKIPS = [
  "WrongSide",
  "OfferNotOpen",
  "SelfTake",
  "OddsBelowLimit",
  "PositionAboveMaximum",
  "TakeBelowMinimum",
  "TakeTooSmallToMatch",
  "AmountTaken",
] as const;
export type SweepSkipName = (typeof SWEEP_SKIPS)[number];

/**
 * Why the whole take_best fails (the program's error names), in the order it checks them:
 * the arguments, the Config's switch, the contract, then each pair of the list (an offer of
 * another contract, the same offer twice), and at the end NothingTaken / NotFilled.
 */
export const TAKE_BEST_ERRORS = [
  "InvalidSide",
  "InvalidTakeMode",
  "InvalidOddsLimit",
  "ZeroAmount",
  "InvalidOfferList",
  "OffersDisabled",
  "ContractNotOpen",
  "CutoffPassed",
  "AccountMismatch",
  "DuplicateOffer",
  "NothingTaken",
  "NotFilled",
] as const;
export type TakeBestErrorName = (typeof TAKE_BEST_ERRORS)[number];

/** One offer of the list: its address, terms, side (its creator's), contract and the taker's position on it. */
export interface SweepOffer extends OfferTerms {
  address: string;
  side: SideName;
  /** The offer's contract (base58); when given, one of another contract fails the sweep as on chain. */
  contract?: string;
  /** What the taker's position on this offer holds already (taker amount), 0 when none. */
  held?: bigint;
}

/** The sweep: the side the taker backs, the total, the worst odds accepted, the mode. */
export interface TakeBestRequest {
  side: SideName;
  amount: bigint;
  worstOdds: OddsRatio;
  mode: TakeBestMode;
  /** The taker's wallet (base58); null for a reader, who is nobody's creator. */
  taker: string | null;
  /** The Config's per-position maximum wager (taker amount per offer and taker). */
  maximumWager: bigint;
  /** The Config's switch; omitted: on. */
  offersEnabled?: boolean;
  /** The contract (address, status, cutoff) and the time of the take (also for the offers' expiry); omitted: not checked. */
  contract?: ContractTiming & { address: string };
  now?: bigint | number;
}

export type SweepFill = { offer: string; take: bigint; matched: bigint } | { offer: string; skip: SweepSkipName };

export interface TakeBestPlan {
  /** One entry per offer of the list, in its order: what is taken (taker amount, creator stake matched) or why not. */
  fills: SweepFill[];
  /** Taker amount taken in all, and what is left of the total. */
  taken: bigint;
  left: bigint;
  /** Why the program would fail the whole transaction (nothing moves then), or null. */
  error: TakeBestErrorName | null;
}

const SIDE_OTHER: Record<SideName, SideName> = { sideA: "sideB", sideB: "sideA" };

/**
 * math::sweep_take: the take of one offer within a sweep, with `left` of the total still to
 * take: the largest amount take_offer would accept within `left` and the taker's room under the
 * maximum wager (the whole remainder when it fits, else that bound if it reaches the offer's
 * minimum take), with the creator stake it is matched with, or why the offer is passed over.
 */
export function sweepTake(
  o: Omit<SweepOffer, "address" | "revision" | "contract">,
  r: Pick<TakeBestRequest, "side" | "worstOdds" | "taker" | "maximumWager" | "now">,
  left: bigint,
): { take: bigint; matched: bigint } | { skip: SweepSkipName } {
  if (o.side !== SIDE_OTHER[r.side]) return { skip: "WrongSide" };
  const remaining = o.takerTarget - o.takerFilled;
  // Filled, closed, settled or expired (`Offer::accepts_takes`) are passed over alike; without
  // `now` (time 0) no expiry has come.
  if (offerRefusal(o, r.now ?? 0n) !== null) return { skip: "OfferNotOpen" };
  if (r.taker !== null && r.taker === o.creator) return { skip: "SelfTake" };
  if (!oddsAtLeast(o.creatorTotal, o.takerTarget, r.worstOdds)) return { skip: "OddsBelowLimit" };
  const held = o.held ?? 0n;
  if (held >= r.maximumWager) return { skip: "PositionAboveMaximum" };
  const room = r.maximumWager - held;
  const bound = left < room ? left : room;
  let take: bigint;
  if (bound >= remaining) take = remaining;
  else if (bound >= o.minimumTake) take = bound;
  else return { skip: room < left ? "PositionAboveMaximum" : "TakeBelowMinimum" };
  const matched = matchedForTake(take, o.creatorTotal, o.takerTarget, o.takerFilled, o.creatorAllocated);
  if (matched === 0n) return { skip: "TakeTooSmallToMatch" };
  return { take, matched };
}

/**
 * What take_best does with `offers` in this order: per offer the amount taken and the creator
 * stake matched, or why it is passed over; the total taken; and the error that fails the whole
 * transaction, if any (then nothing is taken on chain, whatever `fills` says). The caller's
 * token balance is not a rule here: the program fails with InsufficientBalance when it does not
 * cover `taken`.
 */
export function planTakeBest(offers: readonly SweepOffer[], r: TakeBestRequest): TakeBestPlan {
  const fail = (error: TakeBestErrorName): TakeBestPlan => ({ fills: [], taken: 0n, left: r.amount, error });
  if (r.side !== "sideA" && r.side !== "sideB") return fail("InvalidSide");
  if (!TAKE_BEST_MODES.includes(r.mode)) return fail("InvalidTakeMode");
  if (r.worstOdds.denominator <= 0n || r.worstOdds.numerator < 0n) return fail("InvalidOddsLimit");
  if (r.amount <= 0n) return fail("ZeroAmount");
  if (offers.length === 0 || offers.length > TAKE_BEST_MAX_OFFERS) return fail("InvalidOfferList");
  if (r.offersEnabled === false) return fail("OffersDisabled");
  if (r.contract && r.now !== undefined) {
    const refusal = contractRefusal(r.contract, r.now);
    if (refusal) return fail(refusal);
  }
  const fills: SweepFill[] = [];
  const seen = new Set<string>();
  let left = r.amount;
  for (const o of offers) {
    if (left === 0n) {
      fills.push({ offer: o.address, skip: "AmountTaken" });
      continue;
    }
    if (r.contract && o.contract !== undefined && o.contract !== r.contract.address) return { ...fail("AccountMismatch"), fills };
    if (seen.has(o.address)) return { ...fail("DuplicateOffer"), fills };
    seen.add(o.address);
    const step = sweepTake(o, r, left);
    if ("skip" in step) fills.push({ offer: o.address, skip: step.skip });
    else {
      fills.push({ offer: o.address, ...step });
      left -= step.take;
    }
  }
  const taken = r.amount - left;
  const error = taken === 0n ? "NothingTaken" : r.mode === "fill-or-kill" && left > 0n ? "NotFilled" : null;
  return { fills, taken, left, error };
}
