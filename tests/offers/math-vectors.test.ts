/**
 * The TypeScript rules (idl/client/offers-rules.ts) against programs/offers/math-vectors.json,
 * the table the Rust test `math::tests::vectors_file_matches_rust` checks math.rs against: both
 * sides agree row for row, edge values (u64 max, rounding, the filling take) included.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  U64_MAX,
  contractRefusal,
  cutoffFilter,
  fee,
  matchedForTake,
  closeRefusal,
  mulDivFloor,
  oddsRefusal,
  payouts,
  ratioLe,
  termsGuardrail,
  takerWinReturn,
} from "../../idl/client/offers-rules";

type Row = Record<string, string | number | boolean | null>;
const vectors = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "programs", "offers", "math-vectors.json"), "utf8")) as Record<string, Row[]>;
const b = (v: Row[string]) => BigInt(v as string);

describe("offers rules = math.rs, on the shared vectors", () => {
  it("has every section, with u64 max among the inputs", () => {
    expect(Object.keys(vectors).sort()).toEqual(["fee", "matchedForTake", "mulDivFloor", "payouts", "ratioLe"]);
    for (const rows of Object.values(vectors)) expect(rows.length).toBeGreaterThan(40);
    expect(vectors.matchedForTake.some((r) => b(r.creatorTotal) === U64_MAX && b(r.takerTarget) === U64_MAX)).toBe(true);
  });

  it("matchedForTake", () => {
    for (const r of vectors.matchedForTake) {
      expect(matchedForTake(b(r.take), b(r.creatorTotal), b(r.takerTarget), b(r.takerFilled), b(r.creatorAllocated)), JSON.stringify(r)).toBe(b(r.matched));
    }
  });

  it("fee", () => {
    for (const r of vectors.fee) expect(fee(r.feeBps as number, b(r.profit)), JSON.stringify(r)).toBe(b(r.fee));
  });

  it("payouts (and the taker's win return derived from them)", () => {
    for (const r of vectors.payouts) {
      const got = payouts(r.creatorWins as boolean | null, r.feeBps as number, b(r.creatorMatched), b(r.takerAmount));
      expect(got, JSON.stringify(r)).toEqual([b(r.creator), b(r.taker), b(r.fee)]);
      if (r.creatorWins === false) expect(takerWinReturn(b(r.takerAmount), b(r.creatorMatched), r.feeBps as number)).toBe(b(r.taker));
    }
  });

  it("ratioLe", () => {
    for (const r of vectors.ratioLe) expect(ratioLe(b(r.a), b(r.b), b(r.c), b(r.d)), JSON.stringify(r)).toBe(r.le);
  });

  it("mulDivFloor (kit::wide), null where Rust has None", () => {
    for (const r of vectors.mulDivFloor) expect(mulDivFloor(b(r.a), b(r.b), b(r.c)), JSON.stringify(r)).toBe(r.quotient === null ? null : b(r.quotient));
  });
});

describe("contract timing and the warning ratio", () => {
  it("the cutoff second itself is past (create_offer / take_offer: now >= cutoff)", () => {
    const k = { status: "Open", cutoffAt: 1_000n };
    expect(contractRefusal(k, 999n)).toBeNull();
    expect(contractRefusal(k, 1_000)).toBe("CutoffPassed");
    expect(contractRefusal({ status: "Resolved", cutoffAt: 5_000 }, 999)).toBe("ContractNotOpen");
    const close = (caller: string, now: number) => closeRefusal({ offer: { status: "Open", creator: "C", revision: 0n }, contract: k, caller, now });
    expect(close("S", 999)).toBe("CloseNotAllowed");
    expect(close("C", 999)).toBeNull();
    expect(close("S", 1_000)).toBeNull();
    // The store filter says the same: cutoff_at <= now is passed, > now is ahead.
    expect(cutoffFilter("passed", 1_000n)).toEqual(["<=", 1_000]);
    expect(cutoffFilter("ahead", 1_000n)).toEqual([">", 1_000]);
  });

  it("odds range as create_offer checks it", () => {
    const l = { minimumOddsNumerator: 1n, minimumOddsDenominator: 5n, maximumOddsNumerator: 5n, maximumOddsDenominator: 1n };
    expect(oddsRefusal(1n, 5n, l)).toBeNull();
    expect(oddsRefusal(1n, 6n, l)).toBe("OddsBelowMinimum");
    expect(oddsRefusal(5n, 1n, l)).toBeNull();
    expect(oddsRefusal(6n, 1n, l)).toBe("OddsAboveMaximum");
  });

  it("warning beyond the ratio either way, exactly at it normal, exact at u64 max", () => {
    const W = { numerator: 5n, denominator: 1n };
    expect(termsGuardrail(5n, 1n, W)).toBe("normal");
    expect(termsGuardrail(5_000_001n, 1_000_000n, W)).toBe("warning");
    expect(termsGuardrail(1_000_000n, 5_000_001n, W)).toBe("warning");
    expect(termsGuardrail(U64_MAX, 3_689_348_814_741_910_323n)).toBe("normal");
    expect(termsGuardrail(U64_MAX, 3_689_348_814_741_910_322n)).toBe("warning");
  });
});
