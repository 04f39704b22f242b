/**
 * The distinct-query load of issue 21 (finding 5), from outside the server as real clients would
 * send it: the server is `scripts/start.ts` in a process of its own, started as `npm start` starts
 * it (its node options, ./server-node-options.ts; `--server-node-option` adds to them), on its defaults (local stack,
 * SQLite, demo seed, request limits per address and token on, LOG_LEVEL info to a file, the
 * settlement worker every 2 s); 100 client addresses (127.0.1.X) in a second process (this file
 * forked with --load) ask GraphQL pages of 50 offers in a closed loop, each query distinct (a fresh
 * variable value, so every answer is a cache miss and a new cache entry), for `--duration`
 * seconds. This process is the normal callers, each from an address of its own: `cached`, the
 * small page every browser asks (the same document each time, mostly served from the response
 * cache) every 100 ms, and `distinct`, a small page with a fresh variable (always executed) every
 * second, a person paging: at 10 a second it would be a heavier caller than each of the load's
 * addresses (2-5 pages a second each here), and read admission serves the lighter callers first.
 *
 * Prints, in one run: the normal callers' p50/p99 with no load (the bare baseline) and during the
 * load; the server's CPU time per request in both windows (/proc/<pid>/stat: user + system over
 * the requests answered), and the CPU time the server's event loop spent while each normal request
 * waited (/proc/<pid>/schedstat: what it would have waited with a core to itself, on a machine
 * shared with other work); the server's RSS (/proc/<pid>/status, no forced GC) at the start, at the
 * load's end and `--settle` s after; the load's answers by status; the load average; how long the server's loop waited for a CPU during the load.
 *
 *   npx tsx scripts/bench-distinct-queries.ts [--duration 30] [--settle 30] [--addresses 100] [--baseline 10]
 *     [--profile <dir>] [--server-log <file>] [--server-node-option --trace-gc] [-- <more scripts/start.ts flags, e.g. --read-concurrency 1>]
 */
import { Command } from "commander";
import { fork, spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serverNodeOptions } from "./server-node-options";
import { durationOption, sizeOption } from "../stack/config/settings";

const o = new Command()
  .addOption(durationOption("--duration <s>", "load seconds (30, 2m)", 30))
  .addOption(durationOption("--settle <s>", "idle seconds after", 30))
  .addOption(sizeOption("--addresses <n>", "client addresses of the load", 100))
  .addOption(durationOption("--baseline <s>", "seconds of normal requests with no load, after a warm-up", 10))
  .option("--profile <dir>", "write the server's CPU profile (.cpuprofile, from its start to its stop) into this directory")
  .option("--server-log <file>", "keep the server's output (its log) in this file")
  .option("--server-node-option <option...>", "node options for the server process, after those of npm start (e.g. --trace-gc)")
  .option("--load <url>", "(internal) run as the load process against this server")
  .allowExcessArguments()
  .parse();
const opts = o.opts<{
  duration: number;
  settle: number;
  addresses: number;
  baseline: number;
  profile?: string;
  serverLog?: string;
  serverNodeOption?: string[];
  load?: string;
}>();

/** The variables carry a counter the document does not use: graphql-js ignores it, the cache key does not. */
const PAGE = `{ offers(first: 50) { edges { node { address status creatorTotalMicros contract { title } viewer { canTake } } } } }`;
const SMALL = "{ offers(first: 10) { edges { node { address } } } }";

function post(url: URL, body: string, agent: Agent): Promise<{ ms: number; status: number }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const req = request(
      { host: url.hostname, port: url.port, path: "/graphql", method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ ms: performance.now() - t, status: res.statusCode ?? 0 }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] ?? NaN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");

/** The load process: `addresses` closed loops until `durationS` passes; reports its answers by status. */
async function loadProcess(url: URL, addresses: number, durationS: number) {
  const go = new Promise<void>((r) => process.once("message", () => r()));
  process.send!("ready");
  await go;
  const end = Date.now() + durationS * 1000;
  const statuses: Record<number, number> = {};
  const ms: number[] = [];
  let n = 0;
  await Promise.all(
    Array.from({ length: addresses }, async (_, i) => {
      const agent = new Agent({ keepAlive: true, localAddress: `127.0.${1 + Math.floor(i / 200)}.${1 + (i % 200)}` });
      while (Date.now() < end) {
        const r = await post(url, JSON.stringify({ query: PAGE, variables: { n: n++ } }), agent);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        ms.push(r.ms);
        // A refusal says when to come back; a closed loop that ignored it would only measure refusals.
        if (r.status === 429) await sleep(1000);
      }
      agent.destroy();
    }),
  );
  process.send!({ statuses, p50: pct(ms, 50), p99: pct(ms, 99) }, () => process.exit(0));
}

