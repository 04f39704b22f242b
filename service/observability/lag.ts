/**
 * The indexer's lag behind the chain, in slots: head slot minus synced slot.
 *
 * The synced slot is the last head slot at which the source reported that every transaction of
 * the programs up to that slot had been applied (AccountSource.caughtUpTo). The stored checkpoint
 * alone would not do: it moves only when a program account changes, so on a quiet chain it falls
 * behind the head by the minute while the indexer is perfectly current.
 *
 * A process without the indexer (role `api`), or whose indexer stands by while it serves the API
 * (role `all` on PostgreSQL), reads the synced slot the acting indexer recorded in the store
 * instead (./indexer-progress.ts), against its own head.
 *
 * Sampled every `sampleMs` (2 s by default) and on every readiness probe; concurrent samples
 * share one.
 */
import type { ServiceMetrics } from "./metrics";

/** Slots of indexer lag above which GET /readyz fails (MAX_LAG_SLOTS). */
export const DEFAULT_MAX_LAG_SLOTS = 150;

export interface ChainWatch {
  /** The chain's latest slot (bankrun: the engine's clock; RPC: getSlot at the indexer's commitment). */
  headSlot(): Promise<number>;
  /** Whether the indexer has applied every transaction of the programs up to `slot` (this process's indexer). */
  caughtUpTo?(slot: number): Promise<boolean>;
  /** Without an indexer here: the synced slot the acting indexer recorded in the store (null: none recorded yet). */
  recordedProgress?(): Promise<{ syncedSlot: number; updatedAt: number } | null>;
  /** With both: whether this process's indexer acts now; while it stands by, the recorded progress counts. */
  acting?(): boolean;
  /** The stored checkpoint's slot (for the gauge only). */
  checkpointSlot?(): Promise<number>;
}

export interface LagSample {
  headSlot: number;
  syncedSlot: number;
  lagSlots: number;
  /** Read from the store (recordedProgress): unix ms of the indexer's last record, null when there is none. */
  recordedAt?: number | null;
}

const withTimeout = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });

export class LagMonitor {
  private synced = 0;
  private inflight: Promise<LagSample> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly watch: ChainWatch,
    private readonly metrics: ServiceMetrics,
    readonly timeoutMs = 2_000,
  ) {}

  /** Reads the head and asks the source; throws when the chain does not answer (in time). */
  sample(): Promise<LagSample> {
    if (!this.inflight) this.inflight = this.read().finally(() => (this.inflight = null));
    return this.inflight;
  }

  private async read(): Promise<LagSample> {
    const head = await withTimeout(this.watch.headSlot(), this.timeoutMs, "chain head slot");
    this.metrics.headSlot.set(head);
    let recordedAt: number | null | undefined;
    const w = this.watch;
    if (w.recordedProgress && (!w.caughtUpTo || w.acting?.() === false)) {
      // A store that does not answer fails the store check; the lag then stays as last read.
      const r = await withTimeout(w.recordedProgress(), this.timeoutMs, "indexer progress").catch(() => undefined);
      if (r) this.synced = Math.max(this.synced, r.syncedSlot);
      if (r !== undefined) recordedAt = r?.updatedAt ?? null;
    } else if (w.caughtUpTo && (await withTimeout(w.caughtUpTo(head), this.timeoutMs, "indexer sync check").catch(() => false)))
      this.synced = Math.max(this.synced, head);
    const lag = Math.max(0, head - this.synced);
    this.metrics.syncedSlot.set(this.synced);
    this.metrics.lagSlots.set(lag);
    if (this.watch.checkpointSlot)
      await this.watch.checkpointSlot().then(
        (s) => this.metrics.checkpointSlot.set(s),
        () => undefined,
      );
    return { headSlot: head, syncedSlot: this.synced, lagSlots: lag, ...(recordedAt !== undefined ? { recordedAt } : {}) };
  }

  start(everyMs = 2_000): void {
    if (this.timer) return;
    const tick = () => {
      void this.sample()
        .catch(() => undefined)
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, everyMs).unref();
        });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  /** Stops sampling; resolves once a sample in progress is over (before its store closes). */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.inflight?.catch(() => undefined);
  }
}
