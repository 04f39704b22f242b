/**
 * The history of one contract with 100,000 fills (1,000 offers, both sides, one fill a minute
 * for about 69 days), written straight into a SQLite store and a PostgreSQL store; the history
 * derived once by the store's own refresh (indexer/store/history.ts, timed), then after one more
 * take as the writer does it (from the take's day on) and whole again (what a batch with the
 * contract's own row or a retraction costs), then served by the HTTP app without read cache (`anonymousTtlMs: 0`) and
 * measured with autocannon on one connection, beside a bare node:http handler in the same run
 * that reads the same window of history rows and returns them as JSON (no shaping, no cache).
 *
 *   npx tsx scripts/bench-history.ts [--duration 5] [--engines sqlite,postgres] [--fills 100000]
 */
import { Command } from "commander";
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { dropPostgresSchema, openStore } from "../indexer/store/db";
import { refreshHistory } from "../indexer/store/history";
import type { FillsTable } from "../indexer/store/schema";
import { createApp, listen, OFFERS_BASE } from "../graphql/server";
import { ReadService } from "../service/read/read-service";
import { scaleRows } from "./bench-read-scale";
import { durationOption, enginesOption, sizeOption } from "../stack/config/settings";
import { strictExit } from "../stack/config/cli";
import { load as loadRun } from "./autocannon";

process.env.LOG_LEVEL ??= "silent";

