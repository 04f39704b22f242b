/**
 * Runs the market scenario (scripts/sim/scenario.ts) on the compiled programs and prints a
 * summary: volume, fills, fees, payouts, compute units, invariant checks, throughput, and the
 * book report (each contract's best taker odds per side over time: price discovery). With
 * --http, the same scenario goes through the whole local stack's HTTP API instead
 * (scripts/sim/http-scenario.ts). --json writes every summary, with every contract's book trace,
 * to a file.
 *
 *   npm run simulate -- --users 200 --actions 10000 --days 7 --seed 1 --engine both
 *   npm run simulate -- --http --users 50 --actions 2000 --days 7 --seed 1 --engine bankrun --json sim.json
 */
import { writeFileSync } from "node:fs";
import { Command, Option } from "commander";
import cliProgress from "cli-progress";
import type { ScenarioSummary } from "./sim/scenario";
import { formatBookReport } from "./sim/book-report";
import type { EngineName } from "../harness/chain";
import { ENGINES } from "../stack/config/settings";
import { arg, countValue, enumValue, positiveValue } from "../stack/config/values";
import { exitOnError, strictExit } from "../stack/config/cli";

const count = (flags: string, help: string, fallback: number, schema = positiveValue) => new Option(flags, help).argParser(arg(schema)).default(fallback);
const cmd = strictExit(new Command().name("simulate"))
  .addOption(count("--users <n>", "simulated users", 200))
  .addOption(count("--actions <n>", "user actions", 10_000))
  .addOption(count("--days <n>", "simulated days the actions spread over", 7))
  .addOption(count("--seed <n>", "random seed", 1, countValue))
  .addOption(new Option("--engine <name>", [...ENGINES, "both"].join(" | ")).argParser(arg(enumValue([...ENGINES, "both"] as const))).default("both"))
  .option("--http", "drive the local stack's REST API (custodial users, write service, indexer, worker) instead of the program")
  .addOption(count("--book <n>", "contracts shown in the printed book report, those whose book moved most (0: none)", 8, countValue))
  .option("--json <path>", "also write the summaries, with every contract's book over time, to this JSON file")
  .parse();
const opts = cmd.opts<{
  users: number;
  actions: number;
  days: number;
  seed: number;
  engine: EngineName | "both";
  http?: boolean;
  book: number;
  json?: string;
}>();

/** The scenario's size and seed from the command line (both scenarios take the same). */
const scenarioOptions = () => ({ users: opts.users, actions: opts.actions, days: opts.days, seed: opts.seed });

/** Runs `run` under a progress bar of the actions, labelled `label`. */
async function withProgress<T>(label: string, run: (onProgress: (n: number) => void) => Promise<T>): Promise<T> {
  const bar = new cliProgress.SingleBar(
    { format: `${label.padEnd(8)} [{bar}] {value}/{total} actions | {eta}s left`, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(opts.actions, 0);
  try {
    return await run((n) => bar.update(n));
  } finally {
    bar.stop();
  }
}

/** The book report under a summary: its contracts' best odds per side over time. */
function printBook(s: { book: Parameters<typeof formatBookReport>[0]; bookSampleSeconds: number }) {
  if (opts.book > 0) console.log(formatBookReport(s.book, { limit: opts.book, sampleEverySeconds: s.bookSampleSeconds }).join("\n"));
}

/** The summaries as JSON: amounts (bigint) as decimal strings, as the API writes them. */
function writeJson(runs: unknown[]) {
  if (!opts.json) return;
  writeFileSync(
    opts.json,
    `${JSON.stringify({ options: scenarioOptions(), http: !!opts.http, runs }, (_, v) => (typeof v === "bigint" ? v.toString() : v), 2)}\n`,
  );
  console.log(`\nsummaries written to ${opts.json}`);
}

const micros = (v: bigint) => `${v / 1_000_000n}.${(v % 1_000_000n).toString().padStart(6, "0")}`;

async function mainHttp(engines: EngineName[]) {
  const runs = [];
  // Loaded after the command line is accepted, as the engines below (a refusal exits at once).
  const { runHttpScenario } = await import("./sim/http-scenario");
  for (const engine of engines) {
    const s = await withProgress(`http/${engine.padEnd(8)}`, (onProgress) => runHttpScenario({ ...scenarioOptions(), engine, onProgress }));
    console.log(`\n== HTTP API on the local stack (${s.engine}): ${s.actions} actions by ${s.users} users over ${s.simulatedDays} simulated days ==`);
    console.log(`contracts ${s.contracts}; offers ${s.offersCreated}; fills ${s.fills}; closes ${s.closes}; positions settled ${s.positionsSettled}`);
    console.log(`take-best sweeps ${s.takeBestSweeps} (offers taken ${s.sweepOffersTaken}); fill-or-kill refusals ${s.fillOrKillRefusals}`);
    console.log(`volume ${micros(s.volumeMicros)} units; payouts ${micros(s.payoutsMicros)}; fees ${micros(s.feesMicros)}`);
    console.log(`requests ${s.requests} (answered with an error: ${JSON.stringify(s.rejections)})`);
    console.log(`invariant checks passed ${s.invariantChecks}`);
    console.log(`wall ${s.wallSeconds.toFixed(1)} s; throughput ${s.requestsPerSecond.toFixed(0)} requests/s`);
    printBook(s);
    runs.push(s);
  }
  writeJson(runs);
}

async function main() {
  const engines: EngineName[] = opts.engine === "both" ? ["bankrun", "litesvm"] : [opts.engine];
  if (opts.http) return mainHttp(engines);
  const { runScenario } = await import("./sim/scenario");
  const results: ScenarioSummary[] = [];
  for (const engine of engines) {
    results.push(await withProgress(engine, (onProgress) => runScenario({ ...scenarioOptions(), engine, onProgress })));
  }
  for (const s of results) {
    console.log(`\n== ${s.engine}: ${s.actions} actions by ${s.users} users over ${s.simulatedDays} simulated days ==`);
    console.log(
      `contracts ${s.contracts} (resolved ${s.contractsResolved}, voided ${s.contractsVoided}); offers ${s.offersCreated}; fills ${s.fills}; closes ${s.closes}; positions settled ${s.positionsSettled}`,
    );
    console.log(`take-best sweeps ${s.takeBestSweeps} (offers taken ${s.sweepOffersTaken}); fill-or-kill refusals ${s.fillOrKillRefusals}`);
    console.log(`volume ${micros(s.volumeMicros)} units; payouts ${micros(s.payoutsMicros)}; fees ${micros(s.feesMicros)}`);
    console.log(`transactions ${s.transactions} (${s.failedTransactions} rejected by the program: ${JSON.stringify(s.rejections)})`);
    console.log(`compute units ${s.computeUnits}; invariant checks passed ${s.invariantChecks}`);
    console.log(`wall ${s.wallSeconds.toFixed(1)} s; throughput ${s.txPerSecond.toFixed(0)} tx/s`);
    printBook(s);
  }
  writeJson(results);
}

main().then(() => process.exit(0), exitOnError);
