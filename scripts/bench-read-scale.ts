/**
 * Read API at scale: 100,000 offers (on 2,000 contracts with catalog rows, 500 creators)
 * written straight into a SQLite store and a PostgreSQL store (valid rows as the indexer writes
 * them, bulk-inserted: no chain), then the HTTP app over each, measured with autocannon: the
 * first browse page, a deep page (page 2,000 of 20) and text searches (`query=`), with the
 * response cache off (every request runs its queries: what distinct queries cost) and on (as
 * served: the same URL again within a second is answered from memory). A list's total is counted once per
 * filter per store generation (ReadService); its first, uncounted request is timed separately
 * ("cold").
 *
 *   npx tsx scripts/bench-read-scale.ts [--offers 100000] [--duration 10] [--connections 10] [--engines sqlite,postgres]
 */
import { Command } from "commander";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PublicKey } from "@solana/web3.js";
import { sql, type Kysely } from "kysely";
import { dropPostgresSchema, openStore, type Store } from "../indexer/store/db";
import type { Database, OffersTable, ContractsTable, ContractCatalogTable } from "../indexer/store/schema";
import { createApp, listen } from "../graphql/server";
import { ReadService } from "../service/read/read-service";

process.env.LOG_LEVEL ??= "silent";

import { durationOption, enginesOption, sizeOption } from "../stack/config/settings";
import { strictExit } from "../stack/config/cli";
import { load as loadRun } from "./autocannon";
const options = () =>
  strictExit(new Command().name("bench-read-scale"))
    .addOption(sizeOption("--offers <n>", "offers to seed", 100_000))
    .addOption(durationOption("--duration <s>", "length of each run (10, 30s, 2m)", 10))
    .addOption(sizeOption("--connections <n>", "concurrent connections", 10))
    .addOption(enginesOption())
    .option("--pg <url>", "PostgreSQL server", process.env.INDEXER_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test")
    .parse()
    .opts<{ offers: number; duration: number; connections: number; engines: ("sqlite" | "postgres")[]; pg: string }>();
let o!: ReturnType<typeof options>;

const TEAMS = ["Lions", "Tigers", "Eagles", "Sharks", "Wolves", "Bears", "Falcons", "Rovers", "United", "City", "Athletic", "Rangers", "Comets", "Giants"];
const COMPETITIONS = ["Premier League", "Champions Cup", "National Series", "World Open", "Super League", "Grand Prix"];
const SPORTS = ["football", "basketball", "tennis", "ice-hockey", "baseball", "cricket"];
const STATUSES = ["Open", "Open", "Open", "Open", "Open", "Open", "Open", "Filled", "Closed", "Settled"];
const NOW = 1_900_000_000;
const address = () => new PublicKey(randomBytes(32)).toBase58();

/** Valid rows: what the indexer writes for contracts, their catalog, offers and the program Config. */
export function scaleRows(offerCount: number, contractCount = 2_000, creatorCount = 500) {
  const contracts: ContractsTable[] = [];
  const catalog: ContractCatalogTable[] = [];
  for (let i = 0; i < contractCount; i++) {
    const a = address();
    const home = TEAMS[i % TEAMS.length];
    const away = TEAMS[(i * 5 + 3) % TEAMS.length];
    contracts.push({
      address: a,
      template_id: `t${i}`,
      event_id: `e${i}`,
      cutoff_at: NOW + 86_400 + i,
      resolution_deadline: NOW + 172_800 + i,
      status: "Open",
      result: "none",
      created_at: NOW - 86_400,
      resolved_at: null,
      slot: 1,
      write_version: i,
      deleted: 0,
    });
    catalog.push({
      contract: a,
      title: `Match ${i}: will the ${home} beat the ${away}?`,
      description: "",
      event: `${home} ${i} vs ${away} ${i}`,
      sport: SPORTS[i % SPORTS.length],
      competition: COMPETITIONS[i % COMPETITIONS.length],
      starts_at: NOW + 86_400,
      side_a_label: home,
      side_b_label: away,
      visuals_json: "[]",
      updated_at: NOW,
    });
  }
  const creators = Array.from({ length: creatorCount }, address);
  const offers: OffersTable[] = [];
  for (let i = 0; i < offerCount; i++) {
    const status = STATUSES[i % STATUSES.length];
    const creatorTotal = 1_000_000 * (1 + (i % 50));
    const target = 1_000_000 * (2 + (i % 50));
    const filled = status === "Open" ? 0 : target;
    offers.push({
      address: address(),
      contract: contracts[(i * 7) % contractCount].address,
      creator: creators[i % creatorCount],
      creator_token: address(),
      rent_payer: address(),
      nonce: String(i),
      side: i % 2 ? "sideA" : "sideB",
      status,
      fee_bps: 1000,
      creator_total_micros: String(creatorTotal),
      taker_target_micros: String(target),
      minimum_take_micros: "1000000",
      taker_filled_micros: String(filled),
      creator_allocated_micros: String(filled ? creatorTotal : 0),
      creator_refunded_micros: "0",
      revision: filled ? 2 : 1,
      fill_count: filled ? 1 : 0,
      position_count: filled ? 1 : 0,
      settled_position_count: status === "Settled" ? 1 : 0,
      created_at: NOW - offerCount + i,
      closed_at: status === "Closed" || status === "Settled" ? NOW : null,
      expires_at: null,
      slot: 2 + Math.floor(i / 100),
      write_version: i,
      deleted: 0,
    });
  }
  const config = {
    address: address(),
    authority: address(),
    mint: address(),
    treasury: address(),
    vault: address(),
    fee_bps: 1000,
    offers_enabled: 1,
    minimum_creator_micros: "1000000",
    minimum_take_micros: "1000000",
    maximum_wager_micros: "1000000000",
    warning_ratio_numerator: "5",
    warning_ratio_denominator: "1",
    minimum_odds_numerator: "1",
    minimum_odds_denominator: "100",
    maximum_odds_numerator: "100",
    maximum_odds_denominator: "1",
    slot: 1,
    write_version: 0,
    deleted: 0,
  };
  return { contracts, catalog, offers, config };
}

/** Bulk insert in chunks (multi-row inserts; one transaction per table). */
async function insertAll<T extends keyof Database>(db: Kysely<Database>, table: T, rows: Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  const chunk = Math.max(1, Math.floor(30_000 / Object.keys(rows[0]).length));
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += chunk)
      await trx
        .insertInto(table)
        .values(rows.slice(i, i + chunk) as never)
        .execute();
  });
}

