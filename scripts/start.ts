/**
 * The local stack on its embedded defaults, in one process: the compiled offers program in an
 * in-process SVM whose clock follows wall time, the indexer into SQLite, the HTTP server (REST of
 * the spec, GraphQL + GraphiQL), the settlement worker, the operator endpoint of
 * `scripts/admin.ts`, and demo data. Prints where everything is and example calls; Ctrl-C stops
 * it cleanly.
 *
 *   npm start                      (= scripts/setup.sh, then this)
 *   tsx scripts/start.ts --port 8080 --data data/local --store postgres://127.0.0.1/test --no-seed
 *   tsx scripts/start.ts --rpc http://127.0.0.1:8899 [--ws ws://127.0.0.1:8900] [--init] --data data/devnet
 *
 * With --rpc the service runs against that validator or cluster instead of the in-process chain:
 * writes through RpcGateway, the indexer from RPC (snapshot, subscriptions, reconcile), the store
 * kept between runs (the indexer resumes from its checkpoint). The service wallet (SERVICE_WALLET
 * or SERVICE_WALLET_FILE) pays fees and must hold SOL there; --init creates the USDC-like mint (the service is
 * its authority), the treasury and both Configs, for a fresh local validator. No demo data (the
 * demo needs the local chain's clock); use scripts/admin.ts to create users and contracts.
 *
 * Roles (stack/roles.ts; docs/service-guide.md "Deployment"): --role / ROLE all (default) | api |
 * indexer | worker, with --rpc and a PostgreSQL --store for all but `all`: `api` serves the HTTP API,
 * `indexer` and `worker` run that part when they lead (one of each acts, the others stand by and
 * take over; --leader-retry-ms / LEADER_RETRY_MS, 1000, is how often a standby tries).
 *
 * Every flag and its environment variable (HOST, PORT, DATA_DIR, STORE_URL, SVM_ENGINE, RPC_URL,
 * WS_URL, TRUST_PROXY, LOG_LEVEL, MAX_LAG_SLOTS, the limits below...) is one setting of
 * stack/config/settings.ts, parsed strictly: a bad value is one line naming it and exit code 2
 * (docs/service-guide.md "Configuration"). The ports are checked before the data directory is touched.
 * The service key: SERVICE_KEY, or SERVICE_KEY_FILE; with --rpc one of them is required (a file
 * outside the data directory), in local mode <data>/service.key is generated when missing.
 * The service wallet: SERVICE_WALLET (JSON secret key) or SERVICE_WALLET_FILE; with --rpc one of
 * them is required (the file outside the data directory), in local mode it is sealed in
 * <data>/service-wallet.sealed, generated when missing.
 *
 * The per-user bound on the service wallet (service/writes/wallet-guard.ts; 0 switches one off):
 * --write-burst / WRITE_BURST (60), --writes-per-hour / WRITES_PER_HOUR (60),
 * --max-open-offers / MAX_OPEN_OFFERS (20), --max-open-positions / MAX_OPEN_POSITIONS (100).
 *
 * Request limits per client address and per bearer token (service/rate/request-limiter.ts; 429
 * with Retry-After; 0 switches one off): --ip-burst / IP_BURST (120), --ip-per-minute /
 * IP_PER_MINUTE (600), --token-burst / TOKEN_BURST (120), --token-per-minute / TOKEN_PER_MINUTE
 * (600); the Solana Actions routes' own, besides those: --action-ip-burst / ACTION_IP_BURST (30),
 * --action-ip-per-minute / ACTION_IP_PER_MINUTE (120), --action-account-burst /
 * ACTION_ACCOUNT_BURST (10), --action-account-per-minute / ACTION_ACCOUNT_PER_MINUTE (30);
 * --trust-proxy / TRUST_PROXY (true/false, yes/no, on/off, 1/0) takes the address from X-Forwarded-For.
 *
 * Read admission (service/rate/admission.ts; 429 with Retry-After over a queue's bound): --read-concurrency /
 * READ_CONCURRENCY (2; 0 turns it off), --read-queue-per-caller / READ_QUEUE_PER_CALLER (8),
 * --read-queue-total / READ_QUEUE_TOTAL (256), --read-retry-after-seconds / READ_RETRY_AFTER_SECONDS (1).
 *
 * Observability (README "Observability"): JSON logs on stdout at LOG_LEVEL (info), GET /metrics,
 * GET /readyz failing above --max-lag-slots / MAX_LAG_SLOTS (150) of indexer lag.
 */