/** A free TCP port on loopback. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** The server process's CPU seconds (user + system) and RSS in MiB, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Math.round(Number(m?.[1] ?? NaN) / 1024);
}

/**
 * The server's event-loop thread's time on a CPU so far, in ms (/proc/<pid>/schedstat, ns). On a
 * machine shared with other work the server runs only part of the wall time; the loop's CPU time
 * spent while a request waits is what the request would have waited with a core of its own.
 */
function loopCpuMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
}

/** The time (ms) the server's event-loop thread has spent ready to run but waiting for a CPU (/proc/<pid>/schedstat): the machine's share of its latency. */
function loopRunQueueMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[1]) / 1e6;
}

interface Normal {
  ms: number[];
  /** The server loop's CPU ms during each answered request. */
  cpuMs: number[];
  refused: number;
}

/** The V8 heap, used / total, in MiB, from the server's /metrics (prom-client's process metrics). */
async function heapMiB(url: URL): Promise<string> {
  const text = await (await fetch(`${url.href}metrics`)).text();
  const sum = (name: string) =>
    Math.round(
      text
        .split("\n")
        .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
        .reduce((a, l) => a + Number(l.split(" ").pop()), 0) / 1048576,
    );
  return `${sum("nodejs_heap_size_used_bytes")} / ${sum("nodejs_heap_size_total_bytes")}`;
}

/** One normal caller (every 100 ms, or every second when `distinct`) until `until()` is false; latencies and statuses. */
async function normalCaller(url: URL, pid: number, address: string, distinct: boolean, until: () => boolean): Promise<Normal> {
  const agent = new Agent({ keepAlive: true, localAddress: address });
  const r: Normal = { ms: [], cpuMs: [], refused: 0 };
  let n = 0;
  while (until()) {
    const body = distinct ? { query: SMALL, variables: { n: `${address}-${n++}` } } : { query: SMALL };
    const cpu0 = loopCpuMs(pid);
    const a = await post(url, JSON.stringify(body), agent);
    const cpu = loopCpuMs(pid) - cpu0;
    if (a.status === 200) {
      r.ms.push(a.ms);
      r.cpuMs.push(cpu);
    } else r.refused++;
    await sleep(distinct ? 1000 : 100);
  }
  agent.destroy();
  return r;
}

/** Both normal callers over one window. */
async function normals(url: URL, pid: number, seconds: number) {
  const end = Date.now() + seconds * 1000;
  const until = () => Date.now() < end;
  const [cached, distinct] = await Promise.all([normalCaller(url, pid, "127.0.0.250", false, until), normalCaller(url, pid, "127.0.0.251", true, until)]);
  return { cached, distinct };
}

const line = (name: string, r: Normal) =>
  `${name}: p50 ${pct(r.ms, 50).toFixed(1)} ms, p99 ${pct(r.ms, 99).toFixed(1)} ms, max ${pct(r.ms, 100).toFixed(1)} ms; server loop CPU while it waited p50 ${pct(r.cpuMs, 50).toFixed(1)} ms, p99 ${pct(r.cpuMs, 99).toFixed(1)} ms (${r.ms.length} answered${r.refused ? `, ${r.refused} refused` : ""})`;

