/**
 * What every phase shares: reading its candidates, acting on each, submitting, counting, and
 * remembering failures. Not stalled by poisoned items (issue #15):
 * - Order: each phase takes its candidates oldest due first, deterministically (its `keys`; the
 *   address breaks ties). Pages are read by keyset (after the last key seen), so an item tried
 *   in this pass is never read again in it.
 * - Batch: `batch` counts only actions that succeeded. An item whose action fails, or that the
 *   chain shows needs nothing (the store lagging), takes no place in the batch: the phase reads
 *   on until `batch` actions succeeded, the candidates run out, or `maxUnproductive` such
 *   unproductive items were met in this phase (a bound on one pass's time, not on its work).
 * - Memory: a failure is recorded in `worker_failures` (./failures.ts) with the reason (the
 *   program error's name decoded from the IDL) and an exponential backoff per item; the row
 *   survives restarts and is shared by workers on one store. Items in backoff are excluded from
 *   the candidates by the query itself; once due they are retried from a separate budget
 *   (`retryBatch` per phase per pass) after the fresh work. Success, or the chain showing the
 *   item no longer needs the action, deletes the row; `prune` forgets items the phase's query no
 *   longer lists as due.
 * A transaction the chain refuses in preflight costs no fee, so a failing item costs the service
 * nothing but one simulation per retry.
 */
import type { Keypair, TransactionInstruction } from "@solana/web3.js";
import { sql } from "kysely";
import { ChainUnavailableError } from "../chain/gateway";
import { describeFailure, type Submitter } from "../chain/submitter";
import type { WorkerFailures } from "./failures";
import type { Db, Phase, WorkItem, WorkerReport } from "./phase";

type SendResult = { ok: true } | { ok: false; reason: string };

/** How much of one phase one pass does. */
export interface PhaseBudget {
  /** Successful actions. */
  batch: number;
  /** Items out of backoff retried. */
  retryBatch: number;
  /** Unproductive items (failed, or nothing to do) met before the phase stops reading. */
  maxUnproductive: number;
  /** The service's wall clock at the pass's start (unix seconds): which backoffs are over. */
  wallNow: number;
}

export interface PhaseRunnerDeps {
  db: Db;
  failures: WorkerFailures;
  submitter: Submitter;
  payer: Keypair;
  /** The service's wall clock in unix seconds, for the time of each failure. */
  clock: () => number;
  prepare?: (item: WorkItem, ixs: TransactionInstruction[]) => TransactionInstruction[] | Promise<TransactionInstruction[]>;
  log?: (msg: string, extra?: Record<string, unknown>) => void;
}

export class PhaseRunner {
  constructor(private readonly deps: PhaseRunnerDeps) {}

  /** One phase of a pass: fresh work oldest due first, then a few items whose backoff is over. */
  async run(p: Phase, budget: PhaseBudget, r: WorkerReport): Promise<void> {
    const { batch, retryBatch, maxUnproductive, wallNow } = budget;
    // Fresh work, oldest due first; only successes count against the batch.
    let done = 0;
    let unproductive = 0;
    let cursor: unknown[] | null = null;
    while (done < batch && unproductive < maxUnproductive) {
      const want = batch - done;
      const page = await this.candidates(p, "fresh", cursor, want, wallNow);
      for (const c of page) {
        cursor = c.key;
        const out = await this.attempt(p, c.address, false, r);
        if (out === "done") done++;
        else if (++unproductive >= maxUnproductive) break;
        if (done >= batch) break;
      }
      if (page.length < want) break;
    }
    // Then a few items whose backoff expired.
    for (const c of await this.candidates(p, "retry", null, retryBatch, wallNow)) {
      r.retried++;
      await this.attempt(p, c.address, true, r);
    }
  }

