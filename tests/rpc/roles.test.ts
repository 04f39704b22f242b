/**
 * A deployment of roles against a real solana-test-validator, every process a child running
 * `scripts/start.ts --rpc --role <role>` on one PostgreSQL schema: three API replicas, two
 * indexers and two workers (one of each acting, the other standing by).
 *
 * - 100 creates with one idempotency key, spread over the three replicas, make one offer.
 * - Offers are taken one after another through the replicas, each take waiting for the indexer to
 *   show the offer's new revision; the active indexer is killed with SIGKILL between two takes: the
 *   standby takes the lock and resumes from the checkpoint (times printed).
 * - The last take is sent through one replica while a GraphQL subscriber (SSE, `offer(address:)`)
 *   waits on another: the new revision travels indexer -> PostgreSQL NOTIFY -> that replica's
 *   LISTEN -> the subscriber (time from the take's response to the push printed).
 * - The contract resolves; once the worker has settled the first position the active worker is
 *   killed with SIGKILL: the standby finishes (time printed).
 * - At the end the store's content checksums (indexer/store/checksum.ts, the chain's tables) equal a full backfill from the chain (indexer/backfill.ts)
 *   and every position was settled exactly once (one settlement event in the chain's history of
 *   each position). Tables that differ are printed row by row (tableDiff), with the transactions
 *   the indexers' gap checks found their live streams had missed.
 *
 * Skipped without the validator binary (scripts/setup-test-validator.sh).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { Connection, Keypair, PublicKey } from "@solana/web3.js";
import { RpcEngine } from "../../harness/rpc-engine";
import { TestValidator, validatorBinary } from "../../harness/validator";
import { ServiceKey } from "../../service/custody/crypto";
import { leaderPid, type LeaderRole } from "../../service/leadership/leadership";
import { pgTarget } from "../../service/pg/session";
import { startClusterStack, type ClusterStack } from "../../stack/cluster-stack";
import { storeChecksum, tableChecksums, tableDiff } from "../../indexer/store/checksum";
import type { Database } from "../../indexer/store/schema";
import { openStore } from "../../indexer/store/db";
import { backfill } from "../../indexer/backfill";
import { RpcSource } from "../../indexer/sources/rpc";
import { OFFERS_PROGRAM_ID } from "../../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../../idl/client/pools";
import { decodeEvents } from "../../indexer/decode";
import type { Role } from "../../stack/roles";
import { freshStore, type StoreTarget } from "../indexer/stores";
import { until } from "../support/wait";
import { freePorts } from "../support/ports";
import { sseSubscribe } from "../api/live-clients";
import { UNIT, createBody, key, makeUser, type AnyStack, type TestUser } from "../support/stack";

const ROOT = join(import.meta.dirname, "..", "..");
const binary = validatorBinary();

interface Proc {
  role: Role;
  name: string;
  child: ChildProcess;
  port: number;
  out: string;
  /** Lock sessions (server pids) this process acquired, per role. */
  acquired: { role: string; sessionPid: number }[];
  exited: Promise<number | null>;
}

