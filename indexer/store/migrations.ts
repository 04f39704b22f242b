/**
 * In-code migrations (kysely Migrator). Portable DDL: text, integer/bigint, no engine-specific
 * types; both SQLite and PostgreSQL run the same steps.
 */
import { Migrator, PostgresAdapter, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResult, type CreateTableBuilder } from "kysely";

type Tb = CreateTableBuilder<string, never>;
const meta = (t: Tb) =>
  t
    .addColumn("slot", "bigint", (c) => c.notNull())
    .addColumn("write_version", "bigint", (c) => c.notNull())
    .addColumn("deleted", "integer", (c) => c.notNull().defaultTo(0));
const txt = (t: Tb, ...names: string[]) => names.reduce((x, n) => x.addColumn(n, "text", (c) => c.notNull()), t);
const int = (t: Tb, ...names: string[]) => names.reduce((x, n) => x.addColumn(n, "integer", (c) => c.notNull()), t);
const big = (t: Tb, ...names: string[]) => names.reduce((x, n) => x.addColumn(n, "bigint", (c) => c.notNull()), t);
const bigNull = (t: Tb, ...names: string[]) => names.reduce((x, n) => x.addColumn(n, "bigint"), t);

const m0001: Migration = {
  async up(db: Kysely<unknown>) {
    const s = db.schema;
    await meta(
      txt(s.createTable("config").addColumn("address", "text", (c) => c.primaryKey()) as Tb, "authority", "mint", "treasury", "vault")
        .addColumn("fee_bps", "integer", (c) => c.notNull())
        .addColumn("offers_enabled", "integer", (c) => c.notNull())
        .addColumn("minimum_creator_micros", "text", (c) => c.notNull())
        .addColumn("minimum_take_micros", "text", (c) => c.notNull())
        .addColumn("maximum_wager_micros", "text", (c) => c.notNull())
        .addColumn("warning_ratio_numerator", "text", (c) => c.notNull())
        .addColumn("warning_ratio_denominator", "text", (c) => c.notNull())
        .addColumn("minimum_odds_numerator", "text", (c) => c.notNull())
        .addColumn("minimum_odds_denominator", "text", (c) => c.notNull())
        .addColumn("maximum_odds_numerator", "text", (c) => c.notNull())
        .addColumn("maximum_odds_denominator", "text", (c) => c.notNull()),
    ).execute();

    let t = s.createTable("contracts").addColumn("address", "text", (c) => c.primaryKey()) as Tb;
    t = txt(t, "template_id", "event_id");
    t = big(t, "cutoff_at", "resolution_deadline");
    t = txt(t, "status", "result");
    t = big(t, "created_at");
    t = bigNull(t, "resolved_at");
    await meta(t).execute();

    t = s.createTable("offers").addColumn("address", "text", (c) => c.primaryKey()) as Tb;
    t = txt(t, "contract", "creator", "creator_token", "rent_payer", "nonce", "side", "status");
    t = int(t, "fee_bps");
    t = txt(
      t,
      "creator_total_micros",
      "taker_target_micros",
      "minimum_take_micros",
      "taker_filled_micros",
      "creator_allocated_micros",
      "creator_refunded_micros",
    );
    t = big(t, "revision");
    t = int(t, "fill_count", "position_count", "settled_position_count");
    t = big(t, "created_at");
    t = bigNull(t, "closed_at");
    await meta(t).execute();

    t = s.createTable("positions").addColumn("address", "text", (c) => c.primaryKey()) as Tb;
    t = txt(t, "offer", "taker", "taker_token", "rent_payer", "taker_micros", "creator_matched_micros", "status");
    t = int(t, "fill_count");
    t = big(t, "created_at");
    t = bigNull(t, "settled_at");
    t = txt(t, "creator_payout_micros", "taker_payout_micros", "fee_micros");
    await meta(t).execute();

    t = s.createTable("fills") as unknown as Tb;
    t = txt(t, "offer");
    t = big(t, "revision");
    t = txt(t, "taker", "position", "take_micros", "creator_matched_micros", "taker_filled_micros", "creator_allocated_micros");
    t = big(t, "filled_at");
    t = txt(t, "signature");
    t = big(t, "slot");
    await t.addPrimaryKeyConstraint("fills_pk", ["offer", "revision"] as never).execute();

    t = s.createTable("offer_closes").addColumn("offer", "text", (c) => c.primaryKey()) as Tb;
    t = txt(t, "closed_by", "refund_micros");
    t = big(t, "revision", "closed_at");
    t = txt(t, "signature");
    t = big(t, "slot");
    await t.execute();

    t = s.createTable("settlements").addColumn("position", "text", (c) => c.primaryKey()) as Tb;
    t = txt(t, "offer", "status", "creator_payout_micros", "taker_payout_micros", "fee_micros");
    t = big(t, "settled_at");
    t = txt(t, "signature");
    t = big(t, "slot");
    await t.execute();

    t = s.createTable("pools").addColumn("address", "text", (c) => c.primaryKey()) as Tb;
    t = int(t, "version");
    t = t.addColumn("creator", "text");
    t = txt(t, "question", "state");
    t = int(t, "outcome_count");
    t = txt(t, "total_oi_micros");
    t = t.addColumn("participant_count", "integer");
    t = bigNull(t, "closes_at", "resolution_at");
    t = t.addColumn("resolution_criteria", "text").addColumn("cover_image_url", "text").addColumn("winning_outcome", "integer");
    t = bigNull(t, "updated_at");
    await meta(t).execute();

    t = s.createTable("pool_outcomes") as unknown as Tb;
    t = txt(t, "pool");
    t = int(t, "outcome_index");
    t = t.addColumn("label", "text");
    t = txt(t, "total_oi_micros");
    t = int(t, "wager_count");
    t = big(t, "slot", "write_version");
    await t.addPrimaryKeyConstraint("pool_outcomes_pk", ["pool", "outcome_index"] as never).execute();

    t = s.createTable("pool_wagers").addColumn("address", "text", (c) => c.primaryKey()) as Tb;
    t = txt(t, "pool", "owner");
    t = int(t, "outcome_index");
    t = txt(t, "amount_micros");
    await meta(t).execute();

    t = s.createTable("contract_catalog").addColumn("contract", "text", (c) => c.primaryKey()) as Tb;
    t = txt(t, "title", "description", "event", "sport", "competition");
    t = big(t, "starts_at");
    t = txt(t, "side_a_label", "side_b_label", "visuals_json");
    t = big(t, "updated_at");
    await t.execute();

    t = s.createTable("pool_catalog").addColumn("pool", "text", (c) => c.primaryKey()) as Tb;
    t = t.addColumn("slug", "text", (c) => c.unique());
    t = int(t, "is_public", "deleted", "flagged");
    t = big(t, "updated_at");
    await t.execute();

    t = s.createTable("profiles").addColumn("wallet", "text", (c) => c.primaryKey()) as Tb;
    t = txt(t, "display_name", "profile_image_url");
    t = big(t, "updated_at");
    await t.execute();

    t = s.createTable("checkpoints").addColumn("source", "text", (c) => c.primaryKey()) as Tb;
    t = big(t, "slot", "write_version");
    t = txt(t, "cursor");
    t = big(t, "updated_at");
    await t.execute();

    await s.createIndex("offers_contract_idx").on("offers").column("contract").execute();
    await s.createIndex("offers_creator_idx").on("offers").column("creator").execute();
    await s.createIndex("offers_status_idx").on("offers").columns(["status", "created_at"]).execute();
    await s.createIndex("positions_offer_idx").on("positions").column("offer").execute();
    await s.createIndex("positions_taker_idx").on("positions").column("taker").execute();
    await s.createIndex("settlements_offer_idx").on("settlements").column("offer").execute();
    await s.createIndex("pool_wagers_pool_idx").on("pool_wagers").columns(["pool", "owner"]).execute();
    await s.createIndex("contract_catalog_sport_idx").on("contract_catalog").column("sport").execute();
  },
  async down(db: Kysely<unknown>) {
    for (const t of [
      "checkpoints",
      "profiles",
      "pool_catalog",
      "contract_catalog",
      "pool_wagers",
      "pool_outcomes",
      "pools",
      "settlements",
      "offer_closes",
      "fills",
      "positions",
      "offers",
      "contracts",
      "config",
    ]) {
      await db.schema.dropTable(t).ifExists().execute();
    }
  },
};

