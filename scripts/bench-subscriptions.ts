/**
 * Live updates at scale: N concurrent SSE subscribers (default 2,000) to one offer on one API
 * process, one take through the API, and the time from the indexer applying it (StoreWriter's
 * onApplied, in the server process) to each subscriber receiving the new state (p50, p99, max =
 * the last subscriber), plus the server's memory per subscriber (RSS and heap growth with the
 * subscribers connected, divided by N). The subscribers run in a child process, so the server's
 * figures are its own; both processes read the same wall clock (performance.timeOrigin + now).
 *
 * `--topic book` (issue 23): the subscribers follow one contract's book (`book(contractAddress,
 * depth: 10)`, 20 offers over 10 levels) instead; the latency is also reported from the take's
 * HTTP answer (the issue's measure). Both topics end with the bare baseline in the same run: a
 * plain node:http server holding as many SSE responses from the same subscriber process, writing
 * the same event bytes to each at once; its latency (from that write) is the floor of delivering
 * one event to N streams on this machine.
 *
 *   npx tsx scripts/bench-subscriptions.ts [--subscribers 2000] [--topic offer|book]
 */
import { Command, Option } from "commander";
import { fork } from "node:child_process";
import { createServer, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { startLocalStack } from "../stack/local-stack";
import { workedExampleCreate } from "../harness/api-requests";
import { liveOf } from "../graphql/live-ws";
import { serviceApp } from "../stack/app";

import { sizeOption } from "../stack/config/settings";
import { strictExit } from "../stack/config/cli";
process.env.LOG_LEVEL ??= "silent";
const UNIT = 1_000_000n;
const OFFERS = "/api/bets-usdc/offers";
/** What a frontend showing one offer follows. */
const QUERY = `subscription($a: Address!) { offer(address: $a) { address revision status takerFilledMicros remainingTakerMicros fillCount } }`;
/** What a frontend showing one contract's book follows. */
const BOOK_QUERY = `subscription($a: Address!) { book(contractAddress: $a, depth: 10) { contract revision updatedAt matchedVolumeMicros
  sides { side label best { numerator denominator decimal } availableMicros offerCount levels { odds { numerator denominator decimal impliedProbabilityBps } availableMicros offerCount } }
  lastMatch { side amountMicros at odds { numerator denominator } } } }`;

const wallNow = () => performance.timeOrigin + performance.now();

setFlagsFromString("--expose-gc");
/** Memory after a full collection, so the per-subscriber figure is what subscribers hold, not garbage. */
function settledMemory(): NodeJS.MemoryUsage {
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage();
}

type ToParent = { ready: number } | { received: number[]; failed: number; bytes: number };

/** The subscribers' process: opens N SSE streams, reports when each has the current state, then the receive time of the next event. */
async function subscribers(url: string, query: string, address: string, n: number): Promise<void> {
  const received: number[] = [];
  let ready = 0;
  let failed = 0;
  let bytes = 0;
  const open = (): Promise<void> =>
    new Promise((resolve) => {
      const body = JSON.stringify({ query, variables: { a: address } });
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
            // A block may open with its `id:` line (resumable streams), so the event line is found anywhere in it.
            if (!/^event: next$/m.test(block)) continue;
            // An answer with errors (a refused document, a limit) is a subscriber that never started.
            if (block.includes('"errors"')) {
              failed++;
              return resolve();
            }
            if (++events === 1) {
              ready++;
              resolve();
            } else if (events === 2) {
              received.push(wallNow());
              bytes = block.length;
            }
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
    process.send!({ received, failed, bytes } satisfies ToParent, () => process.exit(0));
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

/** The subscribers' process against `url`; resolves with a trigger that asks for the report. */
async function subscriberProcess(url: string, query: string, address: string, n: number) {
  const child = fork(fileURLToPath(import.meta.url), ["--client", url, "--query", query, "--address", address, "--subscribers", String(n)], {
    execArgv: ["--import", "tsx"],
  });
  const fromChild = () => new Promise<ToParent>((resolve) => child.once("message", (m) => resolve(m as ToParent)));
  const t0 = Date.now();
  const { ready } = (await fromChild()) as { ready: number };
  return {
    ready,
    connectMs: Date.now() - t0,
    report: () => {
      const done = fromChild();
      child.send("report");
      return done as Promise<{ received: number[]; failed: number; bytes: number }>;
    },
  };
}

/**
 * The bare baseline: a node:http server that answers each POST with an SSE stream and its first
 * event, and on `send` writes one event of `bytes` bytes to every stream at once.
 */
async function bareBaseline(n: number, eventBytes: number) {
  const streams: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`event: next\ndata: {"data":{"first":true}}\n\n`);
    streams.push(res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const subs = await subscriberProcess(url, "bare", "bare", n);
  await new Promise((r) => setTimeout(r, 500));
  const event = Buffer.from(`event: next\ndata: {"data":${JSON.stringify("x".repeat(Math.max(0, eventBytes - 40)))}}\n\n`);
  const sent = wallNow();
  for (const res of streams) res.write(event);
  const { received } = await subs.report();
  for (const res of streams) res.end();
  server.closeAllConnections();
  server.close();
  const lat = received.map((t) => t - sent).sort((a, b) => a - b);
  return {
    connected: subs.ready,
    received: received.length,
    p50Ms: +percentile(lat, 50).toFixed(1),
    p99Ms: +percentile(lat, 99).toFixed(1),
    maxMs: +lat[lat.length - 1].toFixed(1),
  };
}

async function main(): Promise<void> {
  const o = strictExit(new Command().name("bench-subscriptions"))
    .addOption(sizeOption("--subscribers <n>", "concurrent SSE subscribers", 2_000))
    .addOption(new Option("--topic <topic>", "what the subscribers follow: one offer, or one contract's book").choices(["offer", "book"]).default("offer"))
    .option("--client <url>", "(internal) run as the subscribers' process against this server")
    .option("--query <document>", "(internal) the subscription document")
    .option("--address <address>", "(internal) the offer or contract to subscribe to")
    .parse()
    .opts<{ subscribers: number; topic: "offer" | "book"; client?: string; query?: string; address?: string }>();
  const n = o.subscribers;
  if (o.client) return subscribers(o.client, o.query!, o.address!, n);
  const book = o.topic === "book";

  // Every subscriber comes from this machine's one address: its share (live-shares.ts) is raised
  // to N, as N subscribers from N addresses would each hold one; the process caps stay.
  const shares = {
    anonymousSubscriptionsPerAddress: n,
    subscriptionsPerAddress: n,
    anonymousSubscriptionsPerProcess: Math.max(n, 8_000),
    maxPerProcess: Math.max(n, 10_000),
  };
  const s = await startLocalStack({ app: (parts) => serviceApp(parts, { graphiql: false, readCaches: { settingsTtlMs: 0 }, live: shares }).app });
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
  if (book) {
    // 19 more offers over 10 levels of taker odds, both creator sides: a book a frontend draws.
    for (let i = 1; i < 20; i++) {
      const body = workedExampleCreate(contract, `bench-subscriptions-create-${i}`, {
        creatorOutcome: i % 2 ? "sideB" : "sideA",
        creatorTotalMicros: String(BigInt(4 + (i % 10)) * UNIT),
        takerTargetMicros: String(10n * UNIT),
      });
      const r = await post(s.url, "/", body, tokens[0]);
      while ((await fetch(`${s.url}${OFFERS}/${r.offerAddress as string}`)).status !== 200) await new Promise((r2) => setTimeout(r2, 20));
    }
  }

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
  const subs = await subscriberProcess(s.url, book ? BOOK_QUERY : QUERY, book ? contract.toBase58() : offer, n);
  const { ready, connectMs } = subs;
  await new Promise((r) => setTimeout(r, 1_000));
  const connected = settledMemory();

  const live = liveOf(s.app)!;
  const statsBefore = live.stats();
  await post(s.url, `/${offer}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: "bench-subscriptions-take" }, tokens[1]);
  const answered = wallNow();
  const { received, failed, bytes } = await subs.report();
  const cpu = process.cpuUsage(cpuAtApplied ?? undefined);
  const statsAfter = live.stats();
  if (applied === null) throw new Error("the take was never applied");
  if (received.length === 0) throw new Error(`no subscriber received the take (${ready} connected, ${failed} failed)`);
  const lat = received.map((t) => t - applied!).sort((a, b) => a - b);
  const fromAnswer = received.map((t) => t - answered).sort((a, b) => a - b);
  const bare = await bareBaseline(n, bytes);
  const figures = {
    topic: o.topic,
    subscribers: n,
    connected: ready,
    failedToConnect: failed,
    received: received.length,
    connectAllMs: connectMs,
    firstMs: +lat[0].toFixed(1),
    p50Ms: +percentile(lat, 50).toFixed(1),
    p99Ms: +percentile(lat, 99).toFixed(1),
    maxMs: +lat[lat.length - 1].toFixed(1),
    // The issue's measure: from the take's HTTP answer to each subscriber's receipt.
    fromAnswerP50Ms: +percentile(fromAnswer, 50).toFixed(1),
    fromAnswerP99Ms: +percentile(fromAnswer, 99).toFixed(1),
    fromAnswerMaxMs: +fromAnswer[fromAnswer.length - 1].toFixed(1),
    eventBytes: bytes,
    bare,
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
