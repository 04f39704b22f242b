/**
 * What an `api` process knows of the indexer behind it, and what its operator endpoint may do, on
 * one PostgreSQL store in one process on bankrun: the local stack A (indexer, worker, API) and an
 * `api` replica B (stack/roles.ts) on the same chain and store.
 *
 * - B's `/readyz` reports the indexer's lag from the progress A's acting indexer records in the
 *   store (service/observability/indexer-progress.ts) against B's own head: ready while A keeps
 *   up; 503 naming the indexer once A stops recording (an indexer that died or hangs) and the
 *   chain moves on past B's `maxLagSlots`.
 * - A process whose indexer stands by while its API serves (role `all`) does the same until it acts.
 * - `run-worker` on the operator endpoint runs a pass only where the worker leads: an `api`
 *   process and a standby answer 409 with the reason (the standby names the leader's session).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import { adminApp } from "../../graphql/admin-http";
import { Leadership, type Duty } from "../../service/leadership/leadership";
import { readProgress } from "../../service/observability/indexer-progress";
import { LagMonitor } from "../../service/observability/lag";
import { ServiceMetrics } from "../../service/observability/metrics";
import { operatorRunWorker, startApiReplica } from "../../stack/roles";
import type { LocalStack } from "../../stack/local-stack";
import { freshStore, type StoreTarget } from "../indexer/stores";
import { stack } from "../support/stack";
import { eventually, until } from "../support/wait";
import type { Kysely } from "kysely";

const MAX_LAG = 5;

async function readyz(url: string) {
  const r = await fetch(`${url}/readyz`);
  return { status: r.status, body: (await r.json()) as { ready: boolean; failing: string[]; checks: Record<string, Record<string, unknown>> } };
}

describe("an api process's readiness and operator endpoint on PostgreSQL", () => {
  let target: StoreTarget;
  let a: LocalStack;
  let b: Awaited<ReturnType<typeof startApiReplica>>;
  const servers: ServerType[] = [];

  beforeAll(async () => {
    target = freshStore("postgres", "opready");
    a = await stack({ storeUrl: target.url, changes: "postgres", observability: { sampleMs: 100 } });
    b = await startApiReplica({ chain: a.chain, storeUrl: target.url, serviceKey: a.custody.key, observability: { maxLagSlots: MAX_LAG, sampleMs: 100 } });
  });
  afterAll(async () => {
    for (const s of servers) s.close();
    await b?.stop();
    await a?.stop();
    await target?.drop();
  });

  const advanceSlots = async (n: number) => {
    for (let i = 0; i < n; i++) await a.chain.gateway.advance(1n);
  };

  it("an api replica is ready while the indexer keeps up, reading its lag from the store", async () => {
    await advanceSlots(2 * MAX_LAG);
    const head = Number(await a.chain.gateway.getSlot());
    // A's indexer recorded that it has everything up to the head; B compares it with its own head.
    await until(async () => ((await readProgress(a.db as Kysely<unknown>))?.syncedSlot === head ? true : null), 10_000, 20);
    const r = await eventually(
      async () => {
        const x = await readyz(b.url);
        expect(x.status).toBe(200);
        expect(x.body.checks.indexer).toMatchObject({ ok: true, from: "store", syncedSlot: head });
        return x;
      },
      10_000,
      50,
    );
    expect(r.body.checks.chain).toMatchObject({ ok: true, headSlot: head });
    expect(r.body.checks.indexer.lagSlots).toBe(0);
    expect(Date.parse(r.body.checks.indexer.recordedAt as string)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("once the indexer stops recording and the chain moves past maxLagSlots, the api replica answers 503 naming the indexer", async () => {
    // The indexer as seen from another process once it died or hangs: its records stop.
    await a.obs.close();
    const synced = (await readProgress(a.db as Kysely<unknown>))!.syncedSlot;
    await advanceSlots(MAX_LAG + 3);
    const r = await eventually(
      async () => {
        const x = await readyz(b.url);
        expect(x.status).toBe(503);
        return x;
      },
      10_000,
      50,
    );
    expect(r.body.failing).toEqual(["indexer"]);
    expect(r.body.checks.indexer).toMatchObject({ ok: false, from: "store", syncedSlot: synced, lagSlots: MAX_LAG + 3, maxLagSlots: MAX_LAG });
    expect(r.body.checks.indexer.error).toBe(`the indexer is ${MAX_LAG + 3} slots behind the chain (at most ${MAX_LAG})`);
  });

  it("a process whose indexer stands by while it serves the API (role all) takes the lag from the store, from its source once it acts", async () => {
    // Where the indexer stopped recording (the test above): behind the head by more than MAX_LAG.
    const head = Number(await a.chain.gateway.getSlot());
    const synced = (await readProgress(a.db as Kysely<unknown>))!.syncedSlot;
    expect(head - synced).toBeGreaterThan(MAX_LAG);
    let acting = false;
    const lag = new LagMonitor(
      {
        headSlot: async () => head,
        // A standing-by runner says "caught up" (stack/roles.ts IndexerRunner): it has no lag of its own.
        caughtUpTo: async () => true,
        acting: () => acting,
        recordedProgress: () => readProgress(a.db as Kysely<unknown>),
      },
      new ServiceMetrics(),
    );
    expect(await lag.sample()).toMatchObject({ headSlot: head, syncedSlot: synced, lagSlots: head - synced, recordedAt: expect.any(Number) });
    acting = true;
    expect(await lag.sample()).toEqual({ headSlot: head, syncedSlot: head, lagSlots: 0 });
  });

  const operator = async (runWorker: () => Promise<unknown>) => {
    const token = "operator-readiness-token-0123456789";
    const srv = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: adminApp(a.admin, token, { runWorker }).fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
    });
    servers.push(srv);
    return async () => {
      const r = await fetch(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/admin`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ op: "run-worker" }),
      });
      return { status: r.status, body: (await r.json()) as { result?: Record<string, unknown>; error?: string } };
    };
  };

  it("run-worker on the operator endpoint: refused in an api process and on a standby (409 naming the leader), run by the leader", async () => {
    // Each process's worker counts its passes (the worker's own drain, on the store and chain).
    const passes = { api: 0, standby: 0, leader: 0 };
    const worker = (k: keyof typeof passes) => ({ drain: async () => (passes[k]++, a.worker.drain()) });
    const idle: Duty = { start: async () => undefined, stop: async () => undefined };
    const cands = [0, 1].map(() => new Leadership({ storeUrl: target.url, role: "worker", retryMs: 100 }, idle));
    try {
      for (const c of cands) c.start();
      const leader = await until(async () => cands.find((c) => c.active) ?? null, 10_000, 10);
      const standby = cands.find((c) => c !== leader)!;

      const api = await operator(operatorRunWorker({ role: "api", worker: worker("api"), leadership: null, store: b.store }));
      const r1 = await api();
      expect(r1.status).toBe(409);
      expect(r1.body.error).toMatch(/this process runs role api, without the settlement worker/);

      const onStandby = await operator(operatorRunWorker({ role: "worker", worker: worker("standby"), leadership: standby, store: a.store }));
      const r2 = await onStandby();
      expect(r2.status).toBe(409);
      expect(r2.body.error).toMatch(/stands by \(not the leader\)/);
      expect(r2.body.error).toContain(`server pid ${leader.pid}`);

      const onLeader = await operator(operatorRunWorker({ role: "all", worker: worker("leader"), leadership: leader, store: a.store }));
      const r3 = await onLeader();
      expect(r3.status, JSON.stringify(r3.body)).toBe(200);
      expect(r3.body.result).toHaveProperty("settled");
      expect(passes).toEqual({ api: 0, standby: 0, leader: 1 });
    } finally {
      for (const c of cands) await c.stop();
    }
  });
});
