/**
 * The settlement worker: the service's crank. Each pass, from the indexed store (candidates) and
 * the chain (the truth, re-read before acting):
 * 1. voids contracts still Open past their resolution deadline (void_expired_contract);
 * 2. closes offers still Open once their contract is past cutoff or no longer Open, refunding
 *    the unmatched creator stake (close_offer, the service as caller);
 * 3. settles every Open position of a Filled/Closed offer whose contract is Resolved or Voided
 *    (settle_position: payouts and fee by the program, exactly the spec's table);
 * 4. reclaims rent (close_position for settled positions, close_offer_account for finished
 *    offers) when the service paid it.
 *
 * Restart-safe and never double-paying: the worker keeps no state of its own; every action is
 * decided from current chain state, and the program refuses a second settlement
 * (PositionAlreadySettled), a second close (OfferNotOpen) and a second void (ContractNotOpen). A
 * refused action is counted as skipped, not retried in the same pass.
 */
import { Transaction, type Keypair, type PublicKey, type TransactionInstruction } from "@solana/web3.js";
import { PublicKey as Pk } from "@solana/web3.js";
import type { Kysely } from "kysely";
import type { Database } from "../../indexer/store/schema";
import { OFFERS_ERRORS, decodeContract, decodeOffer, decodePosition, offersAccountKind, type OffersClient } from "../../idl/client/offers";
import { SubmitError, type ChainGateway } from "../chain/gateway";

export interface WorkerReport {
  voided: number;
  closed: number;
  settled: number;
  reclaimedPositions: number;
  reclaimedOffers: number;
  skipped: number;
  errors: string[];
}

export interface WorkerDeps {
  db: Kysely<Database>;
  gateway: ChainGateway;
  payer: Keypair;
  client: OffersClient;
  treasury: PublicKey;
  /** Close settled accounts to reclaim rent (default true). */
  reclaim?: boolean;
  /** Rows per query per pass (default 500). */
  batch?: number;
  log?: (msg: string, extra?: Record<string, unknown>) => void;
}

const emptyReport = (): WorkerReport => ({ voided: 0, closed: 0, settled: 0, reclaimedPositions: 0, reclaimedOffers: 0, skipped: 0, errors: [] });

