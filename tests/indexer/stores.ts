/**
 * Store targets of the indexer suites: a fresh SQLite file and a fresh PostgreSQL schema (on
 * the local server, database `test`) per call; `drop` removes them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { dropPostgresSchema } from "../../indexer/store/db";

export const PG_BASE = process.env.INDEXER_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const ENGINES = ["sqlite", "postgres"] as const;
export type EngineName = (typeof ENGINES)[number];

export interface StoreTarget {
  url: string;
  drop(): Promise<void>;
}

export function freshStore(engine: EngineName, tag = "t"): StoreTarget {
  if (engine === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), `idx-${tag}-`));
    return { url: join(dir, "store.db"), drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `idx_${tag}_${randomBytes(5).toString("hex")}`.toLowerCase();
  const url = `${PG_BASE}?schema=${schema}`;
  return { url, drop: () => dropPostgresSchema(url) };
}