/**
 * What the settlement worker needs to finish pools by itself: each pool's dispute window,
 * escalation time and voter count (which pools can be resolved, escalated or canceled now), and
 * the Participant records (whom to settle or refund).
 */
const m0002: Migration = {
  async up(db: Kysely<unknown>) {
    const s = db.schema;
    for (const c of ["vote_ends_at", "escalated_at"]) await s.alterTable("pools").addColumn(c, "bigint").execute();
    await s.alterTable("pools").addColumn("voter_count", "integer").execute();
    let t = s.createTable("pool_participants").addColumn("address", "text", (c) => c.primaryKey()) as Tb;
    t = txt(t, "pool", "user", "user_token", "total_micros");
    t = int(t, "settled");
    t = big(t, "created_at");
    await meta(t).execute();
    await s.createIndex("pool_participants_pool_idx").on("pool_participants").columns(["pool", "settled"]).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("pool_participants").ifExists().execute();
    for (const c of ["vote_ends_at", "escalated_at", "voter_count"]) await db.schema.alterTable("pools").dropColumn(c).execute();
  },
};

/** When each pool was canceled (its PoolStateChanged event): why it was canceled depends on it. */
const m0003: Migration = {
  async up(db: Kysely<unknown>) {
    let t = db.schema.createTable("pool_cancels").addColumn("pool", "text", (c) => c.primaryKey()) as Tb;
    t = big(t, "canceled_at");
    t = txt(t, "signature");
    t = big(t, "slot");
    await t.execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("pool_cancels").ifExists().execute();
  },
};

