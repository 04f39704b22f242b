/**
 * The service against a real validator or cluster, in one process: RpcGateway for writes and
 * reads of the chain, the RPC indexer source feeding the store, custody, the write service, the
 * settlement worker and the HTTP app (REST of the spec + GraphQL). The local stack's twin with
 * every in-process part replaced by its network counterpart; tests/rpc drives it against
 * solana-test-validator.
 *
 * `init: true` creates the mint, treasury and both Configs (the service is their authority and
 * must hold SOL); otherwise the Configs must exist and name the service as authority.
 */
import type { Keypair } from "@solana/web3.js";
import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Kysely } from "kysely";
import { openStore, type Store } from "../../indexer/store/db";
import { StoreWriter } from "../../indexer/store/writer";
import { RpcSource } from "../../indexer/sources/rpc";
import type { Database } from "../../indexer/store/schema";
import { OFFERS_PROGRAM_ID } from "../../idl/client/offers";
import { POOLS_PROGRAM_ID, PoolsClient } from "../../idl/client/pools";
import { RpcGateway } from "../chain/rpc-gateway";
import { initializeChain, offersClientFor, readConfig, type LocalChain } from "../chain/local";
import { Custody } from "../custody/custody";
import { ServiceKey } from "../custody/crypto";
import { AdminOps } from "../custody/admin";
import { WriteService } from "./service";
import { createApp } from "../server";
import { ReadService } from "../read/service";
import { SettlementWorker } from "../worker/worker";

export interface ClusterStackOptions {
  rpcUrl: string;
  wsUrl?: string;
  storeUrl?: string;
  service: Keypair;
  serviceKey?: ServiceKey;
  init?: boolean;
  commitment?: "confirmed" | "finalized";
  /** The indexer's periodic reconcile (ms); 0 = only at start and after reconnects. */
  reconcileMs?: number;
  port?: number;
  /** Base URL of links in shareable offers and pool pages. */
  publicBaseUrl?: string;
  log?: (e: unknown) => void;
}

export interface ClusterStack {
  chain: Omit<LocalChain, "gateway"> & { gateway: RpcGateway };
  store: Store;
  db: Kysely<Database>;
  source: RpcSource;
  writer: StoreWriter;
  custody: Custody;
  writes: WriteService;
  admin: AdminOps;
  worker: SettlementWorker;
  server: ServerType;
  url: string;
  stop(): Promise<void>;
}

export async function startClusterStack(opts: ClusterStackOptions): Promise<ClusterStack> {
  const gateway = new RpcGateway(opts.rpcUrl, opts.commitment ?? "confirmed");
  const service = opts.service;
  const store = await openStore(opts.storeUrl ?? ":memory:");
  const name = `rpc:${opts.rpcUrl}`;
  const writer = await StoreWriter.open(store, name);
  const source = new RpcSource({
    url: opts.rpcUrl, wsUrl: opts.wsUrl, programs: [OFFERS_PROGRAM_ID, POOLS_PROGRAM_ID], commitment: opts.commitment ?? "confirmed", name,
    known: writer.knownAccounts(), reconcileMs: opts.reconcileMs, onError: (e) => console.error("rpc source:", e),
  });
  await source.start(await writer.checkpoint(), (b) => writer.apply(b));
  let chain: ClusterStack["chain"];
  if (opts.init) chain = { gateway, ...(await initializeChain(gateway, { service })) };
  else {
    const client = offersClientFor(service.publicKey);
    const config = await readConfig(gateway, client);
    if (!config.authority.equals(service.publicKey)) throw new Error(`the offers Config's authority is ${config.authority.toBase58()}, not the service`);
    const pools = PoolsClient.fromProvider({ publicKey: service.publicKey, wallet: { publicKey: service.publicKey } } as never);
    chain = { gateway, service, mint: config.mint, treasury: config.treasury, client, pools };
  }
  const custody = await Custody.open(store.db as Kysely<unknown>, opts.serviceKey ?? ServiceKey.generate());
  const writes = new WriteService({ custody, gateway, payer: service });
  const admin = new AdminOps(custody, store.db, gateway, service, chain.client);
  const worker = new SettlementWorker({ db: store.db, gateway, payer: service, client: chain.client, treasury: chain.treasury });
  const read = new ReadService({ db: store.db, now: async () => Number(await gateway.now()), publicBaseUrl: opts.publicBaseUrl });
  const app = createApp({ read, custody, writes, log: opts.log });
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  return {
    chain, store, db: store.db, source, writer, custody, writes, admin, worker, server, url: `http://127.0.0.1:${port}`,
    async stop() {
      worker.stop();
      await new Promise<void>((r) => server.close(() => r()));
      await source.stop();
      await store.close();
    },
  };
}
