/**
 * Leadership through PostgreSQL advisory locks (service/leadership) and the NOTIFY change feed
 * (service/changes), on the local server: of two candidates exactly one acts; when the leader's
 * lock session is terminated it stops acting (fenced) and the standby takes over (time printed);
 * a leader stepping down hands over; the indexer duty resumes from the checkpoint and is fenced once stopped. The feed splits large change sets under NOTIFY's 8000 bytes
 * without losing an address, and a listener whose session is cut reconnects and tells its
 * subscribers that everything may have changed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Leadership, leaderPid, type Duty } from "../../service/leadership/leadership";
import { MAX_PAYLOAD, PgChangeFeed, decodeChange, encodeChange } from "../../service/changes/pg-change-feed";
import { mergeChanges } from "../../indexer/changes";
import { pgTarget } from "../../service/pg/session";
import { openStore } from "../../indexer/store/db";
import { IndexerRunner, parseRole } from "../../stack/roles";
import type { BatchSink, Checkpoint } from "../../indexer/sources/types";
import type { ChangeSet } from "../../indexer/changes";
import { freshStore, type StoreTarget } from "../indexer/stores";
import { until } from "../support/wait";

const ROOT = join(import.meta.dirname, "..", "..");

/** A duty that records when it acts, and whether two ever act at once. */
class Recorder implements Duty {
  acting = false;
  starts = 0;
  stops = 0;
  constructor(private readonly all: Recorder[]) {
    all.push(this);
  }
  async start() {
    if (this.all.some((r) => r !== this && r.acting)) throw new Error("two leaders at once");
    this.acting = true;
    this.starts++;
  }
  async stop() {
    this.acting = false;
    this.stops++;
  }
}

const change = (slot: number, n = 1): ChangeSet => ({
  slot,
  offers: Array.from({ length: n }, (_, i) => `Offer${slot}x${i}_`.padEnd(44, "z")),
  positions: [],
  fills: Array.from({ length: n }, (_, i) => ({ offer: `Offer${slot}x${i}_`.padEnd(44, "z"), taker: "T".padEnd(44, "2"), revision: i + 1 })),
  wallets: ["W".padEnd(44, "3")],
  pools: [],
  contracts: [],
  config: false,
});