// A CI run of 2026-11-25 ended with one settlement row of the live store one slot earlier than the
// backfill's (settled_at 1795581024 vs ...025, slot 170 vs 171, same signature): the validator ran
// the transaction in banks of two forks and notified the abandoned one. The RPC source now treats a
// live delivery at another slot than the chain's as missed and reads it back from history
// (indexer/sources/rpc.ts "Forks"; tests/rpc/rpc-fork.test.ts).
describe.skipIf(!binary)("roles on one PostgreSQL store: three API replicas, two indexers, two workers", () => {
  let validator: TestValidator;
  let target: StoreTarget;
  let admin: ClusterStack;
  let db: pg.Client;
  const procs: Proc[] = [];
  const dirs: string[] = [];
  const service = Keypair.generate();
  const serviceKey = ServiceKey.generate();

  const tmp = (p: string) => {
    const d = mkdtempSync(join(tmpdir(), p));
    dirs.push(d);
    return d;
  };

  function spawnRole(role: Role, name: string, port: number, env: NodeJS.ProcessEnv): Proc {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "scripts/start.ts",
        "--rpc",
        validator.rpcUrl,
        "--ws",
        validator.wsUrl,
        "--store",
        target.url,
        "--role",
        role,
        "--port",
        String(port),
        "--admin-port",
        String(port + 1),
        "--data",
        tmp(`role-${name}-`),
      ],
      { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    const p: Proc = { role, name, child, port, out: "", acquired: [], exited: new Promise((r) => child.once("exit", (c) => r(c))) };
    let partial = "";
    const take = (b: Buffer) => {
      const text = partial + b.toString();
      const lines = text.split("\n");
      partial = lines.pop()!;
      for (const l of lines) {
        if (l.includes("leadership: acquired")) {
          const j = JSON.parse(l) as { role: string; sessionPid: number };
          p.acquired.push({ role: j.role, sessionPid: j.sessionPid });
        }
        if (!l.includes('"level":30') || l.includes("leadership")) p.out = (p.out + l + "\n").slice(-20_000);
      }
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    return p;
  }

  /** The child whose lock session holds `role` now (null while none does). */
  async function active(role: LeaderRole): Promise<Proc | null> {
    const pid = await leaderPid((q, p) => db.query(q, p), target.url, role);
    if (pid === null) return null;
    return procs.find((p) => p.acquired.some((a) => a.role === role && a.sessionPid === pid)) ?? null;
  }

  beforeAll(async () => {
    validator = await TestValidator.start({ upgradeAuthority: service });
    await new RpcEngine(validator.connection(), validator.payer).fund(service.publicKey, 1_000_000_000_000n);
    target = freshStore("postgres", "roles");
    // The operator's tools (users, contracts, resolution) in this process: an `api` role that initialises the chain.
    admin = await startClusterStack({ role: "api", rpcUrl: validator.rpcUrl, wsUrl: validator.wsUrl, storeUrl: target.url, service, serviceKey, init: true });
    db = new pg.Client({ connectionString: pgTarget(target.url).connectionString });
    await db.connect();
    await db.query(`SET search_path TO ${pgTarget(target.url).schema}`);

    const keyFile = join(tmp("service-key-"), "service.key");
    writeFileSync(keyFile, serviceKey.toHex() + "\n", { mode: 0o600 });
    // IP_BURST=0: every request of the suite comes from 127.0.0.1, and the replicas share one
    // per-address budget in the store (120 at once, 600 a minute): the creates and the polling
    // for indexed revisions passed it in one CI run (429). Rate limits are tested elsewhere.
    const env = { ...process.env, SERVICE_WALLET: JSON.stringify([...service.secretKey]), SERVICE_KEY_FILE: keyFile, LOG_LEVEL: "info", IP_BURST: "0" };
    // Two ports (API, operator) for each of the seven replicas.
    const [base] = await freePorts(14);
    const layout: [Role, string][] = [
      ["api", "api-a"],
      ["api", "api-b"],
      ["api", "api-c"],
      ["indexer", "indexer-1"],
      ["indexer", "indexer-2"],
      ["worker", "worker-1"],
      ["worker", "worker-2"],
    ];
    layout.forEach(([role, name], i) => procs.push(spawnRole(role, name, base + 2 * i, env)));
    await until(async () => (procs.every((p) => p.out.includes("Service up against")) ? true : null), 240_000, 200).catch((e) => {
      throw new Error(`${e}\n${procs.map((p) => `--- ${p.name}\n${p.out}`).join("\n")}`);
    });
  }, 300_000);

  afterAll(async () => {
    for (const p of procs) p.child.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
    await db?.end();
    await admin?.stop().catch(() => undefined);
    await validator?.stop();
    await target?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const replicas = () => procs.filter((p) => p.role === "api");
  const api = (p: Proc) => `http://127.0.0.1:${p.port}/api/bets-usdc/offers`;
  async function call(p: Proc, path: string, body?: unknown, token?: string) {
    const r = await fetch(`${api(p)}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, text, body: JSON.parse(text) as Record<string, unknown> };
  }

  it("acts once per key across replicas, survives SIGKILL of the active indexer and worker, and ends equal to a backfill with every settlement once", async () => {
    const s: AnyStack = admin;
    const [a] = replicas();
    expect((await call(a, "/contracts")).status).toBe(200);
    const indexer0 = await until(() => active("indexer"), 30_000);
    const worker0 = await until(() => active("worker"), 30_000);
    expect(indexer0.role).toBe("indexer");
    expect(worker0.role).toBe("worker");
    // Indexer and worker processes serve health, readiness and metrics, not the API.
    for (const p of procs.filter((p) => p.role !== "api")) {
      expect((await fetch(`http://127.0.0.1:${p.port}/healthz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${p.port}/metrics`)).status).toBe(200);
      expect((await fetch(`${api(p)}/contracts`)).status).toBe(404);
    }

    const creators: TestUser[] = [];
    const takers: TestUser[] = [];
    for (let i = 0; i < 3; i++) creators.push(await makeUser(s, 100n * UNIT));
    for (let i = 0; i < 3; i++) takers.push(await makeUser(s, 100n * UNIT));

    // The cutoff leaves room for the creates and takes (about 11 s at a load average of 25 on 2
    // cores), then the suite waits for it: every second of it is wall time of the CI run.
    const now = await s.chain.gateway.now();
    const cutoffIn = 45n;
    const contract = await admin.admin.createContract({
      title: "Roles final",
      event: "A vs B",
      sport: "football",
      competition: "Cup",
      startsAt: Number(now + cutoffIn),
      cutoffAt: now + cutoffIn,
      resolutionDeadline: now + cutoffIn + 86_400n,
      sideALabel: "A",
      sideBLabel: "B",
      visuals: [],
    });

    // 100 creates with one key over three replicas: one offer.
    const body = createBody(contract, { idempotencyKey: key() });
    const rs = await Promise.all(Array.from({ length: 100 }, (_, i) => call(replicas()[i % 3], "/", body, creators[0].token)));
    for (const r of rs) expect([200, 409], r.text).toContain(r.status);
    const ok = rs.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((r) => r.body.signature)).size).toBe(1);
    const offers = [ok[0].body.offerAddress as string];
    for (const [i, u] of creators.slice(1).entries()) {
      const r = await call(replicas()[i + 1], "/", createBody(contract), u.token);
      expect(r.status, r.text).toBe(200);
      offers.push(r.body.offerAddress as string);
    }
    const revision = async (p: Proc, offer: string) => {
      const r = await call(p, `/${offer}`);
      return r.status === 200 ? BigInt(r.body.revision as string) : null;
    };
    for (const o of offers) await until(() => revision(a, o), 60_000);
    const mine = await db.query("SELECT address FROM offers WHERE creator = $1", [creators[0].user.wallet.toBase58()]);
    expect(mine.rows.map((r) => r.address)).toEqual([offers[0]]);

    // Takes, one after another through the replicas, each waiting for the indexer; the active indexer is killed half way.
    // The last take is also watched by a GraphQL subscriber (SSE) on another replica than the one it
    // is sent through: indexer -> PostgreSQL NOTIFY -> that replica's LISTEN -> the subscriber.
    let n = 0;
    let indexerKill: { at: number; lockMs?: number; resumedMs?: number; standby?: Proc } | null = null;
    let pushed: { from: string; to: string; ms: number } | null = null;
    const seen = new Map<string, bigint>();
    for (const o of offers)
      for (const t of takers) {
        const via = replicas()[n % 3];
        // The replica the take goes through has seen the last take on this offer too: each replica
        // drops its caches on its own NOTIFY, so one may still answer the revision before (409).
        const rev = await until(
          async () => {
            const r = await revision(via, o);
            return r !== null && r >= (seen.get(o) ?? 0n) ? r : null;
          },
          60_000,
          50,
        );
        const watcher = n === 8 ? replicas()[(n + 1) % 3] : null;
        const sub = watcher ? await sseSubscribe(`http://127.0.0.1:${watcher.port}`, `subscription { offer(address: "${o}") { address revision } }`) : null;
        // The offer as it is now: the subscription is held by the replica before the take.
        if (sub) expect((await sub.next(30_000)).data?.offer?.revision).toBe(String(rev));
        const r = await call(via, `/${o}/take`, { takeAmountMicros: String(2n * UNIT), expectedRevision: String(rev), idempotencyKey: key() }, t.token);
        expect(r.status, r.text).toBe(200);
        if (sub) {
          const sent = performance.now();
          const ev = await sub.until((e) => BigInt((e.data?.offer?.revision as string | undefined) ?? "0") > rev, 60_000);
          pushed = { from: via.name, to: watcher!.name, ms: performance.now() - sent };
          sub.close();
          expect(ev.errors).toBeUndefined();
          expect(ev.data?.offer).toEqual({ address: o, revision: String(rev + 1n) });
        }
        if (++n === 4) {
          const victim = (await active("indexer"))!;
          victim.child.kill("SIGKILL");
          indexerKill = { at: performance.now() };
          await victim.exited;
          indexerKill.standby = await until(
            async () => {
              const p = await active("indexer");
              return p && p !== victim ? p : null;
            },
            30_000,
            20,
          );
          indexerKill.lockMs = performance.now() - indexerKill.at;
        }
        // Visible through another replica once indexed (after the kill: once the standby resumed).
        await until(async () => ((await revision(replicas()[(n + 1) % 3], o)) === rev + 1n ? true : null), 60_000, 50);
        seen.set(o, rev + 1n);
        if (n === 4) indexerKill!.resumedMs = performance.now() - indexerKill!.at;
      }
    // The cutoff's margin, for whoever shortens it or runs this on a slower machine.
    console.log(`the last take was indexed ${now + cutoffIn - (await s.chain.gateway.now())} s before the cutoff (${cutoffIn} s after the contract)`);
    expect(pushed).not.toBeNull();
    console.log(`a take through ${pushed!.from} reached a subscriber on ${pushed!.to} ${pushed!.ms.toFixed(0)} ms after the take's response`);
    expect(indexerKill?.standby?.role).toBe("indexer");
    console.log(
      `indexer SIGKILL -> standby holds the lock after ${indexerKill!.lockMs!.toFixed(0)} ms; the take sent just before the kill is indexed (by the standby) after ${indexerKill!.resumedMs!.toFixed(0)} ms`,
    );

    // Resolution: once the worker settled a first position, the active worker is killed.
    await until(async () => ((await s.chain.gateway.now()) > now + cutoffIn + 1n ? true : null), 120_000, 500);
    await admin.admin.resolveContract(contract, "sideA");
    const settled = async () => Number((await db.query("SELECT count(*)::int AS n FROM settlements")).rows[0].n);
    await until(async () => ((await settled()) > 0 ? true : null), 60_000, 20);
    const workerVictim = (await active("worker"))!;
    workerVictim.child.kill("SIGKILL");
    const wAt = performance.now();
    const settledAtKill = await settled();
    await workerVictim.exited;
    const workerStandby = await until(
      async () => {
        const p = await active("worker");
        return p && p !== workerVictim ? p : null;
      },
      30_000,
      20,
    );
    const workerLockMs = performance.now() - wAt;
    await until(async () => ((await settled()) === 9 ? true : null), 120_000, 100);
    console.log(
      `worker SIGKILL (after ${settledAtKill} of 9 settlements) -> standby holds the lock after ${workerLockMs.toFixed(0)} ms; all 9 settled after ${(performance.now() - wAt).toFixed(0)} ms`,
    );
    expect(workerStandby.role).toBe("worker");

    // Quiet (the worker reclaims rent after settling), then equal to a full backfill.
    let last = "";
    await until(
      async () => {
        const sum = await storeChecksum(admin.db, "content");
        const same = sum === last;
        last = sum;
        return same ? true : null;
      },
      180_000,
      12_000,
    );
    // The chain's tables only: the catalog (titles, profiles) is the operator's, not the chain's.
    const chainContent = async (d: ClusterStack["db"]) =>
      Object.fromEntries(Object.entries(await tableChecksums(d, "content")).filter(([t]) => !["contract_catalog", "pool_catalog", "profiles"].includes(t)));
    const bf = freshStore("postgres", "roles_bf");
    const bfStore = await openStore(bf.url);
    try {
      await backfill(bfStore, new RpcSource({ url: validator.rpcUrl, wsUrl: validator.wsUrl, programs: [OFFERS_PROGRAM_ID, POOLS_PROGRAM_ID] }));
      const live = await chainContent(admin.db);
      expect(live.settlements.rows).toBe(9);
      const filled = await chainContent(bfStore.db);
      const differ = Object.keys(live).filter((t) => JSON.stringify(live[t]) !== JSON.stringify(filled[t])) as (keyof Database)[];
      // Which rows and columns, not only which table: "first" is the live store, "second" the backfill.
      // Transactions the indexers' live streams missed (their gap checks reconciled them).
      const gaps = procs
        .filter((p) => p.role === "indexer")
        .flatMap((p) =>
          p.out
            .split("\n")
            .filter((l) => l.includes("did not deliver"))
            .map((l) => `${p.name}: ${l}`),
        );
      console.log(`gap checks that found missed transactions: ${gaps.length}${gaps.length ? `\n${gaps.join("\n")}` : ""}`);
      if (differ.length) console.log(`live store vs backfill:\n${(await tableDiff(admin.db, bfStore.db, differ)).join("\n")}`);
      expect(live).toEqual(filled);
    } finally {
      await bfStore.close();
      await bf.drop();
    }

    // Every position settled exactly once: one settlement event in its chain history.
    const positions = (await db.query("SELECT position FROM settlements")).rows.map((r) => r.position as string);
    expect(positions).toHaveLength(9);
    const conn = new Connection(validator.rpcUrl, "confirmed");
    for (const pos of positions) {
      const sigs = (await conn.getSignaturesForAddress(new PublicKey(pos))).filter((x) => x.err === null);
      let count = 0;
      for (const sig of sigs) {
        const tx = await conn.getTransaction(sig.signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
        const logs = tx?.meta?.logMessages ?? [];
        count += decodeEvents([{ signature: sig.signature, slot: sig.slot, writeVersion: 0, err: null, logs }]).settlements.filter(
          (e) => e.position === pos,
        ).length;
      }
      expect(count, pos).toBe(1);
    }
  }, 900_000);
});
