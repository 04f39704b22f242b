/**
 * The book of one contract with 1,000 open offers over 200 levels (100 taker ratios a side),
 * written straight into a SQLite store and a PostgreSQL store, served by the HTTP app and
 * measured with autocannon: cached (the read cache on, as served) and uncached (`anonymousTtlMs:
 * 0`: every request reads the offers and groups them), beside a bare node:http handler in the
 * same run that reads the same open offers and returns them as JSON (no grouping, no cache).
 * Cached runs use `--connections`; uncached and bare use one connection (their p99 is a
 * request's latency, not a queue's).
 *
 *   npx tsx scripts/bench-book.ts [--duration 5] [--connections 10] [--engines sqlite,postgres]
 */
import { Command } from "commander";
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { dropPostgresSchema, openStore } from "../indexer/store/db";
import { createApp, listen, OFFERS_BASE } from "../graphql/server";
import { ReadService } from "../service/read/read-service";
import { scaleRows } from "./bench-read-scale";
import { durationOption, enginesOption, sizeOption } from "../stack/config/settings";
import { strictExit } from "../stack/config/cli";
import { load as loadRun } from "./autocannon";

process.env.LOG_LEVEL ??= "silent";

const o = strictExit(new Command().name("bench-book"))
  .addOption(durationOption("--duration <s>", "length of each run (5, 30s, 2m)", 5))
  .addOption(sizeOption("--connections <n>", "concurrent connections of the cached runs", 10))
  .addOption(enginesOption())
  .option("--pg <url>", "PostgreSQL server", process.env.INDEXER_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test")
  .parse()
  .opts<{ duration: number; connections: number; engines: ("sqlite" | "postgres")[]; pg: string }>();
const run = promisify(execFile);
const NOW = 1_900_000_000;

/** One run (./autocannon.ts), the server's CPU per request in ms. */
async function load(url: string, connections = o.connections): Promise<{ rps: number; p50: number; p99: number; cpuMs: number }> {
  const r = await loadRun(url, { connections, duration: o.duration });
  return { rps: r.rps, p50: r.p50, p99: r.p99, cpuMs: r.cpuUs / 1000 };
}

/** One contract, 1,000 Open offers: 5 per level, 100 ratios on each side. */
function bookRows() {
  const base = scaleRows(1_000, 1, 200);
  const contract = base.contracts[0].address;
  base.offers.forEach((r, i) => {
    const level = Math.floor(i / 2) % 100;
    // Taker target 100 units, creator stake 20..119 units: 100 distinct ratios a side, 5 offers each.
    Object.assign(r, {
      contract,
      status: "Open",
      side: i % 2 ? "sideA" : "sideB",
      creator_total_micros: String((20 + level) * 1_000_000),
      taker_target_micros: "100000000",
      taker_filled_micros: String((i % 5) * 1_000_000),
      creator_allocated_micros: "0",
      revision: 1 + (i % 5),
      closed_at: null,
    });
  });
  return { ...base, contract };
}

async function bench(engine: string) {
  const dir = engine === "sqlite" ? mkdtempSync(join(tmpdir(), "bench-book-")) : null;
  const url = dir ? join(dir, "store.db") : `${o.pg}?schema=bench_book_${process.pid}`;
  const store = await openStore(url);
  const rows = bookRows();
  await store.db.insertInto("config").values(rows.config).execute();
  await store.db.insertInto("contracts").values(rows.contracts).execute();
  await store.db.insertInto("contract_catalog").values(rows.catalog).execute();
  for (let i = 0; i < rows.offers.length; i += 200)
    await store.db
      .insertInto("offers")
      .values(rows.offers.slice(i, i + 200))
      .execute();
  const cached = new ReadService({ db: store.db, now: () => NOW });
  const uncached = new ReadService({ db: store.db, now: () => NOW, anonymousTtlMs: 0 });
  const apps = [await listen(createApp({ read: cached, custody: null })), await listen(createApp({ read: uncached, custody: null }))];
  const bare = createServer((_req, res) => {
    store.db
      .selectFrom("offers")
      .selectAll()
      .where("contract", "=", rows.contract)
      .where("status", "=", "Open")
      .execute()
      .then((r) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(r)))
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((r) => bare.listen(0, "127.0.0.1", r));
  const bareUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}/`;
  const path = `${OFFERS_BASE}/contracts/${rows.contract}/book?depth=100`;
  const check = (await (await fetch(`${apps[0].url}${path}`)).json()) as { sides: { levels: unknown[]; offerCount: number }[] };
  const shape = check.sides.map((s) => `${s.offerCount} offers, ${s.levels.length} levels shown`).join("; ");
  const results = {
    cached: await load(`${apps[0].url}${path}`),
    // One connection: the latency of a request, not of a queue of ten.
    uncached: await load(`${apps[1].url}${path}`, 1),
    bare: await load(bareUrl, 1),
  };
  for (const a of apps) await a.close();
  bare.close();
  cached.close();
  uncached.close();
  await store.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  else await dropPostgresSchema(url);
  return { shape, ...results };
}

async function main() {
  const { stdout: up } = await run("uptime");
  console.log(`load: ${up.trim()}; autocannon -d ${o.duration}, cached -c ${o.connections}, uncached and bare -c 1; GET .../book?depth=100`);
  console.log(
    "| engine | cached req/s | p50 / p99 ms | uncached req/s | p50 / p99 ms | bare req/s | bare p99 ms | uncached / bare | uncached CPU ms/req | bare CPU ms/req | book |",
  );
  console.log("|---|---:|---|---:|---|---:|---:|---:|---:|---:|---|");
  for (const engine of o.engines) {
    const r = await bench(engine);
    console.log(
      `| ${engine} | ${r.cached.rps.toFixed(0)} | ${r.cached.p50} / ${r.cached.p99} | ${r.uncached.rps.toFixed(0)} | ${r.uncached.p50} / ${r.uncached.p99} | ${r.bare.rps.toFixed(0)} | ${r.bare.p99} | ${(r.uncached.rps / r.bare.rps).toFixed(2)} | ${r.uncached.cpuMs.toFixed(2)} | ${r.bare.cpuMs.toFixed(2)} | ${r.shape} |`,
    );
  }
  console.log(`load after: ${(await run("uptime")).stdout.trim()}`);
}

void main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
