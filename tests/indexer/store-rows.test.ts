/**
 * SQLite rows as kysely returns them from the store (indexer/store/db.ts reads them as arrays and
 * makes the objects itself): the same objects better-sqlite3 makes from the same statement, keys
 * in the same order, repeated column names and a `select *` that a later migration widens
 * included, and through `stream()` too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, type Store } from "../../indexer/store/db";

describe("SQLite store rows", () => {
  let dir: string;
  let store: Store;
  let plain: BetterSqlite3.Database;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "store-rows-"));
    store = await openStore(join(dir, "store.sqlite"), { migrate: false });
    await sql`create table t (a text, b integer, c real, d blob, e text)`.execute(store.db);
    await sql`insert into t values ('x', 1, 1.5, x'0102', null), ('y', 9007199254740991, -0.25, null, '1')`.execute(store.db);
    // A second connection without the store's statement handling: better-sqlite3's own row objects.
    plain = new BetterSqlite3(join(dir, "store.sqlite"));
  });

  afterAll(async () => {
    plain.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const same = async (text: string) => {
    const ours = (await sql.raw(text).execute(store.db)).rows;
    const theirs = plain.prepare(text).all();
    expect(ours).toEqual(theirs);
    expect(ours.map((r) => Object.keys(r as object))).toEqual(theirs.map((r) => Object.keys(r as object)));
    return ours;
  };

  it("gives better-sqlite3's objects: values, key order, repeated names, odd names", async () => {
    const rows = await same("select * from t order by a");
    expect(rows).toHaveLength(2);
    expect(rows[0]).toEqual({ a: "x", b: 1, c: 1.5, d: Buffer.from([1, 2]), e: null });
    await same(`select e, a as "1", b as "a b", c as "quote""d", a as b from t order by a`);
    await same("select a, b, a from t order by a");
    await same("select count(*), max(b) from t");
    await same("select * from t where 0");
  });

  it("follows a `select *` that a migration widened, and streams the same rows", async () => {
    await same("select * from t order by a");
    await sql`alter table t add column f text default 'new'`.execute(store.db);
    const rows = await same("select * from t order by a");
    expect(Object.keys(rows[0] as object)).toEqual(["a", "b", "c", "d", "e", "f"]);
    const streamed: unknown[] = [];
    for await (const r of store.db
      .selectFrom("t" as never)
      .selectAll()
      .orderBy("a" as never)
      .stream())
      streamed.push(r);
    expect(streamed).toEqual(rows);
  });

  it("leaves writes and RETURNING as they were", async () => {
    const returned = await sql<{ a: string; b: number }>`insert into t (a, b) values ('z', 3) returning a, b`.execute(store.db);
    expect(returned.rows).toEqual([{ a: "z", b: 3 }]);
    const updated = await sql`update t set b = 4 where a = 'z'`.execute(store.db);
    expect(updated.numAffectedRows).toBe(1n);
  });
});