describe("leadership and the change feed on PostgreSQL", () => {
  let target: StoreTarget;
  let admin: pg.Client;
  beforeAll(async () => {
    target = freshStore("postgres", "lead");
    await (await openStore(target.url)).close();
    admin = new pg.Client({ connectionString: pgTarget(target.url).connectionString });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await target?.drop();
  });

  const holder = () => leaderPid((q, p) => admin.query(q, p), target.url, "indexer");

  it("one of two candidates acts; the other takes over when the leader's lock session dies, and the old leader stops acting", async () => {
    const duties: Recorder[] = [];
    const cands = [0, 1].map(() => new Leadership({ storeUrl: target.url, role: "indexer" }, new Recorder(duties)));
    try {
      for (const c of cands) c.start();
      const leader = await until(async () => cands.find((c) => c.active) ?? null, 10_000, 10);
      await new Promise((r) => setTimeout(r, 1_500)); // a few retry periods: the standby keeps standing by
      expect(cands.filter((c) => c.active)).toHaveLength(1);
      expect(await holder()).toBe(leader.pid);
      const i = cands.indexOf(leader);
      const standby = cands[1 - i];

      const t0 = performance.now();
      await admin.query("SELECT pg_terminate_backend($1)", [leader.pid]);
      await until(async () => (standby.active ? true : null), 10_000, 5);
      const takeoverMs = performance.now() - t0;
      console.log(`leadership takeover after the leader's session was terminated: ${takeoverMs.toFixed(0)} ms (retry period 1000 ms)`);
      expect(leader.active).toBe(false);
      expect(duties[i].stops).toBe(1);
      expect(duties[1 - i].acting).toBe(true);
      expect(await holder()).toBe(standby.pid);

      // Stepping down hands over to the old leader, now standing by.
      const t1 = performance.now();
      await standby.stop();
      await until(async () => (leader.active ? true : null), 10_000, 5);
      console.log(`leadership handover on stepping down: ${(performance.now() - t1).toFixed(0)} ms`);
      expect(duties[1 - i].acting).toBe(false);
      expect(duties[i].starts).toBe(2);
    } finally {
      for (const c of cands) await c.stop();
    }
    expect(await holder()).toBeNull();
  });

  it("the indexer duty resumes from the stored checkpoint and, once stopped, refuses what its source still delivers", async () => {
    const store = await openStore(target.url);
    const delivered: { from: number | null; sink: BatchSink }[] = [];
    const source = () => ({
      start: async (from: Checkpoint | null, sink: BatchSink) => void delivered.push({ from: from?.slot ?? null, sink }),
      stop: async () => undefined,
    });
    const applied: number[] = [];
    const runner = new IndexerRunner(
      store,
      "duty-test",
      source,
      (w) => (b) => w.apply(b),
      (w) => w.onApplied((c) => applied.push(c.slot)),
    );
    try {
      const batch = (slot: number) => ({ slot, writeVersion: 0, accounts: [], transactions: [] });
      await runner.start();
      await delivered[0].sink(batch(5));
      expect(applied).toEqual([5]);
      await runner.stop();
      await expect(delivered[0].sink(batch(6))).rejects.toThrow(/no longer active/);
      expect((await runner.checkpoint())!.slot).toBe(5);
      // Leading again: a fresh writer and source, from the checkpoint.
      await runner.start();
      expect(delivered[1].from).toBe(5);
      await delivered[1].sink(batch(7));
      expect(applied).toEqual([5, 7]);
    } finally {
      await runner.stop();
      await store.close();
    }
  });

  it("other roles need PostgreSQL", () => {
    expect(parseRole(undefined, "data/store.sqlite")).toBe("all");
    expect(() => parseRole("indexer", "data/store.sqlite")).toThrow(/needs a PostgreSQL store/);
    expect(() => parseRole("leader", target.url)).toThrow(/must be one of all, api, indexer, worker/);
    expect(parseRole("worker", target.url)).toBe("worker");
  });

  it("scripts/start.ts refuses a role a SQLite store cannot take, before writing anything", () => {
    const data = mkdtempSync(join(tmpdir(), "role-refused-"));
    try {
      const start = (...args: string[]) =>
        spawnSync(process.execPath, ["--import", "tsx", "scripts/start.ts", "--data", data, ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
      const sqlite = start("--rpc", "http://127.0.0.1:1", "--role", "worker");
      expect(sqlite.status).toBe(2); // a configuration refusal (stack/config/cli.ts)
      expect(sqlite.stderr).toContain("--role worker needs a PostgreSQL store");
      expect(readdirSync(data)).toEqual([]);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  it("splits large change sets under the NOTIFY limit and loses nothing", () => {
    const big = change(7, 100);
    const parts = encodeChange(big);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(MAX_PAYLOAD);
    const back = parts.map(decodeChange).reduce(mergeChanges);
    expect(back).toEqual(big);
    expect(encodeChange(change(8))).toHaveLength(1);
    // Too large to list (a reconcile's worth): the slot, and "everything changed".
    const huge = encodeChange(change(9, 2_000));
    expect(huge.map(decodeChange)).toEqual([{ ...change(9, 0), wallets: [], everything: true }]);
    // Sizes are counted for addresses, not serialised: values JSON escapes, or multi-byte ones, go as
    // "everything changed" rather than as a NOTIFY over the limit (which would fail).
    const odd = encodeChange({ ...change(12, 0), offers: Array.from({ length: 100 }, () => 'é"'.repeat(22)) });
    expect(odd.map(decodeChange)).toEqual([{ ...change(12, 0), wallets: [], everything: true }]);
  });

  it("delivers change sets to every listener, and after a lost session reconnects and announces everything", async () => {
    const pub = new PgChangeFeed({ storeUrl: target.url });
    const sub = new PgChangeFeed({ storeUrl: target.url, retryMs: 100 });
    const heard: ChangeSet[] = [];
    sub.subscribe((c) => heard.push(c));
    await sub.listen();
    try {
      await pub.publish(change(10, 100));
      const n = encodeChange(change(10, 100)).length;
      await until(async () => (heard.length >= n ? true : null), 5_000, 5);
      expect(heard).toHaveLength(n);
      expect(heard.reduce(mergeChanges)).toEqual(change(10, 100));

      heard.length = 0;
      const pid = sub.listenerPid;
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await until(async () => (heard.some((c) => c.everything) ? true : null), 10_000, 10);
      expect(sub.listenerPid).not.toBe(pid);
      expect(sub.counts.reconnects).toBe(1);
      await pub.publish(change(11));
      await until(async () => (heard.some((c) => c.slot === 11) ? true : null), 5_000, 5);
    } finally {
      await pub.close();
      await sub.close();
    }
  });
});
