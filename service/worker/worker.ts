/**
 * The settlement worker: the service's crank. Each pass, from the indexed store (candidates) and
 * the chain (the truth, re-read before acting):
 * 1. voids contracts still Open past their resolution deadline (void_expired_contract);
 * 2. closes offers still Open once their contract is past cutoff or no longer Open, refunding
 *    the unmatched creator stake (close_offer, the service as caller);
 * 3. settles every Open position of a Filled/Closed offer whose contract is Resolved or Voided
 *    (settle_position: payouts and fee by the program, exactly the spec's table);
 * 4. finishes pools (programs/pools/README.md, given a pools client): resolve_pool once a
 *    proposal's dispute window is over (or every participant voted) — RESOLVED, or escalated
 *    when disputed — and once the creator let 72 h pass without proposing (escalated);
 *    cancel_pool once the authority left an escalation undecided for 7 days, and for a pool that
 *    closed without a single pick (REFUNDED at once); settle_participant for every participant
 *    of a RESOLVED pool (winners paid, losers marked) until DISTRIBUTED; refund_participant for
 *    every participant of a CANCELED pool until REFUNDED. `poolResolutionAt` (idl/client/pools.ts)
 *    on the pool as the chain holds it decides, so the store only proposes candidates;
 * 5. reclaims rent (close_position for settled positions, close_offer_account for finished
 *    offers once their contract is resolved or voided) when the service paid it.
 *
 * Never double-paying: every action is decided from current chain state, and the program
 * refuses a second settlement (PositionAlreadySettled), a second close (OfferNotOpen) and a
 * second void (ContractNotOpen); a restart, or two workers at once, cannot pay twice.
 *
 * Not stalled by poisoned items (issue #15):
 * - Order: each phase takes its candidates oldest due first, deterministically: void by
 *   resolution deadline, close by the contract's cutoff then the offer's creation, settle and
 *   position reclaim by the position's creation, offer reclaim by the offer's creation; the
 *   address breaks ties. Pages are read by keyset (after the last key seen), so an item tried in
 *   this pass is never read again in it.
 * - Batch: `batch` counts only actions that succeeded. An item whose action fails, or that the
 *   chain shows needs nothing (the store lagging), takes no place in the batch: the phase reads
 *   on until `batch` actions succeeded, the candidates run out, or `maxFailuresPerPass` such
 *   unproductive items were met in this phase (a bound on one pass's time, not on its work).
 * - Memory: a failure is recorded in `worker_failures` (./failures.ts) with the reason (the
 *   program error's name decoded from the IDL) and an exponential backoff per item; the row
 *   survives restarts and is shared by workers on one store. Items in backoff are excluded from
 *   the candidates by the query itself; once due they are retried from a separate budget
 *   (`retryBatch` per phase per pass) after the fresh work. Success, or the chain showing the
 *   item no longer needs the action, deletes the row; `prune` forgets items the store no longer
 *   lists as due.
 * - Visibility: `scripts/admin.ts worker failures` (operator endpoint command `worker-failures`)
 *   lists item, kind, attempts, next retry and last reason; each pass's report counts failures,
 *   retries and items deferred.
 * A transaction the chain refuses in preflight costs no fee, so a failing item costs the service
 * nothing but one simulation per retry.
 */
import type { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import { PublicKey as Pk } from "@solana/web3.js";
import { sql, type Kysely, type SelectQueryBuilder } from "kysely";
import type { Database } from "../../indexer/store/schema";
import { decodeConfig, decodeContract, decodeOffer, decodePosition, offersAccountKind, type OffersClient } from "../../idl/client/offers";
import { cutoffFilter } from "../../idl/client/offers-rules";
import {
  AUTHORITY_DEADLINE_SECONDS,
  PROPOSAL_DEADLINE_SECONDS,
  decodeParticipant,
  decodePool,
  decodePoolsConfig,
  poolResolutionAt,
  poolsAccountKind,
  type PoolsClient,
} from "../../idl/client/pools";
import { ChainUnavailableError, type ChainGateway } from "../chain/gateway";
import { Submitter, describeFailure, type SubmitterOptions } from "../chain/submitter";
import type { CustodyDatabase } from "../custody/schema";
import type { Observability } from "../observability/observability";
import type { PassCounts } from "../observability/metrics";
import { WorkerFailures, type BackoffOptions, type WorkKind } from "./failures";

export { WorkerFailures, type WorkKind } from "./failures";

export interface WorkerReport extends PassCounts {
  /** `<kind> <address>: <reason>` of this pass's failures. */
  errors: string[];
}

/** One action on one account. */
export interface WorkItem {
  kind: WorkKind;
  address: string;
}

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
}

