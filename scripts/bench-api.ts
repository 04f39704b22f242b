/**
 * Read API throughput over loopback: autocannon (a separate process, so the load generator
 * shares the two cores as the issue asks) against the running server, for the browse page, one
 * offer, a GraphQL page of 50 offers and the pool embed endpoint; each beside the same query
 * served by a bare node:http + better-sqlite3 handler on the same SQLite file, in the same run.
 *
 *   npx tsx scripts/bench-api.ts [--offers 300] [--duration 10] [--connections 10]
 */
import { Command } from "commander";
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { startLocalStack } from "../stack/local-stack";
import { createApp } from "../graphql/server";
import { ReadService } from "../service/read/read-service";
import { seedPools } from "./seed-pools";

const o = new Command()
  .option("--offers <n>", "offers to create", "300")
  .option("--duration <s>", "seconds per run", "10")
  .option("--connections <n>", "concurrent connections", "10")
  .parse()
  .opts<{ offers: string; duration: string; connections: string }>();
const run = promisify(execFile);
const UNIT = 1_000_000n;

interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(url: string, post?: string): Promise<Result> {
  const args = ["-j", "-c", o.connections, "-d", o.duration, url];
  if (post) args.unshift("-m", "POST", "-H", "content-type=application/json", "-b", post);
  const { stdout } = await run(join(import.meta.dirname, "..", "node_modules", ".bin", "autocannon"), args, { maxBuffer: 1 << 24 });
  const j = JSON.parse(stdout) as { requests: { average: number }; latency: { p50: number; p99: number }; errors: number; non2xx: number };
  return { rps: j.requests.average, p50: j.latency.p50, p99: j.latency.p99, errors: j.errors, non2xx: j.non2xx };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "bench-api-"));
  const storeFile = join(dir, "store.sqlite");
  let read!: ReadService;
  const s = await startLocalStack({
    storeUrl: storeFile,
    app: (parts) => {
      read = new ReadService({ db: parts.db, now: async () => Number(await parts.chain.gateway.now()), publicBaseUrl: "https://offers.example" });
      return createApp({ read, custody: parts.custody, writes: parts.writes, graphiql: false });
    },
  });
  // Data: one creator, many contracts with catalog rows, N offers created through the program.
  const u = await s.admin.createUser("bench", "Bench");
  await s.admin.fund("bench", 1_000_000n * UNIT);
  const { token } = await s.custody.issueToken(u.id);
  const p = await s.writes.authorize(`Bearer ${token}`);
  const now = await s.chain.gateway.now();
  const contracts = [];
  for (let i = 0; i < 10; i++) {
    contracts.push(
      await s.admin.createContract({
        title: `Match ${i}: will the home side win?`,
        event: `Home ${i} vs Away ${i}`,
        sport: ["football", "basketball"][i % 2],
        competition: "League",
        startsAt: Number(now + 86_400n),
        cutoffAt: now + 86_400n,
        resolutionDeadline: now + 172_800n,
        sideALabel: "Home",
        sideBLabel: "Away",
      }),
    );
  }
  let offer = "";
  for (let i = 0; i < Number(o.offers); i++) {
    const r = await s.writes.create(p, {
      contractAddress: contracts[i % 10].toBase58(),
      creatorOutcome: "sideA",
      creatorTotalMicros: String(BigInt(1 + (i % 50)) * UNIT),
      takerTargetMicros: String(BigInt(2 + (i % 50)) * UNIT),
      minimumTakeMicros: String(UNIT),
      expectedFeeBps: 1000,
      idempotencyKey: `bench-${i}-offer`,
    });
    await s.chain.gateway.waitFor(r.signature);
    offer = r.offerAddress;
  }
  await s.admin.createUser("alice", "Alice");
  await s.admin.createUser("bob", "Bob");
  await s.admin.createUser("carol", "Carol");
  await s.admin.createUser("dave", "Dave");
  for (const n of ["alice", "bob", "carol", "dave"]) await s.admin.fund(n, 1_000n * UNIT);
  const poolSlug = (await seedPools(s)).slugs[0];
  await new Promise((r) => setTimeout(r, 500));

  // The bare handler: the same SQL, shaped minimally, on a second connection to the same file.
  const db = new Database(storeFile, { readonly: true });
  const browse = db.prepare(
    `select o.*, c.cutoff_at, cc.title, cc.sport, cc.side_a_label, cc.side_b_label from offers o join contracts c on c.address = o.contract left join contract_catalog cc on cc.contract = o.contract order by o.created_at desc, o.address limit ? offset 0`,
  );
  const count = db.prepare(`select count(*) n from offers o join contracts c on c.address = o.contract`);
  const one = db.prepare(
    `select o.*, c.cutoff_at, cc.title, cc.side_a_label, cc.side_b_label from offers o join contracts c on c.address = o.contract left join contract_catalog cc on cc.contract = o.contract where o.address = ?`,
  );
  const pool = db.prepare(`select p.*, pc.slug from pool_catalog pc join pools p on p.address = pc.pool where pc.slug = ?`);
  const outcomes = db.prepare(`select * from pool_outcomes where pool = ? order by outcome_index`);
  const bare = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    let body: unknown;
    if (url.pathname === "/browse") body = { offers: browse.all(20), total: (count.get() as { n: number }).n };
    else if (url.pathname === "/offer") body = one.get(url.searchParams.get("a"));
    else if (url.pathname === "/gql50") body = { data: { offers: browse.all(50) } };
    else if (url.pathname === "/embed") {
      const p = pool.get(url.searchParams.get("s")) as { address: string } | undefined;
      body = { data: p ? { ...p, outcomes: outcomes.all(p.address) } : null, error: null };
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => bare.listen(0, "127.0.0.1", r));
  const bareUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}`;

  const gql50 = JSON.stringify({
    query:
      "{ offers(first: 50) { totalCount edges { node { address status revision remainingTakerMicros creatorTotalMicros takerTargetMicros termsGuardrail { status } contract { title sport cutoffAt } viewer { role canTake } } } } }",
  });
  const cases: [string, () => Promise<Result>, () => Promise<Result>, { rps: number; p99?: number }][] = [
    ["browse page (GET /?pageSize=20)", () => load(`${s.url}/api/bets-usdc/offers/?pageSize=20`), () => load(`${bareUrl}/browse`), { rps: 1500, p99: 25 }],
    ["one offer (GET /<address>)", () => load(`${s.url}/api/bets-usdc/offers/${offer}`), () => load(`${bareUrl}/offer?a=${offer}`), { rps: 0 }],
    ["GraphQL page of 50 offers", () => load(`${s.url}/graphql`, gql50), () => load(`${bareUrl}/gql50`), { rps: 1000, p99: 40 }],
  ];
  if (poolSlug)
    cases.push([
      "embed (GET /api/embed/v1/polls/<slug>, cached)",
      () => load(`${s.url}/api/embed/v1/polls/${poolSlug}`),
      () => load(`${bareUrl}/embed?s=${poolSlug}`),
      { rps: 5000 },
    ]);
  console.log(`${o.offers} offers indexed; autocannon -c ${o.connections} -d ${o.duration} per run; 2 cores shared by server and load generator\n`);
  console.log("| endpoint | req/s | p50 ms | p99 ms | bare req/s | bare p99 ms | ratio | target |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---|");
  for (const [name, ours, theirs, t] of cases) {
    const a = await ours();
    const b = await theirs();
    if (a.errors || a.non2xx) throw new Error(`${name}: ${a.errors} errors, ${a.non2xx} non-2xx`);
    const ratio = a.rps / b.rps;
    const ok = a.rps >= t.rps && (t.p99 === undefined || a.p99 <= t.p99) && ratio >= 0.5;
    const target = `${t.rps ? `>= ${t.rps} req/s` : ""}${t.p99 ? `, p99 <= ${t.p99} ms` : ""}${t.rps ? ", " : ""}>= 0.5 of bare: ${ok ? "met" : "NOT met"}`;
    console.log(`| ${name} | ${a.rps.toFixed(0)} | ${a.p50} | ${a.p99} | ${b.rps.toFixed(0)} | ${b.p99} | ${ratio.toFixed(2)} | ${target} |`);
  }
  bare.close();
  db.close();
  await s.stop();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
