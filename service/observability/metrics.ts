/**
 * The service's Prometheus metrics (prom-client), in a registry of its own per service instance:
 * several stacks in one process (the tests) each count their own, and nothing lands in
 * prom-client's global registry. The HTTP request metrics are @hono/prometheus's standard two
 * (same names, help, buckets and labels), observed by the request middleware
 * (graphql/http-observability.ts) with the duration it already measures: the package's own
 * middleware, one more layer with its own timer and four label objects per request, was a
 * tenth of a small read's framework time (BENCHMARKS.md, issue 21).
 *
 * Label values are bounded: routes are patterns, transaction failure reasons are error names
 * from the programs' IDLs or one of a few failure kinds (txFailureLabel).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { SubmitFailure } from "../chain/submitter";

/** Who sent a transaction: the write API (create, take, close, replays) or the settlement worker. */
export type TxPath = "writes" | "worker";

/**
 * The `reason` label of a failed transaction (service/chain/submitter.ts classifies it): the
 * offers program's error name as its IDL has it, `pools:<name>` / `token:<name>` for the pools
 * program and SPL Token, `program_unknown` for a code no IDL names, else the failure's kind
 * (`blockhash_expired`, `timeout`, `rpc`, `rejected`).
 */
export function txFailureLabel(f: SubmitFailure): string {
  if (f.kind !== "program") return f.kind;
  if (!f.name) return "program_unknown";
  return f.program === "offers" ? f.name : `${f.program}:${f.name}`;
}

/** What a worker pass did, by outcome: the counts of its report (worker/worker.ts WorkerReport), which metrics read. */
export interface PassCounts {
  voided: number;
  closed: number;
  settled: number;
  reclaimedPositions: number;
  reclaimedOffers: number;
  /** resolve_pool calls: pools RESOLVED, or escalated to the authority. */
  poolsResolved: number;
  /** cancel_pool calls: escalations left undecided for 7 days (CANCELED), closed pools without picks (REFUNDED). */
  poolsCanceled: number;
  /** Participants of RESOLVED pools settled (paid, or marked losers). */
  participantsSettled: number;
  /** Participants of CANCELED pools refunded. */
  participantsRefunded: number;
  /** Actions the chain refused (including duplicates of another worker's action). */
  skipped: number;
  /** Failures recorded (the item still needed its action): each now waits out its backoff. */
  failed: number;
  /** Items retried after their backoff expired. */
  retried: number;
  /** Failing items still in backoff at the end of the pass (not attempted). */
  deferred: number;
}

const PASS_OUTCOMES: [keyof PassCounts, string][] = [
  ["voided", "voided"],
  ["closed", "closed"],
  ["settled", "settled"],
  ["reclaimedPositions", "reclaimed_positions"],
  ["reclaimedOffers", "reclaimed_offers"],
  ["poolsResolved", "pools_resolved"],
  ["poolsCanceled", "pools_canceled"],
  ["participantsSettled", "participants_settled"],
  ["participantsRefunded", "participants_refunded"],
  ["skipped", "skipped"],
  ["failed", "failed"],
  ["retried", "retried"],
];

type HttpLabel = "method" | "status" | "ok" | "route";
const HTTP_LABELS: HttpLabel[] = ["method", "status", "ok", "route"];

export class ServiceMetrics {
  readonly registry = new Registry();
  /** http_requests_total and http_request_duration_seconds by method, route pattern, status. */
  readonly httpRequests: Counter<HttpLabel>;
  readonly httpDuration: Histogram<HttpLabel>;
  readonly txSent: Counter<"path">;
  readonly txConfirmed: Counter<"path">;
  readonly txFailed: Counter<"path" | "reason">;
  readonly workerPasses: Counter;
  readonly workerPassSeconds: Histogram;
  readonly workerItems: Counter<"outcome">;
  readonly workerDeferred: Gauge;
  readonly indexerBatches: Counter;
  readonly indexerRows: Counter<"kind">;
  readonly headSlot: Gauge;
  readonly syncedSlot: Gauge;
  readonly checkpointSlot: Gauge;
  readonly lagSlots: Gauge;

