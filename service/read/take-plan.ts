/**
 * A take-best plan over a book: which offers, in the book's order, a take of `amount` at no worse
 * than `worstOdds` would use, and how much of each. The quote (./quote.ts) plans over the indexed
 * book, the take-best write (service/writes/take-best.ts) over the same offers read fresh from
 * the chain, so both answer with this one shape.
 */
import { matchedForTake, ratioLe, takeRefusal, type ContractTiming, type OfferTerms } from "../../idl/client/offers-rules";

export interface PlanOffer {
  address: string;
  terms: OfferTerms;
  /** The caller's position on this offer so far (taker micros), against the per-position maximum. */
  held: bigint;
  creatorBlocked: boolean;
}

export interface PlannedFill {
  address: string;
  amount: bigint;
  matched: bigint;
  terms: OfferTerms;
}

export interface Plan {
  fills: PlannedFill[];
  filled: bigint;
  matched: bigint;
  unfilled: bigint;
}

export interface PlanInput {
  /** In the order to take them (the book's: best taker odds first, oldest first within a level). */
  offers: PlanOffer[];
  amount: bigint;
  worstOdds: { numerator: bigint; denominator: bigint } | null;
  taker: { wallet: string | null; blocked: boolean };
  contract: ContractTiming;
  now: bigint | number;
  config: { offersEnabled: boolean; maximumWager: bigint } | null;
}

/** Whether the taker's odds (T + S) : T of `o` are at least `worst`, exactly. */
export function meetsWorstOdds(o: Pick<OfferTerms, "creatorTotal" | "takerTarget">, worst: PlanInput["worstOdds"]): boolean {
  return worst === null || ratioLe(worst.numerator, o.takerTarget, o.creatorTotal + o.takerTarget, worst.denominator);
}

/**
 * Each offer in turn takes what is left, capped by its remainder and the caller's room under the
 * per-position maximum; an offer the take rules refuse at that amount (idl/client/offers-rules.ts
 * `takeRefusal`: the minimum take, a match of zero, the caller's own offer...) or below the odds
 * limit is passed over, as the program's fill-and-kill passes it over.
 */
export function planTakeBestOver(p: PlanInput): Plan {
  const fills: PlannedFill[] = [];
  let left = p.amount;
  let matched = 0n;
  const seen = new Set<string>();
  for (const o of p.offers) {
    if (left === 0n) break;
    if (seen.has(o.address) || !meetsWorstOdds(o.terms, p.worstOdds)) continue;
    seen.add(o.address);
    const room = p.config ? p.config.maximumWager - o.held : left;
    const remaining = o.terms.takerTarget - o.terms.takerFilled;
    const amount = [left, remaining, room].reduce((a, b) => (b < a ? b : a));
    if (amount <= 0n) continue;
    const refused = takeRefusal({
      offer: o.terms,
      contract: p.contract,
      taker: { ...p.taker, held: o.held },
      creatorBlocked: o.creatorBlocked,
      amount,
      now: p.now,
      config: p.config,
    });
    if (refused) continue;
    const m = matchedForTake(amount, o.terms.creatorTotal, o.terms.takerTarget, o.terms.takerFilled, o.terms.creatorAllocated);
    fills.push({ address: o.address, amount, matched: m, terms: o.terms });
    left -= amount;
    matched += m;
  }
  return { fills, filled: p.amount - left, matched, unfilled: left };
}