import { Command } from "commander";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { getHeapStatistics } from "node:v8";
import { join, resolve } from "node:path";
import type { adminApp } from "../graphql/admin-http";
import type { AdminOps } from "../service/custody/admin";
import type { AppParts, ServiceParts } from "../stack/service-parts";
import {
  ADMISSION_SETTINGS,
  LIVE_SETTINGS,
  REQUEST_SETTINGS,
  addSettings,
  admissionLimitsOf,
  liveLimitsOf,
  requestLimitsOf,
  settingsOf,
  type SettingName,
} from "../stack/config/settings";
import { ConfigError, assertPortFree, exitOnError, portRefusal, strictExit } from "../stack/config/cli";
import type { WalletLimits } from "../service/writes/wallet-limits";
import type { RequestLimiter, RequestLimits } from "../service/rate/request-limiter";

const SETTINGS_TAKEN = [
  "host",
  "port",
  "adminPort",
  "data",
  "store",
  "engine",
  "publicUrl",
  "rpc",
  "ws",
  "role",
  "leaderRetryMs",
  "writeBurst",
  "writesPerHour",
  "maxOpenOffers",
  "maxOpenPositions",
  ...REQUEST_SETTINGS,
  "corsOrigins",
  "actionsCluster",
  "trustProxy",
  "logLevel",
  "maxLagSlots",
  "webhookAllowLocal",
  "webhookTimeoutMs",
  "webhookRetryForMs",
  "webhookFinalitySlots",
  ...LIVE_SETTINGS,
  ...ADMISSION_SETTINGS,
] as const satisfies readonly SettingName[];

const program = addSettings(strictExit(new Command().name("start").description("the offers service: the local stack, or against a Solana RPC")), SETTINGS_TAKEN)
  .option("--no-seed", "start without demo data")
  .option("--init", "with --rpc: create the mint, treasury and both Configs (a fresh validator)", false)
  .parse();
const opts = { ...settingsOf(program, SETTINGS_TAKEN), ...program.opts<{ seed: boolean; init: boolean }>() };

// The service is loaded only once the command line is accepted: a refused value exits 2 in the
// time commander takes, not after loading the server, the store and the chain code
// (tests/stack/cli-refusals.test.ts). The SVM engines load later still, in local mode only (main).
const [
  { serve },
  { ServiceKey },
  { loadServiceWallet },
  { adminApp: operatorApp },
  { startClusterStack },
  { EMBED_BASE, OFFERS_BASE },
  { parseCorsOrigins },
  { operatorRunWorker, parseRole, runs },
  { serviceApp },
  { Observability },
  { secureDataDir },
] = await Promise.all([
  import("@hono/node-server"),
  import("../service/custody/crypto"),
  import("../service/custody/custody"),
  import("../graphql/admin-http"),
  import("../stack/cluster-stack"),
  import("../graphql/server"),
  import("../graphql/cors"),
  import("../stack/roles"),
  import("../stack/app"),
  import("../service/observability/observability"),
  import("../service/data-dir"),
]);

