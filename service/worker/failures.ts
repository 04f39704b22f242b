/**
 * The settlement worker's memory of items that keep failing (table `worker_failures`, migrated
 * with the service's own tables in service/custody/schema.ts, so it survives restarts and is
 * shared by every worker on one store).
 *
 * - An item is one action on one account: (kind, address), e.g. ("close-offer", <offer>).
 * - Each failure increments `attempts` and sets `next_retry_at = now + backoff(attempts)`,
 *   `backoff(n) = min(maxSeconds, baseSeconds * 2^(n-1))` (defaults 30 s doubling to 1 h): 30 s,
 *   60 s, 120 s, ... No jitter: the retries of one worker are already spread by their items'
 *   failure times, and deterministic times are what the operator CLI shows.
 * - While `now < next_retry_at` the item is not a candidate at all (the worker's queries exclude
 *   it), so it never takes a place in a pass's batch; once due it is retried from a separate,
 *   small retry budget, never ahead of fresh work.
 * - `last_reason` is the submitter's account of the failure (service/chain/submitter.ts
 *   `describeFailure`): the program error's name from the IDL (e.g. `ContractNotOpen`) when the
 *   offers program refused, `token program: <name>` for an SPL Token error, else a few words.
 * - The row is deleted when the item succeeds, when the chain shows it no longer needs the
 *   action (another worker did it, the account is gone), and by `prune` when the store no longer
 *   lists the item as due (by the phase's own candidate query).
 */
import type { Kysely, SelectQueryBuilder } from "kysely";
import type { Database } from "../../indexer/store/schema";
import type { CustodyDatabase, WorkerFailuresTable } from "../custody/schema";

export const WORK_KINDS = [
  "void-contract",
  "close-offer",
  "settle-position",
  "reclaim-position",
  "reclaim-offer",
  "resolve-pool",
  "cancel-pool",
  "settle-participant",
  "refund-participant",
] as const;
export type WorkKind = (typeof WORK_KINDS)[number];

export interface BackoffOptions {
  /** First backoff in seconds (default 30). */
  baseSeconds?: number;
  /** Longest backoff in seconds (default 3600). */
  maxSeconds?: number;
}

export interface WorkerFailure {
  kind: WorkKind;
  item: string;
  attempts: number;
  firstFailedAt: number;
  lastFailedAt: number;
  nextRetryAt: number;
  lastReason: string;
}

type Db = Kysely<CustodyDatabase & Database>;
/** The addresses a phase lists as due (one column). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type DueItems = SelectQueryBuilder<any, any, { address: string }>;

export function backoffSeconds(attempts: number, o: BackoffOptions = {}): number {
  const base = o.baseSeconds ?? 30;
  const max = o.maxSeconds ?? 3_600;
  // 2^(n-1) without overflow: past 2^30 the cap has long been reached.
  return Math.min(max, base * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
}

export class WorkerFailures {
  readonly db: Db;

  constructor(
    db: Kysely<unknown> | Kysely<Database>,
    readonly backoff: BackoffOptions = {},
  ) {
    this.db = db as unknown as Db;
  }

  /** Records one more failure of (kind, item); returns the row as stored. */
  async record(kind: WorkKind, item: string, reason: string, now: number): Promise<WorkerFailure> {
    const existing = await this.get(kind, item);
    const attempts = (existing?.attempts ?? 0) + 1;
    const next = now + backoffSeconds(attempts, this.backoff);
    const last_reason = reason.slice(0, 500);
    // Two workers failing the same item at once: the second insert becomes an update, and each
    // failure counts (attempts = stored + 1 in SQL).
    await this.db
      .insertInto("worker_failures")
      .values({ kind, item, attempts, first_failed_at: now, last_failed_at: now, next_retry_at: next, last_reason })
      .onConflict((oc) =>
        oc.columns(["kind", "item"]).doUpdateSet((eb) => ({
          attempts: eb("worker_failures.attempts", "+", 1),
          last_failed_at: now,
          next_retry_at: next,
          last_reason,
        })),
      )
      .execute();
    return (await this.get(kind, item))!;
  }

  async clear(kind: WorkKind, item: string): Promise<void> {
    await this.db.deleteFrom("worker_failures").where("kind", "=", kind).where("item", "=", item).execute();
  }

  async get(kind: WorkKind, item: string): Promise<WorkerFailure | null> {
    const r = await this.db.selectFrom("worker_failures").selectAll().where("kind", "=", kind).where("item", "=", item).executeTakeFirst();
    return r ? toFailure(r) : null;
  }

  /** Every failing item, the soonest retry first. */
  async list(o: { kind?: WorkKind; limit?: number } = {}): Promise<WorkerFailure[]> {
    let q = this.db.selectFrom("worker_failures").selectAll();
    if (o.kind) q = q.where("kind", "=", o.kind);
    const rows = await q
      .orderBy("next_retry_at")
      .orderBy("kind")
      .orderBy("item")
      .limit(o.limit ?? 1_000)
      .execute();
    return rows.map(toFailure);
  }

  /** Makes an item due at once (operator: "retry now"); false when it had no failure recorded. */
  async retryNow(item: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable("worker_failures").set({ next_retry_at: now }).where("item", "=", item).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Forgets failures of items the store no longer lists as due for their action (settled,
   * closed, reclaimed or voided since, by this worker, another one or anyone else). `due` is
   * each phase's own candidate query (service/worker/phases/): what "still due" means is
   * written once, in the phase. Failures of a kind none of `due` names are left as they are
   * (a worker without that phase cannot tell).
   */
  async prune(due: { kind: WorkKind; items: DueItems }[]): Promise<number> {
    let n = 0;
    for (const { kind, items } of due) {
      const r = await this.db.deleteFrom("worker_failures").where("kind", "=", kind).where("item", "not in", items).executeTakeFirst();
      n += Number(r.numDeletedRows);
    }
    return n;
  }

  /** Counts per kind: failing items, and how many of them are due for a retry at `now`. */
  async summary(now: number): Promise<Record<WorkKind, { failing: number; due: number }>> {
    const out = Object.fromEntries(WORK_KINDS.map((k) => [k, { failing: 0, due: 0 }])) as Record<WorkKind, { failing: number; due: number }>;
    const rows = await this.db.selectFrom("worker_failures").select(["kind", "next_retry_at"]).execute();
    for (const r of rows) {
      const k = out[r.kind as WorkKind];
      if (!k) continue;
      k.failing++;
      if (Number(r.next_retry_at) <= now) k.due++;
    }
    return out;
  }
}

function toFailure(r: WorkerFailuresTable): WorkerFailure {
  return {
    kind: r.kind as WorkKind,
    item: r.item,
    attempts: Number(r.attempts),
    firstFailedAt: Number(r.first_failed_at),
    lastFailedAt: Number(r.last_failed_at),
    nextRetryAt: Number(r.next_retry_at),
    lastReason: r.last_reason,
  };
}