  private async send(ixs: TransactionInstruction[]): Promise<SendResult> {
    const r = await this.deps.submitter.send(ixs, [this.deps.payer], { confirm: true });
    switch (r.kind) {
      case "confirmed":
        return { ok: true };
      // Not this item's fault: the pass stops.
      case "rpc":
        throw new ChainUnavailableError(r.message);
      case "sent":
        return { ok: false, reason: "not confirmed" };
      default:
        return { ok: false, reason: describeFailure(r) };
    }
  }

  /** Candidates of a phase in key order, after `cursor`, fresh (never failed) or due for a retry. */
  private async candidates(
    p: Phase,
    mode: "fresh" | "retry",
    cursor: unknown[] | null,
    limit: number,
    wallNow: number,
  ): Promise<{ address: string; key: unknown[] }[]> {
    const addr = sql.ref(p.keys[p.keys.length - 1]);
    let q = p.query().select(p.keys.map((k, i) => sql`${sql.ref(k)}`.as(`k${i}`)));
    q =
      mode === "fresh"
        ? q.where(sql<boolean>`${addr} not in (select item from worker_failures where kind = ${p.kind})`)
        : q.where(sql<boolean>`${addr} in (select item from worker_failures where kind = ${p.kind} and next_retry_at <= ${wallNow})`);
    if (cursor) {
      // (k0, k1, ..) > (c0, c1, ..), spelt out (row values differ between SQLite and PostgreSQL typing).
      const ors = p.keys.map((k, i) =>
        sql.join([...p.keys.slice(0, i).map((e, j) => sql`${sql.ref(e)} = ${cursor[j]}`), sql`${sql.ref(k)} > ${cursor[i]}`], sql` and `),
      );
      q = q.where(
        sql<boolean>`(${sql.join(
          ors.map((o) => sql`(${o})`),
          sql` or `,
        )})`,
      );
    }
    for (const k of p.keys) q = q.orderBy(sql.ref(k));
    const rows = (await q.limit(limit).execute()) as Record<string, unknown>[];
    return rows.map((r) => ({ address: String(r[`k${p.keys.length - 1}`]), key: p.keys.map((_, i) => r[`k${i}`]) }));
  }

  /** Acts on one item: "done", "noop" (nothing to do) or "failed" (recorded with its backoff). */
  private async attempt(p: Phase, address: string, known: boolean, r: WorkerReport): Promise<"done" | "noop" | "failed"> {
    // Let the event loop run between items: with an in-process chain (bankrun, LiteSVM) every
    // step of a pass may complete synchronously, and a long pass would otherwise hold the HTTP
    // server of the same process (its requests and its keep-alive timers) until it ends.
    await new Promise((resolve) => setImmediate(resolve));
    const { failures } = this.deps;
    const item: WorkItem = { kind: p.kind, address };
    let result: SendResult;
    try {
      let ixs = await p.act(address);
      if (!ixs) {
        if (known) await failures.clear(p.kind, address);
        return "noop";
      }
      if (this.deps.prepare) ixs = await this.deps.prepare(item, ixs);
      result = await this.send(ixs);
    } catch (e) {
      if (e instanceof ChainUnavailableError) throw e; // not this item's fault: the pass stops
      result = { ok: false, reason: String((e as Error)?.message ?? e).slice(0, 500) };
    }
    if (result.ok) {
      r[p.count]++;
      if (known) await failures.clear(p.kind, address);
      return "done";
    }
    r.skipped++;
    // Refused: does the item still need the action? (Another worker may just have done it.)
    let still = true;
    try {
      still = (await p.act(address)) !== null;
    } catch (e) {
      if (e instanceof ChainUnavailableError) throw e;
    }
    if (!still) {
      if (known) await failures.clear(p.kind, address);
      return "noop";
    }
    const f = await failures.record(p.kind, address, result.reason, this.deps.clock());
    r.failed++;
    r.errors.push(`${p.kind} ${address}: ${result.reason}`);
    this.deps.log?.("worker: action failed", { kind: p.kind, item: address, attempts: f.attempts, nextRetryAt: f.nextRetryAt, reason: f.lastReason });
    return "failed";
  }
}
