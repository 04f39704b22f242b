/**
 * Compute-unit accounting of a transaction's logs: the outer program's total, what its CPI
 * callees consumed (their own "consumed" lines), and how many CPIs it made. On the 1.18 runtime
 * each CPI also costs the caller a flat 1000 CU (invoke_units), reported separately.
 */
export interface CuSplit {
  total: number;
  callees: number;
  cpis: number;
  own: number;
  ownExclInvoke: number;
}

export const INVOKE_UNITS = 1000;

export function splitComputeUnits(logs: string[], programId: string): CuSplit {
  let depth = 0,
    total = 0,
    callees = 0,
    cpis = 0;
  for (const line of logs) {
    const inv = / invoke \[(\d+)\]$/.exec(line);
    if (inv) {
      depth = Number(inv[1]);
      if (depth === 2) cpis++;
      continue;
    }
    const used = /^Program (\w+) consumed (\d+) of \d+ compute units$/.exec(line);
    if (used) {
      if (depth === 1 && used[1] === programId) total += Number(used[2]);
      else if (depth === 2) callees += Number(used[2]);
      continue;
    }
    if (/^Program \w+ (success|failed)/.test(line)) depth--;
  }
  const own = total - callees;
  return { total, callees, cpis, own, ownExclInvoke: own - cpis * INVOKE_UNITS };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
