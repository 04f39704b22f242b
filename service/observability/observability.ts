/**
 * One service instance's observability: its logger, its metrics registry, the indexer lag
 * monitor and the readiness checks. Built once per stack (./service-parts.ts of the writes),
 * handed to the HTTP app, the write service and the settlement worker.
 *
 * - Liveness (`/healthz`): the process answers. Readiness (`/readyz`): the store answers, the
 *   chain answers and the indexer's lag is at most `maxLagSlots`; a load balancer should stop
 *   sending traffic while it fails, an orchestrator should not restart for it.
 * - `recordTx` (the submitter's `onResult`, via `txResults`) counts every transaction result and
 *   logs it with the signature and the request id of the HTTP request that caused it (the write
 *   service hands it to the submitter with each transaction); `unexpectedError` logs what the
 *   HTTP layer could not answer, with the request id it passes.
 */
import type { BatchSink } from "../../indexer/sources/types";
import type { StoreWriter } from "../../indexer/store/writer";
import { DEFAULT_MAX_LAG_SLOTS, LagMonitor, type ChainWatch, type LagSample } from "./lag";
import { createLogger, type ErrorLog, type LogOptions, type Logger } from "./log";
import { ServiceMetrics, txFailureLabel, type PassCounts, type TxPath } from "./metrics";
import { describeFailure, type SubmitResult } from "../chain/submitter";

export interface ObservabilityOptions extends LogOptions {
  /** Use this logger instead of creating one (level and destination are then ignored). */
  logger?: Logger;
  /** Readiness fails when the indexer lags more slots than this (default 150: about a minute; MAX_LAG_SLOTS / --max-lag-slots, stack/config). */
  maxLagSlots?: number;
  /** Lag sampling period (default 2 s). */
  sampleMs?: number;
  /** Node process metrics (CPU, memory, event loop, GC) in the registry; default off. */
  processMetrics?: boolean;
}

export interface ReadinessCheck {
  ok: boolean;
  error?: string;
  [detail: string]: unknown;
}

export interface Readiness {
  ready: boolean;
  /** Names of the checks that failed. */
  failing: string[];
  checks: Record<string, ReadinessCheck>;
}

// Beside the lag monitor (./lag.ts) so the entry points read it without loading this.
export { DEFAULT_MAX_LAG_SLOTS } from "./lag";

const timeout = <T>(p: Promise<T>, ms: number): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);

export class Observability {
  readonly log: Logger;
  readonly metrics: ServiceMetrics;
  readonly maxLagSlots: number;
  private lag: LagMonitor | null = null;

  constructor(readonly opts: ObservabilityOptions = {}) {
    this.log = opts.logger ?? createLogger(opts);
    this.metrics = new ServiceMetrics({ processMetrics: opts.processMetrics });
    this.maxLagSlots = opts.maxLagSlots ?? DEFAULT_MAX_LAG_SLOTS;
  }

  /** Starts watching the chain's head and the indexer's source (the stacks call it once both run). */
  watchChain(w: ChainWatch): void {
    void this.lag?.stop();
    this.lag = new LagMonitor(w, this.metrics);
    this.lag.start(this.opts.sampleMs ?? 2_000);
  }

  /** The latest lag reading (null when no chain is watched). */
  sampleLag(): Promise<LagSample> | null {
    return this.lag?.sample() ?? null;
  }

  /** An error the HTTP layer answered without detail (REST 503, GraphQL's masked or 503 errors), with its request's id. */
  readonly unexpectedError: ErrorLog = (e, requestId) => this.log.error({ requestId, err: e }, "unexpected error");

