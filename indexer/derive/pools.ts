/**
 * The pool market aggregate of the spec (area B), derived from stored rows. Pure functions.
 */
import { createHash } from "node:crypto";
import type { PoolCatalogTable, PoolOutcomesTable, PoolsTable } from "../store/schema";
import { iso } from "./offers";
import { AUTHORITY_DEADLINE_SECONDS } from "../../idl/client/pools";
import { poolState, shareBps, type PoolStateName } from "../../idl/client/pools-rules";

// The pools rules (one share rounding, one LOCKED rule) live with the client; the read API takes
// them from here with the rest of the aggregate.
export { poolState, shareBps, type PoolStateName };

/** JSON with object keys sorted recursively: equal content, equal text. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(",")}}`;
}

/** First 32 hex chars of SHA-256 of the canonical JSON of the payload without `revision`. */
export function payloadRevision(payload: object): string {
  const { revision: _r, ...rest } = payload as Record<string, unknown>;
  return createHash("sha256").update(canonicalJson(rest)).digest("hex").slice(0, 32);
}

export interface PoolOutcomeAggregate {
  outcomeIndex: number;
  label: string;
  totalOiMicros: string;
  shareBps: number;
  wagerCount: number;
  isResolved: boolean;
}

/**
 * Why a pool ended without a result. The spec's CANCELED says "the creator canceled"; the program
 * also cancels an escalated pool, and retires a pool that closed without a single pick (straight
 * to REFUNDED). docs/service-guide.md, "Why a pool was canceled".
 * - CREATOR: not escalated, withdrawn by its creator while picks were open;
 * - AUTHORITY: escalated, canceled by the config's authority (`authority_resolve(255)`);
 * - TIMEOUT: escalated, and the authority left it undecided for 7 days: canceled by anyone (the worker);
 * - NO_PICKS: closed without a pick, retired.
 */
export const POOL_CANCEL_REASONS = ["CREATOR", "AUTHORITY", "TIMEOUT", "NO_PICKS"] as const;
export type PoolCancelReason = (typeof POOL_CANCEL_REASONS)[number];

/**
 * The cancel reason of a CANCELED pool, or of a REFUNDED one that was canceled; null otherwise.
 * `canceledAt` is the chain time of the cancel (the pool_cancels row of its event). The program
 * lets the authority cancel only before escalated_at + 7 days and anyone else only from then on,
 * so the cancel time tells the two apart. Without the event (a store that missed it) the last
 * update stands in: it is the cancel itself until the first refund, and never earlier than it.
 */
export function poolCancelReason(
  pool: Pick<PoolsTable, "state" | "winning_outcome" | "escalated_at" | "participant_count" | "closes_at" | "updated_at">,
  canceledAt: number | null = null,
): PoolCancelReason | null {
  if (pool.state !== "CANCELED" && pool.state !== "REFUNDED") return null;
  // Resolved for an outcome nobody backed: every stake refunded, but the pool has a result.
  if (pool.winning_outcome !== null && pool.winning_outcome !== undefined) return null;
  if (pool.escalated_at !== null && pool.escalated_at !== undefined) {
    const at = canceledAt ?? Number(pool.updated_at ?? 0);
    return at < Number(pool.escalated_at) + Number(AUTHORITY_DEADLINE_SECONDS) ? "AUTHORITY" : "TIMEOUT";
  }
  // Without picks nothing is refunded later, so the last update is the cancel itself.
  const empty = Number(pool.participant_count ?? 0) === 0;
  if (empty && pool.closes_at !== null && Number(canceledAt ?? pool.updated_at ?? 0) >= Number(pool.closes_at)) return "NO_PICKS";
  // Not escalated, with picks (or before closing): only the creator may cancel then.
  return "CREATOR";
}

export interface PoolAggregate {
  schemaVersion: 1;
  id: string;
  slug: string | null;
  question: string;
  version: number;
  state: PoolStateName;
  /** Why the pool was canceled (CANCELED, or REFUNDED after a cancel); null for every other pool. */
  cancelReason: PoolCancelReason | null;
  outcomes: PoolOutcomeAggregate[];
  totalOiMicros: string;
  participantCount: number;
  closesAt: string | null;
  resolutionAt: string | null;
  resolutionCriteria: string | null;
  coverImageUrl: string | null;
  updatedAt: string;
  canonicalUrl: string;
  revision: string;
}

/** Whether the embed endpoint may show a pool: public, not deleted, not flagged. */
export function poolEligible(catalog: Pick<PoolCatalogTable, "is_public" | "deleted" | "flagged"> | null | undefined): boolean {
  return !!catalog && Number(catalog.is_public) === 1 && Number(catalog.deleted) === 0 && Number(catalog.flagged) === 0;
}

const DEFAULT_TWO_LABELS = ["For", "Against"];

export function derivePoolAggregate(a: {
  pool: PoolsTable;
  outcomes: Pick<PoolOutcomesTable, "outcome_index" | "label" | "total_oi_micros" | "wager_count">[];
  catalog: Pick<PoolCatalogTable, "slug"> | null;
  /** Distinct funded owners, when the pool row has no participant_count (from pool_wagers). */
  participantCount?: number;
  /** When the pool was canceled (its pool_cancels row), if it was. */
  canceledAt?: number | null;
  nowUnix: number;
  /** Base of public pool pages, e.g. "https://example.com/polls"; the slug (or address) is appended. */
  canonicalBase: string;
}): PoolAggregate {
  const { pool } = a;
  const outs = [...a.outcomes].sort((x, y) => x.outcome_index - y.outcome_index);
  const totals = outs.map((o) => BigInt(o.total_oi_micros));
  const shares = shareBps(totals);
  const pot = totals.reduce((x, y) => x + y, 0n);
  const state = poolState(pool.state, pool.closes_at, a.nowUnix);
  const resolved = pool.state === "RESOLVED" || pool.state === "DISTRIBUTED";
  const slug = a.catalog?.slug ?? null;
  const payload: Omit<PoolAggregate, "revision"> = {
    schemaVersion: 1,
    id: pool.address,
    slug,
    question: pool.question,
    version: Number(pool.version),
    state,
    cancelReason: poolCancelReason(pool, a.canceledAt ?? null),
    outcomes: outs.map((o, i) => ({
      outcomeIndex: Number(o.outcome_index),
      label: o.label ?? (outs.length === 2 ? DEFAULT_TWO_LABELS[i] : `Option ${i + 1}`),
      totalOiMicros: totals[i].toString(),
      shareBps: shares[i],
      wagerCount: Number(o.wager_count),
      isResolved: resolved && pool.winning_outcome !== null && Number(pool.winning_outcome) === Number(o.outcome_index),
    })),
    totalOiMicros: pot.toString(),
    participantCount: Number(pool.participant_count ?? a.participantCount ?? 0),
    closesAt: iso(pool.closes_at),
    resolutionAt: iso(pool.resolution_at),
    resolutionCriteria: pool.resolution_criteria,
    coverImageUrl: pool.cover_image_url,
    updatedAt: iso(pool.updated_at ?? 0)!,
    canonicalUrl: `${a.canonicalBase.replace(/\/$/, "")}/${encodeURIComponent(slug ?? pool.address)}`,
  };
  return { ...payload, revision: payloadRevision(payload) };
}
