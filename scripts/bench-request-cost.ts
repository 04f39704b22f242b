/**
 * The server's fixed cost per request: CPU time per answered request (this process: the app and
 * the bare handler run here, autocannon in its own process) for GET /healthz, one offer
 * (anonymous and signed in) and an unknown offer (404), with every response cache off, beside a
 * bare node:http handler that answers 1.4 KB of JSON (what one offer's answer weighs) and does
 * nothing else. The difference is what every request pays before and after its route's work:
 * node-server, hono's router and middleware (request id, access log, metrics, limits), the
 * viewer's token, validation, the response. Issue 21 measured the request scope's promise hooks
 * with it (BENCHMARKS.md).
 *
 *   npx tsx scripts/bench-request-cost.ts [--duration 4] [--connections 10] [--profile dir]
 */
import { Command } from "commander";
import { createServer } from "node:http";
import { loadavg } from "node:os";
import { startLocalStack } from "../stack/local-stack";
import { createApp, listen } from "../graphql/server";
import { durationOption, sizeOption } from "../stack/config/settings";
import { exitOnError, strictExit } from "../stack/config/cli";
import { load } from "./autocannon";
import { profiled } from "./cpu-profile";
import { benchMatch, benchReads } from "./bench-fixtures";
import { workedExampleCreate } from "../harness/api-requests";

// Measurements, not an operated service: no access line per request unless LOG_LEVEL asks for it.
process.env.LOG_LEVEL ??= "silent";

const o = strictExit(new Command().name("bench-request-cost"))
  .addOption(durationOption("--duration <s>", "length of each run (4, 30s)", 4))
  .addOption(sizeOption("--connections <n>", "concurrent connections", 10))
  .option("--profile <dir>", "write a CPU profile of the server (this process) per run")
  .parse()
  .opts<{ duration: number; connections: number; profile?: string }>();
const UNIT = 1_000_000n;

async function main() {
  const s = await startLocalStack({ walletLimits: { writeBurst: 0, writesPerHour: 0, maxOpenOffers: 0, maxOpenPositions: 0 } });
  const read = benchReads(s, { anonymousTtlMs: 0 });
  const app = await listen(createApp({ read, custody: s.custody, writes: s.writes, graphiql: false, responseCacheTtlMs: 0 }));
  const creator = await s.admin.createUser("bench", "Bench");
  await s.admin.fund("bench", 1_000n * UNIT);
  const p = await s.writes.authorize(`Bearer ${(await s.custody.issueToken(creator.id)).token}`);
  const contract = await benchMatch(s, "Match: will the home side win?");
  const created = await s.writes.create(p, workedExampleCreate(contract, "bench-request-cost-offer"));
  await s.chain.gateway.waitFor(created.signature);
  const reader = await s.admin.createUser("reader", "Reader");
  const token = (await s.custody.issueToken(reader.id, { scopes: ["bet:read"] })).token;
  const body = JSON.stringify({ padding: "x".repeat(1_400) });
  const bare = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(body);
  });
  await new Promise<void>((r) => bare.listen(0, "127.0.0.1", r));
  const bareUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}/`;
  await new Promise((r) => setTimeout(r, 500));

  const offers = `${app.url}/api/bets-usdc/offers`;
  console.log(
    `autocannon -c ${o.connections} -d ${o.duration} per run; load average at the start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}\n`,
  );
  console.log("| request | req/s | server CPU µs per request |");
  console.log("|---|---:|---:|");
  for (const [key, name, url, signedIn, expect2xx] of [
    ["bare", "bare node:http, 1.4 KB of JSON", bareUrl, false, true],
    ["healthz", "GET /healthz", `${app.url}/healthz`, false, true],
    ["offer-anonymous", "one offer, anonymous", `${offers}/${created.offerAddress}`, false, true],
    ["offer-signed-in", "one offer, signed in", `${offers}/${created.offerAddress}`, true, true],
    ["unknown-offer", "unknown offer (404), signed in", `${offers}/11111111111111111111111111111111`, true, false],
  ] as const) {
    const r = await profiled(o.profile, key, () =>
      load(url, { connections: o.connections, duration: o.duration, token: signedIn ? token : undefined, allowNon2xx: !expect2xx }),
    );
    console.log(`| ${name} | ${r.rps.toFixed(0)} | ${r.cpuUs.toFixed(0)} |`);
  }
  console.log(
    `\nload average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}`,
  );
  bare.close();
  await app.close();
  read.close();
  await s.stop();
}

main().then(() => process.exit(0), exitOnError);
