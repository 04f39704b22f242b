/**
 * Opens the store: SQLite (better-sqlite3, WAL) for a file path / `sqlite:` URL / ":memory:",
 * PostgreSQL for a `postgres://` or `postgresql://` URL. `?schema=name` on a PostgreSQL URL
 * selects (and creates) a schema, used by tests to isolate runs.
 */
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import type { Database } from "./schema";
import { migrateToLatest } from "./migrations";

/** Which SQL database a store runs on (not to be confused with the SVM engines of harness/engines.ts). */
export type StoreDialect = "sqlite" | "postgres";

export interface Store {
  db: Kysely<Database>;
  engine: StoreDialect;
  url: string;
  /** The raw better-sqlite3 handle (SQLite only), for the hot write path. */
  sqlite?: BetterSqlite3.Database;
  /** PostgreSQL schema, when one was selected. */
  schema?: string;
  close(): Promise<void>;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

// int8 (20) and numeric (1700) as JS numbers: the store uses bigint columns only for slots,
// write versions, revisions and unix times, all far below 2^53. Amounts are TEXT.
const pgTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

export async function openStore(url: string, opts: { migrate?: boolean } = {}): Promise<Store> {
  let store: Store;
  if (isPostgresUrl(url)) {
    const u = new URL(url);
    const schema = u.searchParams.get("schema") ?? undefined;
    u.searchParams.delete("schema");
    if (schema && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`bad schema name ${schema}`);
    if (schema) {
      const c = new pg.Client({ connectionString: u.toString() });
      await c.connect();
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await c.end();
    }
    const pool = new pg.Pool({
      connectionString: u.toString(),
      max: 4,
      types: pgTypes as never,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    store = { db, engine: "postgres", url, schema, close: () => db.destroy() };
  } else {
    const file = url.replace(/^sqlite:(\/\/)?/, "") || ":memory:";
    const handle = new BetterSqlite3(file);
    handle.pragma("journal_mode = WAL");
    handle.pragma("synchronous = NORMAL");
    handle.pragma("busy_timeout = 5000");
    handle.pragma("cache_size = -65536"); // 64 MiB page cache: random-key upserts touch many pages
    handle.pragma("temp_store = MEMORY");
    handle.defaultSafeIntegers(false);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachedStatements(handle) }) });
    store = { db, engine: "sqlite", url, sqlite: handle, close: () => db.destroy() };
  }
  if (opts.migrate !== false) await migrateToLatest(store.db as Kysely<unknown>, { schema: store.schema });
  return store;
}

/**
 * The connection as kysely's SQLite driver sees it, with each SQL text prepared once: the driver
 * prepares on every query, and preparing (parsing and planning) cost more than running a page's
 * indexed lookups. Safe to share because the driver runs a statement to completion synchronously
 * (`all`/`run`; nothing here streams with `iterate`), and SQLite re-prepares a statement itself
 * when a migration changes the schema. Bounded: texts with IN-lists of many lengths come and go.
 */
function cachedStatements(handle: BetterSqlite3.Database, max = 1_000): BetterSqlite3.Database {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return new Proxy(handle, {
    get(target, prop, receiver) {
      if (prop !== "prepare") {
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      }
      return (source: string) => {
        let stmt = statements.get(source);
        if (stmt) {
          statements.delete(source); // most recently used last
        } else {
          stmt = target.prepare(source);
          if (statements.size >= max) statements.delete(statements.keys().next().value!);
        }
        statements.set(source, stmt);
        return stmt;
      };
    },
  });
}

/** Drops a PostgreSQL schema (test cleanup). */
export async function dropPostgresSchema(url: string): Promise<void> {
  const u = new URL(url);
  const schema = u.searchParams.get("schema");
  if (!schema || !/^[a-z_][a-z0-9_]*$/.test(schema)) return;
  u.searchParams.delete("schema");
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await c.end();
}

export { sql };
