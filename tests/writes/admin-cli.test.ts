/**
 * The operator CLI end to end: `scripts/admin.ts local` (the same stack as `npm start`) in its
 * own process, then the commands (create-user, fund, issue-token, create-contract, block,
 * unblock, revoke-all-tokens, resolve-contract) in separate processes, and the effect seen
 * through the public API; a refused transaction reported by its program error's IDL name; a
 * description on every command and option.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { freePorts } from "../support/ports";
import { printedBy, untilUp } from "../support/wait";
import { adminJson, runScript } from "../support/scripts";

const ROOT = join(import.meta.dirname, "..", "..");
const TSX = join(ROOT, "node_modules", ".bin", "tsx");

describe("admin CLI", () => {
  let child: ChildProcess;
  let data: string;
  let api: string;

  const cli = async (...args: string[]) => {
    return adminJson(["--data", data, ...args], { cwd: ROOT, timeout: 60_000 });
  };
  const post = async (path: string, body: unknown, token: string) => {
    const r = await fetch(`${api}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Record<string, string> };
  };

  beforeAll(async () => {
    data = mkdtempSync(join(tmpdir(), "admin-cli-"));
    const [port] = await freePorts(2);
    child = spawn(TSX, [join(ROOT, "scripts", "admin.ts"), "--data", data, "local", "--port", String(port), "--admin-port", String(port + 1)], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const printed = printedBy(child);
    await untilUp(child, printed, () => printed.stdout.includes("operator"), 90_000);
    api = `http://127.0.0.1:${port}/api/bets-usdc/offers`;
  });
  afterAll(() => {
    child?.kill("SIGTERM");
    if (data) rmSync(data, { recursive: true, force: true });
  });

  it("users, funding, tokens, contracts and compliance blocks act on the running stack", async () => {
    const user = await cli("create-user", "erin", "--display-name", "Erin");
    expect(user).toMatchObject({ name: "erin", displayName: "Erin", blocked: false });
    expect(await cli("fund", "erin", "20000000")).toEqual({ funded: "20000000" });
    const { token } = (await cli("issue-token", "erin", "--ttl", "600")) as { token: string };
    expect(token).toMatch(/^pat_/);
    const { address } = (await cli(
      "create-contract",
      "--title",
      "Home wins?",
      "--event",
      "Home vs Away",
      "--sport",
      "football",
      "--competition",
      "League",
      "--side-a",
      "Home",
      "--side-b",
      "Away",
      "--cutoff-in",
      "3600",
    )) as { address: string };
    const body = {
      contractAddress: address,
      creatorOutcome: "sideA",
      creatorTotalMicros: "8000000",
      takerTargetMicros: "10000000",
      minimumTakeMicros: "1000000",
      expectedFeeBps: 1000,
    };
    const created = await post("/", { ...body, idempotencyKey: "cli-create-0001" }, token);
    expect(created.status).toBe(200);
    expect(await cli("block", "erin", "--reason", "review")).toMatchObject({ blocked: true, blockedReason: "review" });
    expect((await post("/", { ...body, idempotencyKey: "cli-create-0002" }, token)).status).toBe(403);
    expect((await post(`/${created.body.offerAddress}/close`, { expectedRevision: "1", idempotencyKey: "cli-close-0001" }, token)).status).toBe(200);
    expect(await cli("unblock", "erin")).toMatchObject({ blocked: false });
    expect((await post("/", { ...body, idempotencyKey: "cli-create-0003" }, token)).status).toBe(200);
    expect(await cli("revoke-all-tokens", "erin")).toEqual({ revoked: 1 });
    expect((await post("/", { ...body, idempotencyKey: "cli-create-0004" }, token)).status).toBe(401);

    // A transaction the program refuses: its IDL error name, no hex code or runtime logs.
    // (Resolving before the cutoff.)
    const refused = await runScript([join(ROOT, "scripts", "admin.ts"), "--data", data, "resolve-contract", address, "sideA"], { cwd: ROOT, timeout: 60_000 });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^error: transaction failed: ResolveBeforeCutoff\s*$/);
  });

  it("is the same stack as npm start: demo data and its users", async () => {
    const users = (await cli("list-users")) as unknown as { name: string }[];
    expect(users.map((u) => u.name)).toEqual(expect.arrayContaining(["alice", "bob", "carol", "dave"]));
  });

  it("describes every command and option", async () => {
    const { program } = await import("../../scripts/admin");
    const missing: string[] = [];
    const walk = (cmd: Command, path: string) => {
      for (const o of cmd.options) if (!o.description) missing.push(`${path} ${o.flags}`);
      for (const c of cmd.commands) {
        if (!c.description()) missing.push(`${path} ${c.name()}`);
        walk(c, `${path} ${c.name()}`);
      }
    };
    walk(program, "admin");
    expect(program.commands.map((c) => c.name())).toEqual(expect.arrayContaining(["local", "create-user", "resolve-contract", "rotate-service-key", "worker"]));
    expect(missing).toEqual([]);
  });

  it("issues a read-only token (--scope bet:read): reads sign in, writes get 401; an unknown scope is refused", async () => {
    await cli("create-user", "fay");
    const { token } = (await cli("issue-token", "fay", "--scope", "bet:read")) as { token: string };
    const mine = await fetch(`${api}/mine`, { headers: { authorization: `Bearer ${token}` } });
    expect(mine.status).toBe(200);
    const refused = await post("/", { contractAddress: "11111111111111111111111111111111", idempotencyKey: "cli-read-0001" }, token);
    expect(refused).toEqual({ status: 401, body: { error: "token lacks the bet:write scope", code: "UNAUTHENTICATED" } });
    await expect(cli("issue-token", "fay", "--scope", "bet:admin")).rejects.toThrow(/bet:write, bet:read/);
  });
});
