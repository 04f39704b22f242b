/**
 * Checksums of the store, equal across engines (rows sorted in JS, values normalized to text).
 * - "full": every column of every table (checkpoints without their wall-clock updated_at).
 * - "content": what the chain state determines, independent of how it was ingested: chain
 *   meta (slot, write_version) dropped, tombstoned rows dropped, checkpoints dropped. A live
 *   ingestion and a backfill of the same chain agree on it.
 */
import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import { TABLE_KEYS, type Database } from "./schema";

export type ChecksumMode = "full" | "content";

const CHAIN_META = new Set(["slot", "write_version", "deleted"]);
const ACCOUNT_LIKE = new Set(["config", "contracts", "offers", "positions", "pools", "pool_wagers", "pool_participants", "pool_outcomes"]);

function norm(v: unknown): string {
  if (v === null || v === undefined) return "\u2205";
  return String(v);
}

export async function tableChecksums(db: Kysely<Database>, mode: ChecksumMode = "full"): Promise<Record<string, { rows: number; sha256: string }>> {
  const out: Record<string, { rows: number; sha256: string }> = {};
  for (const table of Object.keys(TABLE_KEYS) as (keyof Database)[]) {
    if (mode === "content" && table === "checkpoints") continue;
    let rows = (await db.selectFrom(table).selectAll().execute()) as Record<string, unknown>[];
    if (mode === "content" && ACCOUNT_LIKE.has(table) && table !== "pool_outcomes") rows = rows.filter((r) => Number(r.deleted) === 0);
    const lines = rows.map((r) => {
      const cols = Object.keys(r)
        .sort()
        .filter((c) => {
          if (table === "checkpoints" && c === "updated_at") return false;
          if (mode === "content" && ACCOUNT_LIKE.has(table) && CHAIN_META.has(c)) return false;
          return true;
        });
      return cols.map((c) => `${c}=${norm(r[c])}`).join("\u001f");
    });
    lines.sort();
    const h = createHash("sha256");
    for (const l of lines) h.update(l).update("\n");
    out[table] = { rows: rows.length, sha256: h.digest("hex") };
  }
  return out;
}

export async function storeChecksum(db: Kysely<Database>, mode: ChecksumMode = "full"): Promise<string> {
  const t = await tableChecksums(db, mode);
  return createHash("sha256").update(JSON.stringify(t)).digest("hex");
}