export class SettlementWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<WorkerReport> | null = null;

  constructor(readonly deps: WorkerDeps) {}

  private async send(ixs: TransactionInstruction[], report: WorkerReport): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const tx = new Transaction();
      tx.feePayer = this.deps.payer.publicKey;
      tx.recentBlockhash = await this.deps.gateway.blockhash();
      tx.add(...ixs);
      tx.sign(this.deps.payer);
      try {
        const sig = await this.deps.gateway.submit(tx);
        const st = await this.deps.gateway.waitFor(sig, 60_000);
        if (st.state === "confirmed") return true;
        report.skipped++;
        return false;
      } catch (e) {
        if (e instanceof SubmitError) {
          if (/blockhash not found/i.test(e.message) && attempt < 8) continue;
          report.skipped++;
          const name = e.code !== null ? OFFERS_ERRORS.get(e.code)?.name : undefined;
          this.deps.log?.("worker: action refused", { error: name ?? e.message.slice(0, 200) });
          return false;
        }
        throw e;
      }
    }
  }

  private async data(address: PublicKey, kind: "contract" | "offer" | "position"): Promise<Buffer | null> {
    const a = await this.deps.gateway.getAccount(address);
    if (!a || !a.owner.equals(this.deps.client.program.programId) || offersAccountKind(a.data) !== kind) return null;
    return a.data;
  }

  /** One pass; concurrent calls share the pass in progress. */
  runOnce(): Promise<WorkerReport> {
    if (!this.running) this.running = this.pass().finally(() => (this.running = null));
    return this.running;
  }

  /** Passes until one finds nothing to do (or `maxPasses`). */
  async drain(maxPasses = 20): Promise<WorkerReport> {
    const total = emptyReport();
    for (let i = 0; i < maxPasses; i++) {
      const r = await this.runOnce();
      for (const k of ["voided", "closed", "settled", "reclaimedPositions", "reclaimedOffers", "skipped"] as const) total[k] += r[k];
      total.errors.push(...r.errors);
      if (r.voided + r.closed + r.settled + r.reclaimedPositions + r.reclaimedOffers === 0) break;
    }
    return total;
  }

  start(intervalMs = 5_000): void {
    if (this.timer) return;
    const tick = () => {
      this.runOnce().catch((e) => this.deps.log?.("worker: pass failed", { error: String((e as Error)?.message ?? e) })).finally(() => {
        if (this.timer) this.timer = setTimeout(tick, intervalMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async pass(): Promise<WorkerReport> {
    const r = emptyReport();
    const { db, client } = this.deps;
    const limit = this.deps.batch ?? 500;
    const now = await this.deps.gateway.now();

    // 1. Void contracts left unresolved past their deadline.
    const expired = await db.selectFrom("contracts").select("address").where("status", "=", "Open").where("deleted", "=", 0)
      .where("resolution_deadline", "<", Number(now)).limit(limit).execute();
    for (const c of expired) {
      const d = await this.data(new Pk(c.address), "contract");
      if (!d) continue;
      const k = decodeContract(d);
      if (k.status !== "Open" || now <= k.resolutionDeadline) continue;
      if (await this.send([await client.voidExpiredContract({ contract: new Pk(c.address) })], r)) r.voided++;
    }

    // 2. Close open offers after cutoff (or once the contract is no longer Open): refunds.
    const open = await db.selectFrom("offers").innerJoin("contracts", "contracts.address", "offers.contract")
      .select(["offers.address as address"]).where("offers.status", "=", "Open").where("offers.deleted", "=", 0)
      .where((eb) => eb.or([eb("contracts.cutoff_at", "<=", Number(now)), eb("contracts.status", "!=", "Open")])).limit(limit).execute();
    for (const row of open) {
      const d = await this.data(new Pk(row.address), "offer");
      if (!d) continue;
      const o = decodeOffer(d);
      if (o.status !== "Open") continue;
      const ix = await client.closeOffer({ caller: this.deps.payer.publicKey, contract: o.contract, offer: new Pk(row.address), creatorToken: o.creatorToken, expectedRevision: o.revision });
      if (await this.send([ix], r)) r.closed++;
    }

    // 3. Settle positions of finished offers on resolved or voided contracts.
    const due = await db.selectFrom("positions").innerJoin("offers", "offers.address", "positions.offer").innerJoin("contracts", "contracts.address", "offers.contract")
      .select(["positions.address as address"]).where("positions.status", "=", "Open").where("positions.deleted", "=", 0)
      .where("offers.status", "in", ["Filled", "Closed"]).where("contracts.status", "in", ["Resolved", "Voided"]).limit(limit).execute();
    for (const row of due) {
      const pd = await this.data(new Pk(row.address), "position");
      if (!pd) continue;
      const p = decodePosition(pd);
      if (p.status !== "Open") continue;
      const od = await this.data(p.offer, "offer");
      if (!od) continue;
      const o = decodeOffer(od);
      const ix = await client.settlePosition({ contract: o.contract, offer: p.offer, position: new Pk(row.address), creatorToken: o.creatorToken, takerToken: p.takerToken, treasury: this.deps.treasury });
      if (await this.send([ix], r)) r.settled++;
    }

    if (this.deps.reclaim === false) return r;
    const payer = this.deps.payer.publicKey.toBase58();
    // 4. Reclaim rent of settled positions, then of finished offers.
    const settledPositions = await db.selectFrom("positions").select(["address"]).where("status", "!=", "Open").where("deleted", "=", 0)
      .where("rent_payer", "=", payer).limit(limit).execute();
    for (const row of settledPositions) {
      const pd = await this.data(new Pk(row.address), "position");
      if (!pd || decodePosition(pd).status === "Open") continue;
      if (await this.send([await client.closePosition({ position: new Pk(row.address), rentPayer: this.deps.payer.publicKey })], r)) r.reclaimedPositions++;
    }
    const finished = await db.selectFrom("offers").select(["address"]).where("deleted", "=", 0).where("rent_payer", "=", payer)
      .where((eb) => eb.or([eb("status", "=", "Settled"), eb.and([eb("status", "=", "Closed"), eb("settled_position_count", "=", eb.ref("position_count"))])]))
      .limit(limit).execute();
    for (const row of finished) {
      const od = await this.data(new Pk(row.address), "offer");
      if (!od) continue;
      const o = decodeOffer(od);
      const done = o.status === "Settled" || (o.status === "Closed" && o.settledPositionCount === o.positionCount);
      if (!done) continue;
      if (await this.send([await client.closeOfferAccount({ offer: new Pk(row.address), rentPayer: this.deps.payer.publicKey })], r)) r.reclaimedOffers++;
    }
    return r;
  }
}
