/**
 * Compares the store with the chain: every row of every created account against the account
 * read directly and decoded, and every derived Offer field against the same figures computed
 * from the on-chain account; event rows against the accounts' counters.
 */
import { expect } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { Kysely } from "kysely";
import type { OffersWorld } from "../../harness/offers-world";
import type { Store } from "../../indexer/store/db";
import type { Database } from "../../indexer/store/schema";
import type { PoolAccount } from "../../idl/client/pools";
import { deriveOffer, derivePosition } from "../../indexer/derive";
import type { ScenarioResult } from "../../harness/indexer-scenario";

const iso = (v: bigint) => (v === 0n ? null : new Date(Number(v) * 1000).toISOString());

export async function compareWithChain(
  w: OffersWorld,
  store: Store,
  r: ScenarioResult,
): Promise<{ offers: number; positions: number; contracts: number; deleted: number }> {
  const db = store.db;
  const config = await db.selectFrom("config").selectAll().executeTakeFirstOrThrow();
  const cfg = await w.config();
  expect(config.fee_bps).toBe(cfg.feeBps);
  expect(config.warning_ratio_numerator).toBe(cfg.limits.warningRatioNumerator.toString());
  let deleted = 0;
  const exists = async (a: PublicKey) => (await w.chain.account(a)) !== null;
  /** Whether account `a` is still on chain; a gone account's row must be marked deleted (and is counted). */
  const onChain = async (a: PublicKey, row: { deleted: number }) => {
    if (await exists(a)) return true;
    expect(row.deleted).toBe(1);
    deleted++;
    return false;
  };

  for (const a of r.contracts) {
    const row = await db.selectFrom("contracts").selectAll().where("address", "=", a.toBase58()).executeTakeFirstOrThrow();
    const c = await w.contractAccount(a);
    expect({
      status: row.status,
      result: row.result,
      cutoff: row.cutoff_at,
      deadline: row.resolution_deadline,
      t: row.template_id,
      e: row.event_id,
      resolvedAt: row.resolved_at,
      createdAt: row.created_at,
    }).toEqual({
      status: c.status,
      result: c.result,
      cutoff: Number(c.cutoffAt),
      deadline: Number(c.resolutionDeadline),
      t: c.templateId,
      e: c.eventId,
      resolvedAt: c.resolvedAt === 0n ? null : Number(c.resolvedAt),
      createdAt: Number(c.createdAt),
    });
  }

  const w5 = cfg.limits;
  for (const a of r.offers) {
    const row = await db.selectFrom("offers").selectAll().where("address", "=", a.toBase58()).executeTakeFirstOrThrow();
    if (!(await onChain(a, row))) continue;
    expect(row.deleted).toBe(0);
    const o = await w.offer(a);
    const d = deriveOffer(row, config);
    const ratioWarn =
      o.creatorTotal * w5.warningRatioDenominator > w5.warningRatioNumerator * o.takerTarget ||
      o.takerTarget * w5.warningRatioDenominator > w5.warningRatioNumerator * o.creatorTotal;
    expect(d).toEqual({
      address: a.toBase58(),
      contract: o.contract.toBase58(),
      creator: o.creator.toBase58(),
      creatorOutcome: o.side,
      creatorTotalMicros: o.creatorTotal.toString(),
      creatorAllocatedMicros: o.creatorAllocated.toString(),
      takerTargetMicros: o.takerTarget.toString(),
      takerFilledMicros: o.takerFilled.toString(),
      remainingTakerMicros: (o.status === "Open" ? o.takerTarget - o.takerFilled : 0n).toString(),
      minimumTakeMicros: o.minimumTake.toString(),
      feeBps: o.feeBps,
      termsGuardrail: { status: ratioWarn ? "warning" : "normal" },
      status: o.status,
      fillCount: o.fillCount,
      positionCount: o.positionCount,
      settledPositionCount: o.settledPositionCount,
      revision: o.revision.toString(),
      createdAt: iso(o.createdAt),
      closedAt: iso(o.closedAt),
      expiresAt: iso(o.expiresAt),
    });
    expect([row.nonce, row.creator_refunded_micros, row.rent_payer, row.creator_token]).toEqual([
      o.nonce.toString(),
      o.creatorRefunded.toString(),
      o.rentPayer.toBase58(),
      o.creatorToken.toBase58(),
    ]);
    // Events agree with the account's counters.
    const fills = await db.selectFrom("fills").selectAll().where("offer", "=", a.toBase58()).execute();
    expect(fills.length).toBe(o.fillCount);
    expect(fills.reduce((s, f) => s + BigInt(f.take_micros), 0n)).toBe(o.takerFilled);
    expect(fills.reduce((s, f) => s + BigInt(f.creator_matched_micros), 0n)).toBe(o.creatorAllocated);
    const settled = await db.selectFrom("settlements").select("position").where("offer", "=", a.toBase58()).execute();
    expect(settled.length).toBe(o.settledPositionCount);
    const close = await db.selectFrom("offer_closes").selectAll().where("offer", "=", a.toBase58()).executeTakeFirst();
    expect(close ? BigInt(close.closed_at) : 0n).toBe(o.closedAt === 0n ? 0n : o.closedAt);
    if (close) expect(BigInt(close.refund_micros)).toBe(o.creatorRefunded);
  }

  for (const a of r.positions) {
    const row = await db.selectFrom("positions").selectAll().where("address", "=", a.toBase58()).executeTakeFirstOrThrow();
    if (!(await onChain(a, row))) continue;
    const p = await w.position(a);
    expect(derivePosition(row)).toEqual({
      address: a.toBase58(),
      offer: p.offer.toBase58(),
      taker: p.taker.toBase58(),
      takerMicros: p.takerAmount.toString(),
      creatorMatchedMicros: p.creatorMatched.toString(),
      status: p.status,
      fillCount: p.fillCount,
      createdAt: iso(p.createdAt),
      settledAt: iso(p.settledAt),
      creatorPayoutMicros: p.creatorPayout.toString(),
      takerPayoutMicros: p.takerPayout.toString(),
      feeMicros: p.fee.toString(),
    });
    const s = await db.selectFrom("settlements").selectAll().where("position", "=", a.toBase58()).executeTakeFirst();
    if (p.status === "Open") expect(s).toBeUndefined();
    else
      expect([s?.status, s?.creator_payout_micros, s?.taker_payout_micros, s?.fee_micros]).toEqual([
        p.status,
        p.creatorPayout.toString(),
        p.takerPayout.toString(),
        p.fee.toString(),
      ]);
  }
  return { offers: r.offers.length, positions: r.positions.length, contracts: r.contracts.length, deleted };
}

/** The stored pool row and its outcome rows equal the Pool account read from the chain. */
export async function comparePoolWithChain(db: Kysely<Database>, pool: PublicKey, a: PoolAccount): Promise<void> {
  const row = await db.selectFrom("pools").selectAll().where("address", "=", pool.toBase58()).executeTakeFirstOrThrow();
  expect(row).toMatchObject({
    version: a.version,
    creator: a.creator.toBase58(),
    question: a.question,
    state: a.state,
    outcome_count: a.outcomeCount,
    total_oi_micros: a.totalOi.toString(),
    participant_count: a.participantCount,
    closes_at: Number(a.closesAt),
    resolution_at: a.resolutionAt === 0n ? null : Number(a.resolutionAt),
    winning_outcome: a.winningOutcome,
    updated_at: Number(a.updatedAt),
    deleted: 0,
  });
  const outs = await db.selectFrom("pool_outcomes").selectAll().where("pool", "=", pool.toBase58()).orderBy("outcome_index").execute();
  expect(outs.map((o) => [o.outcome_index, o.label, o.total_oi_micros, o.wager_count])).toEqual(
    a.outcomes.map((o) => [o.outcomeIndex, o.label, o.totalOi.toString(), o.wagerCount]),
  );
}
