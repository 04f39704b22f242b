/**
 * The offers program's money and timing rules in TypeScript, for the service's pre-checks
 * (service/writes/write-service.ts), the read API's derived fields (indexer/derive/offers.ts,
 * service/read/read-service.ts) and the worker's selection (service/worker/worker.ts). The arithmetic
 * mirrors programs/offers/src/math.rs (integers only, every rounding down, exact 128-bit
 * products); the contract rules mirror create_offer.rs, take_offer.rs and close_offer.rs: who may
 * take (`takeRefusal`) and close (`closeRefusal`) is decided here only, by the program's error
 * names, for the write path's pre-checks and the read API's `viewer` alike.
 *
 * programs/offers/math-vectors.json is the one table both sides are tested against: a Rust test
 * (math.rs `vectors_file_matches_rust`) recomputes every row with math.rs, and
 * tests/offers/math-vectors.test.ts recomputes it with this module.
 */
import { LAUNCH_LIMITS, type LimitsArgs } from "./offers";

export const U64_MAX = 18_446_744_073_709_551_615n;
const BPS = 10_000n;

/** kit::wide::mul_div_floor: `floor(a * b / c)`, null when `c == 0` or the quotient exceeds u64. */
export function mulDivFloor(a: bigint, b: bigint, c: bigint): bigint | null {
  if (c === 0n) return null;
  const q = (a * b) / c;
  return q > U64_MAX ? null : q;
}

/** math::ratio_le: `a * b <= c * d`, exactly. */
export function ratioLe(a: bigint, b: bigint, c: bigint, d: bigint): boolean {
  return a * b <= c * d;
}

/**
 * math::matched_for_take: creator stake matched by a take, `floor(take * creatorTotal /
 * takerTarget)`, except that the take filling the offer gets all creator stake still unallocated.
 */
export function matchedForTake(take: bigint, creatorTotal: bigint, takerTarget: bigint, takerFilled: bigint, creatorAllocated: bigint): bigint {
  if (takerFilled + take === takerTarget) return creatorTotal - creatorAllocated;
  return mulDivFloor(take, creatorTotal, takerTarget) ?? 0n;
}

/** math::fee: the fee on a winner's profit, `floor(feeBps * profit / 10000)`. */
export function fee(feeBps: number | bigint, profit: bigint): bigint {
  return mulDivFloor(BigInt(feeBps), profit, BPS) ?? 0n;
}

/**
 * math::payouts: a settled position's [creator, taker, fee to treasury]; `creatorWins` null is
 * a void contract (stakes back, no fee).
 */
export function payouts(creatorWins: boolean | null, feeBps: number | bigint, creatorMatched: bigint, takerAmount: bigint): [bigint, bigint, bigint] {
  if (creatorWins === null) return [creatorMatched, takerAmount, 0n];
  if (creatorWins) {
    const f = fee(feeBps, takerAmount);
    return [creatorMatched + takerAmount - f, 0n, f];
  }
  const f = fee(feeBps, creatorMatched);
  return [0n, takerAmount + creatorMatched - f, f];
}

/** What a taker receives if the taker's side wins: stake + matched - fee on the matched profit. */
export function takerWinReturn(takerAmount: bigint, creatorMatched: bigint, feeBps: number | bigint): bigint {
  return payouts(false, feeBps, creatorMatched, takerAmount)[1];
}

/**
 * What a creator receives if the creator's side wins: the matched stake and every take, less the
 * fee on each position's take (the sum of `payouts(true, ..)[0]` over the offer's positions).
 */
export function creatorWinReturn(o: { creatorAllocated: bigint; takerFilled: bigint }, positionTakes: bigint[], feeBps: number | bigint): bigint {
  return o.creatorAllocated + o.takerFilled - positionTakes.reduce((sum, t) => sum + fee(feeBps, t), 0n);
}

/** close_offer: the creator stake no take matched, refunded when the offer closes. */
export function unmatchedStake(o: { creatorTotal: bigint; creatorAllocated: bigint }): bigint {
  return o.creatorTotal - o.creatorAllocated;
}