/** Counts of successful actions (a pass with none of them found nothing to do). */
const ACTIONS = [
  "voided",
  "closed",
  "settled",
  "reclaimedPositions",
  "reclaimedOffers",
  "poolsResolved",
  "poolsCanceled",
  "participantsSettled",
  "participantsRefunded",
] as const;
const COUNTS = [...ACTIONS, "skipped", "failed", "retried"] as const;
const emptyReport = (): WorkerReport => ({
  voided: 0,
  closed: 0,
  settled: 0,
  reclaimedPositions: 0,
  reclaimedOffers: 0,
  poolsResolved: 0,
  poolsCanceled: 0,
  participantsSettled: 0,
  participantsRefunded: 0,
  skipped: 0,
  failed: 0,
  retried: 0,
  deferred: 0,
  errors: [],
});

type Db = Kysely<Database & CustodyDatabase>;
// A phase's candidate query: its tables differ per phase; the keyset, exclusion and order are
// added to it as SQL fragments on named columns.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Candidates = SelectQueryBuilder<any, any, any>;

interface Phase {
  kind: WorkKind;
  count: (typeof ACTIONS)[number];
  /** Candidate rows (store), before ordering, exclusion and keyset. */
  query: () => Candidates;
  /** Key columns, oldest due first; the last one is the item's address (unique). */
  keys: string[];
  /** Re-reads the chain: the instructions to send, or null when the item needs nothing. */
  act: (address: string) => Promise<TransactionInstruction[] | null>;
}

type SendResult = { ok: true } | { ok: false; reason: string };

/** `f`'s promise, made on the first call and shared by the later ones. */
function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

