/**
 * Indexer ingestion benchmark.
 *   npx tsx scripts/bench-indexer.ts [--updates 100000] [--batch 1000] [--pg postgres://...] [--no-pg]
 * Account data comes from the real offers program (a short random scenario in bankrun); the
 * updates reuse those bytes under distinct addresses and rising slots. Prints:
 * - indexer ingestion (decode + ordered upsert + checkpoint per batch) on SQLite and PostgreSQL;
 * - a plain better-sqlite3 loop over the same updates (same decoder, one prepared
 *   INSERT .. ON CONFLICT DO UPDATE per row, one transaction per batch) and the ratio;
 * - stale rejection (the same updates again) vs apply;
 * - visibility latency on the local stack: chain processed a take -> the row readable (p50/p99);
 * - on PostgreSQL, ingestion with change notifications on (every applied batch announced through
 *   NOTIFY, service/changes/pg-change-feed.ts, and heard by a listening session) versus off, in the
 *   same run: one warm-up pair not counted, then --notify-runs pairs in alternating order (off-on,
 *   on-off, ...; fresh schema each); best and median of each, their ratios, each pair's ratio, the
 *   runs' spread (the noise), and the CPU time per update off and on of this process and of the
 *   run's PostgreSQL backends (from /proc, when the server runs on this machine): far less
 *   disturbed by other work than the rates;
 *   --notify-batch sets the batch size of these runs (default --batch), --notify-only skips the rest.
 */
import { Command } from "commander";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import pg from "pg";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PublicKey } from "@solana/web3.js";
import { openStore, dropPostgresSchema } from "../indexer/store/db";
import { POSITION_COLUMNS } from "../indexer/store/schema";
import { StoreWriter } from "../indexer/store/writer";
import { BankrunSource } from "../indexer/sources/bankrun";
import { OFFERS_PROGRAM, decodeAccount } from "../indexer/decode";
import type { AccountUpdate, Batch } from "../indexer/sources/types";
import { TestChain } from "../harness/chain";
import { PgChangeFeed } from "../service/changes/pg-change-feed";
import { OffersWorld, UNIT } from "../harness/offers-world";
import { median } from "./median";
import { alternatingPairs } from "./paired-runs";

const opts = new Command()
  .option("--updates <n>", "account updates", "100000")
  .option("--batch <n>", "updates per batch (one transaction)", "1000")
  .option("--pg <url>", "PostgreSQL URL", "postgres://postgres@127.0.0.1:5432/test")
  .option("--no-pg", "skip PostgreSQL")
  .option("--latency <n>", "takes for the visibility measurement", "300")
  .option("--notify-runs <n>", "PostgreSQL: pairs of runs with change notifications off and on (after one warm-up pair)", "5")
  .option("--notify-batch <n>", "PostgreSQL: updates per batch in the notification runs (default --batch)")
  .option("--notify-only", "only the notifications on/off comparison")
  .parse(process.argv)
  .opts<{ updates: string; batch: string; pg: string | false; latency: string; notifyRuns: string; notifyBatch?: string; notifyOnly?: boolean }>();

const N = Number(opts.updates);
const B = Number(opts.batch);

async function sampleAccounts(): Promise<{ samples: Buffer[]; world: OffersWorld; chain: TestChain }> {
  const chain = await TestChain.start();
  const world = await OffersWorld.create({ chain });
  const a = await world.user(),
    b = await world.user();
  const contract = await world.contract();
  const samples: Buffer[] = [];
  for (let i = 0; i < 20; i++) {
    const { offer } = await world.createOffer(a, contract, { total: BigInt(5 + i) * UNIT, target: BigInt(6 + i) * UNIT });
    await world.take(b, offer, UNIT * 2n);
    samples.push((await chain.account(offer))!.data, (await chain.account(world.positionOf(offer, b)))!.data);
  }
  return { samples, world, chain };
}

