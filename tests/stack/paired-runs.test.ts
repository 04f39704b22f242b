import { describe, expect, it } from "vitest";
import type { LoadResult } from "../../scripts/autocannon";
import { alternatingPairs, pairedRatio } from "../../scripts/paired-runs";

/** A run that answers `rps` from the list in turn, and notes its name in `order`. */
const runs = (name: string, rps: number[], order: string[]) => {
  let i = 0;
  return async (): Promise<LoadResult> => {
    order.push(name);
    return { rps: rps[i++], p50: 0, p99: 0, total: 0, non2xx: 0, cpuUs: 0 };
  };
};

describe("pairedRatio (scripts/paired-runs.ts)", () => {
  it("alternates the order within pairs, so that a drift falls on both sides", async () => {
    const order: string[] = [];
    await pairedRatio(runs("a", [1, 1, 1, 1], order), runs("b", [1, 1, 1, 1], order), 4);
    expect(order).toEqual(["a", "b", "b", "a", "a", "b", "b", "a"]);
  });

  it("takes each pair's ratio from its own two runs, and the median of the pairs", async () => {
    const odd = await pairedRatio(runs("a", [70, 90, 50], []), runs("b", [100, 100, 100], []), 3);
    expect(odd.ratios).toEqual([0.7, 0.9, 0.5]);
    expect(odd.median).toBe(0.7);
    const even = await pairedRatio(runs("a", [60, 80, 100, 40], []), runs("b", [100, 100, 100, 100], []), 4);
    expect(even.median).toBeCloseTo(0.7, 12);
  });

  it("hands back each side's runs by pair, whichever ran first (alternatingPairs, also bench-indexer's off/on pairs)", async () => {
    const order: string[] = [];
    const { a, b } = await alternatingPairs(runs("a", [1, 2, 3], order), runs("b", [10, 20, 30], order), 3);
    expect(order).toEqual(["a", "b", "b", "a", "a", "b"]);
    expect(a.map((r) => r.rps)).toEqual([1, 2, 3]);
    expect(b.map((r) => r.rps)).toEqual([10, 20, 30]);
  });
});
