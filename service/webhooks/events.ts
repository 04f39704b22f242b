/**
 * The webhook events and how they are derived from the indexed store, never from a guess: each
 * event is one row of a transaction-event table the indexer wrote (fills, offer_closes,
 * settlements, claim_credits), read only once its slot is final (./dispatcher.ts, "Finality"). Re-deriving the
 * same row (a rescan, a restart, another worker) gives the same event id, so the outbox's unique
 * (endpoint, event) inserts nothing new and a receiver deduplicates by `webhook-id`.
 *
 * Who receives an event: the custodial users whose wallet the event names (docs/api-guide.md,
 * "Webhooks"): the offer's creator for every offer event, the taker too for offer.taken, and both
 * the creator and the position's taker for position.settled / position.refunded, the claim's owner
 * for claim.credited.
 */
import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../indexer/store/schema";
import { offerExpired } from "../../idl/client/offers-rules";

export const WEBHOOK_EVENTS = ["offer.taken", "offer.filled", "offer.closed", "position.settled", "position.refunded", "claim.credited"] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** Why an offer closed: by its creator, by the service once the contract passed cutoff or ended, or at the offer's expiry. */
export const CLOSE_REASONS = ["closed", "cutoff", "expired"] as const;

/** One derived event, addressed to one wallet. */
export interface DerivedEvent {
  id: string;
  type: WebhookEventType;
  wallet: string;
  /** The role of `wallet` in it. */
  role: "creator" | "taker" | "owner";
  slot: number;
  signature: string;
  /** Chain time of the event, unix seconds. */
  at: number;
  data: Record<string, string | number | null>;
}

/**
 * The event id: a digest of the transaction's signature, the event's key in its table (the
 * offer and revision of a fill, the offer of a close, the position of a settlement, the program and
 * event index of a claim credit) and the kind.
 * Deterministic, so duplicates carry the same id; not the wallet's, so both parties of a fill see
 * one id for it.
 */
export function eventId(type: WebhookEventType, signature: string, key: string): string {
  return "evt_" + createHash("sha256").update(`${type}\u0000${signature}\u0000${key}`).digest("base64url").slice(0, 32);
}

