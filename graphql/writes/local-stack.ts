/**
 * The local stack in one process: the offers program in an in-process SVM (bankrun by default),
 * the indexer fed after every transaction, the store (SQLite file or PostgreSQL URL), custody,
 * the write service and the settlement worker, and the HTTP app (the read API's server when
 * present, with the write routes mounted on it). Used by tests, benchmarks and `scripts/admin.ts
 * local`.
 */
import { Keypair, type PublicKey } from "@solana/web3.js";
import { Hono } from "hono";
import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Kysely } from "kysely";
import { openStore, type Store } from "../../indexer/store/db";
import { StoreWriter } from "../../indexer/store/writer";
import { BankrunSource } from "../../indexer/sources/bankrun";
import type { Database } from "../../indexer/store/schema";
import { OFFERS_PROGRAM_ID, type LimitsArgs } from "../../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../../idl/client/pools";
import { startLocalChain, type LocalChain } from "../chain/local";
import type { EngineName } from "../chain/engines";
import { Custody } from "../custody/custody";
import { ServiceKey } from "../custody/crypto";
import { AdminOps } from "../custody/admin";
import { WriteService } from "./service";
import { createApp } from "../server";
import { ReadService } from "../read/service";
import { SettlementWorker } from "../worker/worker";

export const OFFERS_BASE = "/api/bets-usdc/offers";

export interface LocalStackOptions {
  storeUrl?: string;
  engine?: EngineName;
  feeBps?: number;
  limits?: LimitsArgs;
  serviceKey?: ServiceKey;
  service?: Keypair;
  /** Builds the HTTP app; default: the server's `createApp` (reads, writes, GraphQL). */
  app?: (s: Omit<LocalStack, "app" | "server" | "url" | "stop">) => Promise<Hono> | Hono;
  port?: number;
}

export interface LocalStack {
  chain: LocalChain;
  store: Store;
  db: Kysely<Database>;
  source: BankrunSource;
  writer: StoreWriter;
  custody: Custody;
  writes: WriteService;
  admin: AdminOps;
  worker: SettlementWorker;
  app: Hono;
  server: ServerType;
  url: string;
  stop(): Promise<void>;
}

export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const store = await openStore(opts.storeUrl ?? ":memory:");
  const writer = await StoreWriter.open(store, "bankrun");
  let source!: BankrunSource;
  const service = opts.service ?? Keypair.generate();
  const chain = await startLocalChain({
    service, engine: opts.engine, feeBps: opts.feeBps, limits: opts.limits,
    beforeInit: async (gateway) => {
      source = new BankrunSource({ getAccount: (a: PublicKey) => gateway.getAccount(a), getSlot: () => gateway.getSlot() }, { programs: [OFFERS_PROGRAM_ID.toBase58(), POOLS_PROGRAM_ID.toBase58()] });
      await source.start(await writer.checkpoint(), (b) => writer.apply(b));
      gateway.onProcessed((tx) => source.onTransaction(tx));
    },
  });
  const custody = await Custody.open(store.db as Kysely<unknown>, opts.serviceKey ?? ServiceKey.generate());
  const writes = new WriteService({ custody, gateway: chain.gateway, payer: service });
  const admin = new AdminOps(custody, store.db, chain.gateway, service, chain.client);
  const worker = new SettlementWorker({ db: store.db, gateway: chain.gateway, payer: service, client: chain.client, treasury: chain.treasury });
  const parts = { chain, store, db: store.db, source, writer, custody, writes, admin, worker };
  let app: Hono;
  if (opts.app) app = await opts.app(parts);
  else {
    // The whole server: the read API's REST routes and GraphQL with the write routes/mutations.
    const read = new ReadService({ db: store.db, now: async () => Number(await chain.gateway.now()), settingsTtlMs: 0 });
    app = createApp({ read, custody, writes, graphiql: false });
  }
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  return {
    ...parts, app, server, url: `http://127.0.0.1:${port}`,
    async stop() {
      worker.stop();
      await new Promise<void>((r) => server.close(() => r()));
      await source.stop();
      await store.close();
    },
  };
}
