/**
 * Poisoned items cannot stall the settlement worker (issue #15, part 1).
 *
 * Before: a pass took up to `batch` open offers past cutoff, unordered, with no memory of
 * failures: with batch 3 and 3 offers whose close always failed, an honest offer behind them was
 * never closed or settled. Here, with batch 3, 5 offers whose close always fails and 2 positions
 * whose settlement always fails, all created before the honest ones (oldest due first, so a
 * worker without isolation meets them first):
 * - the honest offers are closed, settled and their rent reclaimed in the same number of passes
 *   as in the same market without poisoned items;
 * - the worker works oldest due first (its close attempts follow the offers' creation);
 * - each poisoned item is recorded (attempts, next retry, reason = the program error's name from
 *   the IDL), skipped during its backoff (which doubles per failure), retried from a separate
 *   budget that does not hold back fresh work, and still known after a restart (a new worker on
 *   the store);
 * - `scripts/admin.ts worker failures` (a real process, through the operator endpoint) lists them.
 *
 * How items are poisoned, and why this way: a transaction that fails on chain every time. The
 * real cause seen so far (a creator closing the token account the refund goes to, so that every
 * close_offer failed) is being removed from the program: payouts that a token account cannot
 * receive go to a claimable balance instead. With that change no user action we know of makes
 * the crank fail for good, yet the worker must survive whatever does. So the chosen items go
 * through the worker's `prepare` step, which appends to their transaction an instruction the
 * offers program always refuses: `void_expired_contract` on a contract that is already voided
 * (ContractNotOpen). The transaction is real, signed by the service, submitted to the compiled
 * program in bankrun and refused by it; ordering, batching, backoff, the store, the operator
 * endpoint and the CLI are the real ones.
 */
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { PublicKey, TransactionInstruction } from "@solana/web3.js";
import type { LocalStack } from "../../stack/local-stack";
import { SettlementWorker, type WorkItem, type WorkerReport } from "../../service/worker/worker";
import { adminApp } from "../../graphql/admin-http";
import { ENGINES, freshStore } from "../indexer/stores";
import { UNIT, contract, createBody, key, makeUser, stack, type TestUser } from "../support/stack";
import { post } from "../support/http";
import { adminJson } from "../support/scripts";

const ROOT = join(import.meta.dirname, "..", "..");
const BATCH = 3;

interface Market {
  /** Offers that need close (open, partly taken) or only settlement (filled), then rent reclaim. */
  honestOffers: string[];
  honestPositions: string[];
  /** Open offers created first (oldest): their close is poisoned. */
  poisonedOffers: string[];
  /** Positions of filled offers created first: their settlement is poisoned. */
  poisonedPositions: string[];
  /** Honest open offers, in creation order (what the worker must close, oldest first). */
  honestOpen: string[];
  contract: PublicKey;
}

/** One second of chain time between creations, so every offer has its own `created_at`. */
async function create(s: LocalStack, k: PublicKey, creator: TestUser): Promise<string> {
  await s.chain.gateway.advance(1n);
  const r = await post(
    s,
    "/",
    createBody(k, { creatorTotalMicros: String(8n * UNIT), takerTargetMicros: String(10n * UNIT), minimumTakeMicros: String(UNIT) }),
    creator.token,
  );
  expect(r.status, r.text).toBe(200);
  return r.body.offerAddress as string;
}

async function take(s: LocalStack, offer: string, taker: TestUser, amount: bigint): Promise<string> {
  const r = await post(s, `/${offer}/take`, { takeAmountMicros: String(amount), expectedRevision: "1", idempotencyKey: key() }, taker.token);
  expect(r.status, r.text).toBe(200);
  return r.body.positionAddress as string;
}