async function main() {
  const { duration, settle, addresses } = opts;
  const serverArgs = o.args;
  const dir = mkdtempSync(join(tmpdir(), "bench-distinct-"));
  const port = await freePort();
  const adminPort = await freePort();
  const logFile = join(dir, "server.log");
  const out = openSync(logFile, "w");
  const server = spawn(
    process.execPath,
    [
      ...(opts.profile ? ["--cpu-prof", "--cpu-prof-dir", opts.profile] : []),
      ...serverNodeOptions(),
      ...(opts.serverNodeOption ?? []),
      "--import",
      "tsx",
      fileURLToPath(new URL("./start.ts", import.meta.url)),
      "--port",
      String(port),
      "--admin-port",
      String(adminPort),
      "--data",
      join(dir, "data"),
      ...serverArgs,
    ],
    { stdio: ["ignore", out, out] },
  );
  const pid = server.pid!;
  const exited = new Promise<number | null>((r) => server.once("exit", r));
  try {
    const t0 = Date.now();
    while (!readFileSync(logFile, "utf8").includes("Local stack up")) {
      if (server.exitCode !== null || Date.now() - t0 > 300_000) throw new Error(`the server did not start:\n${readFileSync(logFile, "utf8").slice(-2000)}`);
      await sleep(250);
    }
    const url = new URL(`http://127.0.0.1:${port}`);
    console.log(
      `server: node ${[...serverNodeOptions(), ...(opts.serverNodeOption ?? [])].join(" ")} scripts/start.ts ${serverArgs.join(" ")} (pid ${pid}), up in ${((Date.now() - t0) / 1000).toFixed(0)} s; load average ${load()}`,
    );
    // Warm-up (JIT, the compiled queries, first pages), then the baseline with no load.
    await Promise.all([normals(url, pid, 3), post(url, JSON.stringify({ query: PAGE, variables: { n: -1 } }), new Agent())]);
    const rssStart = rssMiB(pid);
    const heapStart = await heapMiB(url);
    const cpu0 = cpuSeconds(pid);
    const baseline = await normals(url, pid, opts.baseline);
    const cpuBase = cpuSeconds(pid) - cpu0;
    const baseCount = baseline.cached.ms.length + baseline.distinct.ms.length;

    const child = fork(fileURLToPath(import.meta.url), ["--load", url.href, "--addresses", String(addresses), "--duration", String(duration)], {
      execArgv: ["--import", "tsx"],
    });
    await new Promise((r) => child.once("message", r)); // its modules loaded
    const loadStart = load();
    const report = new Promise<{ statuses: Record<string, number>; p50: number; p99: number }>((r) => child.once("message", (m) => r(m as never)));
    const cpu1 = cpuSeconds(pid);
    const queued1 = loopRunQueueMs(pid);
    child.send("go");
    const during = await normals(url, pid, duration);
    const result = await report;
    const cpuLoad = cpuSeconds(pid) - cpu1;
    const queuedLoad = (loopRunQueueMs(pid) - queued1) / 1000;
    const rssEnd = rssMiB(pid);
    const heapEnd = await heapMiB(url);
    const loadEnd = load();
    await sleep(settle * 1000);
    const rssSettled = rssMiB(pid);
    const heapSettled = await heapMiB(url);
    const metrics = await (await fetch(`${url.href}metrics`)).text();
    const loadAnswered = Object.values(result.statuses).reduce((a, b) => a + b, 0);
    const duringCount = during.cached.ms.length + during.distinct.ms.length + during.cached.refused + during.distinct.refused;

    console.log(
      `load: ${addresses} addresses, distinct 50-offer pages for ${duration} s: ${JSON.stringify(result.statuses)} (${loadAnswered} answers; p50 ${result.p50.toFixed(0)} ms, p99 ${result.p99.toFixed(0)} ms)`,
    );
    console.log(line("normal (cached page) with no load  ", baseline.cached));
    console.log(line("normal (cached page) during load   ", during.cached));
    console.log(line("normal (distinct page) with no load", baseline.distinct));
    console.log(line("normal (distinct page) during load ", during.distinct));
    console.log(
      `server CPU per request: no load ${((cpuBase / baseCount) * 1e3).toFixed(2)} ms (${baseCount} requests), during load ${((cpuLoad / (loadAnswered + duringCount)) * 1e3).toFixed(2)} ms (${loadAnswered + duringCount} requests, ${cpuLoad.toFixed(1)} s of CPU in ${duration} s)`,
    );
    console.log(`server loop ready but waiting for a CPU (the machine's other work) during the load: ${queuedLoad.toFixed(1)} s of ${duration} s`);
    console.log(
      `server RSS: start ${rssStart} MiB, end of load ${rssEnd} MiB, ${settle} s after ${rssSettled} MiB (${rssSettled - rssStart >= 0 ? "+" : ""}${rssSettled - rssStart} MiB)`,
    );
    console.log(`server V8 heap used / total: start ${heapStart} MiB, end of load ${heapEnd} MiB, ${settle} s after ${heapSettled} MiB`);
    console.log(`load average: at the load's start ${loadStart}, at its end ${loadEnd}, at the end ${load()}`);
    console.log(
      metrics
        .split("\n")
        .filter((l) => /^(offers_cache_\w+\{cache="graphql"|read_admission_)/.test(l))
        .join("\n"),
    );
  } finally {
    server.kill("SIGTERM");
    await Promise.race([exited, sleep(10_000)]);
    if (server.exitCode === null) server.kill("SIGKILL");
    if (opts.serverLog) copyFileSync(logFile, opts.serverLog);
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

if (opts.load) void loadProcess(new URL(opts.load), opts.addresses, opts.duration);
else void main();