/** The catalog's five searchable columns, in one place for the index and the query. */
export const SEARCH_COLUMNS = ["title", "event", "competition", "side_a_label", "side_b_label"] as const;

/** PostgreSQL's search document of a catalog row: the expression its GIN index is built on (queries must repeat it exactly). */
export const PG_SEARCH_DOCUMENT = `to_tsvector('simple', ${SEARCH_COLUMNS.map((c) => `contract_catalog.${c}`).join(" || ' ' || ")})`;

const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * Read speed at scale: indexes in the order the read API lists offers in (newest first, the
 * address breaking ties; overall and by status), the viewer's positions by (taker, offer), and text search over the catalog in the database's own engine. SQLite: an FTS5 table
 * `contract_search` (own content, the contract address unindexed) kept by triggers on
 * contract_catalog; PostgreSQL: a GIN index on a 'simple' tsvector of the same columns (no
 * extension needed). Both tokenise into words without stemming and fold case, so a query means
 * the same on both (service/read/search.ts).
 */
const m0004: Migration = {
  async up(db: Kysely<unknown>) {
    // The contract column makes them covering for a list's filter (offers.contract in listed contracts).
    await sql`create index offers_browse_idx on offers (created_at desc, address, contract)`.execute(db);
    await sql`create index offers_status_browse_idx on offers (status, created_at desc, address, contract)`.execute(db);
    await sql`create index positions_taker_offer_idx on positions (taker, offer)`.execute(db);
    if (isPostgres(db)) {
      await sql
        .raw(`create index contract_catalog_search_idx on contract_catalog using gin (${PG_SEARCH_DOCUMENT.replaceAll("contract_catalog.", "")})`)
        .execute(db);
      return;
    }
    const cols = SEARCH_COLUMNS.join(", ");
    const newCols = SEARCH_COLUMNS.map((c) => `new.${c}`).join(", ");
    await sql.raw(`create virtual table contract_search using fts5(contract unindexed, ${cols}, tokenize = "unicode61 remove_diacritics 0")`).execute(db);
    await sql
      .raw(
        `create trigger contract_search_ai after insert on contract_catalog begin
      insert into contract_search (contract, ${cols}) values (new.contract, ${newCols}); end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger contract_search_ad after delete on contract_catalog begin
      delete from contract_search where contract = old.contract; end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger contract_search_au after update on contract_catalog begin
      delete from contract_search where contract = old.contract;
      insert into contract_search (contract, ${cols}) values (new.contract, ${newCols}); end`,
      )
      .execute(db);
    await sql.raw(`insert into contract_search (contract, ${cols}) select contract, ${cols} from contract_catalog`).execute(db);
  },
  async down(db: Kysely<unknown>) {
    for (const i of ["offers_browse_idx", "offers_status_browse_idx", "positions_taker_offer_idx"]) await db.schema.dropIndex(i).ifExists().execute();
    if (isPostgres(db)) await db.schema.dropIndex("contract_catalog_search_idx").ifExists().execute();
    else {
      for (const t of ["contract_search_ai", "contract_search_ad", "contract_search_au"]) await sql.raw(`drop trigger if exists ${t}`).execute(db);
      await sql`drop table if exists contract_search`.execute(db);
    }
  },
};

