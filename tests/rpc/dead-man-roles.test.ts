/**
 * The dead-man switch across a takeover of the worker role, against a real solana-test-validator
 * on one PostgreSQL store: an in-process API and indexer (users, offers, the switch) and two `worker`
 * processes (`scripts/start.ts --role worker`). The acting worker carries a TEST fail point
 * (service/writes/fail-point.ts, `write-after-send`): when the switch trips, its first close lands
 * and the process dies of SIGKILL in the middle of the bulk close. The standby takes the role and
 * finishes the job: every open offer closed once (the landed close is replayed with its recorded
 * signature, not sent again), the switch `fired` with its reason. Times printed.
 *
 * Skipped without the validator binary (scripts/setup-test-validator.sh).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { Keypair } from "@solana/web3.js";
import { RpcEngine } from "../../harness/rpc-engine";
import { TestValidator, validatorBinary } from "../../harness/validator";
import { ServiceKey } from "../../service/custody/crypto";
import { leaderPid } from "../../service/leadership/leadership";
import { pgTarget } from "../../service/pg/session";
import { FAIL_POINT_ENV } from "../../service/writes/fail-point";
import { startClusterStack, type ClusterStack } from "../../stack/cluster-stack";
import { freshStore, type StoreTarget } from "../indexer/stores";
import { until } from "../support/wait";
import { freePorts } from "../support/ports";
import { UNIT, createBody, makeUser } from "../support/stack";

const ROOT = join(import.meta.dirname, "..", "..");
const binary = validatorBinary();

interface Proc {
  name: string;
  child: ChildProcess;
  out: string;
  sessionPids: number[];
  exited: Promise<NodeJS.Signals | null>;
}

describe.skipIf(!binary)("dead-man switch: SIGKILL of the acting worker during the bulk close; the standby finishes", () => {
  let validator: TestValidator;
  let target: StoreTarget;
  let api: ClusterStack;
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

  function spawnWorker(name: string, port: number, env: NodeJS.ProcessEnv): Proc {
    const args = ["--import", "tsx", "scripts/start.ts", "--rpc", validator.rpcUrl, "--ws", validator.wsUrl, "--store", target.url];
    args.push("--role", "worker", "--port", String(port), "--admin-port", String(port + 1), "--data", tmp(`dms-${name}-`));
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    const p: Proc = { name, child, out: "", sessionPids: [], exited: new Promise((r) => child.once("exit", (_c, sig) => r(sig))) };
    const take = (b: Buffer) => {
      for (const l of b.toString().split("\n")) {
        if (l.includes("leadership: acquired")) p.sessionPids.push((JSON.parse(l) as { sessionPid: number }).sessionPid);
        p.out = (p.out + l + "\n").slice(-20_000);
      }
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    return p;
  }
  const acting = async () => {
    const pid = await leaderPid((q, p) => db.query(q, p), target.url, "worker");
    return procs.find((p) => pid !== null && p.sessionPids.includes(pid)) ?? null;
  };

  beforeAll(async () => {
    validator = await TestValidator.start({ upgradeAuthority: service });
    await new RpcEngine(validator.connection(), validator.payer).fund(service.publicKey, 1_000_000_000_000n);
    target = freshStore("postgres", "deadman");
    // API and indexer in this process (role all without workerMs: it never campaigns for the worker).
    api = await startClusterStack({ role: "all", rpcUrl: validator.rpcUrl, wsUrl: validator.wsUrl, storeUrl: target.url, service, serviceKey, init: true });
    db = new pg.Client({ connectionString: pgTarget(target.url).connectionString });
    await db.connect();
    await db.query(`SET search_path TO ${pgTarget(target.url).schema}`);
    const keyFile = join(tmp("dms-key-"), "service.key");
    writeFileSync(keyFile, serviceKey.toHex() + "\n", { mode: 0o600 });
    const env = { ...process.env, SERVICE_WALLET: JSON.stringify([...service.secretKey]), SERVICE_KEY_FILE: keyFile, LOG_LEVEL: "info" };
    const [base] = await freePorts(4);
    // The first takes the role; only it carries the fail point.
    procs.push(spawnWorker("worker-1", base, { ...env, [FAIL_POINT_ENV]: "write-after-send" }));
    await until(async () => ((await acting()) === procs[0] ? true : null), 240_000, 200).catch((e) => {
      throw new Error(`${e}\n${procs[0].out}`);
    });
    procs.push(spawnWorker("worker-2", base + 2, env));
    await until(async () => (procs[1].out.includes("Service up against") ? true : null), 240_000, 200).catch((e) => {
      throw new Error(`${e}\n${procs[1].out}`);
    });
  }, 300_000);

  afterAll(async () => {
    for (const p of procs) p.child.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
    await db?.end();
    await api?.stop().catch(() => undefined);
    await validator?.stop();
    await target?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("every open offer is closed once, by the standby after the SIGKILL", async () => {
    const now = await api.chain.gateway.now();
    const k = await api.admin.createContract({
      title: "Dead man",
      event: "A vs B",
      sport: "football",
      competition: "Cup",
      startsAt: Number(now + 3_600n),
      cutoffAt: now + 3_600n,
      resolutionDeadline: now + 90_000n,
      sideALabel: "A",
      sideBLabel: "B",
      visuals: [],
    });
    const u = await makeUser(api, 100n * UNIT);
    const call = async (path: string, body: unknown) => {
      const r = await fetch(`${api.url}/api/bets-usdc/offers${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${u.token}` },
        body: JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    const offers: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call("/", createBody(k));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      offers.push(r.body.offerAddress as string);
    }
    const open = async () =>
      Number((await db.query("SELECT count(*)::int AS n FROM offers WHERE creator = $1 AND status = 'Open'", [u.user.wallet.toBase58()])).rows[0].n);
    await until(async () => ((await open()) === 5 ? true : null), 60_000, 100);

    const armed = await call("/dead-man-switch", { timeoutSeconds: 10 });
    expect(armed.status, JSON.stringify(armed.body)).toBe(200);
    const t0 = Date.parse(armed.body.deadlineAt as string);
    const sig = await procs[0].exited; // the fail point: its first close landed, then SIGKILL
    const killedMs = Date.now() - t0;
    expect(sig).toBe("SIGKILL");
    expect(procs[0].out).toContain(`${FAIL_POINT_ENV}: reached write-after-send, SIGKILL`);
    await until(async () => ((await acting()) === procs[1] ? true : null), 30_000, 50);
    const row = await until(
      async () => {
        const r = (await db.query("SELECT state, reason, result_json FROM dead_man_switches WHERE user_id = $1", [u.user.id])).rows[0];
        return r?.state === "fired" ? r : null;
      },
      60_000,
      100,
    );
    const firedMs = Date.now() - t0;
    await until(async () => ((await open()) === 0 ? true : null), 60_000, 100);
    const closedMs = Date.now() - t0;
    const result = JSON.parse(row.result_json as string) as { requested: number; closed: number; results: { signature: string }[] };
    expect(result).toMatchObject({ requested: 5, closed: 5 });
    expect(row.reason).toMatch(/no heartbeat for 10 s/);
    // Each offer closed by exactly one transaction: one close record each, with the signature of the answer.
    const closes = (await db.query("SELECT offer, signature FROM offer_closes WHERE offer = ANY($1)", [offers])).rows;
    expect(closes).toHaveLength(5);
    expect(new Set(closes.map((c) => c.signature as string))).toEqual(new Set(result.results.map((r) => r.signature)));
    console.log(
      `dead-man switch, deadline + ${killedMs} ms: the acting worker killed (SIGKILL) after its first close landed; the standby fired the switch at + ${firedMs} ms, all 5 offers indexed Closed at + ${closedMs} ms (worker period 5 s)`,
    );
  }, 300_000);
});
