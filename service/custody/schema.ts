/**
 * The service's own tables (not chain data): users with their custodial wallets, Personal
 * Access Tokens, the idempotency records of writes, the per-user write rate buckets
 * (service/writes/wallet-guard.ts), the settlement worker's failing items
 * (service/worker/failures.ts), the acting indexer's progress
 * (service/observability/indexer-progress.ts), bulk closes and dead-man switches, and the users'
 * webhook endpoints with their outbox (service/webhooks). They live in the same database as the
 * indexer's store, migrated by their own kysely Migrator (tables `custody_migration*`), so the
 * indexer's migrations and these never interleave.
 *
 * - Secrets are never stored in clear: wallet secret keys are AES-256-GCM ciphertext under the
 *   service key (./crypto.ts); tokens are stored as SHA-256 hex of the token string.
 * - Times are integer unix seconds (wall clock of the service).
 */
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from "kysely";
import { migrationSchema, runMigrator } from "../../indexer/store/migrations";

export interface UsersTable {
  id: string;
  /** Unique handle, used by the admin CLI. */
  name: string;
  display_name: string;
  /** Custodial wallet public key (base58). */
  wallet: string;
  /** The wallet's token account of the service's stablecoin mint. */
  token_account: string;
  /** AES-256-GCM of the 64-byte secret key: base64(iv 12 | tag 16 | ciphertext). */
  wallet_secret_enc: string;
  /** During a service key rotation: the same secret sealed under the next key (null otherwise). */
  wallet_secret_enc_next: string | null;
  /** 1 when compliance blocks the user from wagering (create/take); close still works. */
  blocked: number;
  blocked_reason: string | null;
  created_at: number;
}

