/**
 * Live updates at scale: N concurrent SSE subscribers (default 2,000) to one offer on one API
 * process, one take through the API, and the time from the indexer applying it (StoreWriter's
 * onApplied, in the server process) to each subscriber receiving the new state (p50, p99, max =
 * the last subscriber), plus the server's memory per subscriber (RSS and heap growth with the
 * subscribers connected, divided by N). The subscribers run in a child process, so the server's
 * figures are its own; both processes read the same wall clock (performance.timeOrigin + now).
 *
 *   npx tsx scripts/bench-subscriptions.ts [--subscribers 2000]
 */
import { Command } from "commander";
import { fork } from "node:child_process";
import { request } from "node:http";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { startLocalStack } from "../stack/local-stack";
import { workedExampleCreate } from "../harness/api-requests";
import { liveOf } from "../graphql/live-ws";

import { sizeOption } from "../stack/config/settings";
import { strictExit } from "../stack/config/cli";
process.env.LOG_LEVEL ??= "silent";
const UNIT = 1_000_000n;
const OFFERS = "/api/bets-usdc/offers";
/** What a frontend showing one offer follows. */
const QUERY = `subscription($a: Address!) { offer(address: $a) { address revision status takerFilledMicros remainingTakerMicros fillCount } }`;

const wallNow = () => performance.timeOrigin + performance.now();

setFlagsFromString("--expose-gc");
/** Memory after a full collection, so the per-subscriber figure is what subscribers hold, not garbage. */
function settledMemory(): NodeJS.MemoryUsage {
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage();
}

type ToParent = { ready: number } | { received: number[]; failed: number };