const o = strictExit(new Command().name("bench-history"))
  .addOption(durationOption("--duration <s>", "length of each run (5, 30s, 2m)", 5))
  .addOption(enginesOption())
  .addOption(sizeOption("--fills <n>", "fills of the contract", 100_000))
  .option("--pg <url>", "PostgreSQL server", process.env.INDEXER_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test")
  .parse()
  .opts<{ duration: number; engines: ("sqlite" | "postgres")[]; fills: number; pg: string }>();
const run = promisify(execFile);
const FILLS = o.fills;
const OFFERS = 1_000;
const T0 = 1_800_000_000 - (1_800_000_000 % 86_400);
const NOW = T0 + FILLS * 60 + 30;
const UNIT = 1_000_000n;

/** One run of one connection (./autocannon.ts). */
const load = (url: string) => loadRun(url, { connections: 1, duration: o.duration });

/** One contract, 1,000 Open offers (50 ratios a side), FILLS fills of one unit, one a minute. */
function historyRows() {
  const base = scaleRows(OFFERS, 1, 200);
  const contract = base.contracts[0].address;
  Object.assign(base.contracts[0], { cutoff_at: NOW + 86_400, resolution_deadline: NOW + 172_800, created_at: T0 - 120 });
  base.offers.forEach((r, i) => {
    Object.assign(r, {
      contract,
      status: "Open",
      side: i % 2 ? "sideA" : "sideB",
      creator_total_micros: String(BigInt(20 + ((i >> 1) % 50)) * 10n * UNIT),
      taker_target_micros: String(1_000n * UNIT),
      taker_filled_micros: String(BigInt(Math.ceil((FILLS - i) / OFFERS)) * UNIT),
      creator_allocated_micros: "0",
      revision: 1,
      created_at: T0 - 60,
      closed_at: null,
    });
  });
  const fills: FillsTable[] = [];
  const revisions = new Array<number>(OFFERS).fill(1);
  for (let k = 0; k < FILLS; k++) {
    const i = k % OFFERS;
    const offer = base.offers[i];
    const take = UNIT;
    fills.push({
      offer: offer.address,
      revision: ++revisions[i],
      taker: offer.creator_token,
      position: offer.rent_payer,
      take_micros: String(take),
      creator_matched_micros: String((take * BigInt(offer.creator_total_micros)) / BigInt(offer.taker_target_micros)),
      taker_filled_micros: String(BigInt(revisions[i] - 1) * take),
      creator_allocated_micros: "0",
      filled_at: T0 + k * 60,
      signature: `s${k}`,
      slot: 1 + k,
    });
  }
  return { ...base, contract, fills };
}

async function bench(engine: string) {
  const dir = engine === "sqlite" ? mkdtempSync(join(tmpdir(), "bench-history-")) : null;
  const url = dir ? join(dir, "store.db") : `${o.pg}?schema=bench_history_${process.pid}`;
  const store = await openStore(url);
  const rows = historyRows();
  await store.db.insertInto("config").values(rows.config).execute();
  await store.db.insertInto("contracts").values(rows.contracts).execute();
  await store.db.insertInto("contract_catalog").values(rows.catalog).execute();
  for (let i = 0; i < rows.offers.length; i += 200)
    await store.db
      .insertInto("offers")
      .values(rows.offers.slice(i, i + 200))
      .execute();
  for (let i = 0; i < rows.fills.length; i += 500)
    await store.db
      .insertInto("fills")
      .values(rows.fills.slice(i, i + 500))
      .execute();
  let t = performance.now();
  await store.db.transaction().execute((trx) => refreshHistory(trx, [rows.contract]));
  const firstMs = performance.now() - t;
  const historyRowCount = (
    await store.db
      .selectFrom("contract_history")
      .select((e) => e.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow()
  ).n;
  // One more fill, as a live batch brings it: derived again from its day only (what the writer
  // does), and, for comparison, the whole history derived again (a contract row or a retraction).
  const extra = { ...rows.fills[0], revision: 1_000_000, filled_at: NOW - 10, signature: "extra", slot: FILLS + 10 };
  await store.db.insertInto("fills").values(extra).execute();
  t = performance.now();
  await store.db.transaction().execute((trx) => refreshHistory(trx, [rows.contract], new Map([[rows.contract, extra.filled_at]])));
  const nextMs = performance.now() - t;
  t = performance.now();
  await store.db.transaction().execute((trx) => refreshHistory(trx, [rows.contract]));
  const wholeMs = performance.now() - t;

  const read = new ReadService({ db: store.db, now: () => NOW, anonymousTtlMs: 0 });
  const app = await listen(createApp({ read, custody: null, responseCacheTtlMs: 0 }));
  const results: Record<string, { service: Awaited<ReturnType<typeof load>>; bare: Awaited<ReturnType<typeof load>> }> = {};
  for (const [interval, seconds] of [
    ["1m", 60],
    ["1d", 86_400],
  ] as const) {
    const last = NOW - (NOW % seconds);
    const first = last - 499 * seconds;
    const bare = createServer((_req, res) => {
      store.db
        .selectFrom("contract_history")
        .selectAll()
        .where("contract", "=", rows.contract)
        .where("side", "=", "sideA")
        .where("interval", "=", interval)
        .where("bucket_at", ">=", first)
        .where("bucket_at", "<=", last)
        .orderBy("bucket_at")
        .execute()
        .then((r) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(r)))
        .catch(() => res.writeHead(500).end());
    });
    await new Promise<void>((r) => bare.listen(0, "127.0.0.1", r));
    const path = `${OFFERS_BASE}/contracts/${rows.contract}/history?side=sideA&interval=${interval}&points=500`;
    const check = (await (await fetch(`${app.url}${path}`)).json()) as { points: { fillCount: number; bestOdds: unknown }[] };
    const filled = check.points.filter((p) => p.fillCount > 0).length;
    if (check.points.length !== 500 || filled === 0 || check.points[499].bestOdds === null) throw new Error(`unexpected history ${interval}`);
    results[interval] = { service: await load(`${app.url}${path}`), bare: await load(`http://127.0.0.1:${(bare.address() as { port: number }).port}/`) };
    bare.close();
  }
  await app.close();
  read.close();
  await store.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  else await dropPostgresSchema(url);
  return { firstMs, nextMs, wholeMs, historyRowCount, results };
}

async function main() {
  const { stdout: up } = await run("uptime");
  console.log(
    `load: ${up.trim()}; ${FILLS} fills, ${OFFERS} offers; autocannon -c 1 -d ${o.duration}; GET .../history?side=sideA&interval=<i>&points=500, uncached`,
  );
  console.log(
    "| engine | interval | req/s | p50 / p99 ms | bare req/s | bare p50 / p99 ms | history rows | first derivation ms | one more take ms | whole again ms |",
  );
  console.log("|---|---|---:|---|---:|---|---:|---:|---:|---:|");
  for (const engine of o.engines) {
    const r = await bench(engine);
    for (const [interval, x] of Object.entries(r.results)) {
      console.log(
        `| ${engine} | ${interval} | ${x.service.rps.toFixed(0)} | ${x.service.p50} / ${x.service.p99} | ${x.bare.rps.toFixed(0)} | ${x.bare.p50} / ${x.bare.p99} | ${r.historyRowCount} | ${r.firstMs.toFixed(0)} | ${r.nextMs.toFixed(0)} | ${r.wholeMs.toFixed(0)} |`,
      );
    }
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
