/**
 * The operator CLI's values on a running stack, as an operator types them (child processes):
 * the stack and the CLI both find the data directory through DATA_DIR; token lifetimes with units,
 * a 30-day default and `never`; the boolean spellings of offers-enabled; durations for the clock
 * and the cutoff.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { DEFAULT_TOKEN_TTL_SECONDS } from "../../service/custody/custody";
import { freePorts } from "../support/ports";
import { printedBy, untilUp } from "../support/wait";
import { adminJson } from "../support/scripts";

const ROOT = join(import.meta.dirname, "..", "..");

describe("admin CLI values on a running stack (DATA_DIR)", () => {
  let child: ChildProcess;
  let data: string;

  /** A command with the data directory from the environment only, as `DATA_DIR=... npm run admin` runs. */
  const cli = async (...args: string[]) => {
    return adminJson(args, { cwd: ROOT, env: { ...process.env, DATA_DIR: data }, timeout: 240_000 });
  };
  const nowSec = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    data = mkdtempSync(join(tmpdir(), "admin-strict-"));
    const [port] = await freePorts(2);
    child = spawn(
      process.execPath,
      ["--import", "tsx", join(ROOT, "scripts", "admin.ts"), "local", "--port", String(port), "--admin-port", String(port + 1), "--no-seed"],
      {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: data },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const printed = printedBy(child);
    await untilUp(child, printed, "operator");
    await cli("create-user", "erin");
  });
  afterAll(() => {
    child?.kill("SIGTERM");
    if (data) rmSync(data, { recursive: true, force: true });
  });

  it("tokens: --ttl 1h expires in an hour, no --ttl in 30 days, --ttl never does not expire", async () => {
    const t0 = nowSec();
    const [hour, fallback, never] = await Promise.all([
      cli("issue-token", "erin", "--ttl", "1h"),
      cli("issue-token", "erin"),
      cli("issue-token", "erin", "--ttl", "never"),
    ]);
    const t1 = nowSec();
    expect(hour.expiresAt).toBeGreaterThanOrEqual(t0 + 3_600);
    expect(hour.expiresAt).toBeLessThanOrEqual(t1 + 3_600);
    expect(DEFAULT_TOKEN_TTL_SECONDS).toBe(30 * 86_400);
    expect(fallback.expiresAt).toBeGreaterThanOrEqual(t0 + DEFAULT_TOKEN_TTL_SECONDS);
    expect(fallback.expiresAt).toBeLessThanOrEqual(t1 + DEFAULT_TOKEN_TTL_SECONDS);
    expect(never.expiresAt).toBeNull();
  });

  it("fund-wallet: any wallet address gets its token account of the local mint, the stablecoin and SOL", async () => {
    const wallet = Keypair.generate().publicKey.toBase58();
    const r = await cli("fund-wallet", wallet, "7000000", "--lamports", "2000000000");
    expect(r).toMatchObject({ wallet, funded: "7000000", lamports: "2000000000" });
    const again = await cli("fund-wallet", wallet, "1000000");
    expect(again.tokenAccount).toBe(r.tokenAccount); // the same associated account, created once
    expect(again.lamports).toBe("1000000000"); // 1 SOL by default
  });

  it("offers-enabled: yes/TRUE/on/1 each switch offers on (after off)", async () => {
    expect(await cli("offers-enabled", "off")).toEqual({ offersEnabled: false });
    const on = await Promise.all(["yes", "TRUE", "on", "1"].map((v) => cli("offers-enabled", v, "--fee-bps", "250")));
    expect(on).toEqual(Array(4).fill({ offersEnabled: true }));
  });

  it("advance-clock 1h and create-contract --cutoff-in 2h take durations", async () => {
    const [advanced, created] = await Promise.all([
      cli("advance-clock", "1h"),
      cli(
        "create-contract",
        "--title",
        "T",
        "--event",
        "A vs B",
        "--sport",
        "football",
        "--competition",
        "L",
        "--side-a",
        "A",
        "--side-b",
        "B",
        "--cutoff-in",
        "2h",
        "--deadline-after",
        "1d",
      ),
    ]);
    expect(advanced).toEqual({ advanced: 3_600 });
    expect(created.address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  });
});