function makeBatches(samples: Buffer[], slot0: number, B = Number(opts.batch)): Batch[] {
  const keys = Array.from({ length: N }, () => new PublicKey(randomBytes(32)).toBase58());
  const batches: Batch[] = [];
  for (let i = 0; i < N; i += B) {
    const slot = slot0 + i / B;
    const accounts: AccountUpdate[] = [];
    for (let j = i; j < Math.min(N, i + B); j++)
      accounts.push({ slot, writeVersion: j, pubkey: keys[j], owner: OFFERS_PROGRAM, data: samples[j % samples.length] });
    batches.push({ slot, writeVersion: Math.min(N, i + B) - 1, accounts, transactions: [] });
  }
  return batches;
}

async function indexerRun(url: string, batches: Batch[]) {
  const store = await openStore(url);
  const w = await StoreWriter.open(store, "bench");
  let t = performance.now();
  for (const b of batches) await w.apply(b);
  const apply = N / ((performance.now() - t) / 1000);
  t = performance.now();
  for (const b of batches) await w.apply(b);
  const stale = N / ((performance.now() - t) / 1000);
  if (w.stats.applied !== N || w.stats.stale !== N) throw new Error(`unexpected stats ${JSON.stringify(w.stats)}`);
  await store.close();
  return { apply, stale };
}

/**
 * Ingestion on a fresh schema with the change feed on or off; with it on, until the last
 * notification was heard too. Also this process's CPU time per update (user + system): the
 * notification path's own cost on the client side (encoding, and the listener's decoding, which
 * in a deployment runs in the API processes), far less disturbed by other work than wall time.
 */
/**
 * CPU seconds of the PostgreSQL backends serving one run (every connection of a run carries the
 * run's application_name: the writer's pool, the publishing and the listening session), read from
 * /proc on this machine; null when the server is elsewhere.
 */
async function backendCpu(admin: pg.Client, app: string): Promise<Map<number, number> | null> {
  const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [app]);
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      return null;
    }
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out.set(pid, (Number(f[11]) + Number(f[12])) / CLK_TCK); // utime, stime (fields 14, 15)
  }
  return out;
}
const CLK_TCK = 100;

async function notifyRun(base: string, batches: Batch[], notify: boolean, admin: pg.Client) {
  const app = `bench_n_${randomBytes(4).toString("hex")}`;
  const url = `${base}?schema=${app}&application_name=${app}`;
  const store = await openStore(url);
  const w = await StoreWriter.open(store, "bench");
  const feed = notify ? new PgChangeFeed({ storeUrl: url }) : null;
  const listener = notify ? new PgChangeFeed({ storeUrl: url }) : null;
  let lastHeard = 0;
  listener?.subscribe((c) => (lastHeard = Math.max(lastHeard, c.slot)));
  await listener?.listen();
  if (feed) w.onApplied((c) => void feed.publish(c));
  try {
    const last = batches[batches.length - 1].slot;
    const pg0 = await backendCpu(admin, app);
    const cpu0 = process.cpuUsage();
    const t = performance.now();
    for (const b of batches) await w.apply(b);
    if (listener) while (lastHeard < last) await new Promise((r) => setTimeout(r, 1));
    const rate = N / ((performance.now() - t) / 1000);
    const cpu = process.cpuUsage(cpu0);
    const pg1 = await backendCpu(admin, app);
    // Backends that started during the run count from zero.
    const pgSeconds = pg0 && pg1 ? [...pg1].reduce((sum, [pid, sec]) => sum + sec - (pg0.get(pid) ?? 0), 0) : NaN;
    await feed?.close();
    await listener?.close();
    return {
      rate,
      cpuUsPerUpdate: (cpu.user + cpu.system) / N,
      pgUsPerUpdate: (pgSeconds * 1e6) / N,
      sent: feed?.counts.sent ?? 0,
      heard: listener?.counts.heard ?? 0,
    };
  } finally {
    await feed?.close();
    await listener?.close();
    await store.close();
    await dropPostgresSchema(url);
  }
}

