/**
 * What the local stack and the cluster stack build the same way on top of a store and a chain
 * gateway: custody, the write service, the operator's AdminOps, the settlement worker, and the
 * HTTP app (./app.ts; the read API's REST routes and GraphQL with the write routes/mutations)
 * listening on loopback unless a host is given. The stacks differ only in the chain and the indexer source they bring.
 */
import type { Keypair, PublicKey } from "@solana/web3.js";
import type { Hono } from "hono";
import type { ServerType } from "@hono/node-server";
import type { Kysely } from "kysely";
import type { Store } from "../indexer/store/db";
import type { StoreWriter } from "../indexer/store/writer";
import type { ChangeFeed } from "../indexer/changes";
import type { Database } from "../indexer/store/schema";
import type { OffersClient } from "../idl/client/offers";
import type { PoolsClient } from "../idl/client/pools";
import type { ChainGateway } from "../service/chain/gateway";
import type { ServiceChain } from "../service/chain/service-chain";
import { Custody } from "../service/custody/custody";
import type { ServiceKey } from "../service/custody/crypto";
import { AdminOps } from "../service/custody/admin";
import { WriteService } from "../service/writes/write-service";
import { BulkClose } from "../service/writes/bulk-close";
import { DeadManSwitches } from "../service/writes/dead-man-switch";
import { Webhooks, type WebhookDb } from "../service/webhooks/endpoints";
import { WebhookDispatcher } from "../service/webhooks/dispatcher";
import { WEBHOOK_LIMITS, type WebhookLimits } from "../service/webhooks/limits";
import { indexedBookOrder } from "../service/read/book";
import type { WalletLimits } from "../service/writes/wallet-guard";
import { listen as listenHttp } from "../graphql/server";
import { testApp } from "./app";
import { SettlementWorker, type WorkerDeps } from "../service/worker/worker";
import { Observability, type ObservabilityOptions } from "../service/observability/observability";
import { readProgress, recordProgress } from "../service/observability/indexer-progress";
import type { Checkpoint } from "../indexer/sources/types";

export interface ServiceParts {
  custody: Custody;
  writes: WriteService;
  admin: AdminOps;
  worker: SettlementWorker;
  /** The dead-man switches (the worker carries them out; the routes arm them). */
  deadMan: DeadManSwitches;
  /** The users' webhook endpoints (the routes) and their sender (the acting worker runs it). */
  webhooks: Webhooks;
  webhookDispatcher: WebhookDispatcher;
  /** Logger, metrics, lag and readiness of this instance (service/observability). */
  obs: Observability;
  /** What the indexer applied (this process's or, through PostgreSQL, another's): read caches and live updates follow it. */
  changes: ChangeFeed;
}

/** What an app builder gets: the store, the chain's gateway and the service parts. */
export interface AppParts extends ServiceParts {
  db: Kysely<Database>;
  chain: { gateway: ChainGateway };
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
  /** Webhook limits, retry schedule and finality (default WEBHOOK_LIMITS). */
  webhookLimits?: Partial<WebhookLimits>;
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
    changes: ChangeFeed;
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
    bookOffers: (contract, side) => indexedBookOrder(o.store.db, contract, side),
  });
  const deadMan = new DeadManSwitches(new BulkClose(writes), custody, o.walletClockMs);
  const admin = new AdminOps(custody, o.store.db, o.gateway, o.service, o.client);
  const webhooks = new Webhooks(o.store.db as unknown as WebhookDb, o.serviceKey, { ...WEBHOOK_LIMITS, ...o.webhookLimits }, o.walletClockMs);
  const log = o.obs.log;
  const webhookDispatcher = new WebhookDispatcher(webhooks, {
    clockMs: o.walletClockMs,
    log: (msg, extra) => log.warn(extra ?? {}, msg),
  });
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
    deadMan,
    webhooks: webhookDispatcher,
  });
  return { custody, writes, admin, worker, obs, changes: o.changes, deadMan, webhooks, webhookDispatcher };
}

/** What the stack's lag watch and stop need of its indexer (an RpcSource, a BankrunSource, or the role's runner). */
export type SourceLike = {
  stop(): Promise<void>;
  caughtUpTo(slot: number): Promise<boolean>;
  /** Whether this process's indexer acts now (a role's runner under leadership); absent: always. */
  acting?(): boolean;
};

