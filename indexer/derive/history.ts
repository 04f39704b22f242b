/**
 * A contract's price history (issue 23, item 3) as rows of the `contract_history` table: per
 * taker side and interval, one row per interval that holds a change (a fill, an offer created
 * or closed, the cutoff, the resolution). A pure function of the contract's stored offers and
 * fills, never of the order they were indexed in: live indexing, a retraction (a fork) and a
 * backfill from scratch all end with the same rows (the store recomputes a contract's rows
 * whenever one of them changes: ../store/history.ts).
 *
 * - The side is the outcome a taker backs: fills and offers whose creator backs the other one.
 * - Volume is the takers' stake (`take_micros`); the volume-weighted odds are
 *   (Σ take + Σ creator matched) : Σ take, the weighted mean of each fill's odds as matched, exact
 *   in integers (an offer's ratio and a fill's differ only by the program's rounding of the
 *   creator's matched stake).
 * - Last odds: the taker odds of the offer of the interval's last fill, by time, then slot; the
 *   store does not keep the order of transactions inside a slot, so fills of one slot are taken
 *   in the order of their offer's address, then revision (the same in every store).
 * - Best odds: the book's best taker odds in the interval's last second, after that second's
 *   changes: offers created and not closed by then, with something remaining once the fills
 *   up to then are taken off, while the contract takes offers (before the cutoff and any
 *   resolution); null when that side is empty.
 * - Offers whose account is gone (rent reclaimed, `deleted` = 1) are left out with their fills: a
 *   backfill finds neither them nor their contract (a fill event does not name it), and the
 *   history must not depend on whether the store saw the account before it closed. Reclaiming a
 *   Closed or Settled offer therefore takes its fills out of the contract's past intervals.
 */
import { compareTakerOdds, gcd } from "../../idl/client/odds";
import type { ContractHistoryTable, ContractsTable, FillsTable, OffersTable } from "../store/schema";

export const HISTORY_INTERVALS = { "1m": 60, "5m": 300, "1h": 3600, "1d": 86400 } as const;
export type HistoryInterval = keyof typeof HISTORY_INTERVALS;
export const HISTORY_SIDES = ["sideA", "sideB"] as const;

export type HistoryContract = Pick<ContractsTable, "cutoff_at" | "resolved_at">;
export type HistoryOffer = Pick<OffersTable, "address" | "side" | "creator_total_micros" | "taker_target_micros" | "created_at" | "closed_at">;
export type HistoryFill = Pick<FillsTable, "offer" | "revision" | "take_micros" | "creator_matched_micros" | "filled_at" | "slot">;

interface Terms {
  creatorTotal: bigint;
  takerTarget: bigint;
}

const reduced = (n: bigint, d: bigint): [string, string] => {
  const g = gcd(n, d);
  return [(n / g).toString(), (d / g).toString()];
};
const takerRatio = (t: Terms) => reduced(t.creatorTotal + t.takerTarget, t.takerTarget);

type Event = { at: number; kind: "open" | "close"; offer: number } | { at: number; kind: "fill"; offer: number; take: bigint };

/**
 * What came before `at` (a multiple of a day, so of every interval), for a derivation of the rows
 * from `at` on only: how much of each offer (by address) had been taken by then. The fills given
 * with it are those from `at` on.
 */
export interface HistoryStart {
  at: number;
  taken: Map<string, bigint>;
}

/**
 * The rows of one contract's history, in key order (side, interval, bucket): every row, or with
 * `from` the rows of the intervals from `from.at` on (the same rows a whole derivation gives there).
 */
