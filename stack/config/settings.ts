/**
 * Every setting of the entry points (scripts/start.ts, scripts/admin.ts, scripts/simulate.ts,
 * scripts/backfill.ts, the benchmarks), once: its flag, its environment variable, its schema
 * (./values.ts) and its default. An entry point adds the options it takes and gets typed values;
 * the service layer below receives those values, never a raw string. docs/service-guide.md
 * "Configuration" lists them (tests/stack/config.test.ts checks that it names each one).
 */
import { Option, type Command } from "commander";
import { z } from "zod";
// Only the numbers and names, each in a file of its own: an entry point parses (and refuses) its
// command line before it loads the engines, the store or the server (tests/stack/cli-refusals.test.ts).
import { DEFAULT_WALLET_LIMITS } from "../../service/writes/wallet-limits";
import { DEFAULT_ACTION_LIMITS, DEFAULT_REQUEST_LIMITS, type RequestLimits } from "../../service/rate/request-limits";
import { DEFAULT_ADMISSION_LIMITS, type AdmissionLimits } from "../../service/rate/admission-limits";
import { DEFAULT_MAX_LAG_SLOTS } from "../../service/observability/lag";
import { LIVE_LIMITS, type LiveLimits } from "../../service/read/live-limits";
import { LIVE_SHARES } from "../../service/read/live-shares";
import { WEBHOOK_LIMITS } from "../../service/webhooks/limits";
import { ROLES } from "./roles";
import { SOLANA_CLUSTERS, blockchainId } from "../../service/actions/blockchain-id";
import {
  LOG_LEVELS,
  arg,
  booleanValue,
  choicesValue,
  countValue,
  durationValue,
  enumValue,
  hostValue,
  listValue,
  portValue,
  positiveValue,
  urlValue,
} from "./values";

/** The in-process SVM engines of the local stack (harness/engines.ts EngineName). */
export const ENGINES = ["bankrun", "litesvm"] as const;

/** An option read from `flags`, else `env`, parsed by `schema`; `fallback` when neither is given. */
function setting<T>(flags: string, help: string, schema: z.ZodType<T, string>, o: { env?: string; fallback?: T; fallbackText?: string } = {}): Option {
  const opt = new Option(flags, help).argParser(arg(schema));
  if (o.env) opt.env(o.env);
  if (o.fallback !== undefined) opt.default(o.fallback, o.fallbackText);
  return opt;
}

/** A switch: `--flag` alone is on, `--flag false` (or the variable) says which; off by default. */
function switchSetting(flags: string, help: string, env: string): Option {
  return setting(`${flags} [boolean]`, help, booleanValue, { env, fallback: false }).preset("true");
}

const count = (flags: string, help: string, env: string, fallback: number) => setting(`${flags} <n>`, help, countValue, { env, fallback });
const positive = (flags: string, help: string, env: string, fallback: number) => setting(`${flags} <n>`, help, positiveValue, { env, fallback });

