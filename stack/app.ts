/**
 * The one assembly of the HTTP app over a stack's parts, used by `scripts/start.ts` and by the
 * tests alike: the read service (with custody's compliance blocks), the request limiter, and
 * `createApp` (REST, GraphQL, pages, subscriptions) with the settings the entry point parsed
 * (./config). Tests pass their cache lifetimes; production keeps the read service's defaults.
 */
import type { Hono } from "hono";
import { createApp } from "../graphql/server";
import { ReadService, type ReadServiceOptions } from "../service/read/read-service";
import { RequestLimiter, type RequestLimits } from "../service/rate/request-limiter";
import { ReadAdmission, type AdmissionLimits } from "../service/rate/admission";
import type { LiveLimits } from "../service/read/live-updates";
import type { AppParts } from "./service-parts";
import { SOLANA_CLUSTERS } from "../service/actions/blockchain-id";

export interface AppSettings {
  /** Base URL of links in answers and pages (default the ReadService's). */
  publicUrl?: string;
  /** GraphiQL at /graphql in a browser (default: outside NODE_ENV=production). */
  graphiql?: boolean;
  /** Per-address and per-token request limits; none without them. */
  requestLimits?: RequestLimits;
  /** Turns for expensive reads, fair per caller (service/rate/admission.ts); none without them. */
  admission?: AdmissionLimits;
  /** Take the client address from X-Forwarded-For. */
  trustProxy?: boolean;
  corsOrigins?: readonly string[];
  /** The cluster of the Solana Actions' transactions, CAIP-2 (service/actions/blockchain-id.ts; default devnet's). */
  actionsBlockchainId?: string;
  live?: Partial<LiveLimits>;
  /** How long a GraphQL answer is reused (default 1000 ms). */
  responseCacheTtlMs?: number;
  /** Cache lifetimes of the read service (tests: 0, fresh on every request). */
  readCaches?: Pick<ReadServiceOptions, "settingsTtlMs" | "embedTtlMs" | "anonymousTtlMs" | "viewerTtlMs" | "countTtlMs" | "clockCacheMs">;
}

/** The app and what its owner keeps running beside it (the limiter's pruning). */
export interface ServiceApp {
  app: Hono;
  read: ReadService;
  requestLimiter: RequestLimiter | null;
  /** Read admission, when its limits were given. */
  admission: ReadAdmission | null;
}

export function serviceApp(parts: AppParts, s: AppSettings = {}): ServiceApp {
  const custody = parts.custody;
  // The feed is this process's indexer or, on PostgreSQL, any process's: the read caches drop on it.
  const admission = s.admission ? new ReadAdmission(s.admission) : null;
  const read = new ReadService({
    ...s.readCaches,
    db: parts.db,
    now: async () => Number(await parts.chain.gateway.now()),
    publicBaseUrl: s.publicUrl,
    changes: parts.changes,
    blockedWallets: (wallets) => custody.blockedWallets(wallets),
    blockedVersion: () => custody.readAuth.version,
    admit: admission ? (r, caller) => admission.run(r, caller) : undefined,
  });
  const requestLimiter = s.requestLimits ? new RequestLimiter(parts.db, s.requestLimits) : null;
  const app = createApp({
    read,
    custody,
    writes: parts.writes,
    deadMan: parts.deadMan,
    webhooks: parts.webhooks,
    obs: parts.obs,
    changes: parts.changes,
    graphiql: s.graphiql,
    requestLimiter,
    admission,
    rateLimit: { trustProxy: s.trustProxy ?? false },
    corsOrigins: s.corsOrigins,
    live: s.live,
    responseCacheTtlMs: s.responseCacheTtlMs,
    actions: {
      gateway: parts.chain.gateway,
      blockchainId: s.actionsBlockchainId ?? SOLANA_CLUSTERS.devnet,
      blockedWallets: (wallets) => custody.blockedWallets(wallets),
      indexedOfferStatus: async (address) =>
        (await parts.db.selectFrom("offers").select("status").where("address", "=", address).executeTakeFirst())?.status ?? null,
    },
  });
  return { app, read, requestLimiter, admission };
}

/** The whole server for tests: no GraphiQL, settings read fresh on every request. */
export function testApp(parts: AppParts): Hono {
  return serviceApp(parts, { graphiql: false, readCaches: { settingsTtlMs: 0 } }).app;
}