export async function seedScaleStore(store: Store, offerCount: number): Promise<void> {
  const r = scaleRows(offerCount);
  await insertAll(store.db, "config", [r.config]);
  await insertAll(store.db, "contracts", r.contracts as never);
  await insertAll(store.db, "contract_catalog", r.catalog as never);
  await insertAll(store.db, "offers", r.offers as never);
  await insertAll(store.db, "checkpoints", [{ source: "seed", slot: 2 + Math.floor(offerCount / 100), write_version: 0, cursor: "", updated_at: NOW }]);
  // What autovacuum and a periodic ANALYZE give a long-running store: statistics, and on PostgreSQL a visibility map (index-only scans).
  await (store.engine === "postgres" ? sql`vacuum analyze` : sql`analyze`).execute(store.db);
}

/** One run (./autocannon.ts). */
const load = (url: string) => loadRun(url, { connections: o.connections, duration: o.duration });

async function timed(url: string): Promise<number> {
  const t = performance.now();
  const r = await fetch(url);
  if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
  await r.arrayBuffer();
  return performance.now() - t;
}

const CASES: { name: string; query: string; target: number }[] = [
  { name: "browse, first page", query: "?pageSize=20", target: 25 },
  { name: "browse, page 2,000", query: "?pageSize=20&page=2000", target: 50 },
  { name: "search, one word (`query=tigers`)", query: "?query=tigers", target: 50 },
  { name: "search, two words, prefix (`query=premier lea`)", query: "?query=premier%20lea", target: 50 },
  { name: "search, rare (`query=match 1234`)", query: "?query=match%201234", target: 50 },
  { name: "search, page 50 (`query=tigers&page=50`)", query: "?query=tigers&page=50", target: 50 },
];

async function main() {
  o = options();
  const n = o.offers;
  console.log(`${n} offers on 2,000 contracts; autocannon -c ${o.connections} -d ${o.duration} per run; server and load generator share the machine's cores\n`);
  console.log("| store | request | response cache | cold ms (first, counts) | req/s | p50 ms | p99 ms | target p99 |");
  console.log("|---|---|---|---:|---:|---:|---:|---|");
  for (const engine of o.engines) {
    const dir = mkdtempSync(join(tmpdir(), "bench-scale-"));
    const url = engine === "postgres" ? `${o.pg}?schema=bench_scale_${randomBytes(4).toString("hex")}` : join(dir, "store.sqlite");
    const store = await openStore(url);
    const t0 = performance.now();
    await seedScaleStore(store, n);
    console.error(`${engine}: seeded ${n} offers in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const read = new ReadService({ db: store.db, now: () => NOW, anonymousTtlMs: 0 });
    const http = await listen(createApp({ read, custody: null, graphiql: false, responseCacheTtlMs: 0 }));
    const cachedRead = new ReadService({ db: store.db, now: () => NOW });
    const cached = await listen(createApp({ read: cachedRead, custody: null, graphiql: false }));
    try {
      for (const c of CASES) {
        for (const [mode, base] of [
          ["off", http.url],
          ["on", cached.url],
        ] as const) {
          const u = `${base}/api/bets-usdc/offers/${c.query}`;
          const cold = await timed(u);
          const r = await load(u);
          console.log(
            `| ${engine === "postgres" ? "PostgreSQL" : "SQLite"} | ${c.name} | ${mode} | ${cold.toFixed(1)} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | <= ${c.target} ms: ${r.p99 <= c.target ? "met" : "NOT met"} |`,
          );
        }
      }
    } finally {
      await http.close();
      await cached.close();
      read.close();
      cachedRead.close();
      await store.close();
      if (engine === "postgres") await dropPostgresSchema(url);
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1])
  main().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
