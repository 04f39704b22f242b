/**
 * Request rate limits of the HTTP API, per client address and per bearer token, so that one
 * client cannot take the service's capacity (reads included) from the others.
 *
 * GCRA buckets (`burst` requests at once, refilled at `perMinute`) in the store's `request_rate`
 * table, through the same step as the write rate of service/writes/wallet-guard.ts
 * (service/rate/gcra.ts); no rate-limiter package is installed in this project (e.g.
 * rate-limiter-flexible, whose PostgreSQL store would be a second table layout for the same
 * thing), so it is built on the store the service already has.
 */
import type { Kysely } from "kysely";
import { takeFromBucket } from "./gcra";
import type { CustodyDatabase } from "../custody/schema";
import type { Database } from "../../indexer/store/schema";
import { DEFAULT_ACTION_LIMITS, DEFAULT_REQUEST_LIMITS, type RequestLimits } from "./request-limits";

// The numbers live apart (./request-limits.ts) so the entry points read them without loading this.
export { DEFAULT_ACTION_LIMITS, DEFAULT_REQUEST_LIMITS, type RequestLimits } from "./request-limits";

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

  /** Takes one request from the address's Solana Actions bucket (besides its general one). */
  actionIp(address: string): Promise<number> {
    const l = { ...DEFAULT_ACTION_LIMITS, ...definedOf(this.limits) };
    return this.take(`action-ip:${address}`, l.actionIpBurst, l.actionIpPerMinute);
  }

  /** Takes one action POST from the bucket of the wallet it names (`account`). */
  actionAccount(account: string): Promise<number> {
    const l = { ...DEFAULT_ACTION_LIMITS, ...definedOf(this.limits) };
    return this.take(`action-account:${account}`, l.actionAccountBurst, l.actionAccountPerMinute);
  }

  private async take(key: string, burst: number, perMinute: number): Promise<number> {
    if (burst === 0 || perMinute === 0) return 0;
    const waitMs = await takeFromBucket(
      this.db as Kysely<unknown>,
      { table: "request_rate", keyColumn: "key", key },
      burst,
      Math.ceil(60_000 / perMinute),
      Math.floor(this.clockMs()),
    );
    return waitMs === 0 ? 0 : Math.max(1, Math.ceil(waitMs / 1000));
  }

  /** Forgets buckets that are full again (tat in the past): keeps the table to active clients. */
  async prune(): Promise<number> {
    const r = await this.db.deleteFrom("request_rate").where("tat_ms", "<", Math.floor(this.clockMs())).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

/** The limits that are set (an absent action limit keeps its default). */
function definedOf(l: RequestLimits): Partial<RequestLimits> {
  return Object.fromEntries(Object.entries(l).filter(([, v]) => v !== undefined)) as Partial<RequestLimits>;
}