/** The per-user bound on the service wallet's fees and rent (service/writes/wallet-guard.ts). */
const walletLimits: WalletLimits = {
  writeBurst: opts.writeBurst,
  writesPerHour: opts.writesPerHour,
  maxOpenOffers: opts.maxOpenOffers,
  maxOpenPositions: opts.maxOpenPositions,
};
/** Per-address and per-token request limits of the HTTP API. */
const requestLimits: RequestLimits = requestLimitsOf(opts);
let limiter: RequestLimiter | null = null;
/** The webhooks' settings; an unset finality leaves each stack its own (service/webhooks/limits.ts). */
const webhookLimits = {
  allowLocalTargets: opts.webhookAllowLocal,
  timeoutMs: opts.webhookTimeoutMs,
  retryForMs: opts.webhookRetryForMs,
  ...(opts.webhookFinalitySlots !== undefined ? { finalitySlots: opts.webhookFinalitySlots } : {}),
};
/** Logs (LOG_LEVEL, stdout), metrics with the process's own, readiness threshold: one per process. */
const obs = new Observability({ processMetrics: true, maxLagSlots: opts.maxLagSlots, level: opts.logLevel });
const workerLog = { log: (msg: string, extra?: Record<string, unknown>) => obs.log.warn(extra ?? {}, msg) };

/** Origins allowed to call the API from a browser (a bad list is a usage error). */
function corsOrigins(): string[] {
  try {
    return parseCorsOrigins(opts.corsOrigins);
  } catch (e) {
    throw new ConfigError(`--cors-origins / CORS_ORIGINS: ${(e as Error).message}`);
  }
}

/**
 * Before anything is written: both ports free (a second `npm start` must leave the first one's
 * data directory alone), the CORS list readable.
 */
async function preflight(operator: boolean): Promise<string[]> {
  const cors = corsOrigins();
  await assertPortFree(opts.host, opts.port, "--port");
  if (operator) await assertPortFree("127.0.0.1", opts.adminPort, "--admin-port");
  return cors;
}

/** A listen that failed after the check (the port taken in between): the same sentence as the check's. */
function listenRefusal(e: unknown): unknown {
  const err = e as NodeJS.ErrnoException;
  return (err?.code && portRefusal(err, opts.port, "--port")) || e;
}

/** The operator endpoint of scripts/admin.ts (loopback only), announced in <data>/admin.json. */
function operatorEndpoint(data: string, apiUrl: string, ops: AdminOps, extra: Parameters<typeof adminApp>[2]) {
  const adminToken = randomBytes(24).toString("base64url");
  const adminServer = serve({ fetch: operatorApp(ops, adminToken, extra).fetch, port: opts.adminPort, hostname: "127.0.0.1" });
  const adminUrl = `http://127.0.0.1:${opts.adminPort}`;
  writeFileSync(join(data, "admin.json"), JSON.stringify({ adminUrl, adminToken, apiUrl }) + "\n", { mode: 0o600 });
  return { adminUrl, adminServer };
}

/** The served app in both modes (stack/app.ts): REST, GraphQL with GraphiQL, links under --public-url, errors logged. */
/** What either stack serves with: where it listens, the app, the per-user bounds, the worker's log, observability. */
function servedBy(cors: string[]) {
  return { host: opts.host, port: opts.port, app: serverApp(cors), walletLimits, worker: workerLog, observability: obs, webhookLimits };
}

function serverApp(cors: string[]) {
  return (parts: AppParts) => {
    const built = serviceApp(parts, {
      publicUrl: opts.publicUrl ?? `http://${opts.host === "0.0.0.0" || opts.host === "::" ? "127.0.0.1" : opts.host}:${opts.port}`,
      requestLimits,
      trustProxy: opts.trustProxy,
      corsOrigins: cors,
      actionsBlockchainId: opts.actionsCluster,
      live: liveLimitsOf(opts),
      admission: admissionLimitsOf(opts),
    });
    limiter = built.requestLimiter;
    return built.app;
  };
}

