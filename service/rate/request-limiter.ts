/**
 * Request rate limits of the HTTP API, per client address and per bearer token, so that one
 * client cannot take the service's capacity (reads included) from the others.
 *
 * GCRA (a token bucket: `burst` requests at once, refilled at `perMinute`), one row per key in
 * the store's `request_rate` table (theoretical arrival time in ms), moved by one conditional
 * UPDATE: atomic on SQLite and PostgreSQL, so every service process on one PostgreSQL store
 * shares the same buckets, and they survive restarts. The same scheme as the write rate of
 * service/writes/wallet-guard.ts; no rate-limiter package is installed in this project (e.g.
 * rate-limiter-flexible, whose PostgreSQL store would be a second table layout for the same
 * thing), so it is built on the store the service already has.
 */
import { sql, type Kysely } from "kysely";
import type { CustodyDatabase } from "../custody/schema";
import type { Database } from "../../indexer/store/schema";

export interface RequestLimits {
  /** Requests one client address may make at once (0: no per-address limit). */
  ipBurst: number;
  /** Requests per minute per address after the burst (0: no per-address limit). */
  ipPerMinute: number;
  /** Requests one bearer token may make at once (0: no per-token limit). */
  tokenBurst: number;
  /** Requests per minute per token after the burst (0: no per-token limit). */
  tokenPerMinute: number;
}

/** Generous for people and well-behaved integrations; a scraper or a loop meets them. */
export const DEFAULT_REQUEST_LIMITS: RequestLimits = { ipBurst: 120, ipPerMinute: 600, tokenBurst: 120, tokenPerMinute: 600 };

export class RequestLimiter {
  private readonly db: Kysely<CustodyDatabase>;

  constructor(
    db: Kysely<unknown> | Kysely<Database>,
    readonly limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
    /** Wall clock in unix ms (tests move it). */
    private readonly clockMs: () => number = Date.now,
  ) {
    this.db = db as unknown as Kysely<CustodyDatabase>;
  }

  /** Takes one request from the address's bucket: 0 when it passes, else the seconds to wait. */
  ip(address: string): Promise<number> {
    return this.take(`ip:${address}`, this.limits.ipBurst, this.limits.ipPerMinute);
  }

  /** Takes one request from the token's bucket (`tokenKey`: a hash of the token, never the token). */
  token(tokenKey: string): Promise<number> {
    return this.take(`token:${tokenKey}`, this.limits.tokenBurst, this.limits.tokenPerMinute);
  }

  /**
   * GCRA: emission interval T = 60 s / perMinute, tolerance tau = (burst - 1) * T; a request at
   * `now` passes when max(tat, now) - now <= tau and moves tat to max(tat, now) + T.
   */
  private async take(key: string, burst: number, perMinute: number): Promise<number> {
    if (burst === 0 || perMinute === 0) return 0;
    const T = Math.ceil(60_000 / perMinute);
    const tau = T * (burst - 1);
    const now = Math.floor(this.clockMs());
    await this.db
      .insertInto("request_rate")
      .values({ key, tat_ms: 0 })
      .onConflict((oc) => oc.column("key").doNothing())
      .execute();
    const tat = sql<number>`(case when tat_ms > ${now} then tat_ms else ${now} end)`;
    const r = await this.db
      .updateTable("request_rate")
      .set({ tat_ms: sql<number>`${tat} + ${T}` })
      .where("key", "=", key)
      .where(sql<boolean>`${tat} - ${now} <= ${tau}`)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) return 0;
    const row = await this.db.selectFrom("request_rate").select("tat_ms").where("key", "=", key).executeTakeFirst();
    return Math.max(1, Math.ceil((Number(row?.tat_ms ?? now) - now - tau) / 1000));
  }

  /** Forgets buckets that are full again (tat in the past): keeps the table to active clients. */
  async prune(): Promise<number> {
    const r = await this.db.deleteFrom("request_rate").where("tat_ms", "<", Math.floor(this.clockMs())).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
