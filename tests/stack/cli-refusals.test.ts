/**
 * The entry points as an operator runs them (child processes): a value they do not understand is
 * refused with one line naming it and exit code 2, before anything is written; a second start on
 * a port in use leaves the running stack's data directory alone.
 */
import { afterAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:net";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "cli-refusals-"));
  dirs.push(d);
  return d;
};

/** Runs `scripts/<script>` with tsx; resolves with its exit code and output (never rejects on a non-zero exit). */
function run(script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", join(ROOT, "scripts", script), ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 240_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/** A refusal: exit 2 and one line on stderr naming the bad value. */
function expectRefusal(r: { code: number | null; stderr: string }, bad: string) {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trim().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toContain(bad);
}

describe("entry points refuse what they do not understand (exit 2, one line)", () => {
  it("admin: --ttl 0 / -5 / 1x, offers-enabled maybe, --fee-bps 10%, advance-clock -10, a bad amount", async () => {
    const data = tempDir(); // no stack behind it: each refusal comes before any call
    const cases: [string[], string][] = [
      [["issue-token", "u", "--ttl", "0"], "'0'"],
      [["issue-token", "u", "--ttl", "-5"], "'-5'"],
      [["issue-token", "u", "--ttl", "1x"], "'1x'"],
      [["offers-enabled", "maybe"], "'maybe'"],
      [["offers-enabled", "on", "--fee-bps", "10%"], "'10%'"],
      [["advance-clock", "--", "-10"], "'-10'"],
      [["fund", "u", "1.5"], "'1.5'"],
      [["resolve-contract", "x", "draw"], "'draw'"],
      [["fund-wallet", "not-a-wallet", "5000000"], "'not-a-wallet'"],
      [["fund-wallet", "1111111111111111111111111111111111", "5000000"], "'1111111111111111111111111111111111'"],
      [["fund-wallet", "11111111111111111111111111111111", "2.5"], "'2.5'"],
      [["fund-wallet", "11111111111111111111111111111111", "5000000", "--lamports", "1e9"], "'1e9'"],
    ];
    const results = await Promise.all(cases.map(([args]) => run("admin.ts", ["--data", data, ...args])));
    results.forEach((r, i) => expectRefusal(r, cases[i][1]));
  });

  it("admin local --help describes `admin local`, not start", async () => {
    const r = await run("admin.ts", ["local", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: admin local/);
  });

  it("start: --engine foo, TRUST_PROXY=maybe, --port abc; simulate --users abc; backfill --local abc", async () => {
    const data = join(tempDir(), "never-created");
    const [engine, proxy, port, users, local] = await Promise.all([
      run("start.ts", ["--data", data, "--engine", "foo"]),
      run("start.ts", ["--data", data], { TRUST_PROXY: "maybe" }),
      run("start.ts", ["--data", data, "--port", "abc"]),
      run("simulate.ts", ["--users", "abc"]),
      run("backfill.ts", ["--store", join(tempDir(), "b.sqlite"), "--local", "abc"]),
    ]);
    expectRefusal(engine, "'foo'");
    expectRefusal(proxy, "'maybe' from env 'TRUST_PROXY'");
    expectRefusal(port, "'abc'");
    expectRefusal(users, "'abc'");
    expectRefusal(local, "'abc'");
    expect(existsSync(data)).toBe(false);
  });

  it("a second start on a port in use says so and leaves the data directory alone", async () => {
    const data = tempDir();
    const store = join(data, "store.sqlite");
    writeFileSync(store, "the running stack's store");
    const before = statSync(store);
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen({ host: "127.0.0.1", port: 0 }, r));
    const port = (holder.address() as { port: number }).port;
    try {
      const r = await run("start.ts", ["--data", data, "--port", String(port), "--admin-port", String(port === 65_535 ? 65_534 : port + 1)]);
      expect(r.stderr.trim()).toBe(`error: port ${port} is in use; choose another with --port`);
      expect(r.code).toBe(2);
      expect(readFileSync(store, "utf8")).toBe("the running stack's store");
      expect(statSync(store).ino).toBe(before.ino);
    } finally {
      holder.close();
    }
  });
});
