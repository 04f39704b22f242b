/**
 * Keeps `contract_history` equal to what indexer/derive/history.ts derives from the stored offers
 * and fills. The writer calls it inside each batch's transaction for every contract the batch
 * touched (an offer written or tombstoned, a fill inserted or retracted, the contract itself), so
 * the history commits with the rows it comes from: a restart resumes with both, a retracted
 * transaction's fills take their history with them, and a backfill (which writes through the
 * same writer) ends with the same rows.
 *
 * The contract is derived whole, then only the rows that differ are written: a take moves the
 * current interval's rows, so a batch writes a handful of rows while reading the contract's
 * offers and fills once (the cost grows with the contract's fills: BENCHMARKS.md).
 */
import { sql, type Kysely, type Transaction } from "kysely";
import type { ContractHistoryTable, Database } from "./schema";
import { historyRows } from "../derive/history";

type Db = Kysely<Database> | Transaction<Database>;

const keyOf = (r: Pick<ContractHistoryTable, "side" | "interval" | "bucket_at">) => `${r.side}/${r.interval}/${Number(r.bucket_at)}`;
const VALUE_COLUMNS = [
  "volume_micros",
  "creator_matched_micros",
  "fill_count",
  "last_numerator",
  "last_denominator",
  "best_numerator",
  "best_denominator",
] as const;
const same = (a: ContractHistoryTable, b: ContractHistoryTable) => VALUE_COLUMNS.every((c) => String(a[c] ?? "") === String(b[c] ?? "") && (a[c] === null) === (b[c] === null));

/** The contracts of these offers (as stored), for callers that only know offer addresses. */
export async function contractsOfOffers(db: Db, offers: Iterable<string>): Promise<string[]> {
  const list = [...new Set(offers)];
  const out = new Set<string>();
  for (let i = 0; i < list.length; i += 400) {
    const rows = await db.selectFrom("offers").select("contract").distinct().where("address", "in", list.slice(i, i + 400)).execute();
    for (const r of rows) out.add(r.contract);
  }
  return [...out];
}

/** Rewrites the history rows of `contracts` that differ from their derivation. */
export async function refreshHistory(db: Db, contracts: Iterable<string>): Promise<void> {
  for (const contract of new Set(contracts)) {
    const [c, offers, fills, stored] = await Promise.all([
      db.selectFrom("contracts").select(["cutoff_at", "resolved_at"]).where("address", "=", contract).executeTakeFirst(),
      db
        .selectFrom("offers")
        .select(["address", "side", "creator_total_micros", "taker_target_micros", "created_at", "closed_at"])
        .where("contract", "=", contract)
        .where("deleted", "=", 0)
        .execute(),
      db
        .selectFrom("fills")
        .innerJoin("offers", "offers.address", "fills.offer")
        .select(["fills.offer", "fills.revision", "fills.take_micros", "fills.creator_matched_micros", "fills.filled_at", "fills.slot"])
        .where("offers.contract", "=", contract)
        .where("offers.deleted", "=", 0)
        .execute(),
      db.selectFrom("contract_history").selectAll().where("contract", "=", contract).execute(),
    ]);
    // An offer indexed before its contract has no history yet; the contract's own row brings it.
    const rows = c ? historyRows(contract, c, offers, fills) : [];
    const old = new Map(stored.map((r) => [keyOf(r), r]));
    const changed: ContractHistoryTable[] = [];
    for (const r of rows) {
      const o = old.get(keyOf(r));
      old.delete(keyOf(r));
      if (!o || !same(o, r)) changed.push(r);
    }
    for (const r of old.values()) {
      await db
        .deleteFrom("contract_history")
        .where("contract", "=", contract)
        .where("side", "=", r.side)
        .where("interval", "=", r.interval)
        .where("bucket_at", "=", r.bucket_at)
        .execute();
    }
    for (let i = 0; i < changed.length; i += 400) {
      await db
        .insertInto("contract_history")
        .values(changed.slice(i, i + 400))
        .onConflict((oc) =>
          oc.columns(["contract", "side", "interval", "bucket_at"]).doUpdateSet(Object.fromEntries(VALUE_COLUMNS.map((c) => [c, sql.ref(`excluded.${c}`)])) as never),
        )
        .execute();
    }
  }
}
