/**
 * Where one uncached signed-in read's time goes, by layer (`--case offer`: one offer; `browse`: the
 * browse page of 20, newest first): the same read served five ways
 * in this process, on the same store, each under the same load (autocannon in its own process),
 * in short runs interleaved in a new random order each iteration so that the machine's drift
 * falls on all of them alike:
 *
 *   bare         node:http + better-sqlite3, the SQL of the read and the viewer part (bare-reads.ts)
 *   service      node:http calling the read service (token -> viewer, ReadService.offer, JSON)
 *   hono         the same on hono over @hono/node-server: one route, no layers
 *   rest         the REST routes alone (restApi: every route in one router, validation, viewer gate)
 *   app          the whole app (createApp: request id, access log, metrics, body limit, then the above)
 *
 * Each row: median req/s, the median of the iterations' ratios to the bare run of the same
 * iteration, every ratio, and this process's CPU per answered request. Response caches are off
 * (anonymousTtlMs 0), as in bench-api's "off" rows.
 *
 *   npx tsx scripts/bench-layers.ts [--case offer|browse] [--offers 50] [--iterations 10] [--duration 1] [--connections 10] [--profile dir]
 */
import { Command, Option } from "commander";
import { createServer } from "node:http";
import { mkdtempSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Hono } from "hono";
import { startLocalStack } from "../stack/local-stack";
import { createApp, listen } from "../graphql/server";
import { restApi } from "../graphql/rest/rest-api";
import { resolveViewer } from "../service/read/viewer";
import { offersParams } from "../service/read/params";
import type { ReadService } from "../service/read/read-service";
import { durationOption, sizeOption } from "../stack/config/settings";
import { exitOnError, strictExit } from "../stack/config/cli";
import { load, type LoadResult } from "./autocannon";
import { bareReads } from "./bare-reads";
import { benchMatch, benchReads } from "./bench-fixtures";
import { profiled } from "./cpu-profile";

// Measurements, not an operated service: no access line per request unless LOG_LEVEL asks for it.
process.env.LOG_LEVEL ??= "silent";

/**
 * What each case reads: the bare handler's path, the path under `/offers` that the hono layer, the
 * REST routes and the app serve, and the read as the REST route makes it (browse: the query
 * `?pageSize=20` parsed on each request).
 */
const CASES = {
  offer: {
    title: "one offer, signed in (a taker with a position on it)",
    bare: (offer: string) => `/offer?a=${offer}`,
    path: (offer: string) => `/${offer}`,
    read: (r: ReadService, wallet: string | null, address: string) => r.offer(address, wallet),
  },
  browse: {
    title: "the browse page of 20, signed in (a taker with a position on one of them)",
    bare: () => "/browse",
    path: () => "?pageSize=20",
    read: (r: ReadService, wallet: string | null) => r.browse(offersParams({ pageSize: "20" }), wallet),
  },
};

const o = strictExit(new Command().name("bench-layers"))
  .addOption(new Option("--case <name>", "the read measured").choices(Object.keys(CASES)).default("offer"))
  .addOption(sizeOption("--offers <n>", "offers to create", 50))
  .addOption(sizeOption("--iterations <n>", "iterations; each runs every layer once, in a new random order", 10))
  .addOption(durationOption("--duration <s>", "length of each run (1, 2s)", 1))
  .addOption(sizeOption("--connections <n>", "concurrent connections", 10))
  .option("--profile <dir>", "write a CPU profile of the server (this process) for each layer's run of the first iteration")
  .parse()
  .opts<{ case: keyof typeof CASES; offers: number; iterations: number; duration: number; connections: number; profile?: string }>();
const UNIT = 1_000_000n;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