/** Every event of the transaction rows with `lo < slot <= hi`. */
export async function deriveEvents(db: Kysely<Database>, lo: number, hi: number): Promise<DerivedEvent[]> {
  if (hi <= lo) return [];
  const out: DerivedEvent[] = [];
  const fills = await db
    .selectFrom("fills as f")
    .innerJoin("offers as o", "o.address", "f.offer")
    .select([
      "f.offer",
      "f.revision",
      "f.taker",
      "f.position",
      "f.take_micros",
      "f.creator_matched_micros",
      "f.taker_filled_micros",
      "f.creator_allocated_micros",
      "f.filled_at",
      "f.signature",
      "f.slot",
      "o.creator",
      "o.contract",
      "o.taker_target_micros",
    ])
    .where("f.slot", ">", lo)
    .where("f.slot", "<=", hi)
    .execute();
  for (const f of fills) {
    const data = {
      offer: f.offer,
      contract: f.contract,
      revision: Number(f.revision),
      taker: f.taker,
      position: f.position,
      takeMicros: f.take_micros,
      creatorMatchedMicros: f.creator_matched_micros,
      takerFilledMicros: f.taker_filled_micros,
      creatorAllocatedMicros: f.creator_allocated_micros,
      takerTargetMicros: f.taker_target_micros,
    };
    const base = { slot: Number(f.slot), signature: f.signature, at: Number(f.filled_at), data };
    const taken = eventId("offer.taken", f.signature, `${f.offer}:${f.revision}`);
    out.push({ ...base, id: taken, type: "offer.taken", wallet: f.creator, role: "creator" });
    if (f.taker !== f.creator) out.push({ ...base, id: taken, type: "offer.taken", wallet: f.taker, role: "taker" });
    // The fill that took the offer's last unit: amounts are decimal strings of u64, compared as bigint.
    if (BigInt(f.taker_filled_micros) >= BigInt(f.taker_target_micros))
      out.push({ ...base, id: eventId("offer.filled", f.signature, f.offer), type: "offer.filled", wallet: f.creator, role: "creator" });
  }

  const closes = await db
    .selectFrom("offer_closes as c")
    .innerJoin("offers as o", "o.address", "c.offer")
    .innerJoin("contracts as k", "k.address", "o.contract")
    .select([
      "c.offer",
      "c.closed_by",
      "c.refund_micros",
      "c.revision",
      "c.closed_at",
      "c.signature",
      "c.slot",
      "o.creator",
      "o.contract",
      "o.expires_at",
      "k.cutoff_at",
    ])
    .where("c.slot", ">", lo)
    .where("c.slot", "<=", hi)
    .execute();
  for (const c of closes) {
    out.push({
      id: eventId("offer.closed", c.signature, c.offer),
      type: "offer.closed",
      wallet: c.creator,
      role: "creator",
      slot: Number(c.slot),
      signature: c.signature,
      at: Number(c.closed_at),
      data: {
        offer: c.offer,
        contract: c.contract,
        reason: closeReason(c.closed_by, c.creator, Number(c.closed_at), Number(c.cutoff_at), c.expires_at === null ? null : Number(c.expires_at)),
        closedBy: c.closed_by,
        refundMicros: c.refund_micros,
        revision: Number(c.revision),
      },
    });
  }

  const settlements = await db
    .selectFrom("settlements as s")
    .innerJoin("offers as o", "o.address", "s.offer")
    .innerJoin("positions as p", "p.address", "s.position")
    .select([
      "s.position",
      "s.offer",
      "s.status",
      "s.creator_payout_micros",
      "s.taker_payout_micros",
      "s.fee_micros",
      "s.settled_at",
      "s.signature",
      "s.slot",
      "o.creator",
      "o.contract",
      "p.taker",
    ])
    .where("s.slot", ">", lo)
    .where("s.slot", "<=", hi)
    .execute();
  for (const s of settlements) {
    const type: WebhookEventType = s.status === "Refunded" ? "position.refunded" : "position.settled";
    const base = {
      id: eventId(type, s.signature, s.position),
      type,
      slot: Number(s.slot),
      signature: s.signature,
      at: Number(s.settled_at),
      data: {
        position: s.position,
        offer: s.offer,
        contract: s.contract,
        taker: s.taker,
        status: s.status,
        creatorPayoutMicros: s.creator_payout_micros,
        takerPayoutMicros: s.taker_payout_micros,
        feeMicros: s.fee_micros,
      },
    };
    out.push({ ...base, wallet: s.creator, role: "creator" });
    if (s.taker !== s.creator) out.push({ ...base, wallet: s.taker, role: "taker" });
  }

  const credits = await db
    .selectFrom("claim_credits")
    .select(["signature", "program", "event_index", "slot", "owner", "amount_micros", "total_micros", "credited_at"])
    .where("slot", ">", lo)
    .where("slot", "<=", hi)
    .execute();
  for (const c of credits) {
    out.push({
      id: eventId("claim.credited", c.signature, `${c.program}:${c.event_index}`),
      type: "claim.credited",
      wallet: c.owner,
      role: "owner",
      slot: Number(c.slot),
      signature: c.signature,
      at: Number(c.credited_at),
      data: { program: c.program, owner: c.owner, amountMicros: c.amount_micros, totalMicros: c.total_micros, signature: c.signature },
    });
  }
  return out;
}

/**
 * An offer's close, named: its creator closed it ("closed"); someone else closed it once its expiry
 * had come and before the contract's cutoff ("expired", the program's `Offer::expired`); else the
 * contract had reached cutoff or ended ("cutoff"). Decided from the close's own time, not the
 * contract's state when the event is read, which may have moved on since.
 */
export function closeReason(closedBy: string, creator: string, closedAt: number, cutoffAt: number, expiresAt: number | null): (typeof CLOSE_REASONS)[number] {
  if (closedBy === creator) return "closed";
  if (offerExpired({ expiresAt }, closedAt) && closedAt < cutoffAt) return "expired";
  return "cutoff";
}

/** Whether the transaction an event came from is still in the store (a fork's retraction deletes its rows). */
export async function stillIndexed(db: Kysely<Database>, type: string, signature: string): Promise<boolean> {
  const table =
    type === "offer.taken" || type === "offer.filled"
      ? "fills"
      : type === "offer.closed"
        ? "offer_closes"
        : type === "claim.credited"
          ? "claim_credits"
          : "settlements";
  const r = await db.selectFrom(table).select("signature").where("signature", "=", signature).limit(1).executeTakeFirst();
  return r !== undefined;
}