export const SETTINGS = {
  host: () =>
    setting("--host <address>", "address the HTTP API binds (0.0.0.0 or ::: every interface, behind a load balancer)", hostValue, {
      env: "HOST",
      fallback: "127.0.0.1",
    }),
  port: () => setting("--port <n>", "HTTP API port", portValue, { env: "PORT", fallback: 8080 }),
  adminPort: () => setting("--admin-port <n>", "operator endpoint port (loopback only)", portValue, { env: "ADMIN_PORT", fallback: 8081 }),
  data: () => setting("--data <dir>", "data directory (keys, store, admin.json)", nonEmpty(), { env: "DATA_DIR", fallback: "data/local" }),
  store: () => setting("--store <url>", "store: SQLite file path or postgres:// URL (default <data>/store.sqlite)", nonEmpty(), { env: "STORE_URL" }),
  rpc: () => setting("--rpc <url>", "Solana RPC endpoint (instead of the in-process chain)", urlValue, { env: "RPC_URL" }),
  ws: () => setting("--ws <url>", "its websocket endpoint (default: the RPC port + 1)", urlValue, { env: "WS_URL" }),
  engine: () => setting("--engine <name>", ENGINES.join(" | "), enumValue(ENGINES), { env: "SVM_ENGINE", fallback: "bankrun" }),
  role: () =>
    setting("--role <role>", `${ROLES.join(" | ")} (all but \`all\` need --rpc and a PostgreSQL --store)`, enumValue(ROLES), { env: "ROLE", fallback: "all" }),
  publicUrl: () => setting("--public-url <url>", "public base URL used in links (default http://<host>:<port>)", urlValue, { env: "PUBLIC_URL" }),
  corsOrigins: () =>
    setting("--cors-origins <list>", "comma-separated browser origins allowed to call the offers API and /graphql (default: none)", nonEmpty(), {
      env: "CORS_ORIGINS",
    }),
  actionsCluster: () =>
    setting(
      "--actions-cluster <id>",
      "the cluster Solana Actions build transactions for (X-Blockchain-Ids): mainnet | devnet | testnet | solana:<genesis hash, 32 characters>",
      actionsClusterValue,
      { env: "ACTIONS_CLUSTER", fallback: SOLANA_CLUSTERS.devnet, fallbackText: "devnet" },
    ),
  trustProxy: () => switchSetting("--trust-proxy", "take the client address from X-Forwarded-For (only behind a proxy that sets it)", "TRUST_PROXY"),
  logLevel: () => setting("--log-level <level>", LOG_LEVELS.join(" | "), enumValue(LOG_LEVELS), { env: "LOG_LEVEL" }),
  maxLagSlots: () => count("--max-lag-slots", "GET /readyz fails when the indexer is more slots behind the chain", "MAX_LAG_SLOTS", DEFAULT_MAX_LAG_SLOTS),
  leaderRetryMs: () => positive("--leader-retry-ms", "how often a standby indexer or worker tries to take over (ms)", "LEADER_RETRY_MS", 1_000),
  writeBurst: () => count("--write-burst", "writes one user may make at once (0: no rate limit)", "WRITE_BURST", DEFAULT_WALLET_LIMITS.writeBurst),
  writesPerHour: () =>
    count("--writes-per-hour", "writes per hour per user after the burst (0: no rate limit)", "WRITES_PER_HOUR", DEFAULT_WALLET_LIMITS.writesPerHour),
  maxOpenOffers: () =>
    count("--max-open-offers", "offers per user not yet settled and reclaimed (0: no cap)", "MAX_OPEN_OFFERS", DEFAULT_WALLET_LIMITS.maxOpenOffers),
  maxOpenPositions: () =>
    count("--max-open-positions", "positions per user not yet settled and reclaimed (0: no cap)", "MAX_OPEN_POSITIONS", DEFAULT_WALLET_LIMITS.maxOpenPositions),
  ipBurst: () => count("--ip-burst", "requests one client address may make at once (0: no limit)", "IP_BURST", DEFAULT_REQUEST_LIMITS.ipBurst),
  ipPerMinute: () =>
    count("--ip-per-minute", "requests per minute per client address after the burst (0: no limit)", "IP_PER_MINUTE", DEFAULT_REQUEST_LIMITS.ipPerMinute),
  tokenBurst: () => count("--token-burst", "requests one bearer token may make at once (0: no limit)", "TOKEN_BURST", DEFAULT_REQUEST_LIMITS.tokenBurst),
  tokenPerMinute: () =>
    count(
      "--token-per-minute",
      "requests per minute per bearer token after the burst (0: no limit)",
      "TOKEN_PER_MINUTE",
      DEFAULT_REQUEST_LIMITS.tokenPerMinute,
    ),
  actionIpBurst: () =>
    count(
      "--action-ip-burst",
      "Solana Actions requests (GET and POST under /api/actions/) one client address may make at once, besides its general bucket (0: no limit)",
      "ACTION_IP_BURST",
      DEFAULT_ACTION_LIMITS.actionIpBurst,
    ),
  actionIpPerMinute: () =>
    count(
      "--action-ip-per-minute",
      "Solana Actions requests per minute per client address after the burst (0: no limit)",
      "ACTION_IP_PER_MINUTE",
      DEFAULT_ACTION_LIMITS.actionIpPerMinute,
    ),
  actionAccountBurst: () =>
    count(
      "--action-account-burst",
      "Solana Actions POSTs naming one wallet as account at once, from any address (0: no limit)",
      "ACTION_ACCOUNT_BURST",
      DEFAULT_ACTION_LIMITS.actionAccountBurst,
    ),
  actionAccountPerMinute: () =>
    count(
      "--action-account-per-minute",
      "Solana Actions POSTs per minute per wallet account after the burst (0: no limit)",
      "ACTION_ACCOUNT_PER_MINUTE",
      DEFAULT_ACTION_LIMITS.actionAccountPerMinute,
    ),
  readConcurrency: () =>
    count(
      "--read-concurrency",
      "expensive reads (GraphQL queries, REST reads not cached) running at once; the others wait, least recent cost per caller first (0: no admission)",
      "READ_CONCURRENCY",
      DEFAULT_ADMISSION_LIMITS.concurrency,
    ),
  readQueuePerCaller: () =>
    count(
      "--read-queue-per-caller",
      "expensive reads one caller may have waiting (one more: 429)",
      "READ_QUEUE_PER_CALLER",
      DEFAULT_ADMISSION_LIMITS.queuePerCaller,
    ),
  readQueueTotal: () => count("--read-queue-total", "expensive reads waiting in all (one more: 429)", "READ_QUEUE_TOTAL", DEFAULT_ADMISSION_LIMITS.queueTotal),
  readRetryAfterSeconds: () =>
    positive(
      "--read-retry-after-seconds",
      "the Retry-After (s) told to a caller refused for too many reads waiting",
      "READ_RETRY_AFTER_SECONDS",
      DEFAULT_ADMISSION_LIMITS.retryAfterSeconds,
    ),
  liveMaxPerConnection: () =>
    positive("--live-max-per-connection", "subscriptions one connection may hold", "LIVE_MAX_PER_CONNECTION", LIVE_LIMITS.maxPerConnection),
  liveMaxSubscriptions: () =>
    positive("--live-max-subscriptions", "subscriptions this process serves at once", "LIVE_MAX_SUBSCRIPTIONS", LIVE_LIMITS.maxPerProcess),
  liveQueueLimit: () =>
    positive("--live-queue-limit", "undelivered values one subscriber may hold before the oldest are dropped", "LIVE_QUEUE_LIMIT", LIVE_LIMITS.queueLimit),
  liveResumeWindowMs: () =>
    positive(
      "--live-resume-window-ms",
      "how long a subscription whose client went away is kept for a resume with its last event id (ms)",
      "LIVE_RESUME_WINDOW_MS",
      LIVE_LIMITS.resumeWindowMs,
    ),
  liveMaxDetached: () =>
    positive("--live-max-detached", "subscriptions kept for a resume at once (the oldest goes first)", "LIVE_MAX_DETACHED", LIVE_LIMITS.maxDetachedPerProcess),
  liveAuthRecheckMs: () =>
    positive("--live-auth-recheck-ms", "how often signed-in subscriptions' tokens are checked again (ms)", "LIVE_AUTH_RECHECK_MS", LIVE_LIMITS.authRecheckMs),
  liveAnonymousSubscriptionsPerAddress: () =>
    positive(
      "--live-anonymous-subscriptions-per-address",
      "subscriptions all anonymous callers of one address group may hold",
      "LIVE_ANONYMOUS_SUBSCRIPTIONS_PER_ADDRESS",
      LIVE_SHARES.anonymousSubscriptionsPerAddress,
    ),
  liveSubscriptionsPerAddress: () =>
    positive(
      "--live-subscriptions-per-address",
      "subscriptions all callers of one address group may hold, anonymous and signed in",
      "LIVE_SUBSCRIPTIONS_PER_ADDRESS",
      LIVE_SHARES.subscriptionsPerAddress,
    ),
  liveSubscriptionsPerToken: () =>
    positive(
      "--live-subscriptions-per-token",
      "subscriptions one token may hold, from any address",
      "LIVE_SUBSCRIPTIONS_PER_TOKEN",
      LIVE_SHARES.subscriptionsPerToken,
    ),
  liveMaxAnonymousSubscriptions: () =>
    positive(
      "--live-max-anonymous-subscriptions",
      "subscriptions all anonymous callers together may hold (the rest of --live-max-subscriptions stays for signed-in ones)",
      "LIVE_MAX_ANONYMOUS_SUBSCRIPTIONS",
      LIVE_SHARES.anonymousSubscriptionsPerProcess,
    ),
  liveConnectionsPerAddress: () =>
    positive(
      "--live-connections-per-address",
      "WebSocket connections one address group may hold open",
      "LIVE_CONNECTIONS_PER_ADDRESS",
      LIVE_SHARES.connectionsPerAddress,
    ),
  liveAnonymousConnectionsPerAddress: () =>
    positive(
      "--live-anonymous-connections-per-address",
      "anonymous WebSocket connections one address group may hold open",
      "LIVE_ANONYMOUS_CONNECTIONS_PER_ADDRESS",
      LIVE_SHARES.anonymousConnectionsPerAddress,
    ),
  liveConnectionsPerToken: () =>
    positive("--live-connections-per-token", "WebSocket connections one token may hold open", "LIVE_CONNECTIONS_PER_TOKEN", LIVE_SHARES.connectionsPerToken),
  liveShareRetryAfterSeconds: () =>
    positive(
      "--live-share-retry-after-seconds",
      "the Retry-After (s) told to a caller over its share of subscriptions or connections",
      "LIVE_SHARE_RETRY_AFTER_SECONDS",
      LIVE_SHARES.shareRetryAfterSeconds,
    ),
  webhookAllowLocal: () =>
    switchSetting(
      "--webhook-allow-local",
      "let webhook endpoints be http:// and loopback, private or link-local targets (tests, a local stack; never in production: SSRF)",
      "WEBHOOK_ALLOW_LOCAL",
    ),
  webhookTimeoutMs: () =>
    positive("--webhook-timeout-ms", "how long a webhook receiver has to answer one delivery (ms)", "WEBHOOK_TIMEOUT_MS", WEBHOOK_LIMITS.timeoutMs),
  webhookRetryForMs: () =>
    positive(
      "--webhook-retry-for-ms",
      "how long a webhook delivery is retried before it is recorded failed (ms)",
      "WEBHOOK_RETRY_FOR_MS",
      WEBHOOK_LIMITS.retryForMs,
    ),
  webhookFinalitySlots: () =>
    setting(
      "--webhook-finality-slots <n>",
      "slots an event's transaction must be behind the indexed head before its webhook is sent (default: 0 on the in-process chain, 224 with --rpc)",
      countValue,
      { env: "WEBHOOK_FINALITY_SLOTS" },
    ),
} satisfies Record<string, () => Option>;

