/**
 * Backfill: rebuilds the chain tables of a store from a source's snapshot (current accounts
 * and, where the source has it, transaction history for events). Catalog tables are kept.
 */
import type { Store } from "./store/db";
import { StoreWriter } from "./store/writer";
import type { AccountSource } from "./sources/types";

export const CHAIN_TABLES = [
  "config",
  "contracts",
  "offers",
  "positions",
  "fills",
  "offer_closes",
  "settlements",
  "pool_cancels",
  "claim_credits",
  "contract_history",
  "pools",
  "pool_outcomes",
  "pool_wagers",
  "pool_participants",
  "checkpoints",
] as const;

/** Empties the chain tables (and checkpoints); catalog tables stay. */
export async function resetChainTables(store: Store): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    for (const t of CHAIN_TABLES) await trx.deleteFrom(t).execute();
  });
}

export async function backfill(
  store: Store,
  source: AccountSource,
  opts: { reset?: boolean; onTotal?: (n: number) => void; onProgress?: (done: number) => void } = {},
): Promise<StoreWriter> {
  if (opts.reset) await resetChainTables(store);
  const writer = await StoreWriter.open(store, source.name);
  let done = 0;
  await source.snapshot(async (b) => {
    await writer.apply(b);
    done += b.accounts.length + b.transactions.length;
    opts.onProgress?.(done);
  }, opts.onTotal);
  return writer;
}