/** A contract's price history (issue 23), derived from offers and fills (indexer/derive/history.ts). */
const m0005: Migration = {
  async up(db: Kysely<unknown>) {
    let t = db.schema.createTable("contract_history") as Tb;
    t = txt(t, "contract", "side", "interval");
    t = big(t, "bucket_at");
    t = txt(t, "volume_micros", "creator_matched_micros");
    t = int(t, "fill_count");
    for (const c of ["last_numerator", "last_denominator", "best_numerator", "best_denominator"]) t = t.addColumn(c, "text");
    await t.addPrimaryKeyConstraint("contract_history_pk", ["contract", "side", "interval", "bucket_at"] as never).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("contract_history").ifExists().execute();
  },
};

/**
 * An offer's expiry (issue 26): null when it has none (the chain's 0), like closed_at. Offers
 * indexed before it came from a program without expiry: null is their truth.
 */
const m0006: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("offers").addColumn("expires_at", "bigint").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("offers").dropColumn("expires_at").execute();
  },
};

/** Claim credits (payouts a token account could not receive), for the `claim.credited` webhook. */
const m0007: Migration = {
  async up(db: Kysely<unknown>) {
    let t = db.schema.createTable("claim_credits") as Tb;
    t = txt(t, "signature", "program");
    t = int(t, "event_index");
    t = big(t, "slot");
    t = txt(t, "owner", "amount_micros", "total_micros");
    t = big(t, "credited_at");
    await t.addPrimaryKeyConstraint("claim_credits_pk", ["signature", "program", "event_index"] as never).execute();
    // The webhook scan reads credits by slot range.
    await db.schema.createIndex("claim_credits_slot_idx").on("claim_credits").column("slot").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("claim_credits").ifExists().execute();
  },
};

export const MIGRATIONS: Record<string, Migration> = {
  "0001_initial": m0001,
  "0002_pool_resolution": m0002,
  "0003_pool_cancels": m0003,
  "0004_read_indexes_search": m0004,
  "0005_contract_history": m0005,
  "0006_offer_expiry": m0006,
  "0007_claim_credits": m0007,
};

class InCodeProvider implements MigrationProvider {
  async getMigrations() {
    return MIGRATIONS;
  }
}

/** Brings the store to the latest schema; throws on a failed migration. */
export async function migrateToLatest(db: Kysely<unknown>, opts: { schema?: string } = {}): Promise<string[]> {
  const schema = opts.schema ?? (await migrationSchema(db));
  const migrator = new Migrator({ db, provider: new InCodeProvider(), ...(schema ? { migrationTableSchema: schema } : {}) });
  const results = await runMigrator(migrator);
  return results.filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/**
 * The schema a Migrator must keep its tables in: on PostgreSQL the connection's current schema
 * (a store's `?schema=` sets it). Without it kysely looks for its migration and lock tables in
 * every schema, finds another schema's, skips creating its own and then fails ("relation
 * custody_migration_lock does not exist") or reads another store's migration history. SQLite
 * has no schemas.
 */
export async function migrationSchema(db: Kysely<unknown>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const r = await sql<{ s: string }>`select current_schema() as s`.execute(db);
  return r.rows[0]?.s ?? undefined;
}

/**
 * Runs a migrator to the latest migration. Before migrating, kysely lists the tables of every
 * schema (to find its own); on PostgreSQL that listing fails with "schema ... does not exist"
 * (3F000) or "relation ... does not exist" (42P01) when another process drops a schema at that
 * moment, as parallel test suites with a schema each do. Nothing has run then, so it is retried.
 */
export async function runMigrator(migrator: Migrator): Promise<MigrationResult[]> {
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return results ?? [];
    const code = (error as { code?: string }).code;
    if ((code === "3F000" || code === "42P01") && attempt < 5) {
      await new Promise((r) => setTimeout(r, 50 * attempt));
      continue;
    }
    throw error instanceof Error ? error : new Error(String(error));
  }
}

export { sql };
