/**
 * `scripts/start.ts --rpc <url> --init` as an operator runs it against a fresh validator: the
 * service comes up on the network parts, the operator CLI (scripts/admin.ts) creates and funds a
 * user, issues a token and creates a contract through it, the user's offer goes through REST to
 * the chain and comes back through the RPC indexer; Ctrl-C stops it cleanly. Skipped without the
 * validator binary.
 */
import { afterAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { RpcEngine } from "../../harness/rpc-engine";
import { TestValidator, validatorBinary } from "../../harness/validator";
import { until, printedBy, untilUp } from "../support/wait";
import { freePorts } from "../support/ports";
import { runScript } from "../support/scripts";

const ROOT = join(import.meta.dirname, "..", "..");
const binary = validatorBinary();

describe.skipIf(!binary)("scripts/start.ts --rpc against solana-test-validator", () => {
  let validator: TestValidator | null = null;
  let child: ChildProcess | null = null;
  const data = mkdtempSync(join(tmpdir(), "stack-rpc-"));
  afterAll(async () => {
    child?.kill("SIGKILL");
    await validator?.stop();
    rmSync(data, { recursive: true, force: true });
  });

  it("serves the API over the validator, operated with the admin CLI, and stops on Ctrl-C", async () => {
    // The service deploys: it is both programs' upgrade authority, so it may initialise the Configs.
    const service = Keypair.generate();
    validator = await TestValidator.start({ upgradeAuthority: service });
    await new RpcEngine(validator.connection(), validator.payer).fund(service.publicKey, 100_000_000_000n);
    const [port] = await freePorts(2);
    // Against a cluster the service key comes from outside the data directory, never generated.
    const keyDir = mkdtempSync(join(tmpdir(), "service-key-"));
    writeFileSync(join(keyDir, "service.key"), randomBytes(32).toString("hex") + "\n", { mode: 0o600 });
    const env = { ...process.env, SERVICE_WALLET: JSON.stringify([...service.secretKey]), SERVICE_KEY_FILE: join(keyDir, "service.key") };
    child = spawn(
      process.execPath,
      ["--import", "tsx", "scripts/start.ts", "--rpc", validator.rpcUrl, "--init", "--port", String(port), "--admin-port", String(port + 1), "--data", data],
      { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    const printed = printedBy(child);
    await untilUp(child, printed, "Service up against");
    expect(printed.all).toContain(service.publicKey.toBase58());
    expect(existsSync(join(data, "service.key"))).toBe(false);

    const api = `http://127.0.0.1:${port}/api/bets-usdc/offers`;
    const json = async (path: string, init: RequestInit = {}) => {
      const r = await fetch(`${api}${path}`, init);
      return { status: r.status, body: (await r.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    // Settings come from the Configs --init created on the validator.
    const empty = await until(async () => {
      const r = await json("/contracts");
      return r.status === 200 && r.body.offersEnabled === true ? r : null;
    }, 60_000);
    expect(empty.body).toMatchObject({ feeBps: 1000, contracts: [] });

    const admin = async (...args: string[]) => {
      const r = await runScript(["scripts/admin.ts", "--data", data, ...args], { cwd: ROOT, env, timeout: 120_000 });
      expect(r.status, r.stderr + r.stdout).toBe(0);
      return r.stdout;
    };
    await admin("create-user", "alice");
    await admin("fund", "alice", "100000000");
    const token = /pat_[\w-]+/.exec(await admin("issue-token", "alice"))![0];
    await admin(
      "create-contract",
      "--title",
      "Final",
      "--event",
      "A vs B",
      "--sport",
      "football",
      "--competition",
      "Cup",
      "--side-a",
      "A",
      "--side-b",
      "B",
      "--cutoff-in",
      "3600",
    );
    const contracts = await until(async () => {
      const r = await json("/contracts");
      return r.body.contracts?.length === 1 ? r : null;
    }, 60_000);
    const contract = contracts.body.contracts[0];
    expect(contract).toMatchObject({ title: "Final", sport: "football" });

    const created = await json("/", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        contractAddress: contract.address,
        creatorOutcome: "sideA",
        creatorTotalMicros: "8000000",
        takerTargetMicros: "10000000",
        minimumTakeMicros: "1000000",
        expectedFeeBps: 1000,
        idempotencyKey: "rpc-stack-create",
      }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const offer = await until(async () => {
      const r = await json(`/${created.body.offerAddress}`, { headers: { authorization: `Bearer ${token}` } });
      return r.status === 200 && r.body.viewer?.role === "creator" ? r : null;
    }, 60_000);
    expect(offer.body).toMatchObject({ status: "Open", creatorTotalMicros: "8000000", remainingTakerMicros: "10000000" });

    const exited = new Promise<number | null>((r) => child!.once("exit", (code) => r(code)));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    child = null;
  }, 300_000);
});
