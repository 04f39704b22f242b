/**
 * Keeps `contract_history` equal to what indexer/derive/history.ts derives from the stored offers
 * and fills. The writer calls it inside each batch's transaction for every contract the batch
 * touched (an offer written or tombstoned, a fill inserted or retracted, the contract itself), so
 * the history commits with the rows it comes from: a restart resumes with both, a retracted
 * transaction's fills take their history with them, and a backfill (which writes through the
 * same writer) ends with the same rows.
 *
 * A batch whose changes are all dated (takes, offers created or closed) has the contract's history
 * derived again from the day of its earliest change only; a change that is not (the contract's
 * own row, an offer's account gone, a transaction read back from history or retracted) has it
 * derived whole. Either way only the rows that differ are written: a take moves the current
 * intervals' rows, a handful (costs for a contract of 100,000 fills: BENCHMARKS.md).
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
const same = (a: ContractHistoryTable, b: ContractHistoryTable) =>
  VALUE_COLUMNS.every((c) => String(a[c] ?? "") === String(b[c] ?? "") && (a[c] === null) === (b[c] === null));

/** The contracts of these offers (as stored), for callers that only know offer addresses. */
export async function contractsOfOffers(db: Db, offers: Iterable<string>): Promise<string[]> {
  const list = [...new Set(offers)];
  const out = new Set<string>();
  for (let i = 0; i < list.length; i += 400) {
    const rows = await db
      .selectFrom("offers")
      .select("contract")
      .distinct()
      .where("address", "in", list.slice(i, i + 400))
      .execute();
    for (const r of rows) out.add(r.contract);
  }
  return [...out];
}

const DAY = 86_400;

/**
 * Rewrites the history rows of `contracts` that differ from their derivation. A contract with a
 * time in `since` changed only from then on (what the batch brought is dated then or later): its
 * rows from the start of that day are derived again, from the fills since then and, per offer,
 * the total taken before (the program's running total kept with each fill); any other contract
 * is derived whole.
 */
export async function refreshHistory(db: Db, contracts: Iterable<string>, since: ReadonlyMap<string, number> = new Map()): Promise<void> {
  for (const contract of new Set(contracts)) {
    const t = since.get(contract);
    const from = t === undefined ? null : t - (((t % DAY) + DAY) % DAY);
    let fillsQuery = db
      .selectFrom("fills")
      .innerJoin("offers", "offers.address", "fills.offer")
      .select(["fills.offer", "fills.revision", "fills.take_micros", "fills.creator_matched_micros", "fills.filled_at", "fills.slot"])
      .where("offers.contract", "=", contract)
      .where("offers.deleted", "=", 0);
    let storedQuery = db.selectFrom("contract_history").selectAll().where("contract", "=", contract);
    if (from !== null) {
      fillsQuery = fillsQuery.where("fills.filled_at", ">=", from);
      storedQuery = storedQuery.where("bucket_at", ">=", from);
    }
    const [c, offers, fills, stored, taken] = await Promise.all([
      db.selectFrom("contracts").select(["cutoff_at", "resolved_at"]).where("address", "=", contract).executeTakeFirst(),
      db
        .selectFrom("offers")
        .select(["address", "side", "creator_total_micros", "taker_target_micros", "created_at", "closed_at"])
        .where("contract", "=", contract)
        .where("deleted", "=", 0)
        .execute(),
      fillsQuery.execute(),
      storedQuery.execute(),
      from === null ? Promise.resolve([]) : takenBefore(db, contract, from),
    ]);
    // An offer indexed before its contract has no history yet; the contract's own row brings it.
    const start = from === null ? undefined : { at: from, taken: new Map(taken.map((r) => [r.offer, BigInt(r.taker_filled_micros)])) };
    const rows = c ? historyRows(contract, c, offers, fills, start) : [];
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
          oc
            .columns(["contract", "side", "interval", "bucket_at"])
            .doUpdateSet(Object.fromEntries(VALUE_COLUMNS.map((c) => [c, sql.ref(`excluded.${c}`)])) as never),
        )
        .execute();
    }
  }
}

/** Per offer of the contract, its taken total after its last fill before `at`. */
function takenBefore(db: Db, contract: string, at: number) {
  const last = db
    .selectFrom("fills")
    .innerJoin("offers", "offers.address", "fills.offer")
    .select(["fills.offer as offer", (eb) => eb.fn.max("fills.revision").as("revision")])
    .where("offers.contract", "=", contract)
    .where("offers.deleted", "=", 0)
    .where("fills.filled_at", "<", at)
    .groupBy("fills.offer")
    .as("last");
  return db
    .selectFrom("fills")
    .innerJoin(last, (j) => j.onRef("last.offer", "=", "fills.offer").onRef("last.revision", "=", "fills.revision"))
    .select(["fills.offer", "fills.taker_filled_micros"])
    .execute();
}
