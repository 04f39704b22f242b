/**
 * The simulation's book report (scripts/sim/book-report.ts): the quote of a side agrees with the
 * service's book levels (service/read/book.ts) on random offers; the printed table says what the
 * samples hold; and a run of the in-process scenario on the compiled program traces its
 * contracts' best odds per side over simulated time, with prices that move.
 */
import { describe, expect, it } from "vitest";
import type { OffersTable } from "../../indexer";
import { Rng } from "../../harness/random";
import { decimal4, oddsOf } from "../../idl/client/odds";
import { bookLevels } from "../../service/read/book";
import { formatBookReport, quoteOf, sampleInterval, simTime, type ContractBookTrace, type QuotedOffer, type Side } from "../../scripts/sim/book-report";
import { runScenario } from "../../scripts/sim/scenario";

const U = 1_000_000n;

describe("the report's quote of a side", () => {
  it("is the service book's top level: same best odds, amount at them and side total, on random offers", () => {
    const rng = new Rng(23);
    for (let round = 0; round < 300; round++) {
      // Few distinct ratios, so levels often hold several offers.
      const offers: QuotedOffer[] = Array.from({ length: rng.int(0, 12) }, () => {
        const k = rng.big(1n, 3n);
        const creatorTotal = rng.big(1n, 6n) * k * U;
        const takerTarget = rng.big(1n, 6n) * k * U;
        return { creatorSide: rng.pick(["sideA", "sideB"] as const), creatorTotal, takerTarget, remaining: rng.chance(0.2) ? 0n : rng.big(1n, takerTarget) };
      });
      for (const side of ["sideA", "sideB"] as Side[]) {
        const rows = offers
          .filter((o) => o.creatorSide !== side && o.remaining > 0n)
          .map(
            (o, i) =>
              ({
                address: `offer${i}`,
                created_at: i,
                creator_total_micros: String(o.creatorTotal),
                taker_target_micros: String(o.takerTarget),
                taker_filled_micros: String(o.takerTarget - o.remaining),
              }) as unknown as OffersTable,
          );
        const levels = bookLevels(rows);
        const q = quoteOf(offers, side, side);
        expect(q.best).toEqual(levels[0]?.odds ?? null);
        expect(q.bestAvailableMicros).toBe(levels[0]?.availableMicros ?? "0");
        expect(q.availableMicros).toBe(levels.reduce((s, l) => s + BigInt(l.availableMicros), 0n).toString());
      }
    }
  });
});

describe("the printed book report", () => {
  const quote = (side: Side, label: string, n: bigint, d: bigint, at: bigint) => ({
    side,
    label,
    best: oddsOf(n, d),
    bestAvailableMicros: String(at),
    availableMicros: String(at),
  });
  const none = (side: Side, label: string) => ({ side, label, best: null, bestAvailableMicros: "0", availableMicros: "0" });
  const traces: ContractBookTrace[] = [
    {
      contract: "C1",
      name: "Match 1",
      samples: [
        { at: 0, sides: [none("sideA", "Home"), none("sideB", "Away")] },
        { at: 3_600, sides: [quote("sideA", "Home", 5n, 2n, 10n * U), none("sideB", "Away")] },
        { at: 90_000, sides: [quote("sideA", "Home", 9n, 5n, 15_500_000n), quote("sideB", "Away", 3n, 2n, 20n * U)] },
      ],
    },
    { contract: "C2", name: "Match 2", samples: [{ at: 7_200, sides: [none("sideA", "Home"), none("sideB", "Away")] }] },
  ];

  it("shows a row per change with the decimal odds, the ratio and the amount at that price", () => {
    expect(formatBookReport(traces, { limit: 10, sampleEverySeconds: 3_600 })).toEqual([
      "book: best taker odds per side over time (sampled every 1.0 h of simulated time, a row per change; decimal (ratio) and the amount at that price; - nothing on offer)",
      "Match 1 (C1)",
      "  time        back Home              back Away",
      "  +0d 00:00   -                      -",
      "  +0d 01:00   2.50 (5:2) 10 USDC     -",
      "  +1d 01:00   1.80 (9:5) 15.5 USDC   1.50 (3:2) 20 USDC",
      "Match 2 (C2)",
      "  time        back Home   back Away",
      "  +0d 02:00   -           -",
    ]);
  });

  it("keeps the contracts whose book moved most when told to show fewer, in their own order", () => {
    const lines = formatBookReport([traces[1], traces[0]], { limit: 1, sampleEverySeconds: 600 });
    expect(lines[0]).toContain("sampled every 10 min");
    expect(lines[1]).toBe("1 of 2 contracts shown, those whose book moved most");
    expect(lines[2]).toBe("Match 1 (C1)");
    expect(lines).not.toContain("Match 2 (C2)");
  });

  it("writes simulated time from the run's start", () => {
    expect([simTime(0), simTime(59), simTime(3_660), simTime(86_400 * 2 + 3_600 * 23 + 60 * 59)]).toEqual(["+0d 00:00", "+0d 00:00", "+0d 01:01", "+2d 23:59"]);
    expect([sampleInterval(10), sampleInterval(24), sampleInterval(10_000)]).toEqual([1, 1, 416]);
  });
});