async function plainLoop(path: string, batches: Batch[]) {
  const store = await openStore(path);
  const h = store.sqlite!;
  const cols = [
    "address",
    "contract",
    "creator",
    "creator_token",
    "rent_payer",
    "nonce",
    "side",
    "status",
    "fee_bps",
    "creator_total_micros",
    "taker_target_micros",
    "minimum_take_micros",
    "taker_filled_micros",
    "creator_allocated_micros",
    "creator_refunded_micros",
    "revision",
    "fill_count",
    "position_count",
    "settled_position_count",
    "created_at",
    "closed_at",
    "slot",
    "write_version",
    "deleted",
  ];
  const pcols = [...POSITION_COLUMNS];
  const stmt = (table: string, c: string[]) =>
    h.prepare(
      `INSERT INTO ${table} (${c.join(",")}) VALUES (${c.map(() => "?").join(",")}) ON CONFLICT(address) DO UPDATE SET ${c
        .slice(1)
        .map((x) => `${x}=excluded.${x}`)
        .join(",")}`,
    );
  const ins = { offers: stmt("offers", cols), positions: stmt("positions", pcols) };
  const order: Record<string, string[]> = { offers: cols, positions: pcols };
  const tx = h.transaction((b: Batch) => {
    for (const u of b.accounts) {
      const d = decodeAccount(u)!;
      const r: Record<string, unknown> = { address: u.pubkey, ...d.row, slot: u.slot, write_version: u.writeVersion, deleted: 0 };
      (ins as Record<string, ReturnType<typeof stmt>>)[d.table].run(...order[d.table].map((k) => r[k]));
    }
  });
  const t = performance.now();
  for (const b of batches) tx(b);
  const rate = N / ((performance.now() - t) / 1000);
  await store.close();
  return rate;
}

async function latency(world: OffersWorld, chain: TestChain, n: number) {
  const dir = mkdtempSync(join(tmpdir(), "bench-lat-"));
  const store = await openStore(join(dir, "s.db"));
  const writer = await StoreWriter.open(store, "bankrun");
  const source = new BankrunSource({ getAccount: (a) => chain.account(a), getSlot: () => chain.slot() }, { programs: [OFFERS_PROGRAM] });
  await source.start(null, (b) => writer.apply(b));
  const lat: number[] = [];
  let pending: { offer: string; t0: number } | null = null;
  chain.observe(async (tx) => {
    const t0 = performance.now();
    await source.onTransaction(tx);
    if (pending) pending.t0 = t0;
  });
  const a = await world.user(100_000n * UNIT),
    b = await world.user(100_000n * UNIT);
  const contract = await world.contract();
  const { offer } = await world.createOffer(a, contract, { total: 400n * UNIT, target: 400n * UNIT });
  for (let i = 0; i < n; i++) {
    const rev = (await world.offer(offer)).revision;
    if (rev > 200n) break;
    pending = { offer: offer.toBase58(), t0: 0 };
    const r = await world.take(b, offer, UNIT);
    if (!r.ok) break;
    const row = await store.db.selectFrom("offers").select("revision").where("address", "=", offer.toBase58()).executeTakeFirstOrThrow();
    if (BigInt(row.revision) !== rev + 1n) throw new Error("not visible");
    lat.push(performance.now() - pending.t0);
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  lat.sort((x, y) => x - y);
  return { n: lat.length, p50: lat[Math.floor(lat.length * 0.5)], p99: lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.99))] };
}

const { samples, world, chain } = await sampleAccounts();
const batches = makeBatches(samples, 1_000);
const dir = mkdtempSync(join(tmpdir(), "bench-idx-"));
const fmt = (x: number) => Math.round(x).toLocaleString("en-US");
console.log(`updates ${N}, batch ${B}, samples ${samples.length} real offer/position accounts`);

