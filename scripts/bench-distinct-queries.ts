/**
 * The distinct-query load of issue 21 (finding 5): 100 client addresses (127.0.0.X) asking GraphQL
 * pages of 50 offers, each query distinct (a fresh variable value, so every answer is a cache
 * miss and a new cache entry) for `--duration` seconds, while one normal caller asks a small page
 * every 100 ms. Prints the normal caller's p50/p99 before (the bare baseline, same run) and
 * during the load, and RSS at start, at the load's end and `--settle` seconds after it. The load
 * runs in the same process as the server (both share its event loop): figures are an upper bound.
 *
 *   npx tsx scripts/bench-distinct-queries.ts [--duration 30] [--settle 30] [--addresses 100]
 */
import { Command } from "commander";
import { Agent, request } from "node:http";
import { startLocalStack } from "../stack/local-stack";
import { seed } from "./seed";

const o = new Command()
  .option("--duration <s>", "load seconds", "30")
  .option("--settle <s>", "idle seconds after", "30")
  .option("--addresses <n>", "client addresses", "100")
  .parse()
  .opts();

/** The variables carry a counter the document does not use: graphql-js ignores it, the cache key does not. */
const PAGE = `{ offers(first: 50) { edges { node { address status creatorTotalMicros contract { title } viewer { canTake } } } } }`;

function post(url: URL, body: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const req = request(
      { host: url.hostname, port: url.port, path: "/graphql", method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(performance.now() - t));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;
const mib = () => Math.round(process.memoryUsage().rss / 1048576);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const s = await startLocalStack();
  await seed(s, { log: () => {} });
  const url = new URL(s.url);
  const normalAgent = new Agent({ keepAlive: true, localAddress: "127.0.0.250" });
  const normal = async (until: () => boolean, out: number[]) => {
    while (until()) {
      out.push(await post(url, JSON.stringify({ query: "{ offers(first: 10) { edges { node { address } } } }" }), normalAgent));
      await sleep(100);
    }
  };
  global.gc?.();
  const rssStart = mib();
  const baseline: number[] = [];
  const baseEnd = Date.now() + 5_000;
  await normal(() => Date.now() < baseEnd, baseline);
  const during: number[] = [];
  const loadEnd = Date.now() + Number(o.duration) * 1000;
  let sent = 0;
  let n = 0;
  const workers = Array.from({ length: Number(o.addresses) }, async (_, i) => {
    const agent = new Agent({ keepAlive: true, localAddress: `127.0.${1 + Math.floor(i / 200)}.${1 + (i % 200)}` });
    while (Date.now() < loadEnd) {
      await post(url, JSON.stringify({ query: PAGE, variables: { n: n++ } }), agent);
      sent++;
    }
  });
  await Promise.all([...workers, normal(() => Date.now() < loadEnd, during)]);
  const rssEnd = mib();
  await sleep(Number(o.settle) * 1000);
  global.gc?.();
  const rssSettled = mib();
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const cache = text.split("\n").filter((l) => l.startsWith("offers_cache_"));
  console.log(`distinct queries: ${sent} in ${o.duration} s from ${o.addresses} addresses`);
  console.log(`normal request before the load (baseline): p50 ${pct(baseline, 50).toFixed(1)} ms, p99 ${pct(baseline, 99).toFixed(1)} ms (${baseline.length})`);
  console.log(`normal request during the load: p50 ${pct(during, 50).toFixed(1)} ms, p99 ${pct(during, 99).toFixed(1)} ms (${during.length})`);
  console.log(
    `RSS: start ${rssStart} MiB, end of load ${rssEnd} MiB, ${o.settle} s after ${rssSettled} MiB (${rssSettled - rssStart >= 0 ? "+" : ""}${rssSettled - rssStart} MiB)`,
  );
  console.log(cache.join("\n"));
  await s.stop();
  process.exit(0);
}

void main();
