/**
 * The service against a real validator or cluster: RpcGateway for writes and reads of the chain,
 * the RPC indexer source feeding the store, and the same service parts and HTTP app as the local
 * stack (./service-parts.ts). tests/rpc drives it against solana-test-validator;
 * `scripts/start.ts --rpc` runs it.
 *
 * `role` (./roles.ts) picks what this process runs: `all` (default) everything; `api` the HTTP
 * API only; `indexer` / `worker` that part under leadership, with a small HTTP server for health,
 * readiness and metrics. On PostgreSQL the indexer and the worker always run under leadership and
 * changes go through NOTIFY; on SQLite (role `all` only) they run at once and changes stay in-process.
 *
 * `init: true` creates the mint, treasury and both Configs (the service is their authority and
 * must hold SOL); otherwise the Configs must exist and name the service as authority.
 */
import type { Keypair } from "@solana/web3.js";
import type { ServerType } from "@hono/node-server";
import { RPC_FINALITY_SLOTS } from "../service/webhooks/limits";
import { Hono } from "hono";
import type { Kysely } from "kysely";
import { openStore, type Store } from "../indexer/store/db";
import type { StoreWriter } from "../indexer/store/writer";
import { RpcSource } from "../indexer/sources/rpc";
import type { Database } from "../indexer/store/schema";
import { OFFERS_PROGRAM_ID } from "../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../idl/client/pools";
import { RpcGateway } from "../service/chain/rpc-gateway";
import { ChainUnavailableError } from "../service/chain/gateway";
import { initializeChain, offersClientFor, poolsClientFor, readConfig, type ServiceChain } from "../service/chain/service-chain";
import type { ServiceKey } from "../service/custody/crypto";
import type { Leadership } from "../service/leadership/leadership";
import { observabilityRoutes } from "../graphql/http-observability";
import { assembleStack, observabilityOf, type AppBuilder, type ServiceParts, type ServicePartsOptions } from "./service-parts";
import { IndexerRunner, changeFeedFor, leadOrRun, logTo, runs, type Role } from "./roles";

export interface ClusterStackOptions extends ServicePartsOptions {
  rpcUrl: string;
  wsUrl?: string;
  storeUrl?: string;
  service: Keypair;
  /** Required: against a cluster the key must be the operator's (scripts/start.ts: SERVICE_KEY or SERVICE_KEY_FILE). */
  serviceKey: ServiceKey;
  init?: boolean;
  commitment?: "confirmed" | "finalized";
  /** The indexer's periodic reconcile (ms); 0 = only at start and after reconnects. */
  reconcileMs?: number;
  /** Builds the HTTP app; default: the server's `createApp` (reads, writes, GraphQL). */
  app?: AppBuilder<Omit<ClusterStack, "server" | "url" | "stop">>;
  port?: number;
  /** The address the HTTP server binds (default 127.0.0.1; HOST / --host). */
  host?: string;
  /** What this process runs (default `all`); checked against the store by scripts/start.ts (roles.ts parseRole). */
  role?: Role;
  /** The worker's pass period while it acts; without it (and role not `worker`) the worker is left to the caller (tests drain it). */
  workerMs?: number;
  /** How often a standby tries to take over (ms, default 1000). */
  leaderRetryMs?: number;
}

export interface ClusterStack extends ServiceParts {
  role: Role;
  chain: ServiceChain<RpcGateway>;
  store: Store;
  db: Kysely<Database>;
  /** The indexer source while this process indexes (throws otherwise). */
  source: RpcSource;
  /** The indexer's writer while this process indexes (throws otherwise). */
  writer: StoreWriter;
  /** This process's indexer (null in an `api` or `worker` process): active or standing by. */
  indexer: IndexerRunner<RpcSource> | null;
  /** The campaigns of this process on PostgreSQL (null where it does not run that part or on SQLite). */
  leaders: { indexer: Leadership | null; worker: Leadership | null };
  server: ServerType;
  url: string;
  stop(): Promise<void>;
}

