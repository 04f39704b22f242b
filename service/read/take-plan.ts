/**
 * A take-best plan over a whole book: the program's sweep (idl/client/take-best-rules.ts
 * `planTakeBest`) over the book's offers in its order, TAKE_BEST_MAX_OFFERS at a time with what
 * is still left, which is what the sweep would do over one list of any length. The quote
 * (./quote.ts) plans over the indexed book, the take-best write (service/writes/take-best.ts)
 * over the same offers read fresh from the chain, so both answer with this one shape. Both hand it
 * the caller's holdings as one lookup (./holdings.ts), read where each must read them.
 */
import { TAKE_BEST_MAX_OFFERS, planTakeBest, type SweepOffer, type TakeBestErrorName, type TakeBestRequest } from "../../idl/client/take-best-rules";
import type { Holdings } from "./holdings";

export interface PlannedFill {
  address: string;
  amount: bigint;
  matched: bigint;
  creatorTotal: bigint;
  takerTarget: bigint;
  /** The offer's fee (fixed when it was created), on the matched stake if the taker wins. */
  feeBps: number;
}

/** An offer of the book as the sweep reads it, with its fee; what the caller holds on it comes from the plan's `Holdings`. */
export type BookOffer = Omit<SweepOffer, "held"> & { feeBps: number };

export interface Plan {
  /** The offers taken, in the order taken. */
  fills: PlannedFill[];
  filled: bigint;
  matched: bigint;
  unfilled: bigint;
  /** A refusal of the whole sweep before any offer (the switch off, the contract closed), else null. */
  error: TakeBestErrorName | null;
}

/** The limit of "any odds": every taker odds ratio is at least 0 : 1. */
export const ANY_ODDS = { numerator: 0n, denominator: 1n } as const;

/**
 * The sweep of `offers` (in the order to take them) as fill-and-kill; a fill-or-kill is this plan
 * when `unfilled` is 0. `holdings`: what the caller holds on each offer already, which counts
 * against the per-position maximum wager (the sweep's `held`); set here only.
 */
export function planOverBook(offers: readonly BookOffer[], holdings: Holdings, r: Omit<TakeBestRequest, "mode">): Plan {
  const swept: SweepOffer[] = offers.map((o) => ({ ...o, held: holdings(o.address) }));
  const terms = new Map(offers.map((o) => [o.address, o]));
  const fills: PlannedFill[] = [];
  let left = r.amount;
  let matched = 0n;
  for (let i = 0; i < offers.length && left > 0n; i += TAKE_BEST_MAX_OFFERS) {
    const p = planTakeBest(swept.slice(i, i + TAKE_BEST_MAX_OFFERS), { ...r, amount: left, mode: "fill-and-kill" });
    if (p.error !== null && p.error !== "NothingTaken") return { fills: [], filled: 0n, matched: 0n, unfilled: r.amount, error: p.error };
    for (const f of p.fills) {
      if (!("take" in f)) continue;
      const o = terms.get(f.offer)!;
      fills.push({ address: f.offer, amount: f.take, matched: f.matched, creatorTotal: o.creatorTotal, takerTarget: o.takerTarget, feeBps: o.feeBps });
      matched += f.matched;
    }
    left = p.left;
  }
  return { fills, filled: r.amount - left, matched, unfilled: left, error: null };
}
