/**
 * The settlement worker: the service's crank. Each pass runs its phases in this order, each with
 * candidates from the indexed store and the truth re-read from the chain before acting (one file
 * per phase in ./phases/, its candidate query, which is also its "still due" rule, and its
 * action):
 * 0. given the dead-man switches, trips those whose deadline passed and closes the offers of the
 *    tripped ones (./phases/dead-man-switch.ts; signed with the user's key, through the write
 *    service, so outside the phase runner);
 * 1. void-contract: voids contracts still Open past their resolution deadline;
 * 2. close-offer: closes offers still Open once their contract is past cutoff or no longer Open,
 *    refunding the unmatched creator stake;
 * 3. settle-position: settles every Open position of a Filled/Closed offer whose contract is
 *    Resolved or Voided (payouts and fee by the program, exactly the spec's table);
 * 4. given a pools client, finishes pools (programs/pools/README.md): resolve-pool, cancel-pool,
 *    settle-participant, refund-participant; `poolResolutionAt` (idl/client/pools.ts) on the
 *    pool as the chain holds it decides, so the store only proposes candidates;
 * 5. unless `reclaim` is false, reclaims the rent the service paid: reclaim-position (settled
 *    positions), reclaim-offer (finished offers once their contract is resolved or voided).
 *
 * Never double-paying: every action is decided from current chain state, and the program
 * refuses a second settlement (PositionAlreadySettled), a second close (OfferNotOpen) and a
 * second void (ContractNotOpen); a restart, or two workers at once, cannot pay twice.
 *
 * Not stalled by poisoned items (issue #15): order, batch, backoff and the failure memory are
 * the same for every phase (./run-phase.ts, ./failures.ts). Visibility: `scripts/admin.ts worker
 * failures` (operator endpoint command `worker-failures`) lists item, kind, attempts, next retry
 * and last reason; each pass's report counts failures, retries and items deferred.
 */