/** What both stacks bring: a chain, a store with its writer, and an indexer source feeding it. */
export interface StackBase<C extends ServiceChain, S extends SourceLike, W extends { checkpoint(): Promise<Checkpoint | null> } = StoreWriter> {
  chain: C;
  store: Store;
  db: Kysely<Database>;
  source: S;
  writer: W;
  changes: ChangeFeed;
}

/** A running stack: the base, the service parts and the HTTP app serving them. */
export type AssembledStack<C extends ServiceChain, S extends SourceLike, W extends { checkpoint(): Promise<Checkpoint | null> } = StoreWriter> = StackBase<
  C,
  S,
  W
> &
  ServiceParts & {
    app: Hono;
    server: ServerType;
    url: string;
    /** Stops the worker, the server, observability, the indexer source and the store, in that order. */
    stop(): Promise<void>;
  };

/**
 * Puts a stack together on a chain, a store and an indexer source: the service parts, the lag
 * watch (`headSlot` is the chain's current slot) and the HTTP app (`app`, default `testApp`, ./app.ts)
 * on `port`.
 */
export async function assembleStack<C extends ServiceChain, S extends SourceLike, W extends { checkpoint(): Promise<Checkpoint | null> } = StoreWriter>(
  base: Omit<StackBase<C, S, W>, "db">,
  o: Omit<ServicePartsOptions, "observability"> & {
    obs: Observability;
    serviceKey: ServiceKey;
    /** The chain's head slot for the lag watch; null: no lag watch (and no chain check). */
    headSlot: (() => Promise<number>) | null;
    /**
     * Where the lag comes from: "source" (default), this process's indexer, which on PostgreSQL
     * also records its progress in the store while it acts; "store", the progress the acting
     * indexer of another process recorded there (an `api` process: service/observability/indexer-progress.ts);
     * "source-or-store", the source while it acts, else the store (an `all` process on PostgreSQL,
     * whose indexer may stand by while its API serves).
     */
    lagFrom?: "source" | "store" | "source-or-store";
    app?: AppBuilder<StackBase<C, S, W> & ServiceParts>;
    port?: number;
    /** The address the HTTP server binds (default 127.0.0.1). */
    host?: string;
    /** Runs at stop after the server closed, before the source and the store (leaderships, the feed). */
    beforeStoreClose?: () => Promise<void>;
  },
): Promise<AssembledStack<C, S, W>> {
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
      webhookLimits: o.webhookLimits,
      obs: o.obs,
      changes: base.changes,
    })),
  };
  const record = store.engine === "postgres";
  const recordedProgress = () => readProgress(store.db as Kysely<unknown>);
  if (o.headSlot && o.lagFrom === "store") o.obs.watchChain({ headSlot: o.headSlot, recordedProgress });
  else if (o.headSlot)
    o.obs.watchChain({
      headSlot: o.headSlot,
      ...(o.lagFrom === "source-or-store" && record && source.acting ? { recordedProgress, acting: () => source.acting!() } : {}),
      caughtUpTo: async (slot) => {
        // Recorded only when the indexer acted both before and after the answer: a standby's
        // "caught up" (it has no lag of its own) must never reach the store.
        const before = source.acting?.() ?? true;
        const ok = await source.caughtUpTo(slot);
        if (record && before && (source.acting?.() ?? true))
          await recordProgress(store.db as Kysely<unknown>, slot, ok).catch((e) => o.obs.log.warn({ err: e }, "indexer progress not recorded"));
        return ok;
      },
      checkpointSlot: async () => (await writer.checkpoint())?.slot ?? 0,
    });
  const app = o.app ? await o.app(parts) : testApp(parts);
  const http = await listen(app, o.port, o.host);
  return {
    ...parts,
    app,
    server: http.server,
    url: http.url,
    async stop() {
      parts.worker.stop();
      await parts.webhookDispatcher.stop();
      await http.close();
      await o.obs.close();
      await o.beforeStoreClose?.();
      await source.stop();
      await base.changes.close?.();
      await store.close();
    },
  };
}

/** Serves `app` on `host` (default loopback; `port` 0: any free one), GraphQL over WebSocket included. */
export async function listen(app: Hono, port = 0, host?: string): Promise<{ server: ServerType; url: string; close(): Promise<void> }> {
  return listenHttp(app, { port, hostname: host });
}
