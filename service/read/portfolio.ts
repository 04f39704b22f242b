/**
 * A caller's portfolio (issue #26): per contract, what the caller gets back and wins or loses
 * under each result, counting the offers the caller created (matched stake in their positions,
 * unmatched stake still locked) and the positions the caller took; and the totals: stake at
 * risk, unmatched stake locked, pending payouts, claims waiting, realised P&L after fees and the
 * counts won / lost / refunded. Every figure is computed from the indexed store with the rules of
 * idl/client/offers-rules.ts (`partyReturn`, `partyNet`, `partyRealised`, `partyOutcome`,
 * `unmatchedStake`); docs/api-guide.md ("Portfolio") defines each field with a worked example.
 *
 * The optional range [from, to) (unix seconds) applies to what has happened: the realised P&L and
 * the counts are those of positions settled in it. The exposure and the pending figures are the
 * state now, whatever the range.
 */
import { z } from "zod";
import type { Kysely } from "kysely";
import type { Database } from "../../indexer/store/schema";
import { iso } from "../../indexer/derive/offers";
import {
  CONTRACT_RESULTS,
  partyNet,
  partyOutcome,
  partyRealised,
  partyReturn,
  partyStake,
  unmatchedStake,
  type ContractResult,
  type PartyPosition,
} from "../../idl/client/offers-rules";
import { ApiError } from "../api-error";

export interface OutcomeExposure {
  result: ContractResult;
  /** What comes back to the caller if the contract ends on `result` (stake included, fee deducted). */
  returnMicros: string;
  /** returnMicros less the caller's matched stake: the win (positive) or loss (negative). */
  netMicros: string;
}

export interface ContractExposure {
  contract: string;
  title: string | null;
  event: string | null;
  sport: string | null;
  /** "Open" | "Resolved" | "Voided" */
  status: string;
  /** "none" until resolved, then "sideA" | "sideB" | "void". */
  result: string;
  cutoffAt: string;
  /** The caller's matched stake in positions not yet settled (as creator and as taker). */
  matchedStakeMicros: string;
  /** Creator stake of the caller's open offers on this contract that no take matched (back at close). */
  unmatchedMicros: string;
  openOfferCount: number;
  openPositionCount: number;
  outcomes: OutcomeExposure[];
}

export interface PortfolioTotals {
  /** Matched stake in unsettled positions on contracts still Open (the result is not known). */
  stakeAtRiskMicros: string;
  /** Unmatched creator stake of the caller's open offers (any contract). */
  unmatchedLockedMicros: string;
  /** What unsettled positions on Resolved or Voided contracts will pay the caller at settlement. */
  pendingPayoutsMicros: string;
  /** The caller's claim balance on chain (payouts credited when the token account could not receive); null when the chain was not read. */
  claimsWaitingMicros: string | null;
  /** Sum over positions settled in the range of what the settlement paid the caller less the caller's stake (fees deducted). */
  realisedPnlMicros: string;
  /** Fees deducted from the caller's winnings in the range. */
  feesPaidMicros: string;
  won: number;
  lost: number;
  refunded: number;
}

export interface Portfolio {
  wallet: string;
  from: string | null;
  to: string | null;
  totals: PortfolioTotals;
  contracts: ContractExposure[];
}

export interface PortfolioRange {
  from: number | null;
  to: number | null;
}

const isoInstant = (name: string) => z.iso.datetime({ offset: true, error: `${name} must be an ISO 8601 date-time (e.g. 2026-01-31T00:00:00Z)` }).optional();

/** The query of GET /portfolio (and the GraphQL arguments): an optional range of settlement times. */
export const PortfolioQuery = z
  .object({
    from: isoInstant("from").describe("Settled at or after this instant (ISO 8601); the realised P&L and counts only"),
    to: isoInstant("to").describe("Settled before this instant (ISO 8601); the realised P&L and counts only"),
  })
  .strict();

export function portfolioRange(q: { from?: string | null; to?: string | null }): PortfolioRange {
  const parsed = PortfolioQuery.safeParse(Object.fromEntries(Object.entries(q).filter(([, v]) => v !== null && v !== undefined && v !== "")));
  if (!parsed.success) throw new ApiError(400, parsed.error.issues.map((i) => i.message).join("; "));
  const sec = (v: string | undefined) => (v === undefined ? null : Math.floor(Date.parse(v) / 1000));
  const r = { from: sec(parsed.data.from), to: sec(parsed.data.to) };
  if (r.from !== null && r.to !== null && r.from >= r.to) throw new ApiError(400, "from must be before to");
  return r;
}

interface Row {
  role: "creator" | "taker";
  contract: string;
  creatorSide: string;
  feeBps: number;
  creatorMatched: string;
  takerAmount: string;
  status: string;
  settledAt: number | null;
  creatorPayout: string;
  takerPayout: string;
  fee: string;
}

interface ContractRow {
  address: string;
  status: string;
  result: string;
  cutoff_at: number;
  title: string | null;
  event: string | null;
  sport: string | null;
}

