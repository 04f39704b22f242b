/**
 * Crash safety. A long ingestion (a recorded stream of random offers and pools lifecycles on the
 * real programs) runs in a child process that is killed with SIGKILL at 20 random points and
 * restarted each time; it resumes from its checkpoint. The final store must equal (checksum of
 * every table) an uninterrupted run. A full backfill of the same chain into an empty store must
 * give the same content checksum. On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { TestChain } from "../../harness/chain";
import { OffersWorld } from "../../harness/offers-world";
import { Rng } from "../../harness/random";
import { BankrunSource } from "../../indexer/sources/bankrun";
import { BatchRecorder } from "../../indexer/sources/replay";
import { OFFERS_PROGRAM, POOLS_PROGRAM } from "../../indexer/decode";
import { OFFERS_PROGRAM_ID } from "../../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../../idl/client/pools";
import { PoolsWorld } from "../../harness/pools-world";
import { openStore } from "../../indexer/store/db";
import { StoreWriter } from "../../indexer/store/writer";
import { storeChecksum } from "../../indexer/store/checksum";
import type { Batch } from "../../indexer/sources/types";
import { recordBatches } from "./attach";
import { runPoolsScenario, runScenario } from "../../harness/indexer-scenario";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

const ACTIONS = Number(process.env.CRASH_ACTIONS ?? 700);
const POOL_ACTIONS = Number(process.env.CRASH_POOL_ACTIONS ?? 300);
const KILLS = Number(process.env.CRASH_KILLS ?? 20);
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
const ROOT = join(import.meta.dirname, "..", "..");

let dir: string;
let file: string;
let batches: Batch[] = [];
let source: BankrunSource;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "idx-crash-"));
  file = join(dir, "stream.jsonl");
  const chain = await TestChain.start([
    { name: "offers", programId: OFFERS_PROGRAM_ID },
    { name: "pools", programId: POOLS_PROGRAM_ID },
  ]);
  const rec = new BatchRecorder(file);
  ({ source, batches } = await recordBatches(chain, [OFFERS_PROGRAM, POOLS_PROGRAM], (b) => rec.sink(b)));
  const w = await OffersWorld.create({ chain });
  await runScenario(w, { seed: 99, actions: ACTIONS });
  await runPoolsScenario(await PoolsWorld.create({ chain }), { seed: 98, actions: POOL_ACTIONS });
  await source.drain();
  await rec.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runChild(url: string, killAt: number | null): Promise<{ killed: boolean; last: number; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "indexer/cli.ts"), "ingest", "--store", url, "--replay", file, "--progress"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let last = 0;
    let killed = false;
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const m = /^applied (\d+)$/.exec(line);
      if (m) last = Number(m[1]);
      if (killAt !== null && !killed && last >= killAt) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (!killed && code !== 0) reject(new Error(`ingest exited ${code}: ${err}`));
      else resolve({ killed, last, code });
    });
  });
}

describe.each(ENGINES)("crash safety on %s", (engine) => {
  const targets: StoreTarget[] = [];
  afterAll(async () => {
    for (const t of targets) await t.drop();
  });

  it(`SIGKILL at ${KILLS} random points, restart, same checksum as an uninterrupted run; backfill gives the same content (seed ${SEED})`, async () => {
    const total = batches[batches.length - 1].writeVersion;
    expect(batches.length).toBeGreaterThan(400);

    // Uninterrupted reference, in process.
    const ref = freshStore(engine, "ref");
    targets.push(ref);
    const refStore = await openStore(ref.url);
    const refWriter = await StoreWriter.open(refStore, "replay");
    for (const b of batches) await refWriter.apply(b);
    const refFull = await storeChecksum(refStore.db, "full");
    const refContent = await storeChecksum(refStore.db, "content");
    // Both programs are in the stream.
    expect((await refStore.db.selectFrom("pools").select("address").execute()).length).toBeGreaterThan(10);
    expect((await refStore.db.selectFrom("pool_outcomes").select("pool").execute()).length).toBeGreaterThan(20);
    await refStore.close();

    // Killed and restarted.
    const crash = freshStore(engine, "crash");
    targets.push(crash);
    const rng = new Rng(SEED + (engine === "sqlite" ? 0 : 1));
    const points = new Set<number>();
    // Below 90% of the stream: the child keeps applying between printing a line and the SIGKILL
    // landing, and with a kill near the end it once finished first (checkpoint = total).
    while (points.size < KILLS) points.add(rng.int(2, Math.floor(total * 0.9)));
    const sorted = [...points].sort((a, b) => a - b);
    const checkpoints: number[] = [];
    for (const p of sorted) {
      const r = await runChild(crash.url, p);
      expect(r.killed).toBe(true);
      const s = await openStore(crash.url);
      const cp = await (await StoreWriter.open(s, "replay")).checkpoint();
      await s.close();
      checkpoints.push(cp?.writeVersion ?? 0);
    }
    for (let i = 1; i < checkpoints.length; i++) expect(checkpoints[i]).toBeGreaterThanOrEqual(checkpoints[i - 1]);
    // The kills interrupted the run: a restart had work left (the final run below resumes it).
    expect(checkpoints[0]).toBeLessThan(total);
    expect(checkpoints[checkpoints.length - 1]).toBeLessThan(total);
    const fin = await runChild(crash.url, null);
    expect(fin.code).toBe(0);
    const crashStore = await openStore(crash.url);
    expect(await storeChecksum(crashStore.db, "full")).toBe(refFull);
    await crashStore.close();

    // Full backfill from the chain's current state into an empty store.
    const bf = freshStore(engine, "bf");
    targets.push(bf);
    const bfStore = await openStore(bf.url);
    const bfWriter = await StoreWriter.open(bfStore, "bankrun");
    await source.snapshot((b) => bfWriter.apply(b));
    expect(await storeChecksum(bfStore.db, "content")).toBe(refContent);
    await bfStore.close();
    console.log(engine, { batches: batches.length, kills: sorted, checkpoints });
  });
});
