/**
 * Chain data -> store rows. Account layouts and events come from the IDL-generated clients
 * (idl/client/*): no byte offsets are kept here, only the mapping of decoded fields to columns.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
import {
  OFFERS_IDL,
  OFFERS_PROGRAM_ID,
  OffersPda,
  parseOffersEvents,
  PositionStatus,
  OfferStatus,
  ContractStatus,
  ContractResult,
  bytesUuid,
} from "../idl/client/offers";
import { POOLS_PROGRAM_ID, poolsAccountKind, decodePool, decodeParticipant, parsePoolsEvents } from "../idl/client/pools";
import { accountKind, compileAccountDecoders, type DecodableIdl } from "./idl-decoder";
import type { AccountChildren } from "./store/writer";
import type {
  AccountTable,
  ClaimCreditsTable,
  PoolsTable,
  PoolParticipantsTable,
  ConfigTable,
  ContractsTable,
  FillsTable,
  OfferClosesTable,
  OffersTable,
  PoolCancelsTable,
  PositionsTable,
  SettlementsTable,
} from "./store/schema";
import type { AccountUpdate, TxEvent } from "./sources/types";

export const OFFERS_PROGRAM = OFFERS_PROGRAM_ID.toBase58();

/** Row content of an account table, without the chain meta columns. */
export type AccountRow = Record<string, string | number | null>;
export interface DecodedAccount {
  table: AccountTable;
  row: AccountRow;
}

/** Decoders of other programs (pools) register here: owner -> decoder. */
export type AccountDecoder = (data: Buffer) => DecodedAccount | null;
const decoders = new Map<string, AccountDecoder>();
export function registerAccountDecoder(owner: string, d: AccountDecoder): void {
  decoders.set(owner, d);
}
export function knownOwners(): string[] {
  return [...decoders.keys()];
}

const s = (v: unknown) => (v as bigint).toString();
const n = (v: unknown) => Number(v as bigint);
const t0 = (v: unknown) => ((v as bigint) === 0n ? null : Number(v as bigint));

/** Compiled from the offers IDL (see idl-decoder.ts). */
export const OFFERS_DECODERS = compileAccountDecoders(OFFERS_IDL as unknown as DecodableIdl);

export function offersAccountRow(data: Buffer): DecodedAccount | null {
  const kind = accountKind(OFFERS_DECODERS, data);
  if (!kind) return null;
  const a = kind.decode(data) as Record<string, any>;
  switch (kind.name) {
    case "config": {
      const l = a.limits as Record<string, bigint>;
      const row: Omit<ConfigTable, "address" | "slot" | "write_version" | "deleted"> = {
        authority: a.authority,
        mint: a.mint,
        treasury: a.treasury,
        vault: a.vault,
        fee_bps: a.feeBps,
        offers_enabled: a.offersEnabled === 1 ? 1 : 0,
        minimum_creator_micros: s(l.minimumCreatorMicros),
        minimum_take_micros: s(l.minimumTakeMicros),
        maximum_wager_micros: s(l.maximumWagerMicros),
        warning_ratio_numerator: s(l.warningRatioNumerator),
        warning_ratio_denominator: s(l.warningRatioDenominator),
        minimum_odds_numerator: s(l.minimumOddsNumerator),
        minimum_odds_denominator: s(l.minimumOddsDenominator),
        maximum_odds_numerator: s(l.maximumOddsNumerator),
        maximum_odds_denominator: s(l.maximumOddsDenominator),
      };
      return { table: "config", row };
    }
    case "contract": {
      const row: Omit<ContractsTable, "address" | "slot" | "write_version" | "deleted"> = {
        template_id: bytesUuid(a.templateId),
        event_id: bytesUuid(a.eventId),
        cutoff_at: n(a.cutoffAt),
        resolution_deadline: n(a.resolutionDeadline),
        status: ContractStatus[a.status] ?? String(a.status),
        result: ContractResult[a.result] ?? String(a.result),
        created_at: n(a.createdAt),
        resolved_at: t0(a.resolvedAt),
      };
      return { table: "contracts", row };
    }
    case "offer": {
      const row: Omit<OffersTable, "address" | "slot" | "write_version" | "deleted"> = {
        contract: a.contract,
        creator: a.creator,
        creator_token: a.creatorToken,
        rent_payer: a.rentPayer,
        nonce: s(a.nonce),
        side: a.side === 1 ? "sideA" : "sideB",
        status: OfferStatus[a.status] ?? String(a.status),
        fee_bps: a.feeBps,
        creator_total_micros: s(a.creatorTotal),
        taker_target_micros: s(a.takerTarget),
        minimum_take_micros: s(a.minimumTake),
        taker_filled_micros: s(a.takerFilled),
        creator_allocated_micros: s(a.creatorAllocated),
        creator_refunded_micros: s(a.creatorRefunded),
        revision: n(a.revision),
        fill_count: a.fillCount,
        position_count: a.positionCount,
        settled_position_count: a.settledPositionCount,
        created_at: n(a.createdAt),
        closed_at: t0(a.closedAt),
        expires_at: t0(a.expiresAt),
      };
      return { table: "offers", row };
    }
    case "position": {
      const row: Omit<PositionsTable, "address" | "slot" | "write_version" | "deleted"> = {
        offer: a.offer,
        taker: a.taker,
        taker_token: a.takerToken,
        rent_payer: a.rentPayer,
        taker_micros: s(a.takerAmount),
        creator_matched_micros: s(a.creatorMatched),
        status: PositionStatus[a.status] ?? String(a.status),
        fill_count: a.fillCount,
        created_at: n(a.createdAt),
        settled_at: t0(a.settledAt),
        creator_payout_micros: s(a.creatorPayout),
        taker_payout_micros: s(a.takerPayout),
        fee_micros: s(a.fee),
      };
      return { table: "positions", row };
    }
    // Claim accounts (payouts a user's token account could not receive, owed until withdrawn) are
    // not stored: their credits are, as events (claim_credits); the balance is read from the chain.
    case "claim":
    default:
      return null;
  }
}
registerAccountDecoder(OFFERS_PROGRAM, offersAccountRow);

