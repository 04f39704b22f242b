/**
 * The "Build a client" programs of docs/api-guide.md, run as a reader runs them: each ```js block
 * named `<file>.mjs` is written to a folder of its own and started with plain `node` (the Node
 * this repository names, no TypeScript, no test runner), against a real local stack over HTTP and
 * WebSocket. A guide that drifts from the API (a renamed field, a changed argument, a transport
 * detail such as graphql-ws needing `webSocketImpl` on Node 20) fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { PublicKey } from "@solana/web3.js";
import { apiStack, type ApiStack, contract, key, makeUser, UNIT, type TestUser } from "../support/stack";
import { getJson, post } from "../support/http";
import { until } from "../support/wait";

const root = resolve(import.meta.dirname, "..", "..");
const guide = readFileSync(join(root, "docs", "api-guide.md"), "utf8");
/** The guide's runnable blocks: ```js <name>.mjs ... ``` */
const blocks = new Map([...guide.matchAll(/^```js (\S+\.mjs)\n([\s\S]*?)^```$/gm)].map((m) => [m[1], m[2]]));

let s: ApiStack;
let dir: string;
let creator: TestUser, taker: TestUser;
let market: PublicKey;

/** Runs a block with `node`, as `node <file>` in a folder where graphql-ws and ws are installed. */
async function run(file: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [file], {
    cwd: dir,
    env: { PATH: process.env.PATH, BASE_URL: s.url, ...env },
    timeout: 60_000,
  });
  return stdout;
}

beforeAll(async () => {
  s = await apiStack();
  [creator, taker] = [await makeUser(s), await makeUser(s)];
  market = await contract(s);
  dir = mkdtempSync(join(tmpdir(), "client-guide-"));
  // The reader's folder "where npm install graphql-ws ws has run": this repository's packages.
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  for (const [name, code] of blocks) writeFileSync(join(dir, name), code);
});
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await s?.stop();
});

describe("Build a client (docs/api-guide.md)", () => {
  it("has the three programs the section promises", () => {
    expect([...blocks.keys()]).toEqual(["query.mjs", "create-offer.mjs", "watch-offer.mjs"]);
  });

  it("query.mjs lists the settings, the open contracts and the open offers", async () => {
    const out = await run("query.mjs", {});
    expect(out).toMatch(/^fee 1000 bps; 1 open contracts; 0 open offers$/m);
    expect(out).toContain(`contract ${market.toBase58()} Will the home side win?`);
  });

  it("create-offer.mjs creates an offer with the caller's token, and watch-offer.mjs follows it over graphql-ws", async () => {
    const created = await run("create-offer.mjs", { TOKEN: creator.token });
    const address = /^pending: offer (\w+) on "Will the home side win\?" \(tx \w+\)$/m.exec(created)?.[1];
    expect(address).toBeDefined();
    // The write is the creator's: once indexed, the offer reads as theirs, with the guide's terms.
    const offer = await until(async () => {
      const r = await getJson(s, `/api/bets-usdc/offers/${address}`, { token: creator.token });
      return r.status === 200 ? r.body : null;
    });
    expect([offer.viewer.role, offer.creatorTotalMicros, offer.takerTargetMicros]).toEqual(["creator", "8000000", "10000000"]);
    expect((await run("query.mjs", {})).split("\n")).toContain(`offer ${address} 10000000 left at revision 1`);

    // Subscribed (as the taker), the program prints the offer now, then the take, then stops.
    const watch = spawn(process.execPath, ["watch-offer.mjs"], {
      cwd: dir,
      env: { PATH: process.env.PATH, BASE_URL: s.url, OFFER: address!, LIMIT: "2", TOKEN: taker.token },
    });
    let out = "";
    let err = "";
    watch.stdout.on("data", (d: Buffer) => (out += d.toString()));
    watch.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((r) => watch.on("exit", r));
    try {
      await until(async () => out.includes("\n"), 30_000);
      expect(out).toBe("revision 1: Open, 0 taken, 10000000 left\n");
      const took = await post(s, `/${address}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
      expect(took.status, took.text).toBe(200);
      expect(await exited, err).toBe(0);
      expect(out).toBe("revision 1: Open, 0 taken, 10000000 left\nrevision 2: Open, 5000000 taken, 5000000 left\n");
    } finally {
      watch.kill();
    }
  });
});