/** The portfolio of `wallet` from the store; `claimsWaiting` reads the caller's claim balance (the chain), when given. */
export async function portfolio(
  db: Kysely<Database>,
  wallet: string,
  range: PortfolioRange = { from: null, to: null },
  claimsWaiting?: () => Promise<bigint>,
): Promise<Portfolio> {
  const positionCols = [
    "positions.creator_matched_micros as creatorMatched",
    "positions.taker_micros as takerAmount",
    "positions.status as status",
    "positions.settled_at as settledAt",
    "positions.creator_payout_micros as creatorPayout",
    "positions.taker_payout_micros as takerPayout",
    "positions.fee_micros as fee",
    "offers.contract as contract",
    "offers.side as creatorSide",
    "offers.fee_bps as feeBps",
  ] as const;
  const [asCreator, asTaker, openOffers] = await Promise.all([
    db.selectFrom("positions").innerJoin("offers", "offers.address", "positions.offer").select(positionCols).where("offers.creator", "=", wallet).execute(),
    db.selectFrom("positions").innerJoin("offers", "offers.address", "positions.offer").select(positionCols).where("positions.taker", "=", wallet).execute(),
    db
      .selectFrom("offers")
      .select(["contract", "creator_total_micros", "creator_allocated_micros"])
      .where("creator", "=", wallet)
      .where("status", "=", "Open")
      .where("deleted", "=", 0)
      .execute(),
  ]);
  const rows: Row[] = [...asCreator.map((r) => ({ ...r, role: "creator" as const })), ...asTaker.map((r) => ({ ...r, role: "taker" as const }))];

  const contractIds = [...new Set([...rows.filter((r) => r.status === "Open").map((r) => r.contract), ...openOffers.map((o) => o.contract)])];
  const contracts = new Map<string, ContractRow>();
  if (contractIds.length > 0) {
    const cs = await db
      .selectFrom("contracts")
      .leftJoin("contract_catalog", "contract_catalog.contract", "contracts.address")
      .select([
        "contracts.address as address",
        "contracts.status as status",
        "contracts.result as result",
        "contracts.cutoff_at as cutoff_at",
        "contract_catalog.title as title",
        "contract_catalog.event as event",
        "contract_catalog.sport as sport",
      ])
      .where("contracts.address", "in", contractIds)
      .execute();
    for (const c of cs) contracts.set(c.address, c);
  }

  interface Acc {
    matched: bigint;
    unmatched: bigint;
    offers: number;
    positions: number;
    ret: Record<ContractResult, bigint>;
    net: Record<ContractResult, bigint>;
  }
  const per = new Map<string, Acc>();
  const acc = (contract: string): Acc => {
    let a = per.get(contract);
    if (!a)
      per.set(
        contract,
        (a = { matched: 0n, unmatched: 0n, offers: 0, positions: 0, ret: { sideA: 0n, sideB: 0n, void: 0n }, net: { sideA: 0n, sideB: 0n, void: 0n } }),
      );
    return a;
  };
  let stakeAtRisk = 0n;
  let unmatchedLocked = 0n;
  let pending = 0n;
  let realised = 0n;
  let fees = 0n;
  const counts = { won: 0, lost: 0, refunded: 0 };

  for (const o of openOffers) {
    const u = unmatchedStake({ creatorTotal: BigInt(o.creator_total_micros), creatorAllocated: BigInt(o.creator_allocated_micros) });
    const a = acc(o.contract);
    a.unmatched += u;
    a.offers += 1;
    unmatchedLocked += u;
  }
  for (const r of rows) {
    const p: PartyPosition = {
      role: r.role,
      creatorSide: r.creatorSide as "sideA" | "sideB",
      feeBps: r.feeBps,
      creatorMatched: BigInt(r.creatorMatched),
      takerAmount: BigInt(r.takerAmount),
    };
    if (r.status === "Open") {
      const a = acc(r.contract);
      a.matched += partyStake(p);
      a.positions += 1;
      for (const res of CONTRACT_RESULTS) {
        a.ret[res] += partyReturn(p, res);
        a.net[res] += partyNet(p, res);
      }
      const c = contracts.get(r.contract);
      if (!c || c.status === "Open") stakeAtRisk += partyStake(p);
      else pending += partyReturn(p, c.status === "Voided" ? "void" : (c.result as ContractResult));
      continue;
    }
    if (r.settledAt === null) continue;
    if (range.from !== null && r.settledAt < range.from) continue;
    if (range.to !== null && r.settledAt >= range.to) continue;
    const outcome = partyOutcome(r.role, r.status as "SettledCreatorWin" | "SettledTakerWin" | "Refunded");
    counts[outcome] += 1;
    realised += partyRealised(r.role, { creatorPayout: BigInt(r.creatorPayout), takerPayout: BigInt(r.takerPayout) }, p.creatorMatched, p.takerAmount);
    if (outcome === "won") fees += BigInt(r.fee);
  }

  const out: ContractExposure[] = [...per.entries()].map(([contract, a]) => {
    const c = contracts.get(contract);
    return {
      contract,
      title: c?.title ?? null,
      event: c?.event ?? null,
      sport: c?.sport ?? null,
      status: c?.status ?? "Open",
      result: c?.result ?? "none",
      cutoffAt: iso(c?.cutoff_at ?? 0)!,
      matchedStakeMicros: String(a.matched),
      unmatchedMicros: String(a.unmatched),
      openOfferCount: a.offers,
      openPositionCount: a.positions,
      outcomes: CONTRACT_RESULTS.map((res) => ({ result: res, returnMicros: String(a.ret[res]), netMicros: String(a.net[res]) })),
    };
  });
  out.sort((x, y) => (x.cutoffAt === y.cutoffAt ? (x.contract < y.contract ? -1 : 1) : x.cutoffAt < y.cutoffAt ? -1 : 1));
  return {
    wallet,
    from: iso(range.from),
    to: iso(range.to),
    totals: {
      stakeAtRiskMicros: String(stakeAtRisk),
      unmatchedLockedMicros: String(unmatchedLocked),
      pendingPayoutsMicros: String(pending),
      claimsWaitingMicros: claimsWaiting ? String(await claimsWaiting()) : null,
      realisedPnlMicros: String(realised),
      feesPaidMicros: String(fees),
      ...counts,
    },
    contracts: out,
  };
}
