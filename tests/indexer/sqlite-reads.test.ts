/**
 * Reads on SQLite skip kysely's connection lock only while nothing holds the connection
 * (indexer/store/sqlite-reads.ts): a read made while a transaction is open waits for it, and never
 * sees its uncommitted rows.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, readNow, type Store } from "../../indexer";
import { CompiledReads } from "../../service/read/compiled-reads";

describe("SQLite reads beside kysely's connection lock", () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sqlite-reads-"));
    store = await openStore(join(dir, "store.db"));
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const profiles = (reads: CompiledReads, wallet: string) =>
    reads.rows("profile-of", [wallet], () => store.db.selectFrom("profiles").selectAll().where("wallet", "=", wallet));
  const profile = { wallet: "w1", display_name: "one", profile_image_url: "", updated_at: 1 };

  it("runs a read at once when the connection is free, with the rows kysely gives", async () => {
    await store.db.insertInto("profiles").values(profile).execute();
    const q = store.db.selectFrom("profiles").selectAll().where("wallet", "=", "w1").compile();
    expect(readNow(store.db, q)).toEqual([profile]);
    expect(readNow(store.db, q)).toEqual((await store.db.executeQuery(q)).rows);
    expect(await profiles(new CompiledReads(store.db), "w1")).toEqual([profile]);
  });

  it("leaves a read to kysely while a transaction holds the connection: it waits, and sees no uncommitted row", async () => {
    const reads = new CompiledReads(store.db);
    await profiles(reads, "w2"); // the shape kept: the next read takes the direct path when it can
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const wrote = new Promise<void>((r) => (inserted = r));
    const tx = store.db
      .transaction()
      .execute(async (trx) => {
        await trx
          .insertInto("profiles")
          .values({ ...profile, wallet: "w2" })
          .execute();
        inserted();
        await held;
        throw new Error("rolled back");
      })
      .catch((e: Error) => e.message);
    await wrote;
    const q = store.db.selectFrom("profiles").selectAll().where("wallet", "=", "w2").compile();
    expect(readNow(store.db, q)).toBeUndefined();
    const read = profiles(reads, "w2");
    release();
    expect(await tx).toBe("rolled back");
    expect(await read).toEqual([]);
  });
});