export type SettingName = keyof typeof SETTINGS;

/** Each setting's value once parsed (what an entry point gets from `settingsOf`). */
export interface SettingValues {
  host: string;
  port: number;
  adminPort: number;
  data: string;
  store?: string;
  rpc?: string;
  ws?: string;
  engine: (typeof ENGINES)[number];
  role: (typeof ROLES)[number];
  publicUrl?: string;
  corsOrigins?: string;
  actionsCluster: string;
  trustProxy: boolean;
  logLevel?: (typeof LOG_LEVELS)[number];
  maxLagSlots: number;
  leaderRetryMs: number;
  writeBurst: number;
  writesPerHour: number;
  maxOpenOffers: number;
  maxOpenPositions: number;
  ipBurst: number;
  ipPerMinute: number;
  tokenBurst: number;
  tokenPerMinute: number;
  actionIpBurst: number;
  actionIpPerMinute: number;
  actionAccountBurst: number;
  actionAccountPerMinute: number;
  readConcurrency: number;
  readQueuePerCaller: number;
  readQueueTotal: number;
  readRetryAfterSeconds: number;
  liveMaxPerConnection: number;
  liveMaxSubscriptions: number;
  liveQueueLimit: number;
  liveResumeWindowMs: number;
  liveMaxDetached: number;
  liveAuthRecheckMs: number;
  liveAnonymousSubscriptionsPerAddress: number;
  liveSubscriptionsPerAddress: number;
  liveSubscriptionsPerToken: number;
  liveMaxAnonymousSubscriptions: number;
  liveConnectionsPerAddress: number;
  liveAnonymousConnectionsPerAddress: number;
  liveConnectionsPerToken: number;
  liveShareRetryAfterSeconds: number;
  webhookAllowLocal: boolean;
  webhookTimeoutMs: number;
  webhookRetryForMs: number;
  webhookFinalitySlots?: number;
}
SETTINGS satisfies Record<keyof SettingValues, () => Option>;