/** The same honest market, with or without poisoned items created before it. */
async function market(s: LocalStack, poison: boolean): Promise<Market> {
  const [c1, c2, t1, t2] = await Promise.all([makeUser(s), makeUser(s), makeUser(s), makeUser(s)]);
  const k = await contract(s, 3_600n, 86_400n);
  const m: Market = { honestOffers: [], honestPositions: [], poisonedOffers: [], poisonedPositions: [], honestOpen: [], contract: k };
  if (poison) {
    for (let i = 0; i < 5; i++) m.poisonedOffers.push(await create(s, k, c1));
    for (let i = 0; i < 2; i++) {
      const o = await create(s, k, c1);
      m.poisonedPositions.push(await take(s, o, t1, 10n * UNIT)); // fills it: only settlement is due
    }
  }
  // 4 open offers, each partly taken (close -> settle -> reclaim), then 2 filled ones (settle -> reclaim).
  for (let i = 0; i < 4; i++) {
    const o = await create(s, k, c2);
    m.honestOffers.push(o);
    m.honestOpen.push(o);
    m.honestPositions.push(await take(s, o, t2, 5n * UNIT));
  }
  for (let i = 0; i < 2; i++) {
    const o = await create(s, k, c2);
    m.honestOffers.push(o);
    m.honestPositions.push(await take(s, o, t2, 10n * UNIT));
  }
  await s.chain.gateway.advance(3_600n);
  await s.admin.resolveContract(k, "sideA");
  return m;
}

/** The honest offers and positions are settled and their accounts closed (rent back to the service). */
async function honestDone(s: LocalStack, m: Market): Promise<boolean> {
  const offers = await s.db.selectFrom("offers").select(["deleted"]).where("address", "in", m.honestOffers).execute();
  const positions = await s.db.selectFrom("positions").select(["deleted", "status"]).where("address", "in", m.honestPositions).execute();
  return offers.length === m.honestOffers.length && offers.every((o) => o.deleted === 1) && positions.every((p) => p.deleted === 1 && p.status !== "Open");
}

/** Runs passes until the honest work is done; returns how many it took. */
async function passesUntilHonestDone(s: LocalStack, w: SettlementWorker, m: Market, reports: WorkerReport[] = []): Promise<number> {
  for (let pass = 1; pass <= 12; pass++) {
    reports.push(await w.runOnce());
    if (await honestDone(s, m)) return pass;
  }
  throw new Error("honest work not done after 12 passes");
}

