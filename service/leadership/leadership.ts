/**
 * Exactly one active indexer and one active worker among the processes of a deployment, through
 * the database it already has: a PostgreSQL session-level advisory lock per role, held on a
 * dedicated session (service/pg/session.ts) for as long as the process leads.
 *
 * - Campaign: a candidate tries `pg_try_advisory_lock` every `retryMs` (default 1 s) on its own
 *   session; the one that gets it starts acting (`duty.start`).
 * - Fencing: the lock lives exactly as long as the session. When the session ends (socket error,
 *   a heartbeat unanswered within its timeout, the server terminating it) the leader stops acting
 *   (`duty.stop`) before anything else, then campaigns again on a new session. The server releases
 *   a lock only when it sees the session gone: at once for a killed process (its socket closes), after
 *   its TCP keepalive probes (about 10-11 s) for a vanished host, which is longer than the leader's
 *   own heartbeat bound (1 s period + 5 s timeout): a partitioned leader has stopped before a standby
 *   can start.
 * - Takeover bound: a standby acts at most `retryMs` after the lock is released, plus its own start
 *   (the indexer's reconcile); measured in tests/roles and docs/service-guide.md ("Deployment").
 * - Stepping down (`stop`): the duty stops, the lock is released and the session closed, so a
 *   graceful restart hands over within one retry period.
 *
 * A leader whose duty overlaps a successor's for an instant (a batch already in flight when the
 * session died) does no harm: the indexer's writes are idempotent by (slot, write_version) and event
 * keys, and the programs refuse a second settlement, close or void.
 */
import { createHash } from "node:crypto";
import { openSession, pgTarget, sleep, type Session, type SessionOptions } from "../pg/session";

export type LeaderRole = "indexer" | "worker";

/** What a leader does while it leads. `stop` must return only once it no longer acts. */
export interface Duty {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface LeadershipOptions extends SessionOptions {
  storeUrl: string;
  role: LeaderRole;
  /** How often a standby tries the lock (default 1000 ms). */
  retryMs?: number;
  log?: (msg: string, extra?: Record<string, unknown>) => void;
  /** Told each change of this process's state. */
  onChange?: (active: boolean) => void;
}

const ROLE_KEY: Record<LeaderRole, number> = { indexer: 1, worker: 2 };

/** The advisory lock's two int4 keys: the deployment (database schema) and the role. */
export function lockKeys(storeUrl: string, role: LeaderRole): [number, number] {
  const { schema } = pgTarget(storeUrl);
  return [createHash("sha256").update(`offers-service:${schema}`).digest().readInt32BE(0), ROLE_KEY[role]];
}

/** The server process id of the session holding a role's lock, or null when none does. */
export async function leaderPid(query: (sql: string, params: unknown[]) => Promise<{ rows: { pid: number }[] }>, storeUrl: string, role: LeaderRole) {
  const [k1, k2] = lockKeys(storeUrl, role);
  const r = await query(
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::int::oid AND objid = $2::int::oid AND objsubid = 2 AND granted",
    [k1, k2],
  );
  return r.rows.length ? Number(r.rows[0].pid) : null;
}

export class Leadership {
  private session: Session | null = null;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private acting = false;
  /** When this process last became the leader (ms, performance.now()). */
  acquiredAt: number | null = null;

  constructor(
    readonly o: LeadershipOptions,
    private readonly duty: Duty,
  ) {}

  /** Whether this process acts now. */
  get active(): boolean {
    return this.acting;
  }

  /** The session's server pid (the one holding the lock while active). */
  get pid(): number | null {
    return this.session?.pid ?? null;
  }

  start(): void {
    if (!this.loop) this.loop = this.campaign();
  }

  private log(msg: string, extra: Record<string, unknown> = {}) {
    this.o.log?.(msg, { role: this.o.role, ...extra });
  }

  private async campaign(): Promise<void> {
    const [k1, k2] = lockKeys(this.o.storeUrl, this.o.role);
    const retryMs = this.o.retryMs ?? 1_000;
    while (!this.stopped) {
      try {
        if (!this.session) this.session = await openSession(this.o.storeUrl, this.o);
        const s = this.session;
        const got = (await s.client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS ok", [k1, k2])).rows[0].ok;
        if (got && !this.stopped) await this.lead(s);
      } catch (e) {
        this.log("leadership: session failed", { error: (e as Error).message });
        await this.dropSession();
      }
      if (this.stopped) break;
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, retryMs);
      });
    }
    // stop() may have come while a session was being opened.
    await this.dropSession();
  }

  /** Acts until the session ends or stop(); then fences (duty.stop) before anything else. */
  private async lead(s: Session): Promise<void> {
    this.acting = true;
    this.acquiredAt = performance.now();
    this.log("leadership: acquired, acting", { sessionPid: s.pid });
    this.o.onChange?.(true);
    let why: string;
    try {
      const started = this.duty.start().then(() => null);
      why = (await Promise.race([s.ended, started.then(() => s.ended)])) as string;
    } catch (e) {
      why = `duty failed to start: ${(e as Error).message}`;
    }
    await this.fence(why);
    await this.dropSession();
  }

  private async fence(why: string) {
    if (!this.acting) return;
    this.acting = false;
    this.log("leadership: lost, stopping", { why });
    try {
      await this.duty.stop();
    } catch (e) {
      this.log("leadership: duty stop failed", { error: (e as Error).message });
    }
    this.o.onChange?.(false);
  }

  private async dropSession() {
    const s = this.session;
    this.session = null;
    await s?.close();
  }

  /** Steps down (duty stopped, lock released) and stops campaigning. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    const s = this.session;
    if (this.acting) {
      await this.fence("stepping down");
      if (s) await s.client.query("SELECT pg_advisory_unlock_all()").catch(() => undefined);
    }
    await s?.close();
    await this.loop;
  }
}

export { sleep };
