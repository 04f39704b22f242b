/**
 * One GCRA bucket step on the store (a token bucket: `burst` at once, refilled one per
 * `intervalMs`), for every rate the service keeps: a user's writes (service/writes/wallet-guard.ts)
 * and a client's requests (service/rate/request-limiter.ts). One row per key holds the theoretical
 * arrival time (`tat_ms`), moved by one conditional UPDATE: atomic on SQLite and PostgreSQL, so
 * every service process on one PostgreSQL store shares the buckets, and they survive restarts.
 *
 * Emission interval T = intervalMs, tolerance tau = (burst - 1) * T; a take at `now` passes when
 * max(tat, now) - now <= tau and moves tat to max(tat, now) + T.
 */
import { sql, type Kysely } from "kysely";

/** Where a bucket lives: its table, the key column and the key. */
export interface Bucket {
  table: "write_rate" | "request_rate";
  keyColumn: "user_id" | "key";
  key: string;
}

/** Takes one from the bucket: 0 when it passes, else the milliseconds until one is there. */
export async function takeFromBucket(db: Kysely<unknown>, b: Bucket, burst: number, intervalMs: number, now: number): Promise<number> {
  const [table, col] = [sql.table(b.table), sql.ref(b.keyColumn)];
  const tau = intervalMs * (burst - 1);
  await sql`insert into ${table} (${col}, tat_ms) values (${b.key}, 0) on conflict (${col}) do nothing`.execute(db);
  const tat = sql<number>`(case when tat_ms > ${now} then tat_ms else ${now} end)`;
  const r = await sql`update ${table} set tat_ms = ${tat} + ${intervalMs} where ${col} = ${b.key} and ${tat} - ${now} <= ${tau}`.execute(db);
  if (Number(r.numAffectedRows ?? 0) === 1) return 0;
  const row = await sql<{ tat_ms: number | string }>`select tat_ms from ${table} where ${col} = ${b.key}`.execute(db);
  return Math.max(1, Number(row.rows[0]?.tat_ms ?? now) - now - tau);
}
