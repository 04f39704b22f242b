/**
 * The dead-man switch over real HTTP (issue #26): arming is strict (10 to 600 s); heartbeats keep
 * it armed; when they stop, the running worker closes every open offer of the caller within the
 * documented delay (timeout + the worker's period + a pass) and records why; the switch, kept in
 * the store, is carried out by a restarted service (fresh custody, write service and worker over
 * the same database and chain). On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { LocalStack } from "../../stack/local-stack";
import { ServiceKey } from "../../service/custody/crypto";
import { Custody } from "../../service/custody/custody";
import { WriteService } from "../../service/writes/write-service";
import { BulkClose } from "../../service/writes/bulk-close";
import { DeadManSwitches } from "../../service/writes/dead-man-switch";
import { SettlementWorker } from "../../service/worker/worker";
import { UNIT, contract, createBody, makeUser, stack, type TestUser } from "../support/stack";
import { ENGINES, freshStore, type StoreTarget } from "../indexer/stores";
import { get, post } from "../support/http";
import { eventually, until } from "../support/wait";

describe.each(ENGINES)("dead-man switch (%s)", (engine) => {
  let s: LocalStack;
  let target: StoreTarget;
  let offsetMs = 0;
  const serviceKey = ServiceKey.generate();
  const clockMs = () => Date.now() + offsetMs;
  beforeAll(async () => {
    target = freshStore(engine, "deadman");
    s = await stack({ storeUrl: target.url, serviceKey, walletClockMs: clockMs });
  });
  afterAll(async () => {
    await s?.stop();
    await target?.drop();
  });

  const create = async (u: TestUser, k: PublicKey) => {
    const r = await post(s, "/", createBody(k), u.token);
    expect(r.status, r.text).toBe(200);
    return r.body.offerAddress as string;
  };
  const statuses = async (offers: string[]) => (await s.db.selectFrom("offers").select("status").where("address", "in", offers).execute()).map((r) => r.status);
  const openOffers = async (u: TestUser, k1: PublicKey, k2: PublicKey, n: number) => {
    const offers: string[] = [];
    for (let i = 0; i < n; i++) offers.push(await create(u, i % 2 ? k1 : k2));
    await eventually(async () => expect(await statuses(offers)).toEqual(Array(n).fill("Open")));
    return offers;
  };

  it("arming is strict; heartbeat and disarm answer the state", async () => {
    const u = await makeUser(s, 10n * UNIT);
    for (const bad of [
      { timeoutSeconds: 9 },
      { timeoutSeconds: 601 },
      { timeoutSeconds: 10.5 },
      { timeoutSeconds: "30" },
      {},
      { timeoutSeconds: 30, extra: 1 },
    ]) {
      const r = await post(s, "/dead-man-switch", bad, u.token);
      expect(r.status, JSON.stringify(bad)).toBe(400);
    }
    expect((await post(s, "/dead-man-switch/heartbeat", {}, u.token)).status).toBe(409);
    expect((await get(s, "/dead-man-switch", u.token)).body.state).toBe("none");
    const armed = await post(s, "/dead-man-switch", { timeoutSeconds: 600 }, u.token);
    expect(armed.status, armed.text).toBe(200);
    expect(armed.body).toMatchObject({ state: "armed", timeoutSeconds: 600 });
    expect(Date.parse(armed.body.deadlineAt) - Date.parse(armed.body.lastHeartbeatAt)).toBe(600_000);
    const beat = await post(s, "/dead-man-switch/heartbeat", {}, u.token);
    expect(beat.status, beat.text).toBe(200);
    const off = await post(s, "/dead-man-switch/disarm", {}, u.token);
    expect(off.body.state).toBe("disarmed");
    expect((await post(s, "/dead-man-switch/heartbeat", {}, u.token)).status).toBe(409);
    // Armed again over the stored row, with a new timeout.
    const again = await post(s, "/dead-man-switch", { timeoutSeconds: 10 }, u.token);
    expect(again.body).toMatchObject({ state: "armed", timeoutSeconds: 10 });
    expect((await post(s, "/dead-man-switch/disarm", {}, u.token)).body.state).toBe("disarmed");
    expect((await get(s, "/dead-man-switch")).status).toBe(401);
  });

  // The wall clock, on both stores: the switch's deadline is the service's time, not the chain's.
  it("heartbeats stop: the running worker closes every open offer within timeout + period + a pass, and says why", async () => {
    const u = await makeUser(s, 1_000n * UNIT);
    const [k1, k2] = [await contract(s), await contract(s)];
    const offers = await openOffers(u, k1, k2, 6);
    const bystander = await makeUser(s, 100n * UNIT);
    const kept = await create(bystander, k1);
    const periodMs = 500;
    s.worker.start(periodMs);
    try {
      const armed = await post(s, "/dead-man-switch", { timeoutSeconds: 10 }, u.token);
      expect(armed.status, armed.text).toBe(200);
      const lastBeat = Date.parse(armed.body.lastHeartbeatAt);
      const fired = await until(
        async () => {
          const r = await get(s, "/dead-man-switch", u.token);
          return r.body.state === "fired" ? r.body : null;
        },
        30_000,
        100,
      );
      const closedBy = Date.now() - lastBeat;
      // Documented worst case: timeout + the worker's period + one pass (a few hundred ms here).
      expect(closedBy).toBeLessThan(10_000 + periodMs + 5_000);
      expect(Date.parse(fired.trippedAt) - lastBeat).toBeGreaterThanOrEqual(10_000 - 50);
      expect(fired.reason).toMatch(/no heartbeat for 10 s/);
      expect(fired.closes).toMatchObject({ scope: "all", requested: 6, closed: 6, refused: 0 });
      await eventually(async () => expect(await statuses(offers)).toEqual(Array(6).fill("Closed")), 10_000);
      expect(await statuses([kept])).toEqual(["Open"]);
      expect((await post(s, "/dead-man-switch/heartbeat", {}, u.token)).status).toBe(409);
    } finally {
      s.worker.stop();
    }
  }, 60_000);

  it("survives a restart: a fresh service over the same store carries out a switch armed before", async () => {
    const u = await makeUser(s, 1_000n * UNIT);
    const [k1, k2] = [await contract(s), await contract(s)];
    const offers = await openOffers(u, k1, k2, 4);
    expect((await post(s, "/dead-man-switch", { timeoutSeconds: 10 }, u.token)).status).toBe(200);
    // Heartbeats keep it armed past its first deadline.
    for (let i = 0; i < 2; i++) {
      offsetMs += 8_000;
      expect((await post(s, "/dead-man-switch/heartbeat", {}, u.token)).status).toBe(200);
      await s.worker.runOnce();
      expect((await get(s, "/dead-man-switch", u.token)).body.state).toBe("armed");
    }

    // "Restart": everything the service keeps in memory is new; only the store and the chain remain.
    const custody = await Custody.open(s.db as never, serviceKey);
    const writes = new WriteService({ custody, gateway: s.chain.gateway, payer: s.chain.service });
    const deadMan = new DeadManSwitches(new BulkClose(writes), custody, clockMs);
    const worker = new SettlementWorker({
      db: s.db,
      gateway: s.chain.gateway,
      payer: s.chain.service,
      client: s.chain.client,
      treasury: s.chain.treasury,
      deadMan,
    });
    offsetMs += 10_001;
    await worker.runOnce();
    const view = (await get(s, "/dead-man-switch", u.token)).body;
    expect(view).toMatchObject({ state: "fired", closes: { requested: 4, closed: 4, refused: 0 } });
    await eventually(async () => expect(await statuses(offers)).toEqual(Array(4).fill("Closed")), 10_000);
    // A second pass (or the old worker) sends nothing more.
    const again = await s.worker.runOnce();
    expect(again.errors).toEqual([]);
    expect((await get(s, "/dead-man-switch", u.token)).body.firedAt).toBe(view.firedAt);
  });
});
