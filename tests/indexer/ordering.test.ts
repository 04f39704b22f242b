/**
 * Ordering and idempotency of the writer, on a stream recorded from the real program:
 * replays change nothing; stale updates are rejected (by the version map, and by the SQL guard
 * when the map is bypassed); any delivery order, duplicates and merged batches end in the same
 * rows; the checkpoint is written with the rows. On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestChain } from "../../harness/chain";
import { OffersWorld } from "../../harness/offers-world";
import { Rng } from "../../harness/random";
import { mergeBatches } from "../../indexer/sources/replay";
import { decodeEvents } from "../../indexer/decode";
import { openStore, type Store } from "../../indexer/store/db";
import { StoreWriter } from "../../indexer/store/writer";
import { tableChecksums } from "../../indexer/store/checksum";
import type { Batch } from "../../indexer/sources/types";
import { recordBatches } from "./attach";
import { runScenario } from "../../harness/indexer-scenario";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

let batches: Batch[] = [];
beforeAll(async () => {
  const chain = await TestChain.start();
  const recorded = await recordBatches(chain);
  const source = recorded.source;
  batches = recorded.batches;
  const w = await OffersWorld.create({ chain });
  await runScenario(w, { seed: 5, actions: 250 });
  await source.drain();
});

const withoutCheckpoints = (t: Record<string, unknown>) => {
  const { checkpoints: _c, ...rest } = t;
  return rest;
};

describe.each(ENGINES)("ordering and idempotency on %s", (engine) => {
  const targets: StoreTarget[] = [];
  const stores: Store[] = [];
  const fresh = async () => {
    const t = freshStore(engine, "ord");
    targets.push(t);
    const s = await openStore(t.url);
    stores.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const t of targets) await t.drop();
  });

  it("replaying the whole stream changes nothing, in the same and in a new writer", async () => {
    const s = await fresh();
    const w = await StoreWriter.open(s, "t");
    for (const b of batches) await w.apply(b);
    const first = await tableChecksums(s.db);
    const updates = batches.reduce((n, b) => n + b.accounts.length, 0);
    expect(w.stats.applied).toBe(updates);
    for (const b of batches) await w.apply(b);
    expect(w.stats.stale).toBe(updates);
    expect(await tableChecksums(s.db)).toEqual(first);
    const w2 = await StoreWriter.open(s, "t");
    await w2.apply(batches);
    expect(w2.stats.stale).toBe(updates);
    expect(w2.stats.applied).toBe(0);
    expect(await tableChecksums(s.db)).toEqual(first);
  });

  it("shuffled delivery with duplicates, and one merged batch, end in the same rows", async () => {
    const a = await fresh();
    const wa = await StoreWriter.open(a, "t");
    for (const b of batches) await wa.apply(b);
    const expected = withoutCheckpoints(await tableChecksums(a.db));

    const rng = new Rng(11);
    const shuffled = [...batches, ...batches.filter(() => rng.chance(0.3))];
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    const b = await fresh();
    const wb = await StoreWriter.open(b, "t");
    for (let i = 0; i < shuffled.length; i += rng.int(1, 7)) await wb.apply(shuffled.slice(i, i + rng.int(1, 7)));
    // Chunks above may skip some batches; deliver everything once more in order of arrival.
    for (const x of shuffled) await wb.apply(x);
    expect(wb.stats.stale).toBeGreaterThan(0);
    expect(withoutCheckpoints(await tableChecksums(b.db))).toEqual(expected);

    const c = await fresh();
    const wc = await StoreWriter.open(c, "t");
    await wc.apply(mergeBatches([...batches].reverse()));
    expect(withoutCheckpoints(await tableChecksums(c.db))).toEqual(expected);
  });

  it("the SQL guard rejects stale rows even when a writer's version map is out of date", async () => {
    const s = await fresh();
    const stale = await StoreWriter.open(s, "t"); // opened on the empty store: knows no versions
    const w = await StoreWriter.open(s, "t");
    for (const b of batches) await w.apply(b);
    const before = withoutCheckpoints(await tableChecksums(s.db));
    for (const b of batches.slice(0, Math.floor(batches.length / 2))) await stale.apply(b);
    expect(stale.stats.stale).toBe(0); // its map let them through...
    expect(withoutCheckpoints(await tableChecksums(s.db))).toEqual(before); // ...the store did not
  });

  it("writes the checkpoint with the rows; rows of an update newer than the checkpoint are not there", async () => {
    const s = await fresh();
    const w = await StoreWriter.open(s, "t");
    const half = batches.slice(0, 100);
    await w.apply(half);
    const cp = await w.checkpoint();
    expect(cp).toMatchObject({ slot: half[99].slot, writeVersion: half[99].writeVersion });
    const newest = await s.db
      .selectFrom("offers")
      .select((e) => e.fn.max("write_version").as("m"))
      .executeTakeFirstOrThrow();
    expect(Number(newest.m)).toBeLessThanOrEqual(cp!.writeVersion);
    // A transaction that fails half-way (a table it writes is gone) leaves rows, checkpoint and
    // the writer's version map as they were.
    const k = batches.findIndex(
      (b, i) =>
        i > 100 &&
        b.transactions.some((t) => !t.err && t.logs.some((l) => l.includes("Program data:"))) &&
        b.accounts.length > 0 &&
        decodeEvents(b.transactions).closes.length > 0,
    );
    expect(k).toBeGreaterThan(0);
    await w.apply(batches.slice(100, k));
    const before = await tableChecksums(s.db);
    const probe = batches[k].accounts[0].pubkey;
    const vBefore = w.version(probe);
    await s.db.schema.dropTable("offer_closes").execute();
    await expect(w.apply(batches[k])).rejects.toThrow();
    const after = await tableChecksums(s.db).catch(() => null);
    expect(after).toBeNull(); // offer_closes is gone; compare the rest table by table
    for (const t of Object.keys(before).filter((t) => t !== "offer_closes")) {
      const rows = await s.db
        .selectFrom(t as "offers")
        .selectAll()
        .execute();
      expect(rows.length).toBe(before[t].rows);
    }
    expect(w.version(probe)).toEqual(vBefore);
    expect(await w.checkpoint()).toMatchObject({ writeVersion: batches[k - 1].writeVersion });
  });
});