export interface AccessTokensTable {
  id: string;
  user_id: string;
  /** sha256 hex of the full token string. */
  token_hash: string;
  /** Space-separated scopes, e.g. "bet:write". */
  scopes: string;
  label: string;
  created_at: number;
  /** Unix seconds; null = never expires. */
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

/**
 * One write request per (user, key). state: "reserved" (checks running, nothing signed yet),
 * "submitted" (signed and handed to the chain; `signature`, `tx_base64` set), "confirmed",
 * "failed" (the chain refused it after `pending` was answered; `status_code`/`error` set).
 */
export interface IdempotencyTable {
  user_id: string;
  idem_key: string;
  /** "create" | "take" | "close" */
  operation: string;
  /** sha256 hex of the canonical request (operation, path address, body without the key). */
  request_hash: string;
  state: string;
  offer_address: string | null;
  signature: string | null;
  tx_base64: string | null;
  /** JSON of the response body answered (with status `pending`). */
  response_json: string | null;
  status_code: number | null;
  error: string | null;
  created_at: number;
  updated_at: number;
  /**
   * The fence of the row's owner: a random token set at the insert and replaced at each takeover
   * of a stale `reserved` row. Every later write of a request (record, release) is conditioned on
   * the token it set, so a request that stalled past the takeover can neither overwrite nor delete
   * its successor's row, nor a fresh row inserted after the key was released (a token, unlike a
   * counter, never comes back). '' for rows written before migration 0007.
   */
  owner: string;
}

/**
 * One settlement-worker item whose action keeps failing (service/worker/failures.ts): skipped
 * until `next_retry_at`, with exponential backoff per item. Times are unix seconds of the
 * service's wall clock. The row is deleted once the item succeeds or is no longer due.
 */
export interface WorkerFailuresTable {
  /** "void-contract" | "close-offer" | "settle-position" | "reclaim-position" | "reclaim-offer" */
  kind: string;
  /** The account acted on (contract, offer or position address). */
  item: string;
  attempts: number;
  first_failed_at: number;
  last_failed_at: number;
  next_retry_at: number;
  /** The program error's name from the IDL when the program refused, else the error text (<= 500 chars). */
  last_reason: string;
}

/**
 * Per-user write rate (service/writes/wallet-guard.ts): GCRA, i.e. a token bucket stored as its
 * theoretical arrival time in unix milliseconds. Shared by every service process on the store.
 */
export interface WriteRateTable {
  user_id: string;
  tat_ms: number;
}

/**
 * Per-address and per-token request rate of the HTTP API (service/rate/request-limiter.ts): GCRA
 * like `write_rate`, keyed `ip:<address>` or `token:<hash>`. Shared by every process on the store.
 */
export interface RequestRateTable {
  key: string;
  tat_ms: number;
}

/**
 * The fingerprint of the service key the custodial wallets are sealed under (one row, id 1), and
 * during a rotation the next key's: a start with any other key is refused (custody.ts).
 */
export interface ServiceKeyTable {
  id: number;
  fingerprint: string;
  next_fingerprint: string | null;
}

/**
 * One row (id 1) counting revokes and compliance (un)blocks: processes that keep tokens and
 * blocks in memory for reads (./read-auth-cache.ts) drop them when it moves.
 */
export interface AuthEpochTable {
  id: number;
  epoch: number;
}

/**
 * How far the acting indexer has got (service/observability/indexer-progress.ts): written by it at
 * every lag sample, read by the processes without an indexer (role `api`) for their readiness.
 * One row (`source` "indexer"), whichever process acts. Slots are the chain's; `updated_at` is unix ms.
 */
export interface IndexerProgressTable {
  source: string;
  /** The last head slot up to which every program transaction was applied to the store. */
  synced_slot: number;
  /** The chain's head at the last sample (informative). */
  head_slot: number;
  updated_at: number;
}

/**
 * One bulk close (service/writes/bulk-close.ts) per (user, key): the offers it chose at the first
 * request (JSON `[{address, contract, revision}]`), so that a replay closes the same list.
 */
export interface BulkClosesTable {
  user_id: string;
  idem_key: string;
  request_hash: string;
  offers_json: string;
  /** "request" (REST / GraphQL) or "dead-man-switch". */
  reason: string;
  created_at: number;
}

/**
 * A user's dead-man switch (service/writes/dead-man-switch.ts), one row per user. state: "armed"
 * (heartbeats expected before `deadline_ms`), "disarmed", "tripped" (no heartbeat in time; the
 * worker closes the offers), "fired" (done: `result_json` holds the bulk close's answer). Times in
 * unix milliseconds of the service's wall clock.
 */
export interface DeadManSwitchesTable {
  user_id: string;
  /** Random per arming: the bulk close's idempotency key derives from it. */
  arm_id: string;
  state: string;
  timeout_seconds: number;
  armed_at_ms: number;
  last_heartbeat_ms: number;
  deadline_ms: number;
  tripped_at_ms: number | null;
  fired_at_ms: number | null;
  /** Bulk-close runs of this trip (a run with refusals other than "already closed" is retried). */
  attempts: number;
  /** Why it tripped, for the user. */
  reason: string | null;
  result_json: string | null;
  updated_at_ms: number;
}

/**
 * A user's webhook endpoint (service/webhooks/endpoints.ts). `events` is space-separated event
 * types; `secret_enc` the signing secret (whsec_...) sealed under the service key (AAD the
 * endpoint id); `from_slot` the indexed slot at creation: events of that slot on are sent to it
 * (a slot is the finest order events carry). Times in unix milliseconds.
 */
export interface WebhookEndpointsTable {
  id: string;
  user_id: string;
  url: string;
  events: string;
  secret_enc: string;
  /** 1: kept with its deliveries, nothing new is sent. */
  disabled: number;
  from_slot: number;
  created_at_ms: number;
  updated_at_ms: number;
}

/**
 * One event for one endpoint (service/webhooks/delivery.ts), the outbox: state "pending" (due at
 * `next_attempt_ms`), "delivered" (a 2xx answered) or "failed" (retries ran out at
 * `give_up_at_ms`). Unique per (endpoint, event): a re-derivation of the same indexed event
 * inserts nothing.
 */
export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  user_id: string;
  event_id: string;
  event_type: string;
  /** The slot and signature of the transaction the event comes from (re-checked before each send). */
  slot: number;
  signature: string;
  payload_json: string;
  state: string;
  attempts: number;
  next_attempt_ms: number;
  give_up_at_ms: number;
  last_status: number | null;
  last_error: string | null;
  /** Unix ms until which a worker holds the delivery in flight (another worker skips it). */
  lease_until_ms: number;
  replays: number;
  created_at_ms: number;
  delivered_at_ms: number | null;
}

/** One attempt of a delivery: the receiver's status (null: no answer) or what went wrong. */
export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  at_ms: number;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

