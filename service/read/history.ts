/**
 * A contract's price history for one taker side (issue 23, item 3): per interval, the matched
 * volume, the volume-weighted and last matched taker odds, and the best taker odds at the
 * interval's end. One function for REST, GraphQL and the share pages' chart. The store keeps the
 * history (indexer/derive/history.ts says what each figure is); this reads a window of it.
 *
 * - The window: the `points` intervals (default 60, at most 500) up to the one holding now, or
 *   the one holding the contract's cutoff once it has passed (nothing changes after it), oldest
 *   first, every interval present: one without a change carries the best odds of the one before
 *   and has no volume.
 * - Intervals are aligned to UTC (unix time multiples of their length).
 */
import type { ContractHistoryTable } from "../../indexer";
import { HISTORY_INTERVALS, type HistoryInterval } from "../../indexer";
import { iso } from "../../indexer";
import { oddsOf, type Odds } from "../../idl/client/odds";
import { ApiError } from "../api-error";
import type { Side } from "./book";
import type { ReadService } from "./read-service";

export { HISTORY_INTERVALS, type HistoryInterval } from "../../indexer";
export const HISTORY_POINTS = { default: 60, max: 500 } as const;

export interface HistoryPoint {
  /** The interval's start and end (exclusive), ISO 8601. */
  start: string;
  end: string;
  /** Sum of the takers' stakes matched in the interval. */
  volumeMicros: string;
  fillCount: number;
  /** (Σ take + Σ creator matched) : Σ take over the interval's fills; null without fills. */
  volumeWeightedOdds: Odds | null;
  /** Taker odds of the interval's last fill; null without fills. */
  lastOdds: Odds | null;
  /** Best taker odds of the book in the interval's last second; null when nothing could be taken. */
  bestOdds: Odds | null;
}

export interface ContractHistory {
  contract: string;
  /** The outcome the takers backed. */
  side: Side;
  interval: HistoryInterval;
  intervalSeconds: number;
  /** Oldest first. */
  points: HistoryPoint[];
}

const ratio = (n: string | null, d: string | null) => (n === null || d === null ? null : oddsOf(BigInt(n), BigInt(d)));

/** The last `points` intervals of `contract`'s history for takers backing `side`. */
export async function contractHistory(
  read: ReadService,
  contract: string,
  side: Side,
  interval: HistoryInterval,
  points: number = HISTORY_POINTS.default,
): Promise<ContractHistory> {
  const c = await read.anonymous(
    `historyContract:${contract}`,
    async () => (await read.contractsByAddress([contract])).get(contract) ?? null,
    (x) => x !== null,
  );
  if (!c) throw new ApiError(404, "contract not found");
  const seconds = HISTORY_INTERVALS[interval];
  const cutoff = Math.floor(Date.parse(c.cutoffAt) / 1000);
  const until = Math.min(await read.now(), cutoff);
  const last = until - (((until % seconds) + seconds) % seconds);
  const first = last - (points - 1) * seconds;
  return read.anonymous(`history:${contract}:${side}:${interval}:${first}:${points}`, async () => {
    const rows = read.db.selectFrom("contract_history").selectAll().where("contract", "=", contract).where("side", "=", side).where("interval", "=", interval);
    const [inWindow, before] = await Promise.all([
      rows.where("bucket_at", ">=", first).where("bucket_at", "<=", last).orderBy("bucket_at").execute(),
      rows.where("bucket_at", "<", first).orderBy("bucket_at", "desc").limit(1).executeTakeFirst(),
    ]);
    const at = new Map(inWindow.map((r) => [Number(r.bucket_at), r]));
    let best: Odds | null = before ? ratio(before.best_numerator, before.best_denominator) : null;
    const out: HistoryPoint[] = [];
    for (let b = first; b <= last; b += seconds) {
      const r: ContractHistoryTable | undefined = at.get(b);
      if (r) best = ratio(r.best_numerator, r.best_denominator);
      const volume = r ? BigInt(r.volume_micros) : 0n;
      out.push({
        start: iso(b)!,
        end: iso(b + seconds)!,
        volumeMicros: volume.toString(),
        fillCount: r ? Number(r.fill_count) : 0,
        volumeWeightedOdds: r && volume > 0n ? oddsOf(volume + BigInt(r.creator_matched_micros), volume) : null,
        lastOdds: r ? ratio(r.last_numerator, r.last_denominator) : null,
        bestOdds: best,
      });
    }
    return { contract, side, interval, intervalSeconds: seconds, points: out };
  });
}
