/**
 * What a taker already holds on each offer of a take-best (its position's taker micros, 0 when it
 * has none): one lookup, handed to the plan (./take-plan.ts `planOverBook`), which alone counts it
 * against the per-position maximum wager, for the quote (./quote.ts) and the write
 * (service/writes/take-best.ts) alike. The two differ only in where the lookup is read:
 *
 * - the quote answers from the indexed store (`indexedHoldings`), like the book it plans over;
 * - the write reads each position from the chain in the same read as the offers it lists
 *   (`holdingsOf` over the decoded accounts): what it signs is judged by the program against the
 *   chain, and a position the indexer has not shown yet (the caller's take a moment ago) would
 *   otherwise leave room the program then refuses, or count the caller's opens wrongly.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../indexer/store/schema";

/** The taker micros the caller holds on `offer` (0n when none). */
export type Holdings = (offer: string) => bigint;

/** A caller who holds nothing (an anonymous reader). */
export const NO_HOLDINGS: Holdings = () => 0n;

/** The lookup over (offer, taker micros) pairs; an offer not listed is held 0. */
export function holdingsOf(entries: Iterable<readonly [string, bigint]>): Holdings {
  const held = new Map(entries);
  return (offer) => held.get(offer) ?? 0n;
}

/** The indexed positions of `wallet` on `offers` (null: anonymous, holds none). */
export async function indexedHoldings(db: Kysely<Database>, wallet: string | null, offers: readonly string[]): Promise<Holdings> {
  if (wallet === null || offers.length === 0) return NO_HOLDINGS;
  const rows = await db
    .selectFrom("positions")
    .select(["offer", "taker_micros"])
    .where("taker", "=", wallet)
    .where("deleted", "=", 0)
    .where("offer", "in", [...offers])
    .execute();
  return holdingsOf(rows.map((r) => [r.offer, BigInt(r.taker_micros)] as const));
}
