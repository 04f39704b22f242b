/**
 * Write latency on the local stack (offers program in bankrun, indexer, SQLite store, HTTP over
 * loopback): time from request to the `pending` response, and from request to the change being
 * visible to a reader (the spec's tracking observables), for create, take and close.
 *
 *   npx tsx scripts/bench-writes.ts [--n 300] [--concurrency 1,8] [--async]
 *
 * Visibility is read with GET /api/bets-usdc/offers/<address> when the read API is mounted on
 * the stack (`viewer.role` creator after create, `revision` past the expected one after take,
 * `status` Closed after close); otherwise from the indexed store row the GET would serve (the
 * script says which).
 */
import { Command } from "commander";
import { startLocalStack, OFFERS_BASE } from "../stack/local-stack";
import { workedExampleCreate } from "../harness/api-requests";

import { sizeOption, sizesOption } from "../stack/config/settings";
import { strictExit } from "../stack/config/cli";
import { benchMatch } from "./bench-fixtures";

// Measurements, not an operated service: no access line per request unless LOG_LEVEL asks for it.
process.env.LOG_LEVEL ??= "silent";

const o = strictExit(new Command().name("bench-writes"))
  .addOption(sizeOption("--n <n>", "writes per operation and concurrency level", 300))
  .addOption(sizesOption("--concurrency <list>", "client concurrency levels, comma-separated", [1, 8]))
  .option("--async", "RPC-like submission: pending is answered before the chain processes the transaction")
  .parse()
  .opts<{ n: number; concurrency: number[]; async?: boolean }>();
const N = o.n;
const LEVELS = o.concurrency;
const UNIT = 1_000_000n;
/** Tracking poll interval (the spec says 2-3 s for clients; here short, to measure the lag). */
const POLL_MS = 5;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function main() {
  // Latency under load from a few users: the per-user bound on the service wallet
  // (service/writes/wallet-guard.ts) would refuse most of it, so it is off here.
  const s = await startLocalStack({ storeUrl: ":memory:", walletLimits: { writeBurst: 0, writesPerHour: 0, maxOpenOffers: 0, maxOpenPositions: 0 } });
  const contract = await benchMatch(s, "Bench", "Bench");
  const users: { token: string; wallet: string }[] = [];
  for (let i = 0; i < 16; i++) {
    const u = await s.admin.createUser(`bench${i}`);
    await s.admin.fund(u.name, 100_000n * UNIT);
    users.push({ token: (await s.custody.issueToken(u.id)).token, wallet: u.wallet.toBase58() });
  }
  s.chain.gateway.asyncSubmit = Boolean(o.async);
  const probe = await fetch(`${s.url}${OFFERS_BASE}/${contract.toBase58()}`);
  const viaGet = probe.status !== 404 || (await probe.text()).includes("error");
  const via = viaGet ? "GET /api/bets-usdc/offers/<address>" : "indexed store row (read API not mounted)";

  const post = async (path: string, body: unknown, token: string) => {
    const r = await fetch(`${s.url}${OFFERS_BASE}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    const j = (await r.json()) as Record<string, string>;
    if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(j)}`);
    return j;
  };
  const visible = async (address: string, token: string, pred: (o: Record<string, unknown>) => boolean) => {
    for (;;) {
      if (viaGet) {
        const r = await fetch(`${s.url}${OFFERS_BASE}/${address}`, { headers: { authorization: `Bearer ${token}` } });
        if (r.status === 200 && pred((await r.json()) as Record<string, unknown>)) return;
      } else {
        const row = await s.db.selectFrom("offers").selectAll().where("address", "=", address).executeTakeFirst();
        if (row && pred({ viewer: { role: "creator" }, revision: String(row.revision), status: row.status })) return;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };

  const results: string[] = [];
  let k = 0;
  for (const conc of LEVELS) {
    const pend: Record<string, number[]> = { create: [], take: [], close: [] };
    const seen: Record<string, number[]> = { create: [], take: [], close: [] };
    const t0 = performance.now();
    let next = 0;
    const client = async (ci: number) => {
      const creator = users[ci % users.length];
      const taker = users[(ci + 1) % users.length];
      while (next < N) {
        next++;
        let t = performance.now();
        const c = await post("/", workedExampleCreate(contract, `bench-${++k}-create`), creator.token);
        pend.create.push(performance.now() - t);
        await visible(c.offerAddress, creator.token, (x) => (x.viewer as { role?: string } | undefined)?.role === "creator");
        seen.create.push(performance.now() - t);
        t = performance.now();
        await post(`/${c.offerAddress}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: `bench-${k}-take` }, taker.token);
        pend.take.push(performance.now() - t);
        await visible(c.offerAddress, taker.token, (x) => BigInt(String(x.revision)) > 1n);
        seen.take.push(performance.now() - t);
        t = performance.now();
        await post(`/${c.offerAddress}/close`, { expectedRevision: "2", idempotencyKey: `bench-${k}-close` }, creator.token);
        pend.close.push(performance.now() - t);
        await visible(c.offerAddress, creator.token, (x) => x.status === "Closed");
        seen.close.push(performance.now() - t);
      }
    };
    await Promise.all(Array.from({ length: conc }, (_, i) => client(i)));
    const secs = (performance.now() - t0) / 1000;
    const total = pend.create.length + pend.take.length + pend.close.length;
    for (const op of ["create", "take", "close"]) {
      results.push(
        `| ${conc} | ${op} | ${pend[op].length} | ${pct(pend[op], 50).toFixed(1)} | ${pct(pend[op], 99).toFixed(1)} | ${pct(seen[op], 50).toFixed(1)} | ${pct(seen[op], 99).toFixed(1)} |`,
      );
    }
    results.push(`| ${conc} | all | ${total} writes in ${secs.toFixed(1)} s = ${(total / secs).toFixed(0)} writes/s | | | | |`);
  }
  console.log(`visibility read via: ${via}; submission: ${o.async ? "asynchronous (RPC-like)" : "synchronous (processed before pending)"}`);
  console.log("| clients | op | n | pending p50 ms | pending p99 ms | visible p50 ms | visible p99 ms |");
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const r of results) console.log(r);
  await s.stop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
