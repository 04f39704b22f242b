/**
 * The throughput of one server against another's, on a machine whose speed swings by a third
 * within seconds and without any change in the code measured (BENCHMARKS.md, issue 21, fifteenth
 * stop): short runs of each, alternating A B, B A, A B, ..., so that each pair's two runs are
 * seconds apart and a linear drift falls on both sides alike. The median of the pairs' ratios is
 * the figure, their range its scatter. The same procedure with one server on both sides (the bare
 * handler against itself) gives the scatter such a machine leaves in a ratio of equals.
 */
import type { LoadResult } from "./autocannon";
import { median } from "./median";

export interface PairedRatio {
  /** The median of the pairs' ratios (the mean of the middle two for an even count). */
  median: number;
  /** Every pair's ratio a / b, in the order run. */
  ratios: number[];
}

/** `pairs` runs of `a` and of `b` in alternating order (A B, B A, ...); `a[i]` and `b[i]` are pair i. */
export async function alternatingPairs<T>(a: () => Promise<T>, b: () => Promise<T>, pairs: number): Promise<{ a: T[]; b: T[] }> {
  const as: T[] = [];
  const bs: T[] = [];
  for (let p = 0; p < pairs; p++) {
    if (p % 2 === 0) {
      as.push(await a());
      bs.push(await b());
    } else {
      bs.push(await b());
      as.push(await a());
    }
  }
  return { a: as, b: bs };
}

export async function pairedRatio(a: () => Promise<LoadResult>, b: () => Promise<LoadResult>, pairs: number): Promise<PairedRatio> {
  const runs = await alternatingPairs(a, b, pairs);
  const ratios = runs.a.map((ra, i) => ra.rps / runs.b[i].rps);
  return { median: median(ratios), ratios };
}