/** The settlement worker every `workerMs` (unless a leadership starts it), and the hourly pruning of idempotency keys and idle request buckets; returns their stop. */
function background(s: Pick<ServiceParts, "worker" | "writes">, workerMs: number | null): () => void {
  if (workerMs !== null) s.worker.start(workerMs);
  const prune = setInterval(() => {
    void s.writes.idem.prune().catch((e) => obs.log.error({ err: e }, "idempotency prune failed"));
    void limiter?.prune().catch((e) => obs.log.error({ err: e }, "request rate prune failed"));
  }, 3_600_000);
  return () => clearInterval(prune);
}

/** Ctrl-C / SIGTERM: runs `cleanup` once, then exits 0. */
function onStop(cleanup: () => Promise<void>) {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log("stopping…");
    await cleanup();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

/** The service against a validator or cluster (--rpc). */
async function mainRpc(rpc: string) {
  const data = resolve(opts.data);
  const storeUrl = opts.store ?? join(data, "store.sqlite");
  // Before anything is written: a role the store cannot take, or no key from the environment, is a refusal.
  const role = parseRole(opts.role, storeUrl);
  const key = ServiceKey.load(data, process.env, { cluster: true });
  const service = loadServiceWallet(data, key, process.env, { cluster: true });
  const cors = await preflight(runs(role, "api"));
  secureDataDir(data);
  const s = await startClusterStack({
    role,
    workerMs: 5_000,
    leaderRetryMs: opts.leaderRetryMs,
    rpcUrl: rpc,
    wsUrl: opts.ws,
    storeUrl,
    service,
    serviceKey: key,
    init: opts.init,
    ...servedBy(cors),
  }).catch((e: unknown) => {
    throw listenRefusal(e);
  });
  // The worker runs under its leadership (cluster-stack), the pruning where the API runs.
  const stopBackground = runs(role, "api") ? background(s, null) : () => undefined;
  // run-worker: only where this process's worker acts (an `api` process, a standby: 409).
  const runWorker = operatorRunWorker({ role, worker: s.worker, leadership: s.leaders.worker, store: s.store });
  const operator = runs(role, "api") ? operatorEndpoint(data, s.url, s.admin, { runWorker }) : null;
  const api = runs(role, "api")
    ? `
  REST      ${s.url}${OFFERS_BASE}
  embed     ${s.url}${EMBED_BASE}/polls/<slug-or-address>
  GraphQL   ${s.url}/graphql`
    : "";
  console.log(`
Service up against ${rpc} (store ${storeUrl}, role ${role})
  service wallet ${service.publicKey.toBase58()}   mint ${s.chain.mint.toBase58()}${api}
  metrics   ${s.url}/metrics   readiness ${s.url}/readyz
${heapLine()}${operator ? `\n  operator  ${operator.adminUrl}          (npx tsx scripts/admin.ts --data ${opts.data} <command>)` : ""}
`);
  onStop(async () => {
    stopBackground();
    operator?.adminServer.close();
    await s.stop();
  });
}

/** The heap ceiling this process runs with: `npm start` sets it (package.json config.serverNodeOptions; docs/service-guide.md "Memory"). */
const heapLine = () => `  memory    V8 heap ceiling ${Math.round(getHeapStatistics().heap_size_limit / 1048576)} MiB (docs/service-guide.md "Memory")`;

async function main() {
  if (opts.rpc) return mainRpc(opts.rpc);
  if (opts.role !== "all")
    throw new ConfigError(`--role ${opts.role} needs --rpc: the local stack's in-process chain lives in one process, which runs --role all`);
  const cors = await preflight(true);
  // Loaded here only: the SVM engines belong to the local stack, never to a cluster role.
  const { startLocalStack } = await import("../stack/local-stack");
  const { seed } = await import("./seed");
  const data = resolve(opts.data);
  secureDataDir(data);
  const key = ServiceKey.load(data);
  const service = loadServiceWallet(data, key);
  // The in-process chain starts empty each time, so the store does too.
  const storeUrl = opts.store ?? join(data, "store.sqlite");
  if (!opts.store) for (const f of [storeUrl, `${storeUrl}-wal`, `${storeUrl}-shm`]) rmSync(f, { force: true });
  const s = await startLocalStack({
    storeUrl,
    serviceKey: key,
    service,
    engine: opts.engine,
    ...servedBy(cors),
  }).catch((e: unknown) => {
    throw listenRefusal(e);
  });
  await s.chain.gateway.setTime(BigInt(Math.floor(Date.now() / 1000)));
  // Seeding winds the clock back and forward to where it started (scripts/seed.ts): only then
  // does the clock follow wall time (never backwards), so cutoffs and closesAt pass for real.
  const demo = opts.seed ? await seed(s, { log: (m) => console.log(m) }) : null;
  const follow = setInterval(async () => {
    const wall = BigInt(Math.floor(Date.now() / 1000));
    if (wall > (await s.chain.gateway.now())) await s.chain.gateway.setTime(wall);
  }, 1_000);
  const stopBackground = background(s, 2_000);

  const { adminUrl, adminServer } = operatorEndpoint(data, s.url, s.admin, { advance: (x) => s.chain.gateway.advance(x), runWorker: () => s.worker.drain() });

  const api = `${s.url}${OFFERS_BASE}`;
  console.log(`
Local stack up (${opts.engine}, store ${storeUrl})
  REST      ${api}
  embed     ${s.url}${EMBED_BASE}/polls/<slug-or-address>
  GraphQL   ${s.url}/graphql   (GraphiQL in a browser)
  metrics   ${s.url}/metrics   readiness ${s.url}/readyz
  operator  ${adminUrl}          (npx tsx scripts/admin.ts --data ${opts.data} <command>)
${heapLine()}
`);
  if (demo) {
    const [alice, bob] = demo.users;
    for (const u of demo.users) console.log(`  user ${u.name.padEnd(6)} wallet ${u.wallet}  token ${u.token}`);
    const contract = demo.contracts[0];
    console.log(`
Try:
  curl -s ${api}/contracts
  curl -s '${api}/?view=browse&pageSize=5'
  curl -s ${api}/${demo.offers[0]} -H 'Authorization: Bearer ${alice.token}'
  OFFER=$(curl -s -X POST ${api}/ -H 'Authorization: Bearer ${alice.token}' -H 'Content-Type: application/json' \\
    -d '{"contractAddress":"${contract}","creatorOutcome":"sideA","creatorTotalMicros":"8000000","takerTargetMicros":"10000000","minimumTakeMicros":"1000000","expectedFeeBps":1000,"idempotencyKey":"demo-create-1"}' \\
    | node -pe "JSON.parse(require('fs').readFileSync(0, 'utf8')).offerAddress"); echo "offer $OFFER"
  curl -s -X POST ${api}/$OFFER/take -H 'Authorization: Bearer ${bob.token}' -H 'Content-Type: application/json' \\
    -d '{"takeAmountMicros":"5000000","expectedRevision":"1","idempotencyKey":"demo-take-1"}'
  curl -s -X POST ${api}/$OFFER/close -H 'Authorization: Bearer ${alice.token}' -H 'Content-Type: application/json' \\
    -d '{"expectedRevision":"2","idempotencyKey":"demo-close-1"}'
  curl -s ${s.url}/graphql -H 'Content-Type: application/json' -d '{"query":"{ offers(first: 3) { totalCount edges { node { address status remainingTakerMicros } } } }"}'
  curl -si ${s.url}${EMBED_BASE}/polls/${demo.poolSlugs[0]}
(each pool by slug: ${demo.poolSlugs.join(", ")})
Share pages (what shared links open, in a browser): ${s.url}/offers/${demo.offers[0]}  ${s.url}/polls/${demo.poolSlugs[0]}
`);
  }
  onStop(async () => {
    clearInterval(follow);
    stopBackground();
    adminServer.close();
    await s.stop();
  });
}

main().catch(exitOnError);
