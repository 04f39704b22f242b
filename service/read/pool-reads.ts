/**
 * The public aggregate of a pool (embed endpoint, GraphQL `poll`, share pages, live updates): its
 * rows kept per identifier for `ttlMs` (dropped when a change names the pool), the aggregate
 * derived from them at request time (LOCKED depends on the clock).
 */
import type { Kysely } from "kysely";
import { derivePoolAggregate, poolEligible, poolState, type Database, type PoolAggregate } from "../../indexer";
import type { ChangeSet } from "../../indexer/changes";

type PoolRows = Omit<Parameters<typeof derivePoolAggregate>[0], "nowUnix" | "canonicalBase">;

/** Identifiers kept at most (the oldest goes first). */
const MAX_POOLS_KEPT = 10_000;

export class PoolReads {
  private readonly kept = new Map<string, { at: number; rows: PoolRows | null; aggregate?: PoolAggregate }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ttlMs: number,
    /** Where the aggregate's canonicalUrl points. */
    private readonly canonicalBase: string,
  ) {}

  /** The aggregate of a public pool by slug or address at `nowUnix`; null for unknown/ineligible alike. */
  async aggregate(identifier: string, nowUnix: () => Promise<number>): Promise<PoolAggregate | null> {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(identifier)) return null;
    let hit = this.kept.get(identifier);
    if (!hit || Date.now() - hit.at > this.ttlMs) {
      hit = { at: Date.now(), rows: await this.rows(identifier) };
      this.kept.set(identifier, hit);
      if (this.kept.size > MAX_POOLS_KEPT) this.kept.delete(this.kept.keys().next().value!);
    }
    if (!hit.rows) return null;
    // State (LOCKED) is derived at request time; the rows may be up to the TTL old. The derived
    // payload is reused while the derived state is the same (the same object, so the route can
    // reuse its serialisation too).
    const now = await nowUnix();
    const state = poolState(hit.rows.pool.state, hit.rows.pool.closes_at, now);
    if (!hit.aggregate || hit.aggregate.state !== state) hit.aggregate = derivePoolAggregate({ ...hit.rows, nowUnix: now, canonicalBase: this.canonicalBase });
    return hit.aggregate;
  }

  /** Forgets the pools a change names (all, when it does not say). */
  onChange(change: ChangeSet): void {
    if (change.everything) this.kept.clear();
    else if (change.pools.length) {
      const pools = new Set(change.pools);
      for (const [k, v] of this.kept) if (!v.rows || pools.has(v.rows.pool.address)) this.kept.delete(k);
    }
  }

  private async rows(identifier: string): Promise<PoolRows | null> {
    const bySlug = await this.db.selectFrom("pool_catalog").selectAll().where("slug", "=", identifier).executeTakeFirst();
    const address = bySlug?.pool ?? identifier;
    const catalog = bySlug ?? (await this.db.selectFrom("pool_catalog").selectAll().where("pool", "=", address).executeTakeFirst()) ?? null;
    if (!poolEligible(catalog)) return null;
    const pool = await this.db.selectFrom("pools").selectAll().where("address", "=", address).where("deleted", "=", 0).executeTakeFirst();
    if (!pool) return null;
    const outcomes = await this.db.selectFrom("pool_outcomes").selectAll().where("pool", "=", address).orderBy("outcome_index").execute();
    let participantCount: number | undefined;
    if (pool.participant_count === null) {
      const [{ n }] = await this.db
        .selectFrom("pool_wagers")
        .select((eb) => eb.fn.count<number>("owner").distinct().as("n"))
        .where("pool", "=", address)
        .where("deleted", "=", 0)
        .execute();
      participantCount = Number(n);
    }
    const cancel = await this.db.selectFrom("pool_cancels").select("canceled_at").where("pool", "=", address).executeTakeFirst();
    return { pool, outcomes, catalog, participantCount, canceledAt: cancel ? Number(cancel.canceled_at) : null };
  }
}