/** How far the webhook events were derived from the indexed store (one row, source "webhooks"). */
export interface WebhookScanTable {
  source: string;
  slot: number;
}

export interface CustodyDatabase {
  users: UsersTable;
  access_tokens: AccessTokensTable;
  idempotency: IdempotencyTable;
  worker_failures: WorkerFailuresTable;
  write_rate: WriteRateTable;
  request_rate: RequestRateTable;
  service_key: ServiceKeyTable;
  auth_epoch: AuthEpochTable;
  indexer_progress: IndexerProgressTable;
  bulk_closes: BulkClosesTable;
  dead_man_switches: DeadManSwitchesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_scan: WebhookScanTable;
}

const m0001: Migration = {
  async up(db: Kysely<unknown>) {
    const s = db.schema;
    await s
      .createTable("users")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("name", "text", (c) => c.notNull().unique())
      .addColumn("display_name", "text", (c) => c.notNull())
      .addColumn("wallet", "text", (c) => c.notNull().unique())
      .addColumn("token_account", "text", (c) => c.notNull())
      .addColumn("wallet_secret_enc", "text", (c) => c.notNull())
      .addColumn("blocked", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("blocked_reason", "text")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
    await s
      .createTable("access_tokens")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("token_hash", "text", (c) => c.notNull().unique())
      .addColumn("scopes", "text", (c) => c.notNull())
      .addColumn("label", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("expires_at", "bigint")
      .addColumn("revoked_at", "bigint")
      .addColumn("last_used_at", "bigint")
      .execute();
    await s.createIndex("access_tokens_user").on("access_tokens").column("user_id").execute();
    await s
      .createTable("idempotency")
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("idem_key", "text", (c) => c.notNull())
      .addColumn("operation", "text", (c) => c.notNull())
      .addColumn("request_hash", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("offer_address", "text")
      .addColumn("signature", "text")
      .addColumn("tx_base64", "text")
      .addColumn("response_json", "text")
      .addColumn("status_code", "integer")
      .addColumn("error", "text")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("idempotency_pk", ["user_id", "idem_key"])
      .execute();
    await s.createIndex("idempotency_state").on("idempotency").columns(["state", "updated_at"]).execute();
  },
};

const m0002: Migration = {
  async up(db: Kysely<unknown>) {
    const s = db.schema;
    await s
      .createTable("worker_failures")
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("item", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("first_failed_at", "bigint", (c) => c.notNull())
      .addColumn("last_failed_at", "bigint", (c) => c.notNull())
      .addColumn("next_retry_at", "bigint", (c) => c.notNull())
      .addColumn("last_reason", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("worker_failures_pk", ["kind", "item"])
      .execute();
    await s.createIndex("worker_failures_retry").on("worker_failures").columns(["kind", "next_retry_at"]).execute();
    await s
      .createTable("write_rate")
      .addColumn("user_id", "text", (c) => c.primaryKey())
      .addColumn("tat_ms", "bigint", (c) => c.notNull())
      .execute();
  },
};

const m0003: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("request_rate")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("tat_ms", "bigint", (c) => c.notNull())
      .execute();
  },
};

const m0004: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("users").addColumn("wallet_secret_enc_next", "text").execute();
    await db.schema
      .createTable("service_key")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("fingerprint", "text", (c) => c.notNull())
      .addColumn("next_fingerprint", "text")
      .execute();
  },
};

const m0005: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("auth_epoch")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("epoch", "bigint", (c) => c.notNull())
      .execute();
    await sql`insert into auth_epoch (id, epoch) values (1, 0)`.execute(db);
  },
};

const m0006: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("indexer_progress")
      .addColumn("source", "text", (c) => c.primaryKey())
      .addColumn("synced_slot", "bigint", (c) => c.notNull())
      .addColumn("head_slot", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();
  },
};

/** The idempotency fence (`owner`). */
const m0007: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("idempotency")
      .addColumn("owner", "text", (c) => c.notNull().defaultTo(""))
      .execute();
  },
};