export class SettlementWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<WorkerReport> | null = null;
  readonly failures: WorkerFailures;
  private readonly submitter: Submitter;

  constructor(readonly deps: WorkerDeps) {
    this.failures = new WorkerFailures(deps.db, deps.backoff);
    this.submitter = new Submitter(deps.gateway, { onResult: deps.onSubmitResult });
  }

  private clock(): number {
    return this.deps.clock ? this.deps.clock() : Math.floor(Date.now() / 1000);
  }

  private async send(ixs: TransactionInstruction[]): Promise<SendResult> {
    const r = await this.submitter.send(ixs, [this.deps.payer], { confirm: true });
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

  /**
   * The fee treasury a program's Config names now: the authority may move it (set_treasury) when
   * the old one can no longer receive, and settlements must follow without a restart. Read once
   * per pass (the phases memoise it), not once per settlement.
   */
  private async configTreasury(
    config: PublicKey,
    programId: PublicKey,
    isConfig: (data: Buffer) => boolean,
    decode: (data: Buffer) => { treasury: PublicKey },
  ): Promise<PublicKey> {
    const a = await this.deps.gateway.getAccount(config);
    if (!a || !a.owner.equals(programId) || !isConfig(a.data)) return this.deps.treasury;
    return decode(a.data).treasury;
  }

  private async data(address: PublicKey, kind: "contract" | "offer" | "position"): Promise<Buffer | null> {
    const a = await this.deps.gateway.getAccount(address);
    if (!a || !a.owner.equals(this.deps.client.program.programId) || offersAccountKind(a.data) !== kind) return null;
    return a.data;
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
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private phases(now: bigint): Phase[] {
    const db = this.deps.db as unknown as Db;
    const { client } = this.deps;
    const payer = this.deps.payer.publicKey.toBase58();
    const nowN = Number(now);
    const treasury = once(() => this.configTreasury(client.pda.config()[0], client.program.programId, (d) => offersAccountKind(d) === "config", decodeConfig));
    const phases: Phase[] = [
      {
        kind: "void-contract",
        count: "voided",
        keys: ["contracts.resolution_deadline", "contracts.address"],
        query: () =>
          db
            .selectFrom("contracts")
            .where("contracts.status", "=", "Open")
            .where("contracts.deleted", "=", 0)
            .where("contracts.resolution_deadline", "<", nowN),
        act: async (address) => {
          const d = await this.data(new Pk(address), "contract");
          if (!d) return null;
          const k = decodeContract(d);
          if (k.status !== "Open" || now <= k.resolutionDeadline) return null;
          return [await client.voidExpiredContract({ contract: new Pk(address) })];
        },
      },
      {
        kind: "close-offer",
        count: "closed",
        keys: ["contracts.cutoff_at", "offers.created_at", "offers.address"],
        query: () =>
          db
            .selectFrom("offers")
            .innerJoin("contracts", "contracts.address", "offers.contract")
            .where("offers.status", "=", "Open")
            .where("offers.deleted", "=", 0)
            .where((eb) => eb.or([eb("contracts.cutoff_at", ...cutoffFilter("passed", now)), eb("contracts.status", "!=", "Open")])),
        act: async (address) => {
          const d = await this.data(new Pk(address), "offer");
          if (!d) return null;
          const o = decodeOffer(d);
          if (o.status !== "Open") return null;
          return [
            await client.closeOffer({
              caller: this.deps.payer.publicKey,
              contract: o.contract,
              offer: new Pk(address),
              creatorToken: o.creatorToken,
              creator: o.creator,
              expectedRevision: o.revision,
            }),
          ];
        },
      },
      {
        kind: "settle-position",
        count: "settled",
        keys: ["positions.created_at", "positions.address"],
        query: () =>
          db
            .selectFrom("positions")
            .innerJoin("offers", "offers.address", "positions.offer")
            .innerJoin("contracts", "contracts.address", "offers.contract")
            .where("positions.status", "=", "Open")
            .where("positions.deleted", "=", 0)
            .where("offers.status", "in", ["Filled", "Closed"])
            .where("contracts.status", "in", ["Resolved", "Voided"]),
        act: async (address) => {
          const pd = await this.data(new Pk(address), "position");
          if (!pd) return null;
          const p = decodePosition(pd);
          if (p.status !== "Open") return null;
          const od = await this.data(p.offer, "offer");
          if (!od) return null;
          const o = decodeOffer(od);
          return [
            await client.settlePosition({
              contract: o.contract,
              offer: p.offer,
              position: new Pk(address),
              creatorToken: o.creatorToken,
              takerToken: p.takerToken,
              treasury: await treasury(),
              creator: o.creator,
              taker: p.taker,
            }),
          ];
        },
      },
    ];
    if (this.deps.pools) phases.push(...this.poolPhases(now, this.deps.pools));
    if (this.deps.reclaim === false) return phases;
    phases.push(
      {
        kind: "reclaim-position",
        count: "reclaimedPositions",
        keys: ["positions.created_at", "positions.address"],
        query: () =>
          db.selectFrom("positions").where("positions.status", "!=", "Open").where("positions.deleted", "=", 0).where("positions.rent_payer", "=", payer),
        act: async (address) => {
          const pd = await this.data(new Pk(address), "position");
          if (!pd || decodePosition(pd).status === "Open") return null;
          return [await client.closePosition({ position: new Pk(address), rentPayer: this.deps.payer.publicKey })];
        },
      },
      {
        kind: "reclaim-offer",
        count: "reclaimedOffers",
        keys: ["offers.created_at", "offers.address"],
        // The program closes an offer account only once its contract is resolved or voided (the
        // address can then never be created again), so earlier ones are not candidates.
        query: () =>
          db
            .selectFrom("offers")
            .innerJoin("contracts", "contracts.address", "offers.contract")
            .where("offers.deleted", "=", 0)
            .where("offers.rent_payer", "=", payer)
            .where("contracts.status", "in", ["Resolved", "Voided"])
            .where((eb) =>
              eb.or([
                eb("offers.status", "=", "Settled"),
                eb.and([eb("offers.status", "=", "Closed"), eb("offers.settled_position_count", "=", eb.ref("offers.position_count"))]),
              ]),
            ),
        act: async (address) => {
          const od = await this.data(new Pk(address), "offer");
          if (!od) return null;
          const o = decodeOffer(od);
          const done = o.status === "Settled" || (o.status === "Closed" && o.settledPositionCount === o.positionCount);
          if (!done) return null;
          const kd = await this.data(o.contract, "contract");
          if (!kd || decodeContract(kd).status === "Open") return null;
          return [await client.closeOfferAccount({ offer: new Pk(address), rentPayer: this.deps.payer.publicKey, contract: o.contract })];
        },
      },
    );
    return phases;
  }

  private async poolAccount(address: PublicKey, pools: PoolsClient, kind: "pool" | "participant"): Promise<Buffer | null> {
    const a = await this.deps.gateway.getAccount(address);
    if (!a || !a.owner.equals(pools.program.programId) || poolsAccountKind(a.data) !== kind) return null;
    return a.data;
  }

  /**
   * The pools' phases. Candidates come from the store's pool rows (state, close time, dispute
   * window, escalation time); the pool account as the chain holds it decides through
   * `poolResolutionAt`.
   */
  private poolPhases(now: bigint, pools: PoolsClient): Phase[] {
    const db = this.deps.db as unknown as Db;
    const nowN = Number(now);
    const caller = this.deps.payer.publicKey;
    const treasury = once(() =>
      this.configTreasury(pools.pda.config()[0], pools.program.programId, (d) => poolsAccountKind(d) === "config", decodePoolsConfig),
    );
    const pool = async (address: PublicKey) => {
      const d = await this.poolAccount(address, pools, "pool");
      return d ? decodePool(d) : null;
    };
    // A participant still to pay out of a pool in `state`: its instruction's accounts, or null.
    const payout = async (address: string, state: "RESOLVED" | "CANCELED") => {
      const d = await this.poolAccount(new Pk(address), pools, "participant");
      if (!d) return null;
      const part = decodeParticipant(d);
      if (part.settled) return null;
      const p = await pool(part.pool);
      if (!p || p.state !== state) return null;
      return { pool: part.pool, participant: new Pk(address), user: part.user, userToken: part.userToken, payer: caller };
    };
    /** Pools not closed by the indexer's tombstone, for a phase's query. */
    const livePools = () => db.selectFrom("pools").where("pools.deleted", "=", 0);
    /** Whether what can happen next to the pool (read from the chain) is one of `next`. */
    const poolIs = async (address: string, ...next: ReturnType<typeof poolResolutionAt>[]) => {
      const p = await pool(new Pk(address));
      return p !== null && p !== undefined && next.includes(poolResolutionAt(p, now));
    };
    const participants = (state: "RESOLVED" | "CANCELED") => () =>
      db
        .selectFrom("pool_participants")
        .innerJoin("pools", "pools.address", "pool_participants.pool")
        .where("pool_participants.settled", "=", 0)
        .where("pool_participants.deleted", "=", 0)
        .where("pools.state", "=", state);
    return [
      {
        kind: "resolve-pool",
        count: "poolsResolved",
        keys: ["pools.closes_at", "pools.address"],
        query: () =>
          livePools().where((eb) =>
            eb.or([
              // A proposal whose dispute window is over, or on which every participant voted.
              eb.and([
                eb("pools.state", "=", "RESOLVING"),
                eb("pools.escalated_at", "is", null),
                eb.or([eb("pools.vote_ends_at", "<=", nowN), eb("pools.voter_count", ">=", eb.ref("pools.participant_count"))]),
              ]),
              // No proposal within 72 h of max(closes_at, resolution_at).
              eb.and([
                eb("pools.state", "=", "OPEN"),
                eb("pools.participant_count", ">", 0),
                eb("pools.closes_at", "<=", Number(now - PROPOSAL_DEADLINE_SECONDS)),
                eb.or([eb("pools.resolution_at", "is", null), eb("pools.resolution_at", "<=", Number(now - PROPOSAL_DEADLINE_SECONDS))]),
              ]),
            ]),
          ),
        act: async (address) => ((await poolIs(address, "resolvable", "escalatable")) ? [await pools.resolvePool({ caller, pool: new Pk(address) })] : null),
      },
      {
        kind: "cancel-pool",
        count: "poolsCanceled",
        keys: ["pools.closes_at", "pools.address"],
        query: () =>
          livePools().where((eb) =>
            eb.or([
              // The authority left the escalation undecided for 7 days.
              eb.and([eb("pools.state", "=", "RESOLVING"), eb("pools.escalated_at", "<=", Number(now - AUTHORITY_DEADLINE_SECONDS))]),
              // Closed without a single pick: retired (REFUNDED at once).
              eb.and([eb("pools.state", "=", "OPEN"), eb("pools.participant_count", "=", 0), eb("pools.closes_at", "<=", nowN)]),
            ]),
          ),
        act: async (address) => ((await poolIs(address, "cancelable")) ? [await pools.cancelPool({ caller, pool: new Pk(address) })] : null),
      },
      {
        kind: "settle-participant",
        count: "participantsSettled",
        keys: ["pool_participants.created_at", "pool_participants.address"],
        query: participants("RESOLVED"),
        act: async (address) => {
          const a = await payout(address, "RESOLVED");
          return a ? [await pools.settleParticipant({ ...a, treasury: await treasury() })] : null;
        },
      },
      {
        kind: "refund-participant",
        count: "participantsRefunded",
        keys: ["pool_participants.created_at", "pool_participants.address"],
        query: participants("CANCELED"),
        act: async (address) => {
          const a = await payout(address, "CANCELED");
          return a ? [await pools.refundParticipant(a)] : null;
        },
      },
    ];
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
    const item: WorkItem = { kind: p.kind, address };
    let result: SendResult;
    try {
      let ixs = await p.act(address);
      if (!ixs) {
        if (known) await this.failures.clear(p.kind, address);
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
      if (known) await this.failures.clear(p.kind, address);
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
      if (known) await this.failures.clear(p.kind, address);
      return "noop";
    }
    const f = await this.failures.record(p.kind, address, result.reason, this.clock());
    r.failed++;
    r.errors.push(`${p.kind} ${address}: ${result.reason}`);
    this.deps.log?.("worker: action failed", { kind: p.kind, item: address, attempts: f.attempts, nextRetryAt: f.nextRetryAt, reason: f.lastReason });
    return "failed";
  }

  private async pass(): Promise<WorkerReport> {
    const r = emptyReport();
    const batch = Math.max(1, this.deps.batch ?? 500);
    const retryBatch = Math.max(1, this.deps.retryBatch ?? Math.floor(batch / 10));
    const maxUnproductive = Math.max(1, this.deps.maxFailuresPerPass ?? Math.max(100, batch));
    const now = await this.deps.gateway.now();
    const wallNow = this.clock();
    const phases = this.phases(now);
    // One "still due" per phase: its candidate query decides what is pruned too.
    await this.failures.prune(phases.map((p) => ({ kind: p.kind, items: p.query().select(sql.ref(p.keys[p.keys.length - 1]).as("address")) })));

    for (const p of phases) {
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
    const deferred = await (this.deps.db as unknown as Db)
      .selectFrom("worker_failures")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("next_retry_at", ">", wallNow)
      .executeTakeFirst();
    r.deferred = Number(deferred?.n ?? 0);
    return r;
  }
}