/** Which setting gives each request limit (service/rate/request-limits.ts RequestLimits): a limit without one does not compile. */
const REQUEST_LIMIT_SETTINGS = {
  ipBurst: "ipBurst",
  ipPerMinute: "ipPerMinute",
  tokenBurst: "tokenBurst",
  tokenPerMinute: "tokenPerMinute",
  actionIpBurst: "actionIpBurst",
  actionIpPerMinute: "actionIpPerMinute",
  actionAccountBurst: "actionAccountBurst",
  actionAccountPerMinute: "actionAccountPerMinute",
} as const satisfies Record<keyof RequestLimits, SettingName>;

export type RequestSettingName = (typeof REQUEST_LIMIT_SETTINGS)[keyof RequestLimits];

/** The request limits' settings (per address, per token, the Solana Actions routes'), for an entry point that serves the API. */
export const REQUEST_SETTINGS = Object.values(REQUEST_LIMIT_SETTINGS) as RequestSettingName[];

/** The request limits (createApp's `requestLimits`) from the parsed request settings. */
export function requestLimitsOf(v: Pick<SettingValues, RequestSettingName>): Required<RequestLimits> {
  const limits = {} as Required<RequestLimits>;
  for (const limit of Object.keys(REQUEST_LIMIT_SETTINGS) as (keyof RequestLimits)[]) limits[limit] = v[REQUEST_LIMIT_SETTINGS[limit]];
  return limits;
}

