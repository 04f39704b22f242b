/**
 * The odds an offer carries in the read API (`takerOdds`, `creatorOdds`), from its stored row
 * by the odds rule (idl/client/odds.ts).
 */
import type { OffersTable } from "../../indexer";
import { creatorOdds, takerOdds, type Odds, type TakerOdds } from "../../idl/client/odds";

export type { Odds, TakerOdds } from "../../idl/client/odds";

export interface OfferOdds {
  takerOdds: TakerOdds;
  creatorOdds: Odds;
}

export function offerOdds(o: Pick<OffersTable, "creator_total_micros" | "taker_target_micros" | "fee_bps">): OfferOdds {
  const s = BigInt(o.creator_total_micros);
  const t = BigInt(o.taker_target_micros);
  return { takerOdds: takerOdds(s, t, o.fee_bps), creatorOdds: creatorOdds(s, t) };
}
