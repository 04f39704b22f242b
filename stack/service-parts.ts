/**
 * What the local stack and the cluster stack build the same way on top of a store and a chain
 * gateway: custody, the write service, the operator's AdminOps, the settlement worker, and the
 * HTTP app (the read API's REST routes and GraphQL with the write routes/mutations) listening on
 * loopback. The stacks differ only in the chain and the indexer source they bring.
 */
import type { Keypair, PublicKey } from "@solana/web3.js";
import type { Hono } from "hono";
import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Kysely } from "kysely";
import type { Store } from "../indexer/store/db";
import type { StoreWriter } from "../indexer/store/writer";
import type { Database } from "../indexer/store/schema";
import type { OffersClient } from "../idl/client/offers";
import type { PoolsClient } from "../idl/client/pools";
import type { ChainGateway } from "../service/chain/gateway";
import type { ServiceChain } from "../service/chain/local-chain";
import { Custody } from "../service/custody/custody";
import type { ServiceKey } from "../service/custody/crypto";
import { AdminOps } from "../service/custody/admin";
import { WriteService } from "../service/writes/write-service";
import type { WalletLimits } from "../service/writes/wallet-guard";
import { createApp } from "../graphql/server";
import { ReadService } from "../service/read/read-service";
import { writerChanges } from "../service/read/read-cache";
import { SettlementWorker, type WorkerDeps } from "../service/worker/worker";
import { Observability, type ObservabilityOptions } from "../service/observability/observability";

export interface ServiceParts {
  custody: Custody;
  writes: WriteService;
  admin: AdminOps;
  worker: SettlementWorker;
  /** Logger, metrics, lag and readiness of this instance (service/observability). */
  obs: Observability;
}

/** What an app builder gets: the store, the chain's gateway and the service parts. */
export interface AppParts extends ServiceParts {
  db: Kysely<Database>;
  chain: { gateway: ChainGateway };
  /** The store's writer when it runs in this process: read caches drop on its announcements. */
  writer?: StoreWriter;
}

export type AppBuilder<P extends AppParts> = (parts: P) => Promise<Hono> | Hono;

/** Options of the service parts that both stacks pass through. */
export interface ServicePartsOptions {
  /** Per-user bound on the service wallet's fees and rent (service/writes/wallet-guard.ts). */
  walletLimits?: Partial<WalletLimits>;
  /** The rate limit's wall clock in unix ms (default Date.now; tests move it). */
  walletClockMs?: () => number;
  /** Settlement worker options (batch, retryBatch, backoff, clock, prepare, log). */
  worker?: Partial<Pick<WorkerDeps, "batch" | "retryBatch" | "maxFailuresPerPass" | "backoff" | "clock" | "prepare" | "log" | "reclaim">>;
  /** Log level and destination, lag threshold, process metrics; or a ready instance. */
  observability?: ObservabilityOptions | Observability;
}

export function observabilityOf(o: ServicePartsOptions): Observability {
  return o.observability instanceof Observability ? o.observability : new Observability(o.observability);
}

export async function serviceParts(
  o: {
    store: Store;
    gateway: ChainGateway;
    service: Keypair;
    client: OffersClient;
    /** The pools program's client: the worker finishes pools with it. */
    pools?: PoolsClient;
    treasury: PublicKey;
    /** Seals the custodial wallets: each stack says where it comes from, never a silent random one. */
    serviceKey: ServiceKey;
    obs: Observability;
  } & Omit<ServicePartsOptions, "observability">,
): Promise<ServiceParts> {
  const { obs } = o;
  const custody = await Custody.open(o.store.db as Kysely<unknown>, o.serviceKey);
  const writes = new WriteService({
    custody,
    gateway: o.gateway,
    payer: o.service,
    walletLimits: o.walletLimits,
    walletClockMs: o.walletClockMs,
    onSubmitResult: obs.txResults("writes"),
    indexedOfferStatus: async (address) =>
      (await o.store.db.selectFrom("offers").select("status").where("address", "=", address).executeTakeFirst())?.status ?? null,
  });
  const admin = new AdminOps(custody, o.store.db, o.gateway, o.service, o.client);
  const worker = new SettlementWorker({
    ...o.worker,
    db: o.store.db,
    gateway: o.gateway,
    payer: o.service,
    client: o.client,
    pools: o.pools,
    treasury: o.treasury,
    obs,
    onSubmitResult: obs.txResults("worker"),
  });
  return { custody, writes, admin, worker, obs };
}

/** What both stacks bring: a chain, a store with its writer, and an indexer source feeding it. */
export interface StackBase<C extends ServiceChain, S extends { stop(): Promise<void>; caughtUpTo(slot: number): Promise<boolean> }> {
  chain: C;
  store: Store;
  db: Kysely<Database>;
  source: S;
  writer: StoreWriter;
}

/** A running stack: the base, the service parts and the HTTP app serving them. */
export type AssembledStack<C extends ServiceChain, S extends { stop(): Promise<void>; caughtUpTo(slot: number): Promise<boolean> }> = StackBase<C, S> &
  ServiceParts & {
    app: Hono;
    server: ServerType;
    url: string;
    /** Stops the worker, the server, observability, the indexer source and the store, in that order. */
    stop(): Promise<void>;
  };

/**
 * Puts a stack together on a chain, a store and an indexer source: the service parts, the lag
 * watch (`headSlot` is the chain's current slot) and the HTTP app (`app`, default `defaultApp`)
 * on `port`.
 */
export async function assembleStack<C extends ServiceChain, S extends { stop(): Promise<void>; caughtUpTo(slot: number): Promise<boolean> }>(
  base: Omit<StackBase<C, S>, "db">,
  o: Omit<ServicePartsOptions, "observability"> & {
    obs: Observability;
    serviceKey: ServiceKey;
    headSlot: () => Promise<number>;
    app?: AppBuilder<StackBase<C, S> & ServiceParts>;
    port?: number;
  },
): Promise<AssembledStack<C, S>> {
  const { chain, store, source, writer } = base;
  const parts = {
    ...base,
    db: store.db,
    ...(await serviceParts({
      store,
      gateway: chain.gateway,
      service: chain.service,
      client: chain.client,
      pools: chain.pools,
      treasury: chain.treasury,
      serviceKey: o.serviceKey,
      walletLimits: o.walletLimits,
      walletClockMs: o.walletClockMs,
      worker: o.worker,
      obs: o.obs,
    })),
  };
  o.obs.watchChain({ headSlot: o.headSlot, caughtUpTo: (slot) => source.caughtUpTo(slot), checkpointSlot: async () => (await writer.checkpoint())?.slot ?? 0 });
  const app = o.app ? await o.app(parts) : defaultApp(parts);
  const http = await listen(app, o.port);
  return {
    ...parts,
    app,
    server: http.server,
    url: http.url,
    async stop() {
      parts.worker.stop();
      await http.close();
      await o.obs.close();
      await source.stop();
      await store.close();
    },
  };
}

/** The whole server without GraphiQL, settings read fresh on every request (tests). */
export function defaultApp(p: AppParts): Hono {
  const read = new ReadService({
    db: p.db,
    now: async () => Number(await p.chain.gateway.now()),
    settingsTtlMs: 0,
    changes: p.writer ? writerChanges(p.writer) : undefined,
  });
  return createApp({ read, custody: p.custody, writes: p.writes, graphiql: false, obs: p.obs });
}

/** Serves `app` on loopback (`port` 0: any free one). */
export async function listen(app: Hono, port = 0): Promise<{ server: ServerType; url: string; close(): Promise<void> }> {
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url, close: () => new Promise<void>((r) => server.close(() => r())) };
}
