/**
 * The odds rule (idl/client/odds.ts): reduction, the two roundings at their boundaries, the fee,
 * u64-sized amounts, and the exact order of taker odds against a rational reference.
 */
import { describe, expect, it } from "vitest";
import { compareTakerOdds, creatorOdds, decimal4, gcd, impliedBps, oddsOf, takerOdds } from "../../idl/client/odds";
import { U64_MAX } from "../../idl/client/offers-rules";

describe("odds", () => {
  it("gives both sides of an offer, reduced by the gcd", () => {
    // Creator stakes 30, taker targets 20: the taker gets 50 for 20 (5:2), the creator 50 for 30 (5:3).
    expect(takerOdds(30n, 20n, 0)).toEqual({ numerator: "5", denominator: "2", decimal: "2.5000", impliedProbabilityBps: 4000, decimalAfterFee: "2.5000" });
    expect(creatorOdds(30n, 20n)).toEqual({ numerator: "5", denominator: "3", decimal: "1.6666", impliedProbabilityBps: 6000 });
    expect(oddsOf(6_000_000n, 4_000_000n)).toMatchObject({ numerator: "3", denominator: "2" });
    expect(oddsOf(7n, 7n)).toMatchObject({ numerator: "1", denominator: "1", decimal: "1.0000", impliedProbabilityBps: 10_000 });
    expect(gcd(0n, 5n)).toBe(5n);
    expect(gcd(12n, 18n)).toBe(6n);
  });

  it("rounds the decimal down and the implied probability to nearest, a half up", () => {
    expect(decimal4(2n, 3n)).toBe("0.6666");
    expect(decimal4(19_999n, 10_000n)).toBe("1.9999");
    expect(decimal4(199_999n, 100_000n)).toBe("1.9999"); // 1.99999 stays below 2
    expect(decimal4(1_000_001n, 1n)).toBe("1000001.0000");
    // 10000 × 1/3 = 3333.33 -> 3333; × 2/3 = 6666.67 -> 6667.
    expect(impliedBps(3n, 1n)).toBe(3333);
    expect(impliedBps(3n, 2n)).toBe(6667);
    // Exactly a half: 10000 × 1 / 20000 × ... 10000 × 1 / 8 = 1250 (exact); 10000 × 1 / 40000 = 0.25 -> 0; 10000 / 20000 = 0.5 -> 1.
    expect(impliedBps(8n, 1n)).toBe(1250);
    expect(impliedBps(40_000n, 1n)).toBe(0);
    expect(impliedBps(20_000n, 1n)).toBe(1);
    expect(impliedBps(20_001n, 1n)).toBe(0);
  });

  it("takes the fee on the creator's stake off the taker's return, rounded down", () => {
    // 1% of a 30 stake is 0.3, floored to 0 in micro-units: no change at these sizes.
    expect(takerOdds(30n, 20n, 100).decimalAfterFee).toBe("2.5000");
    // 30 USDC against 20 USDC at 2.5%: 20 + 30 - 0.75 = 49.25 per 20 = 2.4625.
    expect(takerOdds(30_000_000n, 20_000_000n, 250)).toMatchObject({ decimal: "2.5000", decimalAfterFee: "2.4625" });
    // 10000 bps: the whole profit is fee, the taker gets the stake back.
    expect(takerOdds(30_000_000n, 20_000_000n, 10_000).decimalAfterFee).toBe("1.0000");
    // After the fee the decimal is never above the plain one.
    for (const bps of [0, 1, 99, 250, 9_999]) {
      const o = takerOdds(123_456_789n, 98_765_431n, bps);
      expect(Number(o.decimalAfterFee)).toBeLessThanOrEqual(Number(o.decimal));
    }
  });

  it("stays exact at u64 sizes", () => {
    const o = takerOdds(U64_MAX, U64_MAX, 250);
    expect(o).toEqual({ numerator: "2", denominator: "1", decimal: "2.0000", impliedProbabilityBps: 5000, decimalAfterFee: "1.9750" });
    const big = takerOdds(U64_MAX, 1n, 0);
    expect(big.numerator).toBe((U64_MAX + 1n).toString());
    expect(big.decimal).toBe(`${U64_MAX + 1n}.0000`);
    expect(big.impliedProbabilityBps).toBe(0);
    const tiny = creatorOdds(1n, U64_MAX);
    expect(tiny.numerator).toBe((U64_MAX + 1n).toString());
    expect(tiny.denominator).toBe("1");
    // U64_MAX = 3 × 5 × 17 × 257 × 641 × 65537 × 6700417: a common factor goes, the rest stays.
    expect(creatorOdds(U64_MAX, U64_MAX / 3n)).toMatchObject({ numerator: "4", denominator: "3", decimal: "1.3333", impliedProbabilityBps: 7500 });
  });

  it("refuses non-positive terms", () => {
    expect(() => oddsOf(0n, 1n)).toThrow(RangeError);
    expect(() => takerOdds(1n, 0n, 0)).toThrow(RangeError);
  });

  it("orders taker odds exactly, equal ratios together", () => {
    let seed = 23n;
    const next = (max: bigint) => {
      seed = (seed * 6364136223846793005n + 1442695040888963407n) % (1n << 64n);
      return (seed % max) + 1n;
    };
    for (let i = 0; i < 500; i++) {
      const scale = i % 2 === 0 ? 1_000n : U64_MAX / 2n;
      const a = { creatorTotal: next(scale), takerTarget: next(scale) };
      // Every tenth pair has exactly the same ratio at another scale.
      const k = next(7n);
      const b = i % 10 === 0 ? { creatorTotal: a.creatorTotal * k, takerTarget: a.takerTarget * k } : { creatorTotal: next(scale), takerTarget: next(scale) };
      const ta = takerOdds(a.creatorTotal, a.takerTarget, 0);
      const tb = takerOdds(b.creatorTotal, b.takerTarget, 0);
      const c = compareTakerOdds(a, b);
      // Reference: compare the reduced fractions num/den by cross-multiplication.
      const l = BigInt(ta.numerator) * BigInt(tb.denominator);
      const r = BigInt(tb.numerator) * BigInt(ta.denominator);
      expect(c).toBe(l > r ? -1 : l < r ? 1 : 0);
      if (c === 0) expect([ta.numerator, ta.denominator]).toEqual([tb.numerator, tb.denominator]);
      if (i % 10 === 0) expect(c).toBe(0);
    }
  });
});