/** create_offer: the odds `creatorTotal : takerTarget` against the configured range (target > 0). */
export function oddsRefusal(
  total: bigint,
  target: bigint,
  l: Pick<LimitsArgs, "minimumOddsNumerator" | "minimumOddsDenominator" | "maximumOddsNumerator" | "maximumOddsDenominator">,
): "OddsBelowMinimum" | "OddsAboveMaximum" | null {
  if (!ratioLe(l.minimumOddsNumerator, target, total, l.minimumOddsDenominator)) return "OddsBelowMinimum";
  if (!ratioLe(total, l.maximumOddsDenominator, l.maximumOddsNumerator, target)) return "OddsAboveMaximum";
  return null;
}

// ---- contract timing ---------------------------------------------------------------------

/** A contract as the rules need it: the chain account or a store row, times in unix seconds. */
export interface ContractTiming {
  status: string;
  cutoffAt: bigint | number;
}

/**
 * Why a contract takes no more offers or takes at `now`, in the program's order
 * (`Contract::accepts_offers` in programs/offers/src/state.rs): not Open, then the cutoff
 * (`now >= cutoffAt`: the cutoff second itself is past).
 */
export function contractRefusal(c: ContractTiming, now: bigint | number): "ContractNotOpen" | "CutoffPassed" | null {
  if (c.status !== "Open") return "ContractNotOpen";
  if (BigInt(now) >= BigInt(c.cutoffAt)) return "CutoffPassed";
  return null;
}

// ---- offer expiry -------------------------------------------------------------------------

/**
 * Whether an offer's expiry has come at `now` (`Offer::expired` in programs/offers/src/state.rs):
 * `expiresAt` 0 (or absent, a row without one) is none; else the `expiresAt` second itself is
 * past, as for the cutoff.
 */
export function offerExpired(o: { expiresAt?: bigint | number | null }, now: bigint | number): boolean {
  const at = BigInt(o.expiresAt ?? 0);
  return at !== 0n && BigInt(now) >= at;
}

/**
 * Why an offer takes no takes at `now` (`Offer::accepts_takes`): not Open (a row with nothing
 * left is Filled, whatever its status says), then expired.
 */
export function offerRefusal(
  o: { status: string; takerTarget: bigint; takerFilled: bigint; expiresAt?: bigint | number | null },
  now: bigint | number,
): "OfferNotOpen" | "OfferExpired" | null {
  if (o.status !== "Open" || o.takerTarget - o.takerFilled <= 0n) return "OfferNotOpen";
  if (offerExpired(o, now)) return "OfferExpired";
  return null;
}

/** create_offer's expiry (`valid_expiry`): 0 for none, else after `now` and no later than the contract's cutoff. */
export function expiryRefusal(expiresAt: bigint | number, now: bigint | number, cutoffAt: bigint | number): "InvalidExpiry" | null {
  const at = BigInt(expiresAt);
  if (at === 0n) return null;
  return at > BigInt(now) && at <= BigInt(cutoffAt) ? null : "InvalidExpiry";
}

/**
 * The expiry rule as a store filter on `expires_at` (unix seconds; the store keeps none as null,
 * which no comparison selects): `[operator, value]` that selects offers whose expiry has passed
 * at `now`.
 */
export function expiryFilter(now: bigint | number): ["<=", number] {
  return ["<=", Number(now)];
}

// ---- who may take, who may close ---------------------------------------------------------

/** An offer as the take and close rules need it: the chain account or a store row, amounts in micro-units. */
export interface OfferTerms {
  status: string;
  /** The creator's wallet (base58). */
  creator: string;
  creatorTotal: bigint;
  creatorAllocated: bigint;
  takerTarget: bigint;
  takerFilled: bigint;
  minimumTake: bigint;
  revision: bigint;
  /** Unix seconds; 0 or absent: no expiry. */
  expiresAt?: bigint | number | null;
}

