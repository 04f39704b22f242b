/**
 * Indexer command line.
 *   tsx indexer/cli.ts ingest --store <url|path> --replay <file.jsonl> [--group n] [--progress]
 *   tsx indexer/cli.ts run --store <url|path> --rpc <url> [--ws url] [--commitment confirmed]
 *   tsx indexer/cli.ts checksum --store <url|path> [--mode full|content]
 * `ingest` resumes from the store's checkpoint for the source, so it can be killed and rerun.
 */
import { Command } from "commander";
import { openStore } from "./store/db";
import { StoreWriter } from "./store/writer";
import { storeChecksum, tableChecksums } from "./store/checksum";
import { ReplaySource } from "./sources/replay";
import { RpcSource } from "./sources/rpc";
import { knownOwners } from "./decode";
import type { Commitment } from "@solana/web3.js";

const program = new Command().name("indexer");

program
  .command("ingest")
  .requiredOption("--store <url>", "SQLite path or postgres:// URL")
  .requiredOption("--replay <file>", "recorded batches (JSONL)")
  .option("--source <name>", "checkpoint name", "replay")
  .option("--group <n>", "batches per database transaction", "1")
  .option("--progress", "print the write version after every transaction")
  .action(async (o: { store: string; replay: string; source: string; group: string; progress?: boolean }) => {
    const store = await openStore(o.store);
    const writer = await StoreWriter.open(store, o.source);
    const from = await writer.checkpoint();
    process.stdout.write(`start ${from?.writeVersion ?? 0}\n`);
    const src = new ReplaySource(o.replay, { name: o.source, group: Number(o.group) });
    await src.start(from, async (b) => {
      await writer.apply(b);
      if (o.progress) process.stdout.write(`applied ${b.writeVersion}\n`);
    });
    process.stdout.write(`done ${JSON.stringify(writer.stats)}\n`);
    await store.close();
  });

program
  .command("run")
  .description("live ingestion from an RPC endpoint (snapshot + subscriptions + reconcile), resuming from the checkpoint")
  .requiredOption("--store <url>", "SQLite path or postgres:// URL")
  .requiredOption("--rpc <url>", "RPC endpoint")
  .option("--ws <url>", "websocket endpoint")
  .option("--commitment <c>", "processed | confirmed | finalized", "confirmed")
  .option("--reconcile-ms <n>", "periodic reconciling snapshot", "60000")
  .action(async (o: { store: string; rpc: string; ws?: string; commitment: Commitment; reconcileMs: string }) => {
    const store = await openStore(o.store);
    const name = `rpc:${o.rpc}`;
    const writer = await StoreWriter.open(store, name);
    const src = new RpcSource({
      url: o.rpc,
      wsUrl: o.ws,
      programs: knownOwners(),
      commitment: o.commitment,
      name,
      known: writer.knownAccounts(),
      reconcileMs: Number(o.reconcileMs),
      onError: (e) => console.error("rpc source:", e),
    });
    await src.start(await writer.checkpoint(), (b) => writer.apply(b));
    console.log(`indexing ${knownOwners().join(", ")} from ${o.rpc} into ${store.engine}`);
    const stop = async () => {
      await src.stop();
      await store.close();
      process.exit(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    setInterval(() => console.log(JSON.stringify(writer.stats)), 10_000);
  });

program
  .command("checksum")
  .requiredOption("--store <url>", "SQLite path or postgres:// URL")
  .option("--mode <mode>", "full or content", "full")
  .action(async (o: { store: string; mode: "full" | "content" }) => {
    const store = await openStore(o.store);
    console.log(JSON.stringify({ checksum: await storeChecksum(store.db, o.mode), tables: await tableChecksums(store.db, o.mode) }, null, 2));
    await store.close();
  });

await program.parseAsync(process.argv);
