/**
 * The odds an offer carries in the read API (`takerOdds`, `creatorOdds`), from its stored row
 * by the odds rule (idl/client/odds.ts).
 */
import { LRUCache } from "lru-cache";
import type { OffersTable } from "../../indexer";
import { creatorOdds, takerOdds, type Odds, type TakerOdds } from "../../idl/client/odds";

export type { Odds, TakerOdds } from "../../idl/client/odds";

export interface OfferOdds {
  takerOdds: TakerOdds;
  creatorOdds: Odds;
}

/**
 * Odds computed already, by their three terms. An offer's odds never change and every read of it
 * shows them; in bigint (a gcd, three divisions, decimal strings) they were 3-4% of an uncached
 * page's CPU (BENCHMARKS.md, issue 21). The objects are shared between answers, as the read
 * cache shares whole offers: nothing may change them.
 */
const oddsByTerms = new LRUCache<string, OfferOdds>({ max: 20_000 });

export function offerOdds(o: Pick<OffersTable, "creator_total_micros" | "taker_target_micros" | "fee_bps">): OfferOdds {
  const key = `${o.creator_total_micros}:${o.taker_target_micros}:${o.fee_bps}`;
  let odds = oddsByTerms.get(key);
  if (odds === undefined) {
    const s = BigInt(o.creator_total_micros);
    const t = BigInt(o.taker_target_micros);
    oddsByTerms.set(key, (odds = { takerOdds: takerOdds(s, t, o.fee_bps), creatorOdds: creatorOdds(s, t) }));
  }
  return odds;
}