if (!opts.notifyOnly) {
  // Plain loop before and after the indexer run (fresh files); the better of the two counts.
  const plain1 = await plainLoop(join(dir, "plain1.db"), batches);
  const sq = await indexerRun(join(dir, "indexer.db"), batches);
  const plain = Math.max(plain1, await plainLoop(join(dir, "plain2.db"), batches));
  console.log(`SQLite  indexer: ${fmt(sq.apply)} updates/s applied, ${fmt(sq.stale)} stale updates/s rejected (x${(sq.stale / sq.apply).toFixed(1)})`);
  console.log(`SQLite  plain better-sqlite3 upsert loop: ${fmt(plain)} updates/s; indexer/plain = ${(sq.apply / plain).toFixed(2)}`);
}
if (opts.pg && !opts.notifyOnly) {
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  const url = `${opts.pg}?schema=${schema}`;
  try {
    const pg = await indexerRun(url, batches);
    console.log(`Postgres indexer: ${fmt(pg.apply)} updates/s applied, ${fmt(pg.stale)} stale updates/s rejected (x${(pg.stale / pg.apply).toFixed(1)})`);
  } finally {
    await dropPostgresSchema(url);
  }
}
if (opts.pg) {
  const pgUrl = opts.pg;
  const nb = Number(opts.notifyBatch ?? B);
  const nbatches = nb === B ? batches : makeBatches(samples, 1_000, nb);
  type Run = Awaited<ReturnType<typeof notifyRun>>;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  // One pair first, not counted: the JIT, PostgreSQL's caches and the notification queue warmed.
  await notifyRun(pgUrl, nbatches, false, admin);
  await notifyRun(pgUrl, nbatches, true, admin);
  // Pairs in alternating order (off-on, on-off, ...): a drift in the machine's load hits both alike.
  const { a: off, b: on } = await alternatingPairs(
    () => notifyRun(pgUrl, nbatches, false, admin),
    () => notifyRun(pgUrl, nbatches, true, admin),
    Number(opts.notifyRuns),
  );
  await admin.end();
  const rates = (rs: Run[]) => rs.map((r) => r.rate);
  const bestOff = Math.max(...rates(off));
  const bestOn = on.reduce((a, b) => (b.rate > a.rate ? b : a));
  const pairs = on.map((r, i) => r.rate / off[i].rate);
  const cpu = (rs: Run[]) => median(rs.map((r) => r.cpuUsPerUpdate));
  const pgCpu = (rs: Run[]) => median(rs.map((r) => r.pgUsPerUpdate));
  const both = (rs: Run[]) => cpu(rs) + pgCpu(rs);
  const spread = (xs: number[]) => Math.max(...xs) / Math.min(...xs) - 1;
  console.log(
    `Postgres ingestion, batch ${nb}, change notifications off: ${rates(off).map(fmt).join(" / ")} updates/s; on: ${rates(on).map(fmt).join(" / ")} updates/s ` +
      `(best run: ${bestOn.sent} NOTIFYs for ${nbatches.length} batches, ${bestOn.heard} heard)\n` +
      `  on/off: best of ${off.length} ${(bestOn.rate / bestOff).toFixed(2)}, medians ${(median(rates(on)) / median(rates(off))).toFixed(2)}, ` +
      `pairs ${pairs.map((x) => x.toFixed(2)).join(" / ")} (median ${median(pairs).toFixed(2)})\n` +
      `  noise: spread of the off runs ${(spread(rates(off)) * 100).toFixed(0)}%, of the on runs ${(spread(rates(on)) * 100).toFixed(0)}%\n` +
      `  this process's CPU per update (median): off ${cpu(off).toFixed(1)} us, on ${cpu(on).toFixed(1)} us (notifications: +${(cpu(on) - cpu(off)).toFixed(1)} us, ${((cpu(on) / cpu(off) - 1) * 100).toFixed(0)}%)\n` +
      `  PostgreSQL backends' CPU per update (median): off ${pgCpu(off).toFixed(1)} us, on ${pgCpu(on).toFixed(1)} us; ` +
      `both: off ${both(off).toFixed(1)} us, on ${both(on).toFixed(1)} us, off/on = ${(both(off) / both(on)).toFixed(2)} (what on/off of the rates comes to where CPU is the bound)`,
  );
}
if (!opts.notifyOnly) {
  const lat = await latency(world, chain, Number(opts.latency));
  console.log(`visibility on the local stack (bankrun -> SQLite, ${lat.n} takes): p50 ${lat.p50.toFixed(2)} ms, p99 ${lat.p99.toFixed(2)} ms`);
}
rmSync(dir, { recursive: true, force: true });
