/**
 * The RPC source's freshness on a real validator: how long after a transaction is sent its effect
 * is in the store, for an indexer at "processed" and one at "confirmed" (each into its own SQLite
 * store), next to how long the sender waits for "confirmed". Needs the validator binary
 * (scripts/setup-test-validator.sh).
 *
 *   npx tsx scripts/bench-rpc-indexer.ts [--n 60]
 */
import { Command } from "commander";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestChain } from "../harness/chain";
import { RpcEngine } from "../harness/rpc-engine";
import { TestValidator } from "../harness/validator";
import { OffersWorld, UNIT } from "../harness/offers-world";
import { RpcSource } from "../indexer/sources/rpc";
import { StoreWriter } from "../indexer/store/writer";
import { openStore, type Store } from "../indexer/store/db";
import { OFFERS_PROGRAM, POOLS_PROGRAM } from "../indexer/decode";

import { sizeOption } from "../stack/config/settings";
import { exitOnError, strictExit } from "../stack/config/cli";
const o = strictExit(new Command().name("bench-rpc-indexer"))
  .addOption(sizeOption("--n <n>", "takes to time", 60))
  .parse()
  .opts<{ n: number }>();
const N = o.n;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function main() {
  const validator = await TestValidator.start();
  const dir = mkdtempSync(join(tmpdir(), "bench-rpc-"));
  const stores: { commitment: "processed" | "confirmed"; store: Store; source: RpcSource }[] = [];
  try {
    for (const commitment of ["processed", "confirmed"] as const) {
      const store = await openStore(join(dir, `${commitment}.db`));
      const writer = await StoreWriter.open(store, commitment);
      const source = new RpcSource({
        url: validator.rpcUrl,
        wsUrl: validator.wsUrl,
        programs: [OFFERS_PROGRAM, POOLS_PROGRAM],
        commitment,
        name: commitment,
        reconcileMs: 0,
        flushMs: 10,
      });
      await source.start(null, (b) => writer.apply(b));
      stores.push({ commitment, store, source });
    }
    const w = await OffersWorld.create({ chain: TestChain.over(new RpcEngine(validator.connection("confirmed"), validator.payer)) });
    const [creator, taker] = [await w.user(1_000n * UNIT), await w.user(1_000n * UNIT)];
    const contract = await w.contract();
    const { offer } = await w.createOffer(creator, contract, { total: 500n * UNIT, target: 500n * UNIT });
    const visible: Record<string, number[]> = { processed: [], confirmed: [] };
    const confirmedAt: number[] = [];
    for (let i = 0; i < N; i++) {
      const revision = (await w.offer(offer)).revision;
      const t0 = performance.now();
      // Poll both stores every 2 ms while the take is sent and confirmed.
      const watchers = stores.map(async (s) => {
        for (;;) {
          const row = await s.store.db.selectFrom("offers").select("revision").where("address", "=", offer.toBase58()).executeTakeFirst();
          if (row && BigInt(row.revision) > revision) return performance.now() - t0;
          if (performance.now() - t0 > 30_000) throw new Error(`${s.commitment}: not visible after 30 s`);
          await new Promise((r) => setTimeout(r, 2));
        }
      });
      const r = await w.take(taker, offer, UNIT, revision);
      if (!r.ok) throw new Error(`take: ${r.error}`);
      confirmedAt.push(performance.now() - t0);
      const [p, c] = await Promise.all(watchers);
      visible.processed.push(p);
      visible.confirmed.push(c);
    }
    const line = (name: string, xs: number[]) => `| ${name} | ${pct(xs, 50).toFixed(0)} | ${pct(xs, 90).toFixed(0)} | ${pct(xs, 99).toFixed(0)} |`;
    console.log(`\n${N} takes on solana-test-validator (milliseconds after the transaction was sent)\n`);
    console.log("| what | p50 | p90 | p99 |\n|---|---:|---:|---:|");
    console.log(line("in the store, indexer at processed", visible.processed));
    console.log(line("in the store, indexer at confirmed", visible.confirmed));
    console.log(line("sender sees confirmed (getTransaction readable)", confirmedAt));
  } finally {
    for (const s of stores) {
      await s.source.stop();
      await s.store.close();
    }
    await validator.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), exitOnError);