import type { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import { sql, type Kysely } from "kysely";
import type { Database } from "../../indexer/store/schema";
import type { OffersClient } from "../../idl/client/offers";
import type { PoolsClient } from "../../idl/client/pools";
import type { ChainGateway } from "../chain/gateway";
import { Submitter, type SubmitterOptions } from "../chain/submitter";
import type { Observability } from "../observability/observability";
import { WorkerFailures, type BackoffOptions } from "./failures";
import { ACTIONS, COUNTS, emptyReport, type Db, type Pass, type Phase, type WorkItem, type WorkerReport } from "./phase";
import { PhaseRunner } from "./run-phase";
import { voidContract } from "./phases/void-contract";
import { closeOffer } from "./phases/close-offer";
import { settlePosition } from "./phases/settle-position";
import { resolvePool } from "./phases/resolve-pool";
import { cancelPool } from "./phases/cancel-pool";
import { settleParticipant } from "./phases/settle-participant";
import { refundParticipant } from "./phases/refund-participant";
import { reclaimPosition } from "./phases/reclaim-position";
import { reclaimOffer } from "./phases/reclaim-offer";
import { deadManSwitchPhase } from "./phases/dead-man-switch";
import type { DeadManSwitches } from "../writes/dead-man-switch";
import type { WebhookDispatcher } from "../webhooks/dispatcher";

export { WorkerFailures, type WorkKind } from "./failures";
export type { WorkItem, WorkerReport } from "./phase";

export interface WorkerDeps {
  db: Kysely<Database>;
  gateway: ChainGateway;
  payer: Keypair;
  client: OffersClient;
  /** The pools program's client: without it the worker leaves pools alone. */
  pools?: PoolsClient;
  /** The treasury at start; each settlement uses the one the Config names at that moment. */
  treasury: PublicKey;
  /** Close settled accounts to reclaim rent (default true). */
  reclaim?: boolean;
  /** Successful actions per phase per pass (default 500). */
  batch?: number;
  /** Items out of backoff retried per phase per pass (default max(1, batch / 10)). */
  retryBatch?: number;
  /** Unproductive items (failed, or nothing to do) met per phase per pass before it stops reading (default max(100, batch)). */
  maxFailuresPerPass?: number;
  /** Backoff per failing item (default 30 s doubling up to 1 h). */
  backoff?: BackoffOptions;
  /** The service's wall clock in unix seconds, for backoff times (default Date.now). */
  clock?: () => number;
  /**
   * Called with each item's instructions before they are signed; returns the instructions to
   * send (default: unchanged). tests/writes/worker-poison.test.ts uses it to make chosen items'
   * transactions fail on chain.
   */
  prepare?: (item: WorkItem, ixs: TransactionInstruction[]) => TransactionInstruction[] | Promise<TransactionInstruction[]>;
  log?: (msg: string, extra?: Record<string, unknown>) => void;
  /** Counts and logs passes (service/observability). */
  obs?: Observability;
  /** Every submission result of the worker (service/chain/submitter.ts), e.g. for metrics. */
  onSubmitResult?: SubmitterOptions["onResult"];
  /** The dead-man switches (issue #26), run first in each pass; without it they are left alone. */
  deadMan?: DeadManSwitches;
  /**
   * The webhooks' sender (service/webhooks/dispatcher.ts): its own loop, started and stopped with
   * the worker's timer, so only the acting worker sends, and a slow receiver never holds a pass.
   */
  webhooks?: WebhookDispatcher;
}

export class SettlementWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<WorkerReport> | null = null;
  readonly failures: WorkerFailures;
  private readonly runner: PhaseRunner;

  constructor(readonly deps: WorkerDeps) {
    this.failures = new WorkerFailures(deps.db, deps.backoff);
    this.runner = new PhaseRunner({
      db: deps.db as unknown as Db,
      failures: this.failures,
      submitter: new Submitter(deps.gateway, { onResult: deps.onSubmitResult }),
      payer: deps.payer,
      clock: () => this.clock(),
      prepare: deps.prepare,
      log: deps.log,
    });
  }

  private clock(): number {
    return this.deps.clock ? this.deps.clock() : Math.floor(Date.now() / 1000);
  }

  /** One pass; concurrent calls share the pass in progress. */
  runOnce(): Promise<WorkerReport> {
    if (!this.running) {
      const started = performance.now();
      this.running = this.pass()
        .then((r) => (this.deps.obs?.workerPass(r, (performance.now() - started) / 1000), r))
        .finally(() => (this.running = null));
    }
    return this.running;
  }

  /** Passes until one finds nothing to do (or `maxPasses`). Items in backoff do not keep it going. */
  async drain(maxPasses = 20): Promise<WorkerReport> {
    const total = emptyReport();
    for (let i = 0; i < maxPasses; i++) {
      const r = await this.runOnce();
      for (const k of COUNTS) total[k] += r[k];
      total.deferred = r.deferred;
      total.errors.push(...r.errors);
      if (ACTIONS.every((k) => r[k] === 0)) break;
    }
    return total;
  }

  start(intervalMs = 5_000): void {
    if (this.timer) return;
    const tick = () => {
      this.runOnce()
        .catch((e) => this.deps.log?.("worker: pass failed", { error: String((e as Error)?.message ?? e) }))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, intervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
    this.deps.webhooks?.start();
  }

  /** Stops the passes and the webhooks' loop (its attempts in flight finish and are recorded in the background). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    void this.deps.webhooks?.stop();
  }

  /** This pass's phases, in the order they run. */
  private phases(pass: Pass): Phase[] {
    const { client, pools } = this.deps;
    const phases = [voidContract(pass, client), closeOffer(pass, client), settlePosition(pass, client)];
    if (pools) phases.push(resolvePool(pass, pools), cancelPool(pass, pools), settleParticipant(pass, pools), refundParticipant(pass, pools));
    if (this.deps.reclaim !== false) phases.push(reclaimPosition(pass, client), reclaimOffer(pass, client));
    return phases;
  }

  private async pass(): Promise<WorkerReport> {
    const r = emptyReport();
    if (this.deps.deadMan) {
      // A failure here must not stop the settlement phases; the next pass tries again.
      await deadManSwitchPhase(this.deps.deadMan, this.deps.log).catch((e) =>
        this.deps.log?.("worker: dead-man switches failed", { error: String((e as Error)?.message ?? e) }),
      );
    }
    const batch = Math.max(1, this.deps.batch ?? 500);
    const retryBatch = Math.max(1, this.deps.retryBatch ?? Math.floor(batch / 10));
    const maxUnproductive = Math.max(1, this.deps.maxFailuresPerPass ?? Math.max(100, batch));
    const db = this.deps.db as unknown as Db;
    const now = await this.deps.gateway.now();
    const wallNow = this.clock();
    const phases = this.phases({ db, gateway: this.deps.gateway, payer: this.deps.payer, now, treasury: this.deps.treasury });
    // One "still due" per phase: its candidate query decides what is pruned too.
    await this.failures.prune(phases.map((p) => ({ kind: p.kind, items: p.query().select(sql.ref(p.keys[p.keys.length - 1]).as("address")) })));

    for (const p of phases) await this.runner.run(p, { batch, retryBatch, maxUnproductive, wallNow }, r);
    const deferred = await db
      .selectFrom("worker_failures")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("next_retry_at", ">", wallNow)
      .executeTakeFirst();
    r.deferred = Number(deferred?.n ?? 0);
    return r;
  }
}