/**
 * Why a take is refused: the offers program's error names (idl/offers.json `errors`), in the
 * order take_offer.rs checks them, after the service's compliance rule (a blocked caller or
 * creator wagers on nothing; not a program rule, so its names are the service's own).
 */
export const TAKE_REFUSALS = [
  "CallerBlocked",
  "CreatorBlocked",
  "OffersDisabled",
  "ContractNotOpen",
  "CutoffPassed",
  "OfferNotOpen",
  "OfferExpired",
  "SelfTake",
  "RevisionMismatch",
  "ZeroAmount",
  "AmountExceedsRemaining",
  "TakeBelowMinimum",
  "TakeTooSmallToMatch",
  "PositionAboveMaximum",
] as const;
export type TakeRefusalName = (typeof TAKE_REFUSALS)[number];

export interface TakeAttempt {
  offer: OfferTerms;
  contract: ContractTiming;
  /** The taker's wallet (null: an anonymous reader, who is nobody's creator), compliance flag and position on this offer. */
  taker: { wallet: string | null; blocked: boolean; held: bigint };
  creatorBlocked: boolean;
  amount: bigint;
  /** The revision the caller read; undefined skips the check (a read, which holds no revision). */
  expectedRevision?: bigint;
  now: bigint | number;
  /** The Config's switch and per-position cap; null before the Config is known (no limit applied). */
  config: { offersEnabled: boolean; maximumWager: bigint } | null;
}

/**
 * The first rule a take of `amount` breaks, or null when the program would accept it (the
 * caller's token balance aside: it is not indexed, the write path checks it last). The write
 * path answers each name with its status (service/writes/errors.ts), the offer's `viewer` with
 * its `takeRefusal` (service/read/offer-viewer.ts).
 */
export function takeRefusal(t: TakeAttempt): TakeRefusalName | null {
  const o = t.offer;
  const remaining = o.takerTarget - o.takerFilled;
  if (t.taker.blocked) return "CallerBlocked";
  if (t.creatorBlocked) return "CreatorBlocked";
  if (t.config && !t.config.offersEnabled) return "OffersDisabled";
  const contract = contractRefusal(t.contract, t.now);
  if (contract) return contract;
  const offer = offerRefusal(o, t.now);
  if (offer) return offer;
  if (t.taker.wallet !== null && t.taker.wallet === o.creator) return "SelfTake";
  if (t.expectedRevision !== undefined && t.expectedRevision !== o.revision) return "RevisionMismatch";
  if (t.amount <= 0n) return "ZeroAmount";
  if (t.amount > remaining) return "AmountExceedsRemaining";
  if (t.amount < o.minimumTake && t.amount !== remaining) return "TakeBelowMinimum";
  if (matchedForTake(t.amount, o.creatorTotal, o.takerTarget, o.takerFilled, o.creatorAllocated) === 0n) return "TakeTooSmallToMatch";
  if (t.config && t.taker.held + t.amount > t.config.maximumWager) return "PositionAboveMaximum";
  return null;
}

/** Why a close is refused: the program's error names in close_offer.rs's order. */
export type CloseRefusalName = "OfferNotOpen" | "RevisionMismatch" | "CloseNotAllowed";

/**
 * close_offer: the offer must be Open (and at the revision the caller read, when given); its
 * creator may close it any time, anyone else once it has expired or the contract accepts no more offers.
 */
export function closeRefusal(c: {
  offer: Pick<OfferTerms, "status" | "creator" | "revision" | "expiresAt">;
  contract: ContractTiming;
  caller: string | null;
  expectedRevision?: bigint;
  now: bigint | number;
}): CloseRefusalName | null {
  if (c.offer.status !== "Open") return "OfferNotOpen";
  if (c.expectedRevision !== undefined && c.expectedRevision !== c.offer.revision) return "RevisionMismatch";
  if (c.caller !== c.offer.creator && !offerExpired(c.offer, c.now) && contractRefusal(c.contract, c.now) === null) return "CloseNotAllowed";
  return null;
}