async function main() {
  const storeFile = join(mkdtempSync(join(tmpdir(), "bench-layers-")), "store.sqlite");
  const s = await startLocalStack({ storeUrl: storeFile, walletLimits: { writeBurst: 0, writesPerHour: 0, maxOpenOffers: 0, maxOpenPositions: 0 } });
  const read = benchReads(s, { anonymousTtlMs: 0 });

  // One creator's offers; the signed-in caller holds a position on the one read.
  const creator = await s.admin.createUser("bench", "Bench");
  await s.admin.fund("bench", 1_000_000n * UNIT);
  const cp = await s.writes.authorize(`Bearer ${(await s.custody.issueToken(creator.id)).token}`);
  const contract = await benchMatch(s, "Match: will the home side win?");
  let offer = "";
  for (let i = 0; i < o.offers; i++) {
    const r = await s.writes.create(cp, {
      contractAddress: contract.toBase58(),
      creatorOutcome: "sideA",
      creatorTotalMicros: String(BigInt(1 + (i % 50)) * UNIT),
      takerTargetMicros: String(BigInt(2 + (i % 50)) * UNIT),
      minimumTakeMicros: String(UNIT),
      expectedFeeBps: 1000,
      idempotencyKey: `layers-${i}`,
    });
    await s.chain.gateway.waitFor(r.signature);
    offer = r.offerAddress;
  }
  const taker = await s.admin.createUser("alice", "Alice");
  await s.admin.fund("alice", 1_000n * UNIT);
  const token = (await s.custody.issueToken(taker.id, { scopes: ["bet:read", "bet:write"] })).token;
  const tp = await s.writes.authorize(`Bearer ${token}`);
  const { revision } = await s.db.selectFrom("offers").select("revision").where("address", "=", offer).executeTakeFirstOrThrow();
  const take = await s.writes.take(tp, offer, { takeAmountMicros: String(UNIT), expectedRevision: String(revision), idempotencyKey: "layers-take" });
  await s.chain.gateway.waitFor(take.signature);
  await new Promise((r) => setTimeout(r, 500));

  const measured = CASES[o.case];
  const bare = await bareReads(storeFile);
  const service = createServer(async (req, res) => {
    const viewer = await resolveViewer(s.custody, req.headers.authorization);
    const body = JSON.stringify(await measured.read(read, viewer?.wallet ?? null, offer));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(body);
  });
  await new Promise<void>((r) => service.listen(0, "127.0.0.1", r));
  const hono = await listen(
    new Hono().get("/offers/:address?", async (c) => {
      const viewer = await resolveViewer(s.custody, c.req.header("authorization"));
      return c.json(await measured.read(read, viewer?.wallet ?? null, c.req.param("address") ?? ""));
    }),
  );
  const rest = await listen(new Hono().route("/", restApi({ read, custody: s.custody })));
  const app = await listen(createApp({ read, custody: s.custody, writes: s.writes, graphiql: false, responseCacheTtlMs: 0 }));
  const path = measured.path(offer);
  const layers = [
    { name: "bare", url: `${bare.url}${measured.bare(offer)}` },
    { name: "service", url: `http://127.0.0.1:${(service.address() as { port: number }).port}/` },
    { name: "hono", url: `${hono.url}/offers${path}` },
    { name: "rest", url: `${rest.url}/api/bets-usdc/offers${path}` },
    { name: "app", url: `${app.url}/api/bets-usdc/offers${path}` },
  ];

  const run = (url: string) => load(url, { connections: o.connections, duration: o.duration, token });
  for (const l of layers) await run(l.url); // warm every layer before measuring
  const results = new Map<string, { run: LoadResult; ratio: number }[]>(layers.map((l) => [l.name, []]));
  console.log(
    `${measured.title}, response caches off; autocannon -c ${o.connections} -d ${o.duration}, ${o.iterations} iterations; load average at the start: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(", ")}\n`,
  );
  for (let i = 0; i < o.iterations; i++) {
    const order = [...layers].sort(() => Math.random() - 0.5);
    const runs = new Map<string, LoadResult>();
    for (const l of order) runs.set(l.name, await profiled(i === 0 ? o.profile : undefined, l.name, () => run(l.url)));
    for (const l of layers) results.get(l.name)!.push({ run: runs.get(l.name)!, ratio: runs.get(l.name)!.rps / runs.get("bare")!.rps });
  }
  console.log("| layer | req/s (median) | / bare (median of iterations) | every iteration | server CPU µs per request (median) |");
  console.log("|---|---:|---:|---|---:|");
  for (const l of layers) {
    const r = results.get(l.name)!;
    console.log(
      `| ${l.name} | ${median(r.map((x) => x.run.rps)).toFixed(0)} | ${median(r.map((x) => x.ratio)).toFixed(2)} | ${r.map((x) => x.ratio.toFixed(2)).join(", ")} | ${median(r.map((x) => x.run.cpuUs)).toFixed(0)} |`,
    );
  }
  console.log(
    `\nload average at the end: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(", ")}`,
  );
  await Promise.all([bare.close(), hono.close(), rest.close(), app.close(), new Promise<void>((r) => service.close(() => r()))]);
  read.close();
  await s.stop();
}

main().then(() => process.exit(0), exitOnError);
