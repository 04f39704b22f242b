/**
 * Rebuilds the indexer store from chain state, with a progress bar.
 *
 *   npx tsx scripts/backfill.ts --store data/indexer.db --rpc http://127.0.0.1:8899 [--ws ws://...] [--commitment confirmed] [--history 10000] [--reset]
 *   npx tsx scripts/backfill.ts --store postgres://postgres@127.0.0.1:5432/test --replay capture.jsonl
 *   npx tsx scripts/backfill.ts --store /tmp/local.db --local 300     # a local bankrun chain: runs N random offer actions, then backfills from it
 *
 * --store: SQLite path or postgres:// URL. The chain tables are rebuilt; catalog tables are kept.
 */
import { Command, Option } from "commander";
import cliProgress from "cli-progress";
import type { Commitment } from "@solana/web3.js";
import type { AccountSource } from "../indexer/sources/types";

import { SETTINGS } from "../stack/config/settings";
import { arg, enumValue, positiveValue } from "../stack/config/values";
import { ConfigError, exitOnError, strictExit } from "../stack/config/cli";

const COMMITMENTS = ["processed", "confirmed", "finalized"] as const satisfies readonly Commitment[];
const o = strictExit(new Command().name("backfill"))
  .addOption(SETTINGS.store().makeOptionMandatory())
  .addOption(SETTINGS.rpc())
  .addOption(SETTINGS.ws())
  .addOption(new Option("--commitment <c>", COMMITMENTS.join(" | ")).argParser(arg(enumValue(COMMITMENTS))).default("confirmed"))
  .addOption(new Option("--history <n>", "transactions of history to read per program").argParser(arg(positiveValue)).default(10_000))
  .option("--replay <file>", "a recorded stream (JSONL) instead of a chain")
  .addOption(new Option("--local <actions>", "start a local bankrun chain, run N random offer actions on it, backfill from it").argParser(arg(positiveValue)))
  .option("--reset", "empty the chain tables first", false)
  .parse(process.argv)
  .opts<{ store: string; rpc?: string; ws?: string; commitment: Commitment; history: number; replay?: string; local?: number; reset: boolean }>();

// The indexer is loaded only once the command line is accepted (a refusal exits at once).
const [{ openStore }, { backfill }, { storeChecksum }, { RpcSource }, { ReplaySource }, { BankrunSource }, { OFFERS_PROGRAM, knownOwners }] = await Promise.all(
  [
    import("../indexer/store/db"),
    import("../indexer/backfill"),
    import("../indexer/store/checksum"),
    import("../indexer/sources/rpc"),
    import("../indexer/sources/replay"),
    import("../indexer/sources/bankrun"),
    import("../indexer/decode"),
  ],
);

async function localSource(actions: number): Promise<AccountSource> {
  // The local chain of tests and simulations (the compiled programs in bankrun).
  const { TestChain } = await import("../harness/chain");
  const { OffersWorld } = await import("../harness/offers-world");
  const { runScenario } = await import("../harness/indexer-scenario");
  const chain = await TestChain.start();
  const source = new BankrunSource({ getAccount: (a) => chain.account(a), getSlot: () => chain.slot() }, { programs: [OFFERS_PROGRAM] });
  chain.observe((tx) => source.onTransaction(tx));
  const w = await OffersWorld.create({ chain });
  process.stderr.write(`local chain: running ${actions} actions...\n`);
  await runScenario(w, { seed: 1, actions });
  await source.drain();
  return source;
}

async function main() {
  const programs = knownOwners();
  const source: AccountSource = o.rpc
    ? new RpcSource({ url: o.rpc, wsUrl: o.ws, programs, commitment: o.commitment, historyLimit: o.history })
    : o.replay
      ? new ReplaySource(o.replay)
      : o.local
        ? await localSource(o.local)
        : (() => {
            throw new ConfigError("one of --rpc, --replay, --local is required");
          })();
  const store = await openStore(o.store);
  const bar = new cliProgress.SingleBar(
    { format: "backfill [{bar}] {value}/{total} accounts+transactions | {eta}s left", hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(1, 0);
  const t0 = performance.now();
  const writer = await backfill(store, source, { reset: o.reset, onTotal: (n) => bar.setTotal(Math.max(1, n)), onProgress: (d) => bar.update(d) });
  bar.stop();
  const secs = (performance.now() - t0) / 1000;
  console.log(
    JSON.stringify({ source: source.name, seconds: Number(secs.toFixed(2)), ...writer.stats, contentChecksum: await storeChecksum(store.db, "content") }),
  );
  await store.close();
}

await main().catch(exitOnError);