/** The subscribers' process: opens N SSE streams, reports when each has the current state, then the receive time of the next event. */
async function subscribers(url: string, offer: string, n: number): Promise<void> {
  const received: number[] = [];
  let ready = 0;
  let failed = 0;
  const open = (): Promise<void> =>
    new Promise((resolve) => {
      const body = JSON.stringify({ query: QUERY, variables: { a: offer } });
      const req = request(`${url}/graphql`, {
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", accept: "text/event-stream", "content-length": Buffer.byteLength(body) },
      });
      req.on("response", (res) => {
        let buf = "";
        let events = 0;
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buf += chunk;
          let i: number;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            if (!block.startsWith("event: next")) continue;
            // An answer with errors (a refused document, a limit) is a subscriber that never started.
            if (block.includes('"errors"')) {
              failed++;
              return resolve();
            }
            if (++events === 1) {
              ready++;
              resolve();
            } else if (events === 2) received.push(wallNow());
          }
        });
        res.on("error", () => undefined);
      });
      req.on("error", () => {
        failed++;
        resolve();
      });
      req.end(body);
    });
  // In batches: the server's accept backlog is finite.
  for (let i = 0; i < n; i += 100) await Promise.all(Array.from({ length: Math.min(100, n - i) }, open));
  process.send!({ ready } satisfies ToParent);
  process.on("message", async () => {
    const end = Date.now() + 30_000;
    while (received.length < ready && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    process.send!({ received, failed } satisfies ToParent, () => process.exit(0));
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function post(url: string, path: string, body: unknown, token: string): Promise<Record<string, unknown>> {
  const r = await fetch(`${url}${OFFERS}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const j = (await r.json()) as Record<string, unknown>;
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}

async function main(): Promise<void> {
  const o = strictExit(new Command().name("bench-subscriptions"))
    .addOption(sizeOption("--subscribers <n>", "concurrent SSE subscribers", 2_000))
    .option("--client <url>", "(internal) run as the subscribers' process against this server")
    .option("--offer <address>", "(internal) the offer to subscribe to")
    .parse()
    .opts<{ subscribers: number; client?: string; offer?: string }>();
  const n = o.subscribers;
  if (o.client) return subscribers(o.client, o.offer!, n);

  const s = await startLocalStack();
  const [creator, taker] = [await s.admin.createUser("creator", "Creator"), await s.admin.createUser("taker", "Taker")];
  for (const u of ["creator", "taker"]) await s.admin.fund(u, 1_000n * UNIT);
  const tokens = [(await s.custody.issueToken(creator.id)).token, (await s.custody.issueToken(taker.id)).token];
  const now = await s.chain.gateway.now();
  const contract = await s.admin.createContract({
    title: "Will the home side win?",
    event: "Home vs Away",
    sport: "football",
    competition: "League",
    startsAt: Number(now + 3_600n),
    cutoffAt: now + 3_600n,
    resolutionDeadline: now + 90_000n,
    sideALabel: "Home",
    sideBLabel: "Away",
    visuals: [],
  });
  const created = await post(s.url, "/", workedExampleCreate(contract, "bench-subscriptions-create"), tokens[0]);
  const offer = created.offerAddress as string;
  while ((await fetch(`${s.url}${OFFERS}/${offer}`)).status !== 200) await new Promise((r) => setTimeout(r, 20));

  // When the indexer applied the write that carries the take (the change that names the offer's fill).
  // Also the server's CPU time from then until every subscriber has it: the work of the fan-out,
  // a figure that load from other processes on the machine shifts less than the latency.
  let applied: number | null = null;
  let cpuAtApplied: NodeJS.CpuUsage | null = null;
  s.writer.onApplied((c) => {
    if (applied === null && c.fills.some((f) => f.offer === offer)) {
      applied = wallNow();
      cpuAtApplied = process.cpuUsage();
    }
  });

  await new Promise((r) => setTimeout(r, 500));
  const before = settledMemory();
  const child = fork(fileURLToPath(import.meta.url), ["--client", s.url, "--offer", offer, "--subscribers", String(n)], { execArgv: ["--import", "tsx"] });
  const fromChild = () => new Promise<ToParent>((resolve) => child.once("message", (m) => resolve(m as ToParent)));
  const t0 = Date.now();
  const { ready } = (await fromChild()) as { ready: number };
  const connectMs = Date.now() - t0;
  await new Promise((r) => setTimeout(r, 1_000));
  const connected = settledMemory();

  const live = liveOf(s.app)!;
  const statsBefore = live.stats();
  await post(s.url, `/${offer}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: "bench-subscriptions-take" }, tokens[1]);
  const done = fromChild();
  child.send("report");
  const { received, failed } = (await done) as { received: number[]; failed: number };
  const cpu = process.cpuUsage(cpuAtApplied ?? undefined);
  const statsAfter = live.stats();
  if (applied === null) throw new Error("the take was never applied");
  if (received.length === 0) throw new Error(`no subscriber received the take (${ready} connected, ${failed} failed)`);
  const lat = received.map((t) => t - applied!).sort((a, b) => a - b);
  const figures = {
    subscribers: n,
    connected: ready,
    failedToConnect: failed,
    received: received.length,
    connectAllMs: connectMs,
    firstMs: +lat[0].toFixed(1),
    p50Ms: +percentile(lat, 50).toFixed(1),
    p99Ms: +percentile(lat, 99).toFixed(1),
    maxMs: +lat[lat.length - 1].toFixed(1),
    serverCpuMsAfterApplied: +((cpu.user + cpu.system) / 1000).toFixed(1),
    // Store reads and document executions the take cost the live updates, and answers reused.
    takeReads: statsAfter.reads - statsBefore.reads,
    takeExecutions: statsAfter.executions - statsBefore.executions,
    takeSharedExecutions: statsAfter.sharedExecutions - statsBefore.sharedExecutions,
    rssPerSubscriberKiB: +((connected.rss - before.rss) / ready / 1024).toFixed(1),
    heapPerSubscriberKiB: +((connected.heapUsed - before.heapUsed) / ready / 1024).toFixed(1),
    serverRssMiB: +(connected.rss / 2 ** 20).toFixed(1),
    uptime: execFileSync("uptime").toString().trim(),
  };
  console.log(JSON.stringify(figures, null, 2));
  await s.stop();
  process.exit(0);
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