/** Which setting gives each live limit (service/read/live-updates.ts LiveLimits): a limit without one does not compile. */
const LIVE_LIMIT_SETTINGS = {
  maxPerConnection: "liveMaxPerConnection",
  maxPerProcess: "liveMaxSubscriptions",
  queueLimit: "liveQueueLimit",
  resumeWindowMs: "liveResumeWindowMs",
  maxDetachedPerProcess: "liveMaxDetached",
  authRecheckMs: "liveAuthRecheckMs",
  anonymousSubscriptionsPerAddress: "liveAnonymousSubscriptionsPerAddress",
  subscriptionsPerAddress: "liveSubscriptionsPerAddress",
  subscriptionsPerToken: "liveSubscriptionsPerToken",
  anonymousSubscriptionsPerProcess: "liveMaxAnonymousSubscriptions",
  connectionsPerAddress: "liveConnectionsPerAddress",
  anonymousConnectionsPerAddress: "liveAnonymousConnectionsPerAddress",
  connectionsPerToken: "liveConnectionsPerToken",
  shareRetryAfterSeconds: "liveShareRetryAfterSeconds",
} as const satisfies Record<keyof LiveLimits, SettingName>;

export type LiveSettingName = (typeof LIVE_LIMIT_SETTINGS)[keyof LiveLimits];

