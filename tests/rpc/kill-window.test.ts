/**
 * The kill window (issue 21, item 8): `scripts/start.ts --rpc` against solana-test-validator, killed
 * by its TEST fail point (service/writes/fail-point.ts, OFFERS_TEST_FAIL_POINT) at each step of a
 * write, restarted on the same store, and retried with the same idempotencyKey:
 * - killed after the chain accepted a create, then a take (before any answer or confirmation):
 *   the retry after restart returns the response recorded before sending (same offer, same
 *   signature), read from the chain at once, and the stake was debited once;
 * - killed after recording but before sending (nothing on chain): the retry sends it, once;
 * - killed before recording (a `reserved` row, nothing signed on chain): the retry answers 409
 *   "in progress" with Retry-After, and nothing moved.
 * Balances are read from the validator. Skipped without the validator binary.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair, PublicKey, type Connection } from "@solana/web3.js";
import { RpcEngine } from "../../harness/rpc-engine";
import { TestValidator, validatorBinary } from "../../harness/validator";
import type { Kysely } from "kysely";
import { openStore } from "../../indexer/store/db";
import type { CustodyDatabase } from "../../service/custody/schema";
import { FAIL_POINT_ENV, type WriteFailPoint } from "../../service/writes/fail-point";
import { until, printedBy, untilUp } from "../support/wait";
import { freePorts } from "../support/ports";

const ROOT = join(import.meta.dirname, "..", "..");
const UNIT = 1_000_000n;
const binary = validatorBinary();

interface Res {
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

describe.skipIf(!binary)("a write killed between sending and confirmation, on solana-test-validator", () => {
  let validator: TestValidator | null = null;
  let child: ChildProcess | null = null;
  const data = mkdtempSync(join(tmpdir(), "kill-window-"));
  const keyDir = mkdtempSync(join(tmpdir(), "kill-window-key-"));
  // One pair of ports for every restart: the service comes back where its clients knew it.
  let port = 0;
  let api = "";
  beforeAll(async () => {
    [port] = await freePorts(2);
    api = `http://127.0.0.1:${port}/api/bets-usdc/offers`;
  });
  afterAll(async () => {
    child?.kill("SIGKILL");
    await validator?.stop();
    rmSync(data, { recursive: true, force: true });
    rmSync(keyDir, { recursive: true, force: true });
  });

  /** Starts the service on the data directory, with `failPoint` armed (or none); resolves once it serves. */
  async function start(env: NodeJS.ProcessEnv, failPoint: WriteFailPoint | null, init = false): Promise<{ exited: Promise<NodeJS.Signals | number | null> }> {
    const args = ["--import", "tsx", "scripts/start.ts", "--rpc", validator!.rpcUrl, "--port", String(port), "--admin-port", String(port + 1), "--data", data];
    const c = spawn(process.execPath, init ? [...args, "--init"] : args, {
      cwd: ROOT,
      env: { ...env, LOG_LEVEL: "warn", ...(failPoint ? { [FAIL_POINT_ENV]: failPoint } : {}) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = c;
    const printed = printedBy(c);
    const exited = new Promise<NodeJS.Signals | number | null>((r) => c.once("exit", (code, signal) => r(signal ?? code)));
    const t0 = performance.now();
    await untilUp(c, printed, "Service up against");
    console.log(`kill window: started (${failPoint ?? "unarmed"}) in ${(performance.now() - t0).toFixed(0)} ms`);
    if (failPoint) expect(printed.all).toContain(`${FAIL_POINT_ENV}=${failPoint}: TEST fail point armed`);
    return { exited };
  }

  async function call(path: string, body: unknown, token: string): Promise<Res> {
    const r = await fetch(`${api}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: r.status, retryAfter: r.headers.get("retry-after"), body: (await r.json()) as Record<string, unknown> };
  }

  /** A write the armed fail point kills: no answer comes back, and the process dies of SIGKILL. */
  async function killedBy(path: string, body: unknown, token: string, exited: Promise<unknown>): Promise<void> {
    await expect(call(path, body, token)).rejects.toThrow();
    expect(await exited).toBe("SIGKILL");
    child = null;
  }

  /** The operator endpoint the running service announced in <data>/admin.json. */
  async function operator(cmd: Record<string, unknown>): Promise<Record<string, string>> {
    const { adminUrl, adminToken } = JSON.parse(readFileSync(join(data, "admin.json"), "utf8")) as { adminUrl: string; adminToken: string };
    const r = await fetch(`${adminUrl}/admin`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(cmd),
    });
    const b = (await r.json()) as { result: Record<string, string>; error?: string };
    expect(r.status, b.error).toBe(200);
    return b.result;
  }

  /** The idempotency row the killed process left (read from the store while no process runs). */
  async function row(userId: string, key: string) {
    const store = await openStore(join(data, "store.sqlite"));
    try {
      const db = store.db as unknown as Kysely<CustodyDatabase>;
      return await db.selectFrom("idempotency").selectAll().where("user_id", "=", userId).where("idem_key", "=", key).executeTakeFirstOrThrow();
    } finally {
      await store.close();
    }
  }

  const balance = async (conn: Connection, account: string) => BigInt((await conn.getTokenAccountBalance(new PublicKey(account), "confirmed")).value.amount);
  /** Waits until `signature` is confirmed on the validator; throws if it failed. */
  const confirmed = (conn: Connection, signature: string) =>
    until(async () => {
      const st = await landed(conn, signature);
      if (st?.err) throw new Error(`${signature} failed: ${JSON.stringify(st.err)}`);
      return st?.confirmationStatus === "confirmed" || st?.confirmationStatus === "finalized" ? true : null;
    }, 30_000);
  const landed = async (conn: Connection, signature: string) => (await conn.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0];

  /** The retry of a killed write on the restarted service, timed from the first request to its answer. */
  async function retry(label: string, path: string, body: unknown, token: string): Promise<Res> {
    const t0 = performance.now();
    const r = await call(path, body, token);
    console.log(`kill window: ${label} answered ${r.status} ${(performance.now() - t0).toFixed(0)} ms after restart`);
    return r;
  }

  it("a retry after the crash returns the recorded result, read from the chain, and acts once", async () => {
    const service = Keypair.generate();
    validator = await TestValidator.start({ upgradeAuthority: service });
    const conn = validator.connection();
    await new RpcEngine(conn, validator.payer).fund(service.publicKey, 100_000_000_000n);
    writeFileSync(join(keyDir, "service.key"), randomBytes(32).toString("hex") + "\n", { mode: 0o600 });
    const env = { ...process.env, SERVICE_WALLET: JSON.stringify([...service.secretKey]), SERVICE_KEY_FILE: join(keyDir, "service.key") };

    // 1. Armed after sending. Two users and a contract through the operator endpoint, then a create that dies.
    let run = await start(env, "write-after-send", true);
    const [alice, bob] = [await operator({ op: "create-user", name: "alice" }), await operator({ op: "create-user", name: "bob" })];
    for (const u of [alice, bob]) await operator({ op: "fund", user: u.name, micros: String(100n * UNIT) });
    const tokenOf = async (u: Record<string, string>) => /pat_[\w-]+/.exec(JSON.stringify(await operator({ op: "issue-token", user: u.name })))![0];
    const [aliceToken, bobToken] = [await tokenOf(alice), await tokenOf(bob)];
    const contract = (
      await operator({
        op: "create-contract",
        title: "Final",
        event: "A vs B",
        sport: "football",
        competition: "Cup",
        sideALabel: "A",
        sideBLabel: "B",
        cutoffIn: 3600,
        deadlineAfter: 86_400,
      })
    ).address;
    await until(async () => {
      const r = await fetch(`${api}/contracts`);
      const b = (await r.json()) as { contracts?: { address: string }[] };
      return b.contracts?.some((k) => k.address === contract) ? true : null;
    }, 60_000);
    const create = (key: string) => ({
      contractAddress: contract,
      creatorOutcome: "sideA",
      creatorTotalMicros: String(8n * UNIT),
      takerTargetMicros: String(10n * UNIT),
      minimumTakeMicros: String(UNIT),
      expectedFeeBps: 1000,
      idempotencyKey: key,
    });
    await killedBy("/", create("kill-create-1"), aliceToken, run.exited);
    const created = await row(alice.id, "kill-create-1");
    expect(created.state).toBe("submitted");
    const sentCreate = JSON.parse(created.response_json!) as Record<string, string>;
    expect(sentCreate.signature).toBe(created.signature);

    // 2. Armed after sending again: the create's retry answers what was recorded, then a take dies.
    run = await start(env, "write-after-send");
    const again = await retry("create killed after sending", "/", create("kill-create-1"), aliceToken);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toEqual(sentCreate);
    await confirmed(conn, sentCreate.signature);
    expect(await balance(conn, alice.tokenAccount)).toBe(92n * UNIT);
    expect((await call("/", create("kill-create-1"), aliceToken)).body).toEqual(sentCreate);
    const offer = sentCreate.offerAddress;
    const take = { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: "kill-take-1" };
    await killedBy(`/${offer}/take`, take, bobToken, run.exited);
    const took = await row(bob.id, "kill-take-1");
    expect(took.state).toBe("submitted");
    const sentTake = JSON.parse(took.response_json!) as Record<string, string>;

    // 3. Armed before sending: the take's retry answers what was recorded; a second create dies unsent.
    run = await start(env, "write-before-send");
    const tookAgain = await retry("take killed after sending", `/${offer}/take`, take, bobToken);
    expect(tookAgain.status, JSON.stringify(tookAgain.body)).toBe(200);
    expect(tookAgain.body).toEqual(sentTake);
    expect(sentTake).toMatchObject({ offerAddress: offer, takeAmountMicros: String(5n * UNIT), creatorMatchedMicros: String(4n * UNIT) });
    await confirmed(conn, sentTake.signature);
    expect(await balance(conn, bob.tokenAccount)).toBe(95n * UNIT);
    await killedBy("/", create("kill-create-2"), aliceToken, run.exited);
    const unsent = await row(alice.id, "kill-create-2");
    expect(unsent.state).toBe("submitted");
    expect(await landed(conn, unsent.signature!)).toBeNull();
    expect(await balance(conn, alice.tokenAccount)).toBe(92n * UNIT);

    // 4. Armed before recording: the unsent create's retry sends it, once; a third create dies before its record.
    run = await start(env, "write-before-record");
    const sent = await retry("create killed before sending", "/", create("kill-create-2"), aliceToken);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    // Its blockhash still valid, the recorded bytes go as they are (same signature); else re-signed.
    const unsentResponse = JSON.parse(unsent.response_json!) as Record<string, string>;
    expect(sent.body).toEqual(sent.body.signature === unsent.signature ? unsentResponse : { ...unsentResponse, signature: sent.body.signature });
    console.log(
      `kill window: the unsent create went ${sent.body.signature === unsent.signature ? "as recorded (same signature)" : "re-signed (its blockhash expired)"}`,
    );
    await confirmed(conn, sent.body.signature as string);
    expect(await balance(conn, alice.tokenAccount)).toBe(84n * UNIT);
    expect((await call("/", create("kill-create-2"), aliceToken)).body).toEqual(sent.body);
    await killedBy("/", create("kill-create-3"), aliceToken, run.exited);
    const reserved = await row(alice.id, "kill-create-3");
    expect(reserved).toMatchObject({ state: "reserved", signature: null, tx_base64: null });

    // 5. Unarmed: the reserved key (nothing was sent for it) is "in progress" until its takeover.
    run = await start(env, null);
    const age = Math.floor(Date.now() / 1000) - Number(reserved.updated_at);
    const busy = await retry("create killed before recording", "/", create("kill-create-3"), aliceToken);
    if (age < 58) {
      expect(busy.status, JSON.stringify(busy.body)).toBe(409);
      expect(busy.body.error).toMatch(/in progress/);
      expect(Number(busy.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(busy.retryAfter)).toBeLessThanOrEqual(60 - age + 1);
      expect(await balance(conn, alice.tokenAccount)).toBe(84n * UNIT);
    } else {
      // A restart slower than the takeover (a loaded machine): the retry took the key over and acted once.
      console.log(`kill window: the restart took ${age} s, past the 60 s takeover`);
      expect(busy.status, JSON.stringify(busy.body)).toBe(200);
      await confirmed(conn, busy.body.signature as string);
      expect(await balance(conn, alice.tokenAccount)).toBe(76n * UNIT);
    }
    // Each take moved bob's stake once.
    expect(await balance(conn, bob.tokenAccount)).toBe(95n * UNIT);
    child!.kill("SIGINT");
    expect(await run.exited).toBe(0);
    child = null;
  }, 600_000);
});