export function historyRows(contract: string, c: HistoryContract, offers: HistoryOffer[], fills: HistoryFill[], from?: HistoryStart): ContractHistoryTable[] {
  const rows: ContractHistoryTable[] = [];
  const start = from?.at ?? Number.NEGATIVE_INFINITY;
  if (offers.length === 0) return rows;
  const cutoff = Number(c.cutoff_at);
  const end = c.resolved_at === null || c.resolved_at === undefined ? cutoff : Math.min(cutoff, Number(c.resolved_at));
  const fillOrder = [...fills].sort(
    (a, b) =>
      Number(a.filled_at) - Number(b.filled_at) ||
      Number(a.slot) - Number(b.slot) ||
      (a.offer < b.offer ? -1 : a.offer > b.offer ? 1 : 0) ||
      Number(a.revision) - Number(b.revision),
  );
  for (const side of HISTORY_SIDES) {
    // Offers a taker of `side` meets: the creator backs the other outcome.
    const mine = offers.filter((o) => o.side !== side);
    if (mine.length === 0) continue;
    const index = new Map(mine.map((o, i) => [o.address, i]));
    const terms = mine.map((o): Terms => ({ creatorTotal: BigInt(o.creator_total_micros), takerTarget: BigInt(o.taker_target_micros) }));
    // Rank = the offer's level, 0 the best: levels compare exactly, so the best is the lowest live rank.
    const byOdds = mine.map((_, i) => i).sort((a, b) => compareTakerOdds(terms[a], terms[b]));
    const rank = new Array<number>(mine.length);
    let r = -1;
    byOdds.forEach((i, k) => {
      if (k === 0 || compareTakerOdds(terms[byOdds[k - 1]], terms[i]) !== 0) r++;
      rank[i] = r;
    });
    const levelOdds = new Map<number, [string, string]>();
    for (const i of byOdds) if (!levelOdds.has(rank[i])) levelOdds.set(rank[i], takerRatio(terms[i]));
    const offerOdds = rank.map((k) => levelOdds.get(k)!);

    const sideFills = fillOrder
      .filter((f) => index.has(f.offer))
      .map((f) => ({ at: Number(f.filled_at), offer: index.get(f.offer)!, take: BigInt(f.take_micros), matched: BigInt(f.creator_matched_micros) }));
    const events: Event[] = [];
    mine.forEach((o, i) => {
      events.push({ at: Number(o.created_at), kind: "open", offer: i });
      if (o.closed_at !== null && o.closed_at !== undefined) events.push({ at: Number(o.closed_at), kind: "close", offer: i });
    });
    // What was taken before the start counts as one take just before it.
    for (const [address, take] of from?.taken ?? []) if (index.has(address)) events.push({ at: start - 1, kind: "fill", offer: index.get(address)!, take });
    for (const f of sideFills) events.push({ at: f.at, kind: "fill", offer: f.offer, take: f.take });
    events.sort((a, b) => a.at - b.at);
    // Seconds at which something changed: the cutoff and a resolution change the book too.
    const changes = events.filter((e) => e.at >= start).map((e) => e.at);
    if (end >= start) changes.push(end);

    for (const [interval, seconds] of Object.entries(HISTORY_INTERVALS) as [HistoryInterval, number][]) {
      const buckets = [...new Set(changes.map((t) => t - mod(t, seconds)))].sort((a, b) => a - b);
      const perBucket = new Map<number, ContractHistoryTable>();
      for (const b of buckets) {
        perBucket.set(b, {
          contract,
          side,
          interval,
          bucket_at: b,
          volume_micros: "0",
          creator_matched_micros: "0",
          fill_count: 0,
          last_numerator: null,
          last_denominator: null,
          best_numerator: null,
          best_denominator: null,
        });
      }
      const volume = new Map<number, [bigint, bigint]>();
      for (const f of sideFills) {
        const b = f.at - mod(f.at, seconds);
        const row = perBucket.get(b)!;
        const v = volume.get(b) ?? [0n, 0n];
        v[0] += f.take;
        v[1] += f.matched;
        volume.set(b, v);
        row.fill_count++;
        [row.last_numerator, row.last_denominator] = offerOdds[f.offer];
      }
      for (const [b, [take, matched]] of volume) {
        const row = perBucket.get(b)!;
        row.volume_micros = take.toString();
        row.creator_matched_micros = matched.toString();
      }
      // The book at each bucket's last second: replay the changes in time order.
      const book = new BookReplay(
        mine.length,
        terms.map((t) => t.takerTarget),
        rank,
      );
      let e = 0;
      for (const b of buckets) {
        const last = b + seconds - 1;
        while (e < events.length && events[e].at <= last) book.apply(events[e++]);
        const best = last < end ? book.best() : null;
        if (best !== null) {
          const row = perBucket.get(b)!;
          [row.best_numerator, row.best_denominator] = levelOdds.get(best)!;
        }
        rows.push(perBucket.get(b)!);
      }
    }
  }
  return rows;
}

const mod = (t: number, m: number) => ((t % m) + m) % m;

/** The live offers of one side as time goes on, and the best live level. */
class BookReplay {
  private readonly open: boolean[];
  private readonly remaining: bigint[];
  private readonly live: number[] = [];
  private bestRank = Number.POSITIVE_INFINITY;

  constructor(
    n: number,
    targets: bigint[],
    private readonly rank: number[],
  ) {
    this.open = new Array<boolean>(n).fill(false);
    this.remaining = [...targets];
  }

  private alive(i: number): boolean {
    return this.open[i] && this.remaining[i] > 0n;
  }

  apply(e: Event): void {
    const was = this.alive(e.offer);
    if (e.kind === "open") this.open[e.offer] = true;
    else if (e.kind === "close") this.open[e.offer] = false;
    else if (e.kind === "fill") this.remaining[e.offer] -= e.take;
    const is = this.alive(e.offer);
    if (was === is) return;
    const r = this.rank[e.offer];
    this.live[r] = (this.live[r] ?? 0) + (is ? 1 : -1);
    if (is) this.bestRank = Math.min(this.bestRank, r);
    else if (r === this.bestRank && this.live[r] === 0) {
      let k = r + 1;
      while (k < this.live.length && !this.live[k]) k++;
      this.bestRank = k < this.live.length ? k : Number.POSITIVE_INFINITY;
    }
  }

  best(): number | null {
    return Number.isFinite(this.bestRank) ? this.bestRank : null;
  }
}
