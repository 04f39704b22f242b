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

export async function pairedRatio(a: () => Promise<LoadResult>, b: () => Promise<LoadResult>, pairs: number): Promise<PairedRatio> {
  const ratios: number[] = [];
  for (let p = 0; p < pairs; p++) {
    let ra: LoadResult, rb: LoadResult;
    if (p % 2 === 0) {
      ra = await a();
      rb = await b();
    } else {
      rb = await b();
      ra = await a();
    }
    ratios.push(ra.rps / rb.rps);
  }
  return { median: median(ratios), ratios };
}
