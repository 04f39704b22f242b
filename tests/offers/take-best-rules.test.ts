/**
 * take_best's rules (idl/client/take-best-rules.ts) against programs/offers/take-best-vectors.json,
 * the table the Rust test `take_best_vectors::vectors_file_matches_rust` checks math.rs against:
 * the odds limit at u64 extremes and whole sweeps (skips, the remainder exception, the position
 * cap, fill-or-kill) agree row for row.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { oddsAtLeast, planTakeBest, takerOdds, type SweepOffer, type TakeBestMode } from "../../idl/client/take-best-rules";
import { U64_MAX } from "../../idl/client/offers-rules";

type Row = Record<string, unknown>;
const vectors = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "programs", "offers", "take-best-vectors.json"), "utf8")) as {
  oddsAtLeast: Row[];
  sweeps: Row[];
};
const b = (v: unknown) => BigInt(v as string);
const side = (code: unknown) => (code === 1 ? "sideA" : "sideB");

describe("take_best rules = math.rs, on the shared vectors", () => {
  it("has both sections, with u64 max among the inputs and every way an offer is passed over", () => {
    expect(vectors.oddsAtLeast.length).toBeGreaterThan(500);
    expect(vectors.sweeps.length).toBeGreaterThan(200);
    expect(vectors.oddsAtLeast.some((r) => b(r.creatorTotal) === U64_MAX && b(r.numerator) === U64_MAX)).toBe(true);
    const skips = new Set(vectors.sweeps.flatMap((s) => (s.fills as Row[]).map((f) => f.skip)).filter(Boolean));
    expect([...skips].sort()).toEqual(
      ["AmountTaken", "OddsBelowLimit", "OfferNotOpen", "PositionAboveMaximum", "SelfTake", "TakeBelowMinimum", "TakeTooSmallToMatch", "WrongSide"].sort(),
    );
    expect(new Set(vectors.sweeps.map((s) => s.error))).toEqual(new Set([null, "NothingTaken", "NotFilled"]));
  });

  it("oddsAtLeast", () => {
    for (const r of vectors.oddsAtLeast) {
      expect(oddsAtLeast(b(r.creatorTotal), b(r.takerTarget), { numerator: b(r.numerator), denominator: b(r.denominator) }), JSON.stringify(r)).toBe(r.atLeast);
    }
  });

  it("planTakeBest", () => {
    for (const s of vectors.sweeps) {
      const offers: SweepOffer[] = (s.offers as Row[]).map((o, i) => ({
        address: `offer${i}`,
        side: side(o.side),
        status: o.open ? "Open" : "Closed",
        creator: o.own ? "taker" : `creator${i}`,
        creatorTotal: b(o.creatorTotal),
        takerTarget: b(o.takerTarget),
        takerFilled: b(o.takerFilled),
        creatorAllocated: b(o.creatorAllocated),
        minimumTake: b(o.minimumTake),
        revision: 1n,
        held: b(o.held),
      }));
      const [num, den] = s.worstOdds as string[];
      const plan = planTakeBest(offers, {
        side: side(s.side),
        amount: b(s.amount),
        worstOdds: { numerator: b(num), denominator: b(den) },
        mode: s.mode as TakeBestMode,
        taker: "taker",
        maximumWager: b(s.maximumWager),
      });
      const expected = (s.fills as Row[]).map((f, i) =>
        f.skip ? { offer: `offer${i}`, skip: f.skip } : { offer: `offer${i}`, take: b(f.take), matched: b(f.matched) },
      );
      expect({ fills: plan.fills, taken: plan.taken, error: plan.error }, JSON.stringify(s)).toEqual({ fills: expected, taken: b(s.taken), error: s.error });
    }
  });
});

describe("take_best plan: the rules around the sweep", () => {
  const unit = 1_000_000n;
  const offer = (address: string, over: Partial<SweepOffer> = {}): SweepOffer => ({
    address,
    side: "sideB",
    status: "Open",
    creator: "creator",
    creatorTotal: 8n * unit,
    takerTarget: 10n * unit,
    takerFilled: 0n,
    creatorAllocated: 0n,
    minimumTake: unit,
    revision: 1n,
    contract: "K",
    ...over,
  });
  const req = {
    side: "sideA" as const,
    amount: 15n * unit,
    worstOdds: { numerator: 18n, denominator: 10n },
    mode: "fill-and-kill" as const,
    taker: "taker",
    maximumWager: 500n * unit,
  };

  it("the taker's odds of the spec's example are 18:10, and that limit is met exactly", () => {
    expect(takerOdds(offer("a"))).toEqual({ numerator: 18n * unit, denominator: 10n * unit });
    expect(planTakeBest([offer("a")], req).fills).toEqual([{ offer: "a", take: 10n * unit, matched: 8n * unit }]);
    expect(planTakeBest([offer("a")], { ...req, worstOdds: { numerator: 18n * unit + 1n, denominator: 10n * unit } }).error).toBe("NothingTaken");
  });

  it("fails the whole sweep as the program does: the same offer twice, another contract, bad arguments, the contract", () => {
    expect(planTakeBest([offer("a"), offer("a")], req).error).toBe("DuplicateOffer");
    const k = { address: "K", status: "Open", cutoffAt: 100n };
    expect(planTakeBest([offer("a"), offer("b", { contract: "L" })], { ...req, contract: k, now: 1n }).error).toBe("AccountMismatch");
    expect(planTakeBest([offer("a")], { ...req, contract: k, now: 100n }).error).toBe("CutoffPassed");
    expect(planTakeBest([offer("a")], { ...req, worstOdds: { numerator: 1n, denominator: 0n } }).error).toBe("InvalidOddsLimit");
    expect(planTakeBest([offer("a")], { ...req, amount: 0n }).error).toBe("ZeroAmount");
    expect(planTakeBest([], req).error).toBe("InvalidOfferList");
    expect(
      planTakeBest(
        Array.from({ length: 17 }, (_, i) => offer(`o${i}`)),
        req,
      ).error,
    ).toBe("InvalidOfferList");
    expect(planTakeBest([offer("a")], { ...req, offersEnabled: false }).error).toBe("OffersDisabled");
    expect(planTakeBest([offer("a"), offer("b")], { ...req, mode: "fill-or-kill", amount: 25n * unit }).error).toBe("NotFilled");
    expect(planTakeBest([offer("a"), offer("b")], { ...req, mode: "fill-or-kill", amount: 20n * unit }).error).toBe(null);
  });

  it("passes over an offer from its expiry second (Offer::accepts_takes: as not open), takes it one second before", () => {
    const k = { address: "K", status: "Open", cutoffAt: 1_000n };
    const expiring = offer("a", { expiresAt: 500n });
    expect(planTakeBest([expiring, offer("b")], { ...req, contract: k, now: 499n }).fills).toEqual([
      { offer: "a", take: 10n * unit, matched: 8n * unit },
      { offer: "b", take: 5n * unit, matched: 4n * unit },
    ]);
    expect(planTakeBest([expiring, offer("b")], { ...req, contract: k, now: 500n }).fills).toEqual([
      { offer: "a", skip: "OfferNotOpen" },
      { offer: "b", take: 10n * unit, matched: 8n * unit },
    ]);
    expect(planTakeBest([expiring], { ...req, contract: k, now: 500n }).error).toBe("NothingTaken");
    // No expiry (0) never expires.
    expect(planTakeBest([offer("c", { expiresAt: 0n })], { ...req, contract: k, now: 999n }).error).toBe(null);
  });
});
