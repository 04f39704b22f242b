/**
 * Odds as people read them, from an offer's two amounts (issue 23, "Definitions"): for creator
 * stake S and taker target T, the taker's odds are (T + S) : T and the creator's (S + T) : S.
 * Exact ratios in bigint; the decimal forms are rounded down to 4 places, the implied
 * probability to the nearest basis point (a half rounds up). The fee part reuses the program's
 * fee rule (./offers-rules.ts), so `decimalAfterFee` is exactly what a whole take of the offer
 * returns per unit staked.
 */
import { takerWinReturn } from "./offers-rules";

/** A ratio `numerator : denominator` in lowest terms, as decimal integer strings. */
export interface Odds {
  numerator: string;
  denominator: string;
  /** numerator / denominator with 4 decimals, rounded down (e.g. "2.5000"). */
  decimal: string;
  /** 10000 × denominator / numerator, rounded to the nearest integer (a half rounds up). */
  impliedProbabilityBps: number;
}

/** The taker's odds, with what a unit returns once the fee on the creator's matched stake is taken. */
export interface TakerOdds extends Odds {
  /** (T + S − fee(feeBps, S)) / T with 4 decimals, rounded down. */
  decimalAfterFee: string;
}

const BPS = 10_000n;

export function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** `n / d` with 4 decimals, rounded down (n ≥ 0, d > 0). */
export function decimal4(n: bigint, d: bigint): string {
  const q = (n * BPS) / d;
  return `${q / BPS}.${(q % BPS).toString().padStart(4, "0")}`;
}

/** `10000 × d / n` rounded to the nearest integer, a half up (n > 0, d ≥ 0). */
export function impliedBps(n: bigint, d: bigint): number {
  return Number((2n * BPS * d + n) / (2n * n));
}

/** The ratio `n : d` reduced, with its decimal and implied probability. Both must be positive. */
export function oddsOf(n: bigint, d: bigint): Odds {
  if (n <= 0n || d <= 0n) throw new RangeError(`odds need positive terms, got ${n}:${d}`);
  const g = gcd(n, d);
  return { numerator: (n / g).toString(), denominator: (d / g).toString(), decimal: decimal4(n, d), impliedProbabilityBps: impliedBps(n, d) };
}

/** The taker's odds of an offer with creator stake `creatorTotal` and taker target `takerTarget`. */
export function takerOdds(creatorTotal: bigint, takerTarget: bigint, feeBps: number | bigint): TakerOdds {
  return {
    ...oddsOf(takerTarget + creatorTotal, takerTarget),
    decimalAfterFee: decimal4(takerWinReturn(takerTarget, creatorTotal, feeBps), takerTarget),
  };
}

/** The creator's odds of the same offer: (S + T) : S. */
export function creatorOdds(creatorTotal: bigint, takerTarget: bigint): Odds {
  return oddsOf(creatorTotal + takerTarget, creatorTotal);
}

/**
 * Orders two offers by their taker odds, best (highest) first, exactly: (T1 + S1)/T1 > (T2 + S2)/T2
 * exactly when S1 × T2 > S2 × T1. Negative when the first is better, 0 when the ratios are equal
 * (the same book level).
 */
export function compareTakerOdds(a: { creatorTotal: bigint; takerTarget: bigint }, b: { creatorTotal: bigint; takerTarget: bigint }): number {
  const l = a.creatorTotal * b.takerTarget;
  const r = b.creatorTotal * a.takerTarget;
  return l > r ? -1 : l < r ? 1 : 0;
}