export async function startClusterStack(opts: ClusterStackOptions): Promise<ClusterStack> {
  const role = opts.role ?? "all";
  const commitment = opts.commitment ?? "confirmed";
  const gateway = new RpcGateway(opts.rpcUrl, commitment);
  const service = opts.service;
  const obs = observabilityOf(opts);
  const store = await openStore(opts.storeUrl ?? ":memory:");
  if (role !== "all" && store.engine !== "postgres") throw new Error(`role ${role} needs a PostgreSQL store; SQLite runs role all`);
  const name = `rpc:${opts.rpcUrl}`;
  const changes = await changeFeedFor(store, { listen: runs(role, "api"), publish: runs(role, "indexer"), shared: true, log: obs.log });
  const log = logTo(obs.log);

  const indexer = runs(role, "indexer")
    ? new IndexerRunner<RpcSource>(
        store,
        name,
        (writer) =>
          new RpcSource({
            url: opts.rpcUrl,
            wsUrl: opts.wsUrl,
            programs: [OFFERS_PROGRAM_ID, POOLS_PROGRAM_ID],
            commitment,
            name,
            known: writer.knownAccounts(),
            reconcileMs: opts.reconcileMs,
            onError: (e) => obs.log.error({ err: e }, "rpc source"),
            onGap: (missed) =>
              obs.log.warn({ missed: missed.length, signatures: missed.slice(0, 5) }, "rpc source: transactions the live stream did not deliver, reconciling"),
          }),
        (writer) => obs.indexerSink(writer),
        (writer) => writer.onApplied((c) => void changes.publish(c)),
      )
    : null;
  const indexing = indexer ? leadOrRun(store, "indexer", indexer, { retryMs: opts.leaderRetryMs, log }) : null;
  await indexing?.start();

  let chain: ClusterStack["chain"];
  if (opts.init) chain = { gateway, ...(await initializeChain(gateway, { service })) };
  else {
    const client = offersClientFor(service.publicKey);
    const config = await readConfig(gateway, client);
    if (!config.authority.equals(service.publicKey)) throw new Error(`the offers Config's authority is ${config.authority.toBase58()}, not the service`);
    chain = { gateway, service, mint: config.mint, treasury: config.treasury, client, pools: poolsClientFor(service.publicKey) };
  }

  // The worker acts only while this process leads: an item it is about to send after losing the
  // lead stops its pass (as a chain outage would), without being recorded as the item's failure.
  let working: ReturnType<typeof leadOrRun> | null = null;
  const prepare = opts.worker?.prepare;
  const workerOpts: ServicePartsOptions["worker"] = {
    ...opts.worker,
    prepare: async (item, ixs) => {
      if (working?.leadership && !working.leadership.active) throw new ChainUnavailableError("this worker no longer leads");
      return prepare ? prepare(item, ixs) : ixs;
    },
  };

  const source = indexer ?? { stop: async () => undefined, caughtUpTo: async () => false };
  const app: ClusterStackOptions["app"] = runs(role, "api") ? opts.app : (p) => opsApp(p);
  const s = await assembleStack(
    { chain, store, source, writer: indexer ?? { checkpoint: async () => null }, changes },
    {
      ...opts,
      worker: workerOpts,
      // A node's forks: events wait until no retraction can reach them (service/webhooks/limits.ts).
      webhookLimits: { finalitySlots: RPC_FINALITY_SLOTS, ...opts.webhookLimits },
      obs,
      // A process serving the API without an acting indexer reads the lag of the indexer behind it
      // from the store (readiness): always in an `api` process, while it stands by in an `all` one.
      headSlot: indexer || runs(role, "api") ? () => gateway.connection.getSlot(commitment) : null,
      lagFrom: !indexer ? "store" : role === "all" ? "source-or-store" : "source",
      app: app as never,
      beforeStoreClose: async () => {
        await working?.stop();
        await indexing?.stop();
      },
    },
  );
  const workerMs = opts.workerMs ?? (role === "worker" ? 5_000 : undefined);
  if (runs(role, "worker") && workerMs !== undefined) {
    working = leadOrRun(
      store,
      "worker",
      {
        start: async () => s.worker.start(workerMs),
        // No new pass; a pass in flight stops at its next item (the prepare check above).
        stop: async () => s.worker.stop(),
      },
      { retryMs: opts.leaderRetryMs, log },
    );
    await working.start();
  }
  const out = Object.assign(s, {
    role,
    indexer,
    leaders: { indexer: indexing?.leadership ?? null, worker: working?.leadership ?? null },
  }) as unknown as ClusterStack;
  Object.defineProperty(out, "source", {
    get: () => {
      if (!indexer?.source) throw new Error("this process does not index now");
      return indexer.source;
    },
  });
  Object.defineProperty(out, "writer", {
    get: () => {
      if (!indexer?.writer) throw new Error("this process does not index now");
      return indexer.writer;
    },
  });
  return out;
}

/** An indexer or worker process's HTTP: liveness, readiness, metrics, and whether it leads. */
function opsApp(p: ServiceParts & { db: Kysely<Database> }): Hono {
  const app = new Hono();
  const indexedSlot = async () =>
    Number(
      (
        await p.db
          .selectFrom("checkpoints")
          .select((eb) => eb.fn.max<number>("slot").as("slot"))
          .executeTakeFirst()
      )?.slot ?? 0,
    );
  app.get("/healthz", async (c) => c.json({ ok: true, indexedSlot: await indexedSlot().catch(() => null) }));
  observabilityRoutes(app, p.obs, indexedSlot);
  app.notFound((c) => c.json({ error: "not found: this process runs no API (role indexer or worker)" }, 404));
  return app;
}
