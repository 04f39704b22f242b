/**
 * The indexer's progress in the store, for readiness of processes that do not index (role `api`).
 *
 * An `api` process must answer `/readyz` with 503 when the indexer behind it falls behind, or a
 * load balancer keeps sending it reads the store cannot answer currently. It cannot ask the source
 * (another process has it), and the stored checkpoint will not do: it moves only when a program
 * account changes, so on a quiet chain it falls behind the head while the indexer is current
 * (./lag.ts). So the acting indexer records its synced slot (the last head up to which it applied
 * every program transaction) at each lag sample, and an `api` process computes
 * `lag = its own RPC's head - that synced slot`.
 *
 * Why the synced slot and not a lag figure with a time: the reader's own head keeps counting while
 * the record does not move, so an indexer that died, hangs, or lost its RPC shows as a lag that grows
 * with the chain, with no wall clocks to compare across machines and no staleness bound to pick;
 * and on a chain that does not move, nothing is behind.
 *
 * - Only an acting indexer writes (a standby's source has nothing to say), and the synced slot
 *   never goes down: what one leader applied stays applied for its successor, which
 *   moves it on once its own source has caught up.
 * - PostgreSQL only: on SQLite one process runs everything and asks its source directly.
 */
import { sql, type Kysely } from "kysely";
import type { CustodyDatabase } from "../custody/schema";

const KEY = "indexer";

export interface IndexerProgress {
  syncedSlot: number;
  headSlot: number;
  /** Unix ms of the last record. */
  updatedAt: number;
}

/** The acting indexer's sample: the head read, and whether everything up to it was applied. */
export async function recordProgress(db: Kysely<unknown>, headSlot: number, synced: boolean): Promise<void> {
  const row = { source: KEY, synced_slot: synced ? headSlot : 0, head_slot: headSlot, updated_at: Date.now() };
  await (db as Kysely<CustodyDatabase>)
    .insertInto("indexer_progress")
    .values(row)
    .onConflict((oc) =>
      oc.column("source").doUpdateSet({
        synced_slot: sql`CASE WHEN excluded.synced_slot > indexer_progress.synced_slot THEN excluded.synced_slot ELSE indexer_progress.synced_slot END`,
        head_slot: row.head_slot,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

/** The last record, or null when no indexer has recorded yet. */
export async function readProgress(db: Kysely<unknown>): Promise<IndexerProgress | null> {
  const r = await (db as Kysely<CustodyDatabase>).selectFrom("indexer_progress").selectAll().where("source", "=", KEY).executeTakeFirst();
  return r ? { syncedSlot: Number(r.synced_slot), headSlot: Number(r.head_slot), updatedAt: Number(r.updated_at) } : null;
}
