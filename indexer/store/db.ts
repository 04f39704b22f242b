/**
 * Opens the store: SQLite (better-sqlite3, WAL) for a file path / `sqlite:` URL / ":memory:",
 * PostgreSQL for a `postgres://` or `postgresql://` URL. `?schema=name` on a PostgreSQL URL
 * selects (and creates) a schema, used by tests to isolate runs.
 */
import { Kysely, PostgresDialect, sql } from "kysely";
import { TrackedSqliteDialect, trackReads } from "./sqlite-reads";
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
    const dialect = new TrackedSqliteDialect({ database: cachedStatements(handle) });
    const db = new Kysely<Database>({ dialect });
    trackReads(db, dialect);
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
          stmt = rowsAsObjects(target.prepare(source));
          if (statements.size >= max) statements.delete(statements.keys().next().value!);
        }
        statements.set(source, stmt);
        return stmt;
      };
    },
  });
}

/**
 * A reading statement as kysely's driver uses it (`reader`, `all`, `iterate`), whose rows are read
 * as arrays (better-sqlite3's `raw` mode) and made objects by a function compiled once for its
 * columns. better-sqlite3 builds each row object in C++, one named property at a time (the name
 * made a V8 string again on every row): on a page of 20 offers that was 2.5 times the cost of the
 * same rows as arrays, and most of the page's time in SQLite (BENCHMARKS.md, issue 21). The
 * objects are the same: the same keys, in the same order (a repeated name keeps its first place
 * and its last value, as before), the same values.
 */
function rowsAsObjects(stmt: BetterSqlite3.Statement): BetterSqlite3.Statement {
  if (!stmt.reader) return stmt;
  let names: string[] = [];
  let row: (values: unknown[]) => unknown = () => ({});
  // A migration may change what `select *` returns: SQLite re-prepares the statement, and the
  // rows' length tells that columns came or went (the store migrates before its first query, so
  // a column renamed under a statement already prepared does not arise).
  const compile = () => {
    names = stmt.columns().map((c) => c.name);
    row = new Function("r", `return {${names.map((n, i) => `${JSON.stringify(n)}: r[${i}]`).join(", ")}};`) as typeof row;
  };
  compile();
  // `__proto__` in an object literal sets the prototype instead of a property: left to better-sqlite3.
  if (names.includes("__proto__")) return stmt;
  stmt.raw(true);
  const objects = (rows: unknown[][]) => {
    if (rows.length > 0 && rows[0].length !== names.length) compile();
    return rows.map(row);
  };
  const facade = {
    reader: true,
    source: stmt.source,
    all: (...params: unknown[]) => objects(stmt.all(...params) as unknown[][]),
    *iterate(...params: unknown[]) {
      for (const values of stmt.iterate(...params) as IterableIterator<unknown[]>) {
        if (values.length !== names.length) compile();
        yield row(values);
      }
    },
  };
  return facade as unknown as BetterSqlite3.Statement;
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
