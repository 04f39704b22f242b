/**
 * The simulations' book report (issue 23): each contract's best taker odds per side over
 * simulated time, so a run shows price discovery, not only volume. Both scenarios sample their
 * live contracts at a fixed action interval (the in-process one from the offer accounts on chain,
 * the HTTP one from the book endpoint) and keep a sample only when a side's best odds or the
 * amount at them changed, which keeps the table short: a row holds until the next one.
 */
import { compareTakerOdds, oddsOf, type Odds } from "../../idl/client/odds";
import { formatMicros } from "../../service/read/share-format";

export type Side = "sideA" | "sideB";

/** What a taker backing `side` could take at a moment: the best odds and how much is there. */
export interface BookQuote {
  side: Side;
  label: string;
  best: Odds | null;
  /** Remaining taker amount at the best odds (the top level), micro-units. */
  bestAvailableMicros: string;
  /** Remaining taker amount over every level of the side. */
  availableMicros: string;
}

export interface BookSample {
  /** Simulated seconds since the run's start. */
  at: number;
  sides: BookQuote[];
}

export interface ContractBookTrace {
  contract: string;
  name: string;
  /** Samples in time order, each with a best price or amount different from the one before. */
  samples: BookSample[];
}

/** An offer as the book sees it: the creator's side, terms and what is left to take. */
export interface QuotedOffer {
  creatorSide: Side;
  creatorTotal: bigint;
  takerTarget: bigint;
  remaining: bigint;
}

/**
 * The quote of `side` from a contract's takeable offers: those whose creator backs the other
 * side with something left, best taker odds first (the book's rule, service/read/book.ts).
 */
export function quoteOf(offers: readonly QuotedOffer[], side: Side, label: string): BookQuote {
  const open = offers.filter((o) => o.creatorSide !== side && o.remaining > 0n);
  if (open.length === 0) return { side, label, best: null, bestAvailableMicros: "0", availableMicros: "0" };
  const top = open.reduce((a, b) => (compareTakerOdds(b, a) < 0 ? b : a));
  const atTop = open.filter((o) => compareTakerOdds(o, top) === 0).reduce((s, o) => s + o.remaining, 0n);
  return {
    side,
    label,
    best: oddsOf(top.creatorTotal + top.takerTarget, top.takerTarget),
    bestAvailableMicros: atTop.toString(),
    availableMicros: open.reduce((s, o) => s + o.remaining, 0n).toString(),
  };
}

/** What the report shows of a side: a sample differing from the last one only in deeper levels is not a new row. */
const top = (q: BookQuote[]) => JSON.stringify(q.map((x) => [x.best?.numerator, x.best?.denominator, x.bestAvailableMicros]));
const sameQuotes = (a: BookQuote[], b: BookQuote[]) => top(a) === top(b);

/** Collects the samples of a run. */
export class BookRecorder {
  private readonly traces = new Map<string, ContractBookTrace>();

  /** One sample of `contract`; kept only if a side's best odds or the amount at them differ from the contract's last sample. */
  record(contract: string, name: string, at: number, sides: BookQuote[]): void {
    let t = this.traces.get(contract);
    if (!t) this.traces.set(contract, (t = { contract, name, samples: [] }));
    const last = t.samples[t.samples.length - 1];
    if (last && sameQuotes(last.sides, sides)) return;
    t.samples.push({ at, sides });
  }

  /** The traces of every sampled contract, in the order they were first sampled. */
  all(): ContractBookTrace[] {
    return [...this.traces.values()];
  }
}

/** How often (in actions) a run samples its books: about 24 times over the run. */
export const sampleInterval = (actions: number) => Math.max(1, Math.floor(actions / 24));

/** "+1d 04:30" from simulated seconds since the start. */
export function simTime(at: number): string {
  const d = Math.floor(at / 86_400);
  const h = Math.floor((at % 86_400) / 3_600);
  const m = Math.floor((at % 3_600) / 60);
  return `+${d}d ${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
}

/** "2.50 (5:2) 10 USDC" or "-" for nothing on offer. */
export function quoteText(q: BookQuote): string {
  return q.best ? `${q.best.decimal.slice(0, -2)} (${q.best.numerator}:${q.best.denominator}) ${formatMicros(q.bestAvailableMicros)}` : "-";
}

/**
 * The printed report: per contract, one row per change of its quotes, a column per side (best
 * decimal odds, the exact ratio, the amount at that price). The `limit` contracts with the most
 * changes are shown (the JSON output holds every one).
 */
export function formatBookReport(traces: readonly ContractBookTrace[], o: { limit: number; sampleEverySeconds: number }): string[] {
  const shown = [...traces]
    .map((t, i) => ({ t, i }))
    .sort((a, b) => b.t.samples.length - a.t.samples.length || a.i - b.i)
    .slice(0, o.limit)
    .sort((a, b) => a.i - b.i)
    .map((x) => x.t);
  const every = o.sampleEverySeconds >= 3_600 ? `${(o.sampleEverySeconds / 3_600).toFixed(1)} h` : `${Math.round(o.sampleEverySeconds / 60)} min`;
  const lines = [
    `book: best taker odds per side over time (sampled every ${every} of simulated time, a row per change; decimal (ratio) and the amount at that price; - nothing on offer)`,
  ];
  if (shown.length < traces.length) lines.push(`${shown.length} of ${traces.length} contracts shown, those whose book moved most`);
  for (const t of shown) {
    const labels = t.samples[0]?.sides.map((s) => s.label) ?? [];
    const cells = t.samples.map((s) => [simTime(s.at), ...s.sides.map(quoteText)]);
    const head = ["time", ...labels.map((l) => `back ${l}`)];
    const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]?.length ?? 0)));
    const row = (c: string[]) => `  ${c.map((v, i) => v.padEnd(widths[i])).join("   ")}`.trimEnd();
    lines.push(`${t.name} (${t.contract})`, row(head), ...cells.map(row));
  }
  return lines;
}