/**
 * The cutoff rule as a store filter on `cutoff_at` (unix seconds): `[operator, value]` that
 * selects contracts whose cutoff has passed at `now` (`passed`) or not yet (`ahead`).
 */
export function cutoffFilter(which: "passed" | "ahead", now: bigint | number): ["<=" | ">", number] {
  return [which === "passed" ? "<=" : ">", Number(now)];
}

// ---- warning ratio -----------------------------------------------------------------------

export interface WarningRatio {
  numerator: bigint;
  denominator: bigint;
}

/** The launch setting, for a store that has not indexed the Config yet. */
export const LAUNCH_WARNING_RATIO: WarningRatio = { numerator: LAUNCH_LIMITS.warningRatioNumerator, denominator: LAUNCH_LIMITS.warningRatioDenominator };

/**
 * `warning` when creator:target is beyond the warning ratio either way (creator/target > n/d or
 * target/creator > n/d), else `normal`; exactly at the ratio is normal. The program stores the
 * ratio in its Config and does not enforce it.
 */
export function termsGuardrail(creatorTotal: bigint, takerTarget: bigint, w: WarningRatio = LAUNCH_WARNING_RATIO): "normal" | "warning" {
  if (w.denominator <= 0n || w.numerator <= 0n) return "normal";
  if (!ratioLe(creatorTotal, w.denominator, w.numerator, takerTarget)) return "warning";
  if (!ratioLe(takerTarget, w.denominator, w.numerator, creatorTotal)) return "warning";
  return "normal";
}

// ---- a party's exposure (the portfolio) ----------------------------------------------------

/** How a contract ends, as a position's settlement sees it. */
export type ContractResult = "sideA" | "sideB" | "void";
export const CONTRACT_RESULTS: readonly ContractResult[] = ["sideA", "sideB", "void"];

/** One position as one of its two parties sees it: the creator of its offer or its taker. */
export interface PartyPosition {
  role: "creator" | "taker";
  /** The side the offer's creator backs (the taker backs the other). */
  creatorSide: "sideA" | "sideB";
  feeBps: number | bigint;
  creatorMatched: bigint;
  takerAmount: bigint;
}

/** The party's own stake in the position: the creator's matched stake, or the taker's amount. */
export function partyStake(p: PartyPosition): bigint {
  return p.role === "creator" ? p.creatorMatched : p.takerAmount;
}

/**
 * What the party receives when the position settles on `result`: `payouts` of the program
 * (stake back on void, stake plus the other's stake less the fee on a win, nothing on a loss).
 */
export function partyReturn(p: PartyPosition, result: ContractResult): bigint {
  const creatorWins = result === "void" ? null : result === p.creatorSide;
  const [creator, taker] = payouts(creatorWins, p.feeBps, p.creatorMatched, p.takerAmount);
  return p.role === "creator" ? creator : taker;
}

/** The party's profit or loss when the position settles on `result`: its return less its stake (signed). */
export function partyNet(p: PartyPosition, result: ContractResult): bigint {
  return partyReturn(p, result) - partyStake(p);
}

/** A settled position from one party's side: won, lost or refunded (a void). */
export function partyOutcome(role: "creator" | "taker", status: "SettledCreatorWin" | "SettledTakerWin" | "Refunded"): "won" | "lost" | "refunded" {
  if (status === "Refunded") return "refunded";
  return (status === "SettledCreatorWin") === (role === "creator") ? "won" : "lost";
}

/**
 * The realised profit or loss of a settled position for one party, after the fee: what the
 * settlement paid the party less the party's stake (0 for a refund).
 */
export function partyRealised(
  role: "creator" | "taker",
  paid: { creatorPayout: bigint; takerPayout: bigint },
  creatorMatched: bigint,
  takerAmount: bigint,
): bigint {
  return role === "creator" ? paid.creatorPayout - creatorMatched : paid.takerPayout - takerAmount;
}