describe("settlement worker: poisoned items", () => {
  const stacks: LocalStack[] = [];
  const dirs: string[] = [];
  let admin: ServerType | null = null;
  afterAll(async () => {
    admin?.close();
    for (const s of stacks) await s.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("honest offers are closed, settled and reclaimed in as many passes as without poison; poisoned ones back off, are remembered and listed", async () => {
    // Baseline: the honest market alone.
    const base = await stack();
    stacks.push(base);
    const bm = await market(base, false);
    const baseWorker = new SettlementWorker({ ...base.worker.deps, batch: BATCH });
    const basePasses = await passesUntilHonestDone(base, baseWorker, bm);
    expect(basePasses).toBeGreaterThanOrEqual(2); // the batch matters: 4 closes need two passes

    // The same market behind 5 poisoned closes and 2 poisoned settlements.
    const s = await stack();
    stacks.push(s);
    const m = await market(s, true);
    const guard = await contract(s, 60n, 60n);
    await s.admin.resolveContract(guard, "void");
    const refused: TransactionInstruction = await s.chain.client.voidExpiredContract({ contract: guard });
    const poisoned = new Set([...m.poisonedOffers, ...m.poisonedPositions]);
    const attempts: WorkItem[] = [];
    let wall = Math.floor(Date.now() / 1000);
    const deps = {
      ...s.worker.deps,
      batch: BATCH,
      retryBatch: 1,
      clock: () => wall,
      prepare: (item: WorkItem, ixs: TransactionInstruction[]) => {
        attempts.push(item);
        return poisoned.has(item.address) ? [...ixs, refused] : ixs;
      },
    };
    const w = new SettlementWorker(deps);
    const reports: WorkerReport[] = [];
    const passes = await passesUntilHonestDone(s, w, m, reports);
    expect(passes).toBe(basePasses);

    // Oldest due first: every open offer on the contract, in creation order, until 3 closes succeeded.
    const closes = attempts.filter((a) => a.kind === "close-offer").map((a) => a.address);
    expect(closes.slice(0, 8)).toEqual([...m.poisonedOffers, ...m.honestOpen.slice(0, 3)]);
    expect(closes.slice(8)).toEqual([m.honestOpen[3]]); // pass 2: the last one, no poisoned retried
    const settles = attempts.filter((a) => a.kind === "settle-position").map((a) => a.address);
    expect(settles.slice(0, 5)).toEqual([...m.poisonedPositions, ...m.honestPositions.slice(0, 3)]);
    expect(reports[0].failed).toBe(7);
    expect(reports[0].closed).toBe(3);
    expect(reports[0].errors.every((e) => e.endsWith(": ContractNotOpen"))).toBe(true);
    for (const r of reports.slice(1)) expect(r.failed + r.retried).toBe(0); // in backoff: not attempted
    expect(reports[reports.length - 1].deferred).toBe(7);

    // Honest results: every position settled once, the offers' stakes refunded or paid.
    expect(await s.db.selectFrom("settlements").select("position").where("position", "in", m.honestPositions).execute()).toHaveLength(m.honestPositions.length);
    // Poisoned items untouched on chain: the offers still open, the positions unsettled.
    const po = await s.db.selectFrom("offers").select(["status"]).where("address", "in", m.poisonedOffers).execute();
    expect(po.map((o) => o.status)).toEqual(m.poisonedOffers.map(() => "Open"));
    const pp = await s.db.selectFrom("positions").select(["status"]).where("address", "in", m.poisonedPositions).execute();
    expect(pp.map((p) => p.status)).toEqual(["Open", "Open"]);

    // Recorded: kind, attempts 1, next retry 30 s on, the program's error name.
    const t0 = wall;
    let rows = await w.failures.list();
    expect(rows, JSON.stringify(rows)).toHaveLength(7);
    expect(
      rows
        .filter((r) => r.kind === "close-offer")
        .map((r) => r.item)
        .sort(),
    ).toEqual([...m.poisonedOffers].sort());
    expect(
      rows
        .filter((r) => r.kind === "settle-position")
        .map((r) => r.item)
        .sort(),
    ).toEqual([...m.poisonedPositions].sort());
    for (const r of rows) expect(r).toMatchObject({ attempts: 1, nextRetryAt: t0 + 30, lastReason: "ContractNotOpen", firstFailedAt: t0 });

    // Fresh work arriving while poisoned items are due again: the retry budget (1 per phase) is
    // separate, so the new offer is closed in the same pass, and the oldest due ones retried.
    const k2 = await contract(s, 30n, 86_400n);
    const [c3] = await Promise.all([makeUser(s)]);
    const fresh = await create(s, k2, c3);
    await s.chain.gateway.advance(60n);
    wall = t0 + 30;
    attempts.length = 0;
    const r3 = await w.runOnce();
    expect(r3.closed).toBe(1);
    expect((await s.db.selectFrom("offers").select("status").where("address", "=", fresh).executeTakeFirstOrThrow()).status).toBe("Closed");
    expect(r3.retried).toBe(2);
    expect(attempts.filter((a) => poisoned.has(a.address)).map((a) => a.address)).toEqual([m.poisonedOffers[0], m.poisonedPositions[0]]);
    // Exponential: the second failure waits 60 s.
    expect(await w.failures.get("close-offer", m.poisonedOffers[0])).toMatchObject({ attempts: 2, nextRetryAt: t0 + 30 + 60, lastFailedAt: t0 + 30 });
    expect(await w.failures.get("settle-position", m.poisonedPositions[0])).toMatchObject({ attempts: 2, nextRetryAt: t0 + 90 });
    expect(await w.failures.get("close-offer", m.poisonedOffers[1])).toMatchObject({ attempts: 1, nextRetryAt: t0 + 30 });

    // Restart: a new worker on the same store knows them: the item in backoff is not attempted,
    // the next due one is.
    const restarted = new SettlementWorker(deps);
    attempts.length = 0;
    wall = t0 + 31;
    const r4 = await restarted.runOnce();
    expect(r4.retried).toBe(2);
    const retriedNow = attempts.filter((a) => poisoned.has(a.address)).map((a) => a.address);
    expect(retriedNow).toEqual([m.poisonedOffers[1], m.poisonedPositions[1]]);
    expect(retriedNow).not.toContain(m.poisonedOffers[0]);
    expect(await restarted.failures.get("close-offer", m.poisonedOffers[0])).toMatchObject({ attempts: 2 });
    expect(await restarted.failures.get("close-offer", m.poisonedOffers[1])).toMatchObject({ attempts: 2, nextRetryAt: t0 + 31 + 60 });

    // The operator CLI in its own process, through the operator endpoint of the running service.
    const data = mkdtempSync(join(tmpdir(), "worker-poison-"));
    dirs.push(data);
    const adminToken = "test-admin-token-0123456789";
    admin = await new Promise<ServerType>((resolve) => {
      const srv = serve({ fetch: adminApp(s.admin, adminToken, { runWorker: () => w.drain() }).fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(srv));
    });
    writeFileSync(
      join(data, "admin.json"),
      JSON.stringify({ adminUrl: `http://127.0.0.1:${(admin.address() as AddressInfo).port}`, adminToken, apiUrl: s.url }),
    );
    const cli = async (...args: string[]) => adminJson(["--data", data, ...args], { cwd: ROOT, timeout: 60_000 });
    const listed = (await cli("worker", "failures")) as { summary: Record<string, { failing: number }>; failures: Record<string, unknown>[] };
    expect(listed.summary["close-offer"].failing).toBe(5);
    expect(listed.summary["settle-position"].failing).toBe(2);
    expect(listed.failures).toHaveLength(7);
    rows = await w.failures.list();
    for (const [i, f] of listed.failures.entries()) {
      expect(f).toMatchObject({
        item: rows[i].item,
        kind: rows[i].kind,
        attempts: rows[i].attempts,
        nextRetryAt: rows[i].nextRetryAt,
        lastReason: "ContractNotOpen",
      });
      expect(typeof f.nextRetry).toBe("string");
    }
    // Soonest retry first.
    const next = listed.failures.map((f) => f.nextRetryAt as number);
    expect(next).toEqual([...next].sort((a, b) => a - b));
    // The same command on the operator endpoint, filtered by kind.
    const adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}/admin`;
    const onlySettle = (await (
      await fetch(adminUrl, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}` },
        body: JSON.stringify({ op: "worker-failures", kind: "settle-position" }),
      })
    ).json()) as { result: { failures: { item: string }[] } };
    expect(onlySettle.result.failures.map((f) => f.item).sort()).toEqual([...m.poisonedPositions].sort());
    // `worker retry` makes an item due now.
    expect(await cli("worker", "retry", m.poisonedOffers[0])).toEqual({ item: m.poisonedOffers[0], due: true });
    expect((await w.failures.get("close-offer", m.poisonedOffers[0]))!.nextRetryAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));

    // Once the cause is gone (here: the step stops adding the refused instruction), a retry
    // succeeds and the record is deleted.
    poisoned.clear();
    wall = t0 + 10_000;
    await w.drain();
    expect(await w.failures.list()).toHaveLength(0);
    expect((await s.db.selectFrom("offers").select("status").where("address", "in", m.poisonedOffers).execute()).every((o) => o.status === "Closed")).toBe(
      true,
    );
  });
});

