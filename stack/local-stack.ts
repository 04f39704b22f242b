/**
 * The local stack in one process: the offers program in an in-process SVM (bankrun by default),
 * the indexer fed after every transaction, the store (SQLite file or PostgreSQL URL), custody,
 * the write service and the settlement worker, and the HTTP app (the read API's server when
 * present, with the write routes mounted on it). Used by tests, benchmarks and `scripts/admin.ts
 * local`.
 */
import { Keypair, type PublicKey } from "@solana/web3.js";
import type { Hono } from "hono";
import type { ServerType } from "@hono/node-server";
import type { Kysely } from "kysely";
import { openStore, type Store } from "../indexer/store/db";
import { StoreWriter } from "../indexer/store/writer";
import { BankrunSource } from "../indexer/sources/bankrun";
import type { Database } from "../indexer/store/schema";
import { OFFERS_PROGRAM_ID, type LimitsArgs } from "../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../idl/client/pools";
import { startLocalChain, type LocalChain } from "../service/chain/local-chain";
import type { EngineName } from "../harness/engines";
import { ServiceKey } from "../service/custody/crypto";
import { changeFeedFor } from "./roles";
import { assembleStack, observabilityOf, type AppBuilder, type ServiceParts, type ServicePartsOptions } from "./service-parts";

export const OFFERS_BASE = "/api/bets-usdc/offers";

export interface LocalStackOptions extends ServicePartsOptions {
  storeUrl?: string;
  engine?: EngineName;
  feeBps?: number;
  limits?: LimitsArgs;
  serviceKey?: ServiceKey;
  service?: Keypair;
  /** Builds the HTTP app; default: the server's `createApp` (reads, writes, GraphQL). */
  app?: AppBuilder<Omit<LocalStack, "app" | "server" | "url" | "stop">>;
  port?: number;
  /** The address the HTTP server binds (default 127.0.0.1; HOST / --host). */
  host?: string;
  /**
   * Where the indexer's changes go: "local" (default) to this process only; "postgres" (a
   * PostgreSQL store) through NOTIFY, so API replicas on the same store hear them (stack/roles.ts).
   */
  changes?: "local" | "postgres";
}

export interface LocalStack extends ServiceParts {
  chain: LocalChain;
  store: Store;
  db: Kysely<Database>;
  source: BankrunSource;
  writer: StoreWriter;
  app: Hono;
  server: ServerType;
  url: string;
  stop(): Promise<void>;
}

export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const obs = observabilityOf(opts);
  const store = await openStore(opts.storeUrl ?? ":memory:");
  const writer = await StoreWriter.open(store, "bankrun");
  const changes = await changeFeedFor(store, { publish: true, listen: true, shared: opts.changes === "postgres", log: obs.log });
  writer.onApplied((c) => void changes.publish(c));
  let source!: BankrunSource;
  const service = opts.service ?? Keypair.generate();
  const chain = await startLocalChain({
    service,
    engine: opts.engine,
    feeBps: opts.feeBps,
    limits: opts.limits,
    beforeInit: async (gateway) => {
      source = new BankrunSource(
        { getAccount: (a: PublicKey) => gateway.getAccount(a), getSlot: () => gateway.getSlot() },
        { programs: [OFFERS_PROGRAM_ID.toBase58(), POOLS_PROGRAM_ID.toBase58()] },
      );
      await source.start(await writer.checkpoint(), obs.indexerSink(writer));
      gateway.onProcessed((tx) => source.onTransaction(tx));
    },
  });
  return assembleStack(
    { chain, store, source, writer, changes },
    {
      ...opts,
      // The local stack's chain and (by default) store live in memory: a fresh key fits them.
      serviceKey: opts.serviceKey ?? ServiceKey.generate(),
      obs,
      headSlot: async () => Number(await chain.gateway.getSlot()),
    },
  );
}
