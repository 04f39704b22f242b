/**
 * The quote of a take-best (issue 24): what `POST /contracts/{c}/take-best` would take now for
 * the same side, amount and worst odds. One function for REST and GraphQL. Decisions
 * (docs/api-guide.md, "Take the best price"):
 *
 * - The offers are the book's (./book.ts `bookOffers`): the caller's own offers and blocked
 *   creators' left out for a signed-in caller, in the book's order (best taker odds first, oldest
 *   first within a level), planned by ./take-plan.ts (the program's sweep) with the caller's
 *   indexed positions (./holdings.ts `indexedHoldings`) against the per-position maximum (an
 *   anonymous caller holds none).
 * - Amounts are exact micro-units; the average odds are the exact ratio
 *   (filled + matched) : filled, reduced, with its decimal for display.
 * - `feeIfWinMicros` is the fee the program takes from each position's matched stake if the taker
 *   wins (offers-rules `fee` at each offer's own feeBps, fixed at its creation), per offer of
 *   this take; `returnIfWinMicros` what the taker then receives.
 */
import { oddsOf, type Odds } from "../../idl/client/odds";
import { fee } from "../../idl/client/offers-rules";
import type { SideName } from "../../idl/client/offers";
import { ApiError } from "../api-error";
import { bookOffers, type BookOffer as BookRow, type Side } from "./book";
import type { ReadService } from "./read-service";
import { indexedHoldings } from "./holdings";
import { ANY_ODDS, planOverBook, type BookOffer, type Plan } from "./take-plan";
import type { QuoteParams } from "./quote-params";

export interface QuoteFill {
  offer: string;
  /** The offer's taker odds (T + S) : T. */
  odds: Odds;
  amountMicros: string;
  creatorMatchedMicros: string;
  /** The offer's fee in basis points of the matched stake, fixed when it was created. */
  feeBps: number;
}

export interface Quote {
  contract: string;
  side: Side;
  amountMicros: string;
  worstOdds: Odds | null;
  fills: QuoteFill[];
  filledMicros: string;
  creatorMatchedMicros: string;
  unfilledMicros: string;
  /** (filled + matched) : filled; null when nothing would be taken. */
  averageOdds: Odds | null;
  feeIfWinMicros: string;
  returnIfWinMicros: string;
}

/** An indexed offer as the sweep reads it. */
export function sweepOfferOfRow(o: BookRow): BookOffer {
  return {
    feeBps: Number(o.fee_bps),
    address: o.address,
    side: o.side as SideName,
    contract: o.contract,
    status: o.status,
    creator: o.creator,
    creatorTotal: BigInt(o.creator_total_micros),
    creatorAllocated: BigInt(o.creator_allocated_micros),
    takerTarget: BigInt(o.taker_target_micros),
    takerFilled: BigInt(o.taker_filled_micros),
    minimumTake: BigInt(o.minimum_take_micros),
    revision: BigInt(o.revision),
    expiresAt: o.expires_at,
  };
}

/** A plan as the API answers it. */
export function quoteOf(q: Omit<QuoteParams, "contract"> & { contract: string }, plan: Plan): Quote {
  const feeIfWin = plan.fills.reduce((s, f) => s + fee(f.feeBps, f.matched), 0n);
  return {
    contract: q.contract,
    side: q.side,
    amountMicros: q.amount.toString(),
    worstOdds: q.worstOdds ? oddsOf(q.worstOdds.numerator, q.worstOdds.denominator) : null,
    fills: plan.fills.map((f) => ({
      offer: f.address,
      odds: oddsOf(f.creatorTotal + f.takerTarget, f.takerTarget),
      amountMicros: f.amount.toString(),
      creatorMatchedMicros: f.matched.toString(),
      feeBps: f.feeBps,
    })),
    filledMicros: plan.filled.toString(),
    creatorMatchedMicros: plan.matched.toString(),
    unfilledMicros: plan.unfilled.toString(),
    averageOdds: plan.filled > 0n ? oddsOf(plan.filled + plan.matched, plan.filled) : null,
    feeIfWinMicros: feeIfWin.toString(),
    returnIfWinMicros: (plan.filled + plan.matched - feeIfWin).toString(),
  };
}

/** The quote of `q` for `viewerWallet` (null: anonymous). */
export async function contractQuote(read: ReadService, q: QuoteParams, viewerWallet: string | null): Promise<Quote> {
  const offers = await bookOffers(read, q.contract, q.side, viewerWallet);
  if (offers === null) throw new ApiError(404, "contract not found");
  const addresses = offers.map((o) => o.address);
  const [settings, holdings] = await Promise.all([read.settings(), indexedHoldings(read.db, viewerWallet, addresses)]);
  // bookOffers holds offers only while the contract takes them: the contract is not checked again.
  const plan = planOverBook(offers.map(sweepOfferOfRow), holdings, {
    side: q.side,
    amount: q.amount,
    worstOdds: q.worstOdds ?? ANY_ODDS,
    taker: viewerWallet,
    maximumWager: BigInt(settings.limits.maximumWagerMicros),
    offersEnabled: settings.offersEnabled,
  });
  if (plan.error) throw new ApiError(503, plan.error === "OffersDisabled" ? "offers are switched off; retry later" : plan.error);
  return quoteOf(q, plan);
}