describe.each(ENGINES)("worker failures on %s", (engine) => {
  it("a poisoned offer older than an honest one: the honest one is closed in the first pass; the failure survives a restart", async () => {
    const target = freshStore(engine, "poison");
    const s = await stack({ storeUrl: target.url });
    try {
      const [c1, c2] = await Promise.all([makeUser(s), makeUser(s)]);
      const k = await contract(s, 60n, 86_400n);
      const bad = await create(s, k, c1);
      const good = await create(s, k, c2);
      const guard = await contract(s, 60n, 60n);
      await s.admin.resolveContract(guard, "void");
      const refused = await s.chain.client.voidExpiredContract({ contract: guard });
      await s.chain.gateway.advance(120n);
      await s.admin.resolveContract(k, "sideA"); // so the closed offer's account can be reclaimed
      const wall = 1_800_000_000;
      const deps = {
        ...s.worker.deps,
        batch: 1,
        clock: () => wall,
        prepare: (i: WorkItem, ixs: TransactionInstruction[]) => (i.address === bad ? [...ixs, refused] : ixs),
      };
      const r = await new SettlementWorker(deps).runOnce();
      expect(r).toMatchObject({ closed: 1, failed: 1, reclaimedOffers: 1, deferred: 1 });
      expect((await s.db.selectFrom("offers").select("status").where("address", "=", good).executeTakeFirstOrThrow()).status).toBe("Closed");
      const again = new SettlementWorker(deps);
      expect(await again.failures.list()).toEqual([
        { kind: "close-offer", item: bad, attempts: 1, firstFailedAt: wall, lastFailedAt: wall, nextRetryAt: wall + 30, lastReason: "ContractNotOpen" },
      ]);
      const r2 = await again.runOnce();
      expect(r2).toMatchObject({ closed: 0, failed: 0, retried: 0, skipped: 0, deferred: 1 });
    } finally {
      await s.stop();
      await target.drop();
    }
  });
});