/** The live limits' settings, for an entry point that serves subscriptions to take. */
export const LIVE_SETTINGS = Object.values(LIVE_LIMIT_SETTINGS) as LiveSettingName[];

/** The live limits (createApp's `live`) from the parsed live settings. */
export function liveLimitsOf(v: Pick<SettingValues, LiveSettingName>): LiveLimits {
  const limits = { ...LIVE_LIMITS };
  for (const limit of Object.keys(LIVE_LIMIT_SETTINGS) as (keyof LiveLimits)[]) limits[limit] = v[LIVE_LIMIT_SETTINGS[limit]];
  return limits;
}

/** The settings of read admission (service/rate/admission.ts). */
export const ADMISSION_SETTINGS = [
  "readConcurrency",
  "readQueuePerCaller",
  "readQueueTotal",
  "readRetryAfterSeconds",
] as const satisfies readonly SettingName[];

/** Read admission's limits (stack/app.ts `admission`) from the parsed settings. */
export function admissionLimitsOf(v: Pick<SettingValues, (typeof ADMISSION_SETTINGS)[number]>): AdmissionLimits {
  return { concurrency: v.readConcurrency, queuePerCaller: v.readQueuePerCaller, queueTotal: v.readQueueTotal, retryAfterSeconds: v.readRetryAfterSeconds };
}

/** Adds the named settings to `cmd` as options; read them back with `settingsOf`. */
export function addSettings<C extends Command>(cmd: C, names: readonly SettingName[]): C {
  for (const n of names) cmd.addOption(SETTINGS[n]());
  return cmd;
}

/** The parsed values of the named settings (after `cmd` parsed its arguments). */
export function settingsOf<K extends SettingName>(cmd: Command, names: readonly K[]): Pick<SettingValues, K> {
  const all = cmd.opts<SettingValues>();
  return Object.fromEntries(names.map((n) => [n, all[n]])) as Pick<SettingValues, K>;
}

/** A list of `choices` a benchmark runs (`--only browse,offer`, `--engines sqlite`), all of them by default. */
export function choicesOption<const T extends readonly [string, ...string[]]>(flags: string, help: string, choices: T, o: { repeats?: boolean } = {}): Option {
  return setting(flags, `${help}, comma-separated: ${choices.join(", ")}`, choicesValue(choices, o), {
    fallback: [...choices],
    fallbackText: choices.join(","),
  });
}

/** The store engines a benchmark runs on: `--engines sqlite,postgres` (both by default). */
export function enginesOption(): Option {
  return choicesOption("--engines <list>", "store engines", ["sqlite", "postgres"] as const);
}

/** Sizes of a benchmark (`--concurrency 1,8`): positive integers, comma-separated, strictly. */
export function sizesOption(flags: string, help: string, fallback: number[]): Option {
  return setting(flags, help, listValue(positiveValue), { fallback, fallbackText: fallback.join(",") });
}

/** A size of a benchmark or simulation (`--offers`, `--connections`, `--n`): a positive integer, strictly. */
export function sizeOption(flags: string, help: string, fallback: number): Option {
  return setting(flags, help, positiveValue, { fallback });
}

/** A benchmark run's length (`--duration 10`, `--duration 30s`, `--duration 2m`), in whole seconds. */
export function durationOption(flags: string, help: string, fallback: number): Option {
  return setting(flags, help, durationValue, { fallback });
}

/** A cluster name or a CAIP-2 Solana chain id (service/actions/blockchain-id.ts). */
const actionsClusterValue = z.string().transform((v, ctx) => {
  try {
    return blockchainId(v);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: (e as Error).message });
    return z.NEVER;
  }
});

/** A non-empty string (a path, a URL list): an empty value is a mistake, not "unset". */
function nonEmpty() {
  return z.string().min(1, "expected a non-empty value");
}
