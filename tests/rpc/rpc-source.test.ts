/**
 * The indexer's RPC source against a real solana-test-validator (agave, built from crates.io by
 * scripts/setup-test-validator.sh) with both programs loaded. The chain is driven through the
 * same worlds as the SVM suites, over RPC. What is shown:
 * - snapshot + history: an indexer started after activity finds every account and every event;
 * - live: programSubscribe + logsSubscribe keep the store equal to the chain, at "confirmed" into
 *   SQLite and at "processed" into PostgreSQL (two indexers side by side);
 * - a websocket drop (a TCP relay cut between indexer and validator): nothing arrives while it is
 *   down, and after the reconnect the resubscription and the reconciling snapshot bring in
 *   everything missed, deletions included;
 * - restart: a new source resumes from the store's checkpoint and catches up;
 * - scripts/backfill.ts against the validator rebuilds empty stores (both engines) with the same
 *   content checksum.
 * Skipped, with the reason printed, where the validator binary is absent (see README, "RPC source").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import type { PublicKey } from "@solana/web3.js";
import { TestChain } from "../../harness/chain";
import { RpcEngine } from "../../harness/rpc-engine";
import { TestValidator, validatorBinary } from "../../harness/validator";
import { TcpProxy } from "../support/tcp-proxy";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import { PoolsWorld, type User as PoolUser } from "../../harness/pools-world";
import { RpcSource } from "../../indexer/sources/rpc";
import { StoreWriter } from "../../indexer/store/writer";
import { openStore, type Store } from "../../indexer/store/db";
import { storeChecksum } from "../../indexer/store/checksum";
import { OFFERS_PROGRAM, POOLS_PROGRAM } from "../../indexer/decode";
import { comparePoolWithChain, compareWithChain } from "../indexer/compare";
import { freshStore, type StoreTarget } from "../indexer/stores";
import { eventually } from "../support/wait";
import { runScript } from "../support/scripts";

const binary = validatorBinary();
if (!binary) console.warn("tests/rpc skipped: no solana-test-validator (build it with bash scripts/setup-test-validator.sh)");

const PROGRAMS = [OFFERS_PROGRAM, POOLS_PROGRAM];
const ROOT = join(import.meta.dirname, "..", "..");

interface Indexer {
  store: Store;
  writer: StoreWriter;
  source: RpcSource;
  errors: unknown[];
}

async function startIndexer(store: Store, o: { name: string; rpcUrl: string; wsUrl: string; commitment: "processed" | "confirmed" }): Promise<Indexer> {
  const writer = await StoreWriter.open(store, o.name);
  const errors: unknown[] = [];
  const source = new RpcSource({
    url: o.rpcUrl,
    wsUrl: o.wsUrl,
    programs: PROGRAMS,
    commitment: o.commitment,
    name: o.name,
    known: writer.knownAccounts(),
    reconcileMs: 0,
    // Off here: "nothing arrives while the socket is down" is asserted; tests/rpc/rpc-gap.test.ts shows the gap check.
    gapCheckMs: 0,
    flushMs: 50,
    onError: (e) => errors.push(e),
  });
  await source.start(await writer.checkpoint(), (b) => writer.apply(b));
  return { store, writer, source, errors };
}

describe.skipIf(!binary)("RPC source against solana-test-validator", () => {
  let validator: TestValidator;
  let proxy: TcpProxy;
  let offers: OffersWorld;
  let pools: PoolsWorld;
  const targets: StoreTarget[] = [];
  const indexers: Indexer[] = [];
  const made = { contracts: [] as PublicKey[], offers: [] as PublicKey[], positions: [] as PublicKey[], pools: [] as PublicKey[], txs: 0 };
  let users: User[] = [];
  let pickers: PoolUser[] = [];
  let contract: PublicKey;
  let cutoffAt: bigint;

  const open = async (tag: string, engine: "sqlite" | "postgres" = "sqlite") => {
    const t = freshStore(engine, tag);
    targets.push(t);
    return openStore(t.url);
  };
  const live = (commitment: "processed" | "confirmed") => ({
    name: `rpc-${commitment}`,
    rpcUrl: validator.rpcUrl,
    wsUrl: `ws://127.0.0.1:${proxy.port}`,
    commitment,
  });

  async function matchesChain(store: Store): Promise<void> {
    await compareWithChain(offers, store, made);
    for (const p of made.pools) await comparePoolWithChain(store.db, p, await pools.pool(p));
  }

  async function offer(creator: User, total: bigint, target: bigint): Promise<PublicKey> {
    const { r, offer: a } = await offers.createOffer(creator, contract, { total, target });
    expect(r.error).toBeNull();
    made.offers.push(a);
    return a;
  }
  async function take(taker: User, o: PublicKey, amount: bigint): Promise<void> {
    expect((await offers.take(taker, o, amount)).error).toBeNull();
    const pos = offers.positionOf(o, taker);
    if (!made.positions.some((p) => p.equals(pos))) made.positions.push(pos);
  }

  beforeAll(async () => {
    validator = await TestValidator.start();
    proxy = await TcpProxy.start(validator.wsPort);
    const chain = TestChain.over(new RpcEngine(validator.connection("confirmed"), validator.payer));
    offers = await OffersWorld.create({ chain });
    pools = await PoolsWorld.create({ chain });
    users = [await offers.user(), await offers.user(), await offers.user()];
    pickers = [await pools.user(), await pools.user()];
    // Cutoff far enough ahead for the first three tests (10 s together at a load average of 20 on
    // 2 cores); the fourth waits for it, so every second more is wall time of the CI run.
    cutoffAt = (await chain.now()) + 35n;
    contract = await offers.contract({ cutoffIn: 35n, deadlineAfterCutoff: 600n });
    made.contracts.push(contract);
  }, 240_000);

  afterAll(async () => {
    for (const i of indexers) await i.source.stop().catch(() => undefined);
    for (const i of indexers) await i.store.close().catch(() => undefined);
    await proxy?.stop();
    await validator?.stop();
    for (const t of targets) await t.drop();
  });

  it("an indexer started after activity finds every account and event (snapshot + history)", async () => {
    const o1 = await offer(users[0], 10n * UNIT, 20n * UNIT);
    await take(users[1], o1, 5n * UNIT);
    const { pool, r } = await pools.createPool(pickers[0], { closesIn: 3_600n });
    expect(r.error).toBeNull();
    made.pools.push(pool);
    expect((await pools.pick(pickers[0], pool, 0, 3n * UNIT)).error).toBeNull();
    // One store per engine: "confirmed" into SQLite, "processed" into PostgreSQL.
    indexers.push(await startIndexer(await open("confirmed", "sqlite"), live("confirmed")));
    indexers.push(await startIndexer(await open("processed", "postgres"), live("processed")));
    for (const i of indexers) await eventually(() => matchesChain(i.store));
    const fills = await indexers[0].store.db.selectFrom("fills").selectAll().execute();
    expect(fills.map((f) => [f.offer, f.take_micros])).toEqual([[o1.toBase58(), (5n * UNIT).toString()]]);
  }, 120_000);

  it("live subscriptions follow creates, takes, a fill to completion, a close and picks", async () => {
    const before = indexers.map((i) => i.writer.stats.batches);
    const o2 = await offer(users[1], 4n * UNIT, 4n * UNIT);
    await take(users[0], o2, 4n * UNIT);
    const o3 = await offer(users[2], 6n * UNIT, 3n * UNIT);
    expect((await offers.close(users[2].key, o3)).error).toBeNull();
    expect((await pools.pick(pickers[1], made.pools[0], 1, 2n * UNIT)).error).toBeNull();
    for (const i of indexers) await eventually(() => matchesChain(i.store));
    // Arrived through subscriptions: no reconcile runs in this suite (reconcileMs 0) outside reconnects.
    indexers.forEach((i, k) => expect(i.writer.stats.batches).toBeGreaterThan(before[k]));
    const row = await indexers[0].store.db.selectFrom("offers").selectAll().where("address", "=", o2.toBase58()).executeTakeFirstOrThrow();
    expect(row.status).toBe("Filled");
  }, 120_000);

  it("a websocket drop loses nothing: resubscription plus the reconciling snapshot bring in what was missed", async () => {
    const at = indexers.map((i) => i.writer.stats.batches);
    const connections = proxy.connections;
    proxy.cut();
    const o4 = await offer(users[0], 8n * UNIT, 8n * UNIT);
    await take(users[2], o4, 3n * UNIT);
    await take(users[2], made.offers[0], 2n * UNIT);
    expect((await pools.pick(pickers[1], made.pools[0], 1, UNIT)).error).toBeNull();
    await new Promise((r) => setTimeout(r, 2_000));
    // Nothing reached the stores while the socket was down.
    expect(indexers.map((i) => i.writer.stats.batches)).toEqual(at);
    await expect(matchesChain(indexers[0].store)).rejects.toThrow();
    proxy.restore();
    for (const i of indexers) await eventually(() => matchesChain(i.store), 60_000);
    expect(proxy.connections).toBeGreaterThan(connections);
    const fills = await indexers[0].store.db.selectFrom("fills").select("take_micros").where("offer", "=", o4.toBase58()).execute();
    expect(fills.map((f) => f.take_micros)).toEqual([(3n * UNIT).toString()]);
  }, 120_000);

  it("a restarted indexer resumes from its checkpoint and catches up, settlements and closed accounts included", async () => {
    const i = indexers[0];
    await i.source.stop();
    const cp = await i.writer.checkpoint();
    expect(cp?.cursor).toBeTruthy();
    // While it is down: the contract reaches its cutoff and is resolved, the open offers are
    // closed, every position settles, and the rent of the settled positions and finished offers is reclaimed (accounts closed).
    await offers.chain.setTime(cutoffAt + 1n);
    expect((await offers.resolve(contract, "sideA")).error).toBeNull();
    // Offers still open after the cutoff are closed (anyone may), then their positions settle.
    for (const o of made.offers) if ((await offers.offer(o)).status === "Open") expect((await offers.close(users[2].key, o)).error).toBeNull();
    for (const p of made.positions) expect((await offers.settle(p)).error).toBeNull();
    for (const p of made.positions) {
      const pos = await offers.position(p);
      expect((await offers.send([await offers.client.closePosition({ position: p, rentPayer: pos.rentPayer })])).error).toBeNull();
    }
    let reclaimed = 0;
    for (const o of made.offers) {
      const acc = await offers.offer(o);
      if ((await offers.send([await offers.client.closeOfferAccount({ offer: o, rentPayer: acc.rentPayer, contract: acc.contract })])).ok) reclaimed++;
    }
    expect(reclaimed).toBeGreaterThan(0);
    const resumed = await startIndexer(i.store, live("confirmed"));
    indexers[0] = resumed;
    await eventually(() => matchesChain(resumed.store), 60_000);
    const settled = await resumed.store.db.selectFrom("settlements").selectAll().execute();
    expect(settled.length).toBe(made.positions.length);
    const deleted = await resumed.store.db.selectFrom("positions").select("address").where("deleted", "=", 1).execute();
    expect(deleted.length).toBe(made.positions.length);
    // The processed-commitment indexer, never stopped, saw the closes live (no reconcile ran).
    await eventually(() => matchesChain(indexers[1].store), 60_000);
    const live1 = await indexers[1].store.db.selectFrom("offers").select("address").where("deleted", "=", 1).execute();
    expect(live1.length).toBe(reclaimed);
  }, 180_000);

  it("the backfill script, run against the validator, rebuilds stores with the live stores' content (SQLite and PostgreSQL)", async () => {
    const want = await storeChecksum(indexers[0].store.db, "content");
    expect(await storeChecksum(indexers[1].store.db, "content")).toBe(want);
    for (const engine of ["sqlite", "postgres"] as const) {
      const t = freshStore(engine, `bf_${engine}`);
      targets.push(t);
      const run = await runScript([join(ROOT, "scripts/backfill.ts"), "--store", t.url, "--rpc", validator.rpcUrl], { cwd: ROOT, timeout: 120_000 });
      expect(run.status, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as { contentChecksum: string; applied: number; events: number };
      expect(report.events).toBeGreaterThan(0);
      expect(report.contentChecksum).toBe(want);
    }
    for (const i of indexers) expect(i.errors).toEqual([]);
  }, 240_000);
});