/** Bulk close and the dead-man switch (issue #26). */
const mBulkCloseDeadMan: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("bulk_closes")
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("idem_key", "text", (c) => c.notNull())
      .addColumn("request_hash", "text", (c) => c.notNull())
      .addColumn("offers_json", "text", (c) => c.notNull())
      .addColumn("reason", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("bulk_closes_pk", ["user_id", "idem_key"])
      .execute();
    await db.schema
      .createTable("dead_man_switches")
      .addColumn("user_id", "text", (c) => c.primaryKey())
      .addColumn("arm_id", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("timeout_seconds", "integer", (c) => c.notNull())
      .addColumn("armed_at_ms", "bigint", (c) => c.notNull())
      .addColumn("last_heartbeat_ms", "bigint", (c) => c.notNull())
      .addColumn("deadline_ms", "bigint", (c) => c.notNull())
      .addColumn("tripped_at_ms", "bigint")
      .addColumn("fired_at_ms", "bigint")
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("reason", "text")
      .addColumn("result_json", "text")
      .addColumn("updated_at_ms", "bigint", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("dead_man_switches_due").on("dead_man_switches").columns(["state", "deadline_ms"]).execute();
  },
};

/** Webhooks (issue #26): endpoints, the outbox of deliveries, their attempts, the derivation's cursor. */
const mWebhooks: Migration = {
  async up(db: Kysely<unknown>) {
    const s = db.schema;
    await s
      .createTable("webhook_endpoints")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("events", "text", (c) => c.notNull())
      .addColumn("secret_enc", "text", (c) => c.notNull())
      .addColumn("disabled", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("from_slot", "bigint", (c) => c.notNull())
      .addColumn("created_at_ms", "bigint", (c) => c.notNull())
      .addColumn("updated_at_ms", "bigint", (c) => c.notNull())
      .execute();
    await s.createIndex("webhook_endpoints_user").on("webhook_endpoints").column("user_id").execute();
    await s
      .createTable("webhook_deliveries")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("endpoint_id", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("event_type", "text", (c) => c.notNull())
      .addColumn("slot", "bigint", (c) => c.notNull())
      .addColumn("signature", "text", (c) => c.notNull())
      .addColumn("payload_json", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("next_attempt_ms", "bigint", (c) => c.notNull())
      .addColumn("give_up_at_ms", "bigint", (c) => c.notNull())
      .addColumn("last_status", "integer")
      .addColumn("last_error", "text")
      .addColumn("lease_until_ms", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("replays", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("created_at_ms", "bigint", (c) => c.notNull())
      .addColumn("delivered_at_ms", "bigint")
      .addUniqueConstraint("webhook_deliveries_event", ["endpoint_id", "event_id"])
      .execute();
    await s.createIndex("webhook_deliveries_due").on("webhook_deliveries").columns(["state", "next_attempt_ms"]).execute();
    await s.createIndex("webhook_deliveries_user").on("webhook_deliveries").columns(["user_id", "created_at_ms"]).execute();
    await s
      .createTable("webhook_attempts")
      .addColumn("delivery_id", "text", (c) => c.notNull())
      .addColumn("attempt", "integer", (c) => c.notNull())
      .addColumn("at_ms", "bigint", (c) => c.notNull())
      .addColumn("status", "integer")
      .addColumn("error", "text")
      .addColumn("duration_ms", "integer", (c) => c.notNull())
      .addPrimaryKeyConstraint("webhook_attempts_pk", ["delivery_id", "attempt"])
      .execute();
    await s
      .createTable("webhook_scan")
      .addColumn("source", "text", (c) => c.primaryKey())
      .addColumn("slot", "bigint", (c) => c.notNull())
      .execute();
  },
};

class Provider implements MigrationProvider {
  async getMigrations() {
    return {
      "0001_custody": m0001,
      "0002_worker_failures_write_rate": m0002,
      "0003_request_rate": m0003,
      "0004_service_key": m0004,
      "0005_auth_epoch": m0005,
      "0006_indexer_progress": m0006,
      "0007_idempotency_owner": m0007,
      "0008_bulk_close_dead_man_switch": mBulkCloseDeadMan,
      "0009_webhooks": mWebhooks,
    };
  }
}

export async function migrateCustody(db: Kysely<unknown>): Promise<void> {
  const schema = await migrationSchema(db);
  await runMigrator(
    new Migrator({
      db,
      provider: new Provider(),
      migrationTableName: "custody_migration",
      migrationLockTableName: "custody_migration_lock",
      ...(schema ? { migrationTableSchema: schema } : {}),
    }),
  );
}

export { sql };