export const POOLS_PROGRAM = POOLS_PROGRAM_ID.toBase58();

/**
 * The pools program: a Pool account becomes a `pools` row plus its `pool_outcomes` children
 * (replaced whole with each accepted update). A Participant becomes a `pool_participants` row, for
 * the settlement worker only (the aggregate never exposes individual participants). Config and
 * Claim accounts carry nothing the service reads, so they are not stored.
 */
export function poolsAccountRow(data: Buffer): (DecodedAccount & { children?: AccountChildren }) | null {
  const kind = poolsAccountKind(data);
  if (kind === "participant") {
    const a = decodeParticipant(data);
    const row: Omit<PoolParticipantsTable, "address" | "slot" | "write_version" | "deleted"> = {
      pool: a.pool.toBase58(),
      user: a.user.toBase58(),
      user_token: a.userToken.toBase58(),
      total_micros: a.total.toString(),
      settled: a.settled ? 1 : 0,
      created_at: Number(a.createdAt),
    };
    return { table: "pool_participants", row };
  }
  if (kind !== "pool") return null;
  const p = decodePool(data);
  const row: Omit<PoolsTable, "address" | "slot" | "write_version" | "deleted"> = {
    version: p.version,
    creator: p.creator.toBase58(),
    question: p.question,
    state: p.state,
    outcome_count: p.outcomeCount,
    total_oi_micros: p.totalOi.toString(),
    participant_count: p.participantCount,
    closes_at: Number(p.closesAt),
    resolution_at: p.resolutionAt === 0n ? null : Number(p.resolutionAt),
    resolution_criteria: p.criteria === "" ? null : p.criteria,
    cover_image_url: p.coverUrl === "" ? null : p.coverUrl,
    winning_outcome: p.winningOutcome,
    updated_at: Number(p.updatedAt),
    vote_ends_at: p.voteEndsAt === 0n ? null : Number(p.voteEndsAt),
    escalated_at: p.escalated ? Number(p.escalatedAt) : null,
    voter_count: p.voterCount,
  };
  return {
    table: "pools",
    row,
    // `pool` is filled in by the writer, which knows the account address.
    children: {
      pool_outcomes: p.outcomes.map((o) => ({
        pool: "",
        outcome_index: o.outcomeIndex,
        label: o.label,
        total_oi_micros: o.totalOi.toString(),
        wager_count: o.wagerCount,
      })),
    },
  };
}
registerAccountDecoder(POOLS_PROGRAM, poolsAccountRow);

/**
 * The one Config of the offers program, at its canonical address. The program refuses to create
 * any other, and every instruction pins this address; the indexer pins it too, so a Config-shaped
 * account anywhere else (which only a compromised program could make) never reaches the store.
 */
export const OFFERS_CONFIG = new OffersPda().config()[0].toBase58();

/** Decodes an account update of a known program; null for unknown owners or account types. */
export function decodeAccount(u: AccountUpdate): DecodedAccount | null {
  if (!u.data) return null;
  const d = decoders.get(u.owner);
  if (!d) return null;
  try {
    const decoded = d(u.data);
    if (decoded?.table === "config" && u.pubkey !== OFFERS_CONFIG) return null;
    return decoded;
  } catch {
    return null; // a malformed or foreign account: not ours to index
  }
}

/**
 * The "Program data:" lines emitted by `programId` itself (top of the invoke stack), so that a
 * program that CPIs into ours, or that prints look-alike lines, cannot forge our events.
 */
export function programDataLines(logs: string[], programId: string): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of logs) {
    const inv = /^Program (\S+) invoke \[\d+\]$/.exec(line);
    if (inv) {
      stack.push(inv[1]);
      continue;
    }
    if (/^Program (\S+) (success|failed)/.test(line)) {
      stack.pop();
      continue;
    }
    if (line.startsWith("Program data: ") && stack[stack.length - 1] === programId) out.push(line);
  }
  return out;
}