  /**
   * A transaction's result, as the submitter (service/chain/submitter.ts) hands it back: counted
   * and logged with its signature and the request id of the HTTP request that sent it (none from
   * the worker). The writes count a transaction as sent once the chain accepts it; the worker,
   * which waits, once confirmed.
   */
  recordTx(path: TxPath, r: SubmitResult, requestId?: string): void {
    const m = this.metrics;
    const log = this.log;
    switch (r.kind) {
      case "sent":
        m.txSent.inc({ path });
        log.info({ requestId, path, signature: r.signature }, "transaction sent");
        return;
      case "confirmed":
        m.txConfirmed.inc({ path });
        if (path === "worker") {
          m.txSent.inc({ path });
          log.info({ requestId, path, signature: r.signature }, "transaction sent");
        }
        log.debug({ requestId, path, signature: r.signature }, "transaction confirmed");
        return;
      default: {
        const reason = txFailureLabel(r);
        m.txFailed.inc({ path, reason });
        log.warn({ requestId, path, reason, signature: "signature" in r ? r.signature : undefined, detail: describeFailure(r) }, "transaction failed");
      }
    }
  }

  /** `recordTx` for one path, in the shape of the submitter's `onResult`. */
  txResults(path: TxPath): (r: SubmitResult, requestId?: string) => void {
    return (r, requestId) => this.recordTx(path, r, requestId);
  }

  /** A settlement worker pass is over. */
  workerPass(r: PassCounts, seconds: number): void {
    this.metrics.workerPass(r, seconds);
    const worked =
      r.voided +
      r.closed +
      r.settled +
      r.reclaimedPositions +
      r.reclaimedOffers +
      r.poolsResolved +
      r.poolsCanceled +
      r.participantsSettled +
      r.participantsRefunded +
      r.failed +
      r.skipped;
    this.log[worked ? "info" : "debug"]({ ...r, errors: undefined, durationMs: Math.round(seconds * 1000) }, "worker pass");
  }

  /** The indexer's sink: applies through `writer`, counting batches and rows. */
  indexerSink(writer: StoreWriter): BatchSink {
    return async (b) => {
      const before = { applied: writer.stats.applied, events: writer.stats.events };
      await writer.apply(b);
      this.metrics.indexerApplied(1, writer.stats.applied - before.applied, writer.stats.events - before.events);
    };
  }

  /**
   * The readiness checks: `store` (a query on the checkpoints answers), and with a watched chain
   * `chain` (the head slot is read) and `indexer` (lag within maxLagSlots). Failure details go to
   * the log; the answer names the check and says what failed in a few words.
   */
  async readiness(store: () => Promise<number>): Promise<Readiness> {
    const [s, lag] = await Promise.allSettled([timeout(store(), 2_000), this.sampleLag()]);
    const checks: Record<string, ReadinessCheck> = {};
    if (s.status === "fulfilled") checks.store = { ok: true, indexedSlot: s.value };
    else {
      checks.store = { ok: false, error: "the store did not answer" };
      this.log.warn({ err: s.reason }, "readiness: store check failed");
    }
    if (this.lag) {
      if (lag.status === "fulfilled" && lag.value) {
        const { headSlot, syncedSlot, lagSlots, recordedAt } = lag.value;
        checks.chain = { ok: true, headSlot };
        // A process without the indexer read its progress from the store: say so, and since when.
        const via = recordedAt !== undefined ? { from: "store", recordedAt: recordedAt === null ? null : new Date(recordedAt).toISOString() } : {};
        checks.indexer =
          lagSlots <= this.maxLagSlots
            ? { ok: true, lagSlots, syncedSlot, maxLagSlots: this.maxLagSlots, ...via }
            : {
                ok: false,
                error:
                  recordedAt === null
                    ? "no indexer has recorded its progress in the store (none has acted yet)"
                    : `the indexer is ${lagSlots} slots behind the chain (at most ${this.maxLagSlots})`,
                lagSlots,
                syncedSlot,
                maxLagSlots: this.maxLagSlots,
                ...via,
              };
      } else {
        checks.chain = { ok: false, error: "the chain did not answer" };
        checks.indexer = { ok: false, error: "lag unknown while the chain does not answer" };
        this.log.warn({ err: lag.status === "rejected" ? lag.reason : undefined }, "readiness: chain check failed");
      }
    }
    const failing = Object.entries(checks)
      .filter(([, c]) => !c.ok)
      .map(([k]) => k);
    return { ready: failing.length === 0, failing, checks };
  }

  async close(): Promise<void> {
    await this.lag?.stop();
  }
}
