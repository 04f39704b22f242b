/**
 * The README's start command as a user runs it: scripts/start.ts in a child process, then the
 * printed example calls replayed as printed in bash (contracts, browse, create, take and close of
 * the created offer, GraphQL, embed), the same calls over HTTP, a chain clock on wall time after
 * seeding, then Ctrl-C (SIGINT) and a clean exit.
 */
import { afterAll, describe, expect, it } from "vitest";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until, printedBy, untilUp } from "../support/wait";
import { freePorts } from "../support/ports";

const root = join(import.meta.dirname, "..", "..");
let child: ChildProcess | null = null;
afterAll(() => child?.kill("SIGKILL"));

describe("npm start (scripts/start.ts)", () => {
  it("brings the stack up with demo data, serves the printed examples and stops on Ctrl-C", async () => {
    const [port] = await freePorts(2);
    const data = mkdtempSync(join(tmpdir(), "stack-"));
    child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--port", String(port), "--admin-port", String(port + 1), "--data", data], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const server = printedBy(child);
    await untilUp(child, server, "Try:");
    const out = server.all;
    const tokens = Object.fromEntries([...out.matchAll(/user (\w+)\s+wallet \w+\s+token (pat_[\w-]+)/g)].map((m) => [m[1], m[2]]));
    expect(Object.keys(tokens)).toEqual(["alice", "bob", "carol", "dave"]);
    const api = `http://127.0.0.1:${port}/api/bets-usdc/offers`;
    const json = async (path: string, init: RequestInit = {}) => {
      const r = await fetch(`${api}${path}`, init);
      return { status: r.status, body: (await r.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    // The printed commands run as printed (no placeholders the shell would read as redirects).
    const printed = out.slice(out.indexOf("Try:") + "Try:".length).split("\n(each pool")[0];
    expect(printed).not.toMatch(/[<>]/);
    const replay = spawnSync("bash", ["-c", `set -eo pipefail\n${printed}`], {
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH}` },
    });
    expect(replay.status, replay.stderr + replay.stdout).toBe(0);
    const replayed = /offer (\w{32,44})/.exec(replay.stdout)![1];
    expect(replay.stdout).not.toMatch(/"error":"/); // the embed answer carries "error":null
    expect(replay.stdout).toMatch(/HTTP\/1\.1 200/);
    const done = await until(async () => {
      const r = await json(`/${replayed}`);
      return r.body.status === "Closed" ? r : null;
    });
    expect(done.body.takerFilledMicros).toBe("5000000");
    // Seeding left the chain clock on wall time: nothing was created in the future.
    const wall = Date.now();
    const browse = await json("/?pageSize=50");
    for (const o of browse.body.offers as { createdAt: string }[]) expect(Date.parse(o.createdAt)).toBeLessThanOrEqual(wall + 2_000);
    const contracts = await json("/contracts");
    expect(contracts.status).toBe(200);
    expect(new Set(contracts.body.contracts.map((c: { sport: string }) => c.sport)).size).toBeGreaterThanOrEqual(4);
    const results = await json("/?view=results");
    expect(results.body.offers.some((o: { status: string }) => o.status === "Settled")).toBe(true);
    const post = (path: string, token: string, body: object) =>
      json(path, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const created = await post("/", tokens.alice, {
      contractAddress: contracts.body.contracts[0].address,
      creatorOutcome: "sideA",
      creatorTotalMicros: "8000000",
      takerTargetMicros: "10000000",
      minimumTakeMicros: "1000000",
      expectedFeeBps: 1000,
      idempotencyKey: "stack-test-create",
    });
    expect(created).toMatchObject({ status: 200, body: { status: "pending" } });
    const offer = created.body.offerAddress;
    await until(async () =>
      (await json(`/${offer}`, { headers: { authorization: `Bearer ${tokens.alice}` } })).body.viewer?.role === "creator" ? true : null,
    );
    expect((await post(`/${offer}/take`, tokens.bob, { takeAmountMicros: "5000000", expectedRevision: "1", idempotencyKey: "stack-test-take" })).status).toBe(
      200,
    );
    await until(async () => ((await json(`/${offer}`, { headers: { authorization: `Bearer ${tokens.bob}` } })).body.viewer?.position ? true : null));
    expect((await post(`/${offer}/close`, tokens.alice, { expectedRevision: "2", idempotencyKey: "stack-test-close" })).status).toBe(200);
    const closed = await until(async () => {
      const r = await json(`/${offer}`);
      return r.body.status === "Closed" && r.body.closedAt ? r : null;
    });
    expect(closed.body.takerFilledMicros).toBe("5000000");
    expect(closed.body.remainingTakerMicros).toBe("0");
    const g = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ offers(first: 3) { totalCount } }" }),
    });
    expect(((await g.json()) as { data: { offers: { totalCount: number } } }).data.offers.totalCount).toBeGreaterThan(3);
    const exited = new Promise<number | null>((r) => child!.on("exit", (code) => r(code)));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    child = null;
  });
});