export interface DecodedEvents {
  fills: FillsTable[];
  closes: OfferClosesTable[];
  settlements: SettlementsTable[];
  poolCancels: PoolCancelsTable[];
  claimCredits: ClaimCreditsTable[];
}

const pk = (v: unknown) => (v as { toBase58(): string }).toBase58();
const big = (v: unknown) => (v as bigint).toString();

/** Event rows of the offers program in one successful transaction. */
export function decodeOffersEvents(tx: TxEvent, out: DecodedEvents): void {
  if (tx.err) return;
  for (const [index, ev] of parseOffersEvents(programDataLines(tx.logs, OFFERS_PROGRAM)).entries()) {
    const d = ev.data;
    if (ev.name === "claimCredited") out.claimCredits.push(claimCredit(tx, OFFERS_PROGRAM, index, d));
    else if (ev.name === "offerTaken") {
      out.fills.push({
        offer: pk(d.offer),
        revision: Number(d.revision),
        taker: pk(d.taker),
        position: pk(d.position),
        take_micros: big(d.takeAmount),
        creator_matched_micros: big(d.creatorMatched),
        taker_filled_micros: big(d.takerFilled),
        creator_allocated_micros: big(d.creatorAllocated),
        filled_at: Number(d.timestamp),
        signature: tx.signature,
        slot: tx.slot,
      });
    } else if (ev.name === "offerClosed") {
      out.closes.push({
        offer: pk(d.offer),
        closed_by: pk(d.closedBy),
        refund_micros: big(d.refund),
        revision: Number(d.revision),
        closed_at: Number(d.timestamp),
        signature: tx.signature,
        slot: tx.slot,
      });
    } else if (ev.name === "positionSettled") {
      out.settlements.push({
        position: pk(d.position),
        offer: pk(d.offer),
        status: PositionStatus[Number(d.status)] ?? String(d.status),
        creator_payout_micros: big(d.creatorPayout),
        taker_payout_micros: big(d.takerPayout),
        fee_micros: big(d.fee),
        settled_at: Number(d.timestamp),
        signature: tx.signature,
        slot: tx.slot,
      });
    }
  }
}

/** A ClaimCredited event (the same in both programs, programs/kit/src/claim.rs) as a row; `index` is its position among the program's events in the transaction. */
function claimCredit(tx: TxEvent, program: string, index: number, d: Record<string, unknown>): ClaimCreditsTable {
  return {
    signature: tx.signature,
    program,
    event_index: index,
    slot: tx.slot,
    owner: pk(d.owner),
    amount_micros: big(d.amount),
    total_micros: big(d.total),
    credited_at: Number(d.timestamp),
  };
}

/** The program's pool states (programs/pools/src/state.rs). */
const POOL_CANCELED = 4;
const POOL_REFUNDED = 5;

/**
 * Event rows of the pools program in one successful transaction: the cancel of a pool
 * (`cancel_pool`, or the authority's `authority_resolve(255)`), which moves it to CANCELED, or
 * straight to REFUNDED when nobody had picked. A REFUNDED after the last refund of a canceled
 * pool is no cancel: the pool's first cancel row stays (insert-or-ignore by pool).
 */
export function decodePoolsEvents(tx: TxEvent, out: DecodedEvents): void {
  if (tx.err) return;
  const refunded = new Set<string>();
  for (const [index, ev] of parsePoolsEvents(programDataLines(tx.logs, POOLS_PROGRAM)).entries()) {
    const d = ev.data;
    if (ev.name === "claimCredited") out.claimCredits.push(claimCredit(tx, POOLS_PROGRAM, index, d));
    // A refund's ParticipantSettled precedes the REFUNDED it completes; a retire has none.
    if (ev.name === "participantSettled") refunded.add(pk(d.pool));
    if (ev.name !== "poolStateChanged") continue;
    const state = Number(d.state);
    if (state === POOL_CANCELED || (state === POOL_REFUNDED && !refunded.has(pk(d.pool))))
      out.poolCancels.push({ pool: pk(d.pool), canceled_at: Number(d.timestamp), signature: tx.signature, slot: tx.slot });
  }
}

/** Event decoders of other programs register here. */
export type EventDecoder = (tx: TxEvent, out: DecodedEvents) => void;
const eventDecoders: EventDecoder[] = [decodeOffersEvents, decodePoolsEvents];
export function registerEventDecoder(d: EventDecoder): void {
  eventDecoders.push(d);
}
export function decodeEvents(txs: TxEvent[]): DecodedEvents {
  const out: DecodedEvents = { fills: [], closes: [], settlements: [], poolCancels: [], claimCredits: [] };
  for (const tx of txs) for (const d of eventDecoders) d(tx, out);
  return out;
}
