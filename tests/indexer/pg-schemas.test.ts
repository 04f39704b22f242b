/**
 * Two stores in two PostgreSQL schemas of one database (tests do it per suite; a deployment may
 * too): each keeps its own migration and lock tables. kysely's Migrator looks for them in every
 * schema unless told which, so the second store's custody migration used to find the first's
 * lock table, skip creating its own and fail ("relation custody_migration_lock does not exist").
 */
import { afterAll, describe, expect, it } from "vitest";
import { sql, type Kysely } from "kysely";
import { openStore, type Store } from "../../indexer/store/db";
import { migrateCustody } from "../../service/custody/schema";
import { freshStore, type StoreTarget } from "./stores";

const targets: StoreTarget[] = [];
const stores: Store[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
  for (const t of targets) await t.drop();
});

describe("stores in two PostgreSQL schemas", () => {
  it("each migrates its own indexer and custody tables, the second after the first", async () => {
    for (const tag of ["a", "b"]) {
      const t = freshStore("postgres", `sch_${tag}`);
      targets.push(t);
      const s = await openStore(t.url);
      stores.push(s);
      await migrateCustody(s.db as Kysely<unknown>);
    }
    for (const s of stores) {
      const r = await sql<{
        n: string;
      }>`select count(*) as n from information_schema.tables where table_schema = ${s.schema!} and table_name in ('custody_migration', 'custody_migration_lock', 'kysely_migration', 'kysely_migration_lock')`.execute(
        s.db,
      );
      expect(Number(r.rows[0].n)).toBe(4);
    }
  });
});