describe("the in-process simulation's book", () => {
  it("250 actions by 12 users: every contract's best odds per side over time, from the program's accounts", async () => {
    const s = await runScenario({ users: 12, actions: 250, days: 3, seed: 7, engine: "bankrun" });
    // A share of takers swept the book with take-best; each sweep's effect matched the rules' plan
    // (the scenario throws otherwise) and funds were conserved throughout.
    expect(s.takeBestSweeps).toBeGreaterThan(5);
    expect(s.sweepOffersTaken).toBeGreaterThanOrEqual(s.takeBestSweeps);
    expect(s.fills).toBeGreaterThan(s.sweepOffersTaken);
    expect(s.invariantChecks).toBe(Math.ceil(250 / 50) + 2);
    expect(s.bookSampleSeconds).toBe(Number(((3n * 86_400n) / 250n) * BigInt(sampleInterval(250))));
    expect(s.book.length).toBeGreaterThanOrEqual(8); // the scenario keeps 8 contracts live
    let moved = 0;
    for (const t of s.book) {
      expect(t.samples.length).toBeGreaterThan(0);
      for (const [i, sample] of t.samples.entries()) {
        expect(sample.sides.map((q) => q.side)).toEqual(["sideA", "sideB"]);
        expect(sample.at % s.bookSampleSeconds).toBe(0);
        if (i > 0) {
          expect(sample.at).toBeGreaterThan(t.samples[i - 1].at);
          expect(sample.sides).not.toEqual(t.samples[i - 1].sides); // a row per change
        }
        for (const q of sample.sides) {
          if (q.best === null) {
            expect([q.bestAvailableMicros, q.availableMicros]).toEqual(["0", "0"]);
            continue;
          }
          expect(q.best.decimal).toBe(decimal4(BigInt(q.best.numerator), BigInt(q.best.denominator)));
          expect(BigInt(q.best.numerator)).toBeGreaterThan(BigInt(q.best.denominator));
          expect(BigInt(q.bestAvailableMicros)).toBeGreaterThan(0n);
          expect(BigInt(q.bestAvailableMicros)).toBeLessThanOrEqual(BigInt(q.availableMicros));
        }
      }
      const prices = new Set(t.samples.flatMap((x) => x.sides.filter((q) => q.best).map((q) => `${q.side} ${q.best!.decimal}`)));
      if (prices.size > 1) moved++;
    }
    expect(moved).toBeGreaterThan(0); // some market's price moved over the run
    const lines = formatBookReport(s.book, { limit: 3, sampleEverySeconds: s.bookSampleSeconds });
    const shown = s.book.filter((t) => lines.includes(`${t.name} (${t.contract})`));
    expect(shown.length).toBe(Math.min(3, s.book.length));
    expect(lines.length).toBe(2 + shown.reduce((n, t) => n + 2 + t.samples.length, 0));
  });
});
