/**
 * Reads on SQLite run at once when the single connection is free.
 *
 * kysely's SQLite driver serializes its one connection with a mutex: every query acquires it
 * (an async lock), runs better-sqlite3 synchronously, and releases it, a dozen promises around a
 * statement that itself never yields. On the uncached read path that was a visible part of a small
 * read's cost (BENCHMARKS.md, issue 21), more so as each promise also pays the async-context hooks
 * of the request scope. When nothing holds the connection (no query, no transaction between its
 * statements), running the statement directly is what the driver would do after its lock: the
 * same prepared statement on the same handle, to completion before any other JS runs. When it is
 * held, the read goes through kysely and waits its turn, so it never sees a transaction's
 * uncommitted rows.
 */
import { SqliteDialect, SqliteDriver, type CompiledQuery, type DatabaseConnection, type Driver, type SqliteDialectConfig } from "kysely";
import type BetterSqlite3 from "better-sqlite3";

/** How many hold the connection now (0 or 1: the driver's mutex admits one). */
class CountingDriver extends SqliteDriver {
  held = 0;
  override async acquireConnection(): Promise<DatabaseConnection> {
    const c = await super.acquireConnection();
    this.held++;
    return c;
  }
  override async releaseConnection(): Promise<void> {
    this.held--;
    await super.releaseConnection();
  }
}

export class TrackedSqliteDialect extends SqliteDialect {
  private driver: CountingDriver | null = null;
  constructor(private readonly config: SqliteDialectConfig & { database: BetterSqlite3.Database }) {
    super(config);
  }
  override createDriver(): Driver {
    return (this.driver = new CountingDriver(this.config));
  }
  /** The rows of a reading statement when the connection is free; undefined when it is held (or the statement writes). */
  readNow(q: CompiledQuery): unknown[] | undefined {
    if (!this.driver || this.driver.held > 0) return undefined;
    const stmt = this.config.database.prepare(q.sql);
    return stmt.reader ? (stmt.all(q.parameters as unknown[]) as unknown[]) : undefined;
  }
}

const dialects = new WeakMap<object, TrackedSqliteDialect>();

/** Makes `db` (built on `dialect`) one whose reads `readNow` can run. */
export function trackReads(db: object, dialect: TrackedSqliteDialect): void {
  dialects.set(db, dialect);
}

/**
 * The rows of a reading query run at once on `db` when it is a SQLite store whose connection is
 * free; undefined otherwise (PostgreSQL, a transaction, the connection held): then run it through kysely.
 */
export function readNow(db: object, q: CompiledQuery): unknown[] | undefined {
  return dialects.get(db)?.readNow(q);
}