  constructor(o: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    // Off by default: each collection starts an event-loop monitor, one per stack in a test process.
    if (o.processMetrics) collectDefaultMetrics({ register: this.registry });
    // One observation per request: the count is the duration histogram's, read when scraped.
    const httpDuration = (this.httpDuration = new Histogram({
      name: "http_request_duration_seconds",
      help: "Duration of HTTP requests in seconds",
      labelNames: HTTP_LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
      registers,
    }));
    this.httpRequests = new Counter({
      name: "http_requests_total",
      help: "Total number of HTTP requests",
      labelNames: HTTP_LABELS,
      registers,
      async collect() {
        const { values } = await httpDuration.get();
        // Reset and refill in one synchronous step: two scrapes at once never add up.
        this.reset();
        for (const v of values) if (v.metricName === "http_request_duration_seconds_count") this.inc(v.labels, v.value);
      },
    });
    this.txSent = new Counter({
      name: "offers_tx_sent_total",
      help: "Transactions the chain accepted (writes: on acceptance; the worker, which waits, on confirmation)",
      labelNames: ["path"],
      registers,
    });
    this.txConfirmed = new Counter({ name: "offers_tx_confirmed_total", help: "Transactions seen confirmed", labelNames: ["path"], registers });
    this.txFailed = new Counter({
      name: "offers_tx_failed_total",
      help: "Transactions refused, failed on chain or not confirmed in time, by reason (IDL error name, pools:<name>, token:<name>, program_unknown, blockhash_expired, timeout, rpc, rejected)",
      labelNames: ["path", "reason"],
      registers,
    });
    this.workerPasses = new Counter({ name: "offers_worker_passes_total", help: "Settlement worker passes completed", registers });
    this.workerPassSeconds = new Histogram({
      name: "offers_worker_pass_duration_seconds",
      help: "Duration of settlement worker passes",
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers,
    });
    this.workerItems = new Counter({
      name: "offers_worker_items_total",
      help: "Settlement worker work by outcome (voided, closed, settled, reclaimed_positions, reclaimed_offers, pools_resolved, pools_canceled, participants_settled, participants_refunded, skipped, failed, retried)",
      labelNames: ["outcome"],
      registers,
    });
    this.workerDeferred = new Gauge({
      name: "offers_worker_deferred_items",
      help: "Failing worker items waiting out their backoff after the last pass",
      registers,
    });
    this.indexerBatches = new Counter({ name: "offers_indexer_batches_total", help: "Batches the indexer applied to the store", registers });
    this.indexerRows = new Counter({
      name: "offers_indexer_rows_total",
      help: "Rows the indexer applied: accounts (newer versions written) and events (fills, closes, settlements decoded)",
      labelNames: ["kind"],
      registers,
    });
    this.headSlot = new Gauge({ name: "offers_chain_head_slot", help: "The chain's latest slot at the indexer's commitment", registers });
    this.syncedSlot = new Gauge({
      name: "offers_indexer_synced_slot",
      help: "Highest head slot up to which the indexer had applied every transaction of the programs",
      registers,
    });
    this.checkpointSlot = new Gauge({ name: "offers_indexer_checkpoint_slot", help: "Slot of the indexer's last stored checkpoint", registers });
    this.lagSlots = new Gauge({ name: "offers_indexer_lag_slots", help: "Chain head slot minus the indexer's synced slot", registers });
    for (const path of ["writes", "worker"]) {
      this.txSent.inc({ path }, 0);
      this.txConfirmed.inc({ path }, 0);
    }
  }

  /** One HTTP request, under its method, route pattern (never the raw URL) and status. */
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status: String(status), ok: String(status >= 200 && status < 300) }, seconds);
  }

  workerPass(r: PassCounts, seconds: number): void {
    this.workerPasses.inc();
    this.workerPassSeconds.observe(seconds);
    for (const [k, outcome] of PASS_OUTCOMES) if (r[k]) this.workerItems.inc({ outcome }, r[k]);
    this.workerDeferred.set(r.deferred);
  }

  indexerApplied(batches: number, accounts: number, events: number): void {
    this.indexerBatches.inc(batches);
    if (accounts) this.indexerRows.inc({ kind: "accounts" }, accounts);
    if (events) this.indexerRows.inc({ kind: "events" }, events);
  }

  /** The text exposition format, and its content type. */
  async expose(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
