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

/** One table's rows as the checksum sees them: one normalized line per row, sorted. */
export async function tableLines(db: Kysely<Database>, table: keyof Database, mode: ChecksumMode = "full"): Promise<string[]> {
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
  return lines.sort();
}

export async function tableChecksums(db: Kysely<Database>, mode: ChecksumMode = "full"): Promise<Record<string, { rows: number; sha256: string }>> {
  const out: Record<string, { rows: number; sha256: string }> = {};
  for (const table of Object.keys(TABLE_KEYS) as (keyof Database)[]) {
    if (mode === "content" && table === "checkpoints") continue;
    const lines = await tableLines(db, table, mode);
    const h = createHash("sha256");
    for (const l of lines) h.update(l).update("\n");
    out[table] = { rows: lines.length, sha256: h.digest("hex") };
  }
  return out;
}

/**
 * Where two stores' tables differ, row by row: for each table, the rows (by key) present in only
 * one of them, and for rows present in both, the columns whose values differ. A failed checksum
 * comparison prints this, so it says which rows and columns, not only which table.
 */
export async function tableDiff(a: Kysely<Database>, b: Kysely<Database>, tables: (keyof Database)[], mode: ChecksumMode = "content"): Promise<string[]> {
  const out: string[] = [];
  const parse = (l: string) => Object.fromEntries(l.split("\u001f").map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
  for (const table of tables) {
    const keyOf = (r: Record<string, string>) => TABLE_KEYS[table].map((k) => r[k]).join("/");
    const index = async (db: Kysely<Database>) => new Map((await tableLines(db, table, mode)).map((l) => [keyOf(parse(l)), parse(l)]));
    const [x, y] = [await index(a), await index(b)];
    for (const [k, r] of x) {
      const s = y.get(k);
      if (!s) out.push(`${table} ${k}: only in the first (${JSON.stringify(r)})`);
      else {
        const cols = [...new Set([...Object.keys(r), ...Object.keys(s)])].filter((c) => r[c] !== s[c]);
        if (cols.length) out.push(`${table} ${k}: ${cols.map((c) => `${c} ${r[c]} != ${s[c]}`).join(", ")}`);
      }
    }
    for (const [k, s] of y) if (!x.has(k)) out.push(`${table} ${k}: only in the second (${JSON.stringify(s)})`);
  }
  return out;
}

export async function storeChecksum(db: Kysely<Database>, mode: ChecksumMode = "full"): Promise<string> {
  const t = await tableChecksums(db, mode);
  return createHash("sha256").update(JSON.stringify(t)).digest("hex");
}
