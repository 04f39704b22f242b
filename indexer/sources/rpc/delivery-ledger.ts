/**
 * What the RPC source's live stream delivered, held apart from every round trip (no I/O here):
 * which transactions were notified at which slot, those notified at two slots, those still waiting
 * for a listing of the chain to show them at their slot, the forks found but not yet retracted,
 * and the signatures a gap check listed undelivered. The source (`../rpc.ts`) asks the node and
 * tells the ledger what it saw; the ledger decides what that means.
 *
 * Forks: a live notification names the bank that ran the transaction, and a validator may run one
 * transaction in banks of two forks and notify both, or only the abandoned one (seen on
 * solana-test-validator under load, at "confirmed": a settlement notified at slot 170 whose chain
 * history says 171, its event's time one second apart). So a live delivery counts only at the slot
 * the chain's listing shows, and only if it was notified at one slot. A transaction the chain lists
 * at another slot than the live stream's, or that the chain does not have at all (looked up by
 * signature once its slot is `orphanSlots` behind the node, past any blockhash's life, when no
 * listing showed it), is a fork (an `Orphan`): the source rewinds the history cursors to
 * FORK_MARGIN_SLOTS before it (`retract`), forgets the live deliveries from there on, reads the
 * stretch again and delivers the retraction with that read. Forks stay pending until that batch
 * commits (`retracted`). A live delivery awaiting its listing for longer than one check is kept in
 * the checkpoint's cursor (`_unconfirmed`, see `encodeCursor`) and looked up as soon as the source
 * starts again.
 */

/** A live delivery not on the chain at its slot: signature, live slot, the chain's slot if any. */
export type Orphan = [signature: string, liveSlot: number, chainSlot: number | undefined];

/** A transaction as a listing of the chain shows it (getSignaturesForAddress). */
export interface Listed {
  signature: string;
  slot: number;
}

/** A waiting delivery as the checkpoint keeps it: signature, live slot, its other slot if notified at two. */
export type Waiting = [signature: string, slot: number, twice?: number];

/**
 * How far before a fork a retraction rewinds: a chain transaction under the key the fork's version
 * took may have a lower slot (sibling banks) and have been read after it (missed live, found by the
 * gap check within a few checks), and must be read again once the fork's row is gone.
 */
export const FORK_MARGIN_SLOTS = 64;
/** Unconfirmed live deliveries kept in the checkpoint's cursor, at most. */
export const UNCONFIRMED_KEPT = 1_000;
/** Live transactions awaiting a listing's confirmation, at most (the oldest are dropped). */
export const UNVERIFIED_MAX = 100_000;

export class DeliveryLedger {
  /** Signatures the live stream delivered, with their slot, so a history read skips them. */
  private readonly live = new Map<string, number>();
  /** Live deliveries notified at two slots: the lower one. */
  private readonly twice = new Map<string, number>();
  /** Live deliveries no listing has shown at their slot yet, with the gap checks they survived. */
  private readonly awaiting = new Map<string, { slot: number; checks: number }>();
  /** Forks found whose retraction has not committed yet (a failed reconcile keeps them here). */
  private readonly pending = new Map<string, Orphan>();
  /** Signatures a gap check listed that the live stream had not delivered yet. */
  private suspects = new Set<string>();
  /** The newest slot a live notification (or the node, asked by the gap check) named. */
  liveSlot = 0;

  /**
   * `confirming`: whether a gap check runs. Only it confirms (or retracts) waiting deliveries;
   * without it nothing would empty that map, so deliveries are not kept waiting.
   */
  constructor(private readonly confirming: boolean) {}

  /** A live notification named `slot`. */
  sawSlot(slot: number): void {
    this.liveSlot = Math.max(this.liveSlot, slot);
  }

  /** A live transaction went into the store at `slot` (a second slot marks it notified twice). */
  delivered(signature: string, slot: number): void {
    const at = this.live.get(signature);
    if (at === undefined) this.live.set(signature, slot);
    else if (at !== slot) this.twice.set(signature, Math.min(at, slot, this.twice.get(signature) ?? at));
    if (this.confirming && !this.awaiting.has(signature)) {
      this.awaiting.set(signature, { slot, checks: 0 });
      if (this.awaiting.size > UNVERIFIED_MAX) this.awaiting.delete(this.awaiting.keys().next().value as string);
    }
  }

  /** Whether the live stream delivered this signature at all (at whatever slot). */
  wasDelivered(signature: string): boolean {
    return this.live.has(signature);
  }

  /** Whether the live stream delivered a listed transaction at its listed slot, and at that slot only. */
  deliveredAt(x: Listed): boolean {
    return this.live.get(x.signature) === x.slot && !this.twice.has(x.signature);
  }

  /** `deliveredAt`, and if so the delivery is confirmed: it waits no more. */
  confirm(x: Listed): boolean {
    const ok = this.deliveredAt(x);
    if (ok) this.awaiting.delete(x.signature);
    return ok;
  }

  /** A listed transaction the live stream delivered, but not (only) at the listed slot. */
  forkOf(x: Listed): Orphan | null {
    const at = this.live.get(x.signature);
    if (at === undefined || this.confirm(x)) return null;
    return [x.signature, Math.min(at, this.twice.get(x.signature) ?? at), x.slot];
  }

  /** Whether this delivery still waits for a listing (neither confirmed nor retracted). */
  isWaiting(signature: string): boolean {
    return this.awaiting.has(signature);
  }

  hasWaiting(): boolean {
    return this.awaiting.size > 0;
  }

  /** A gap check ran: every waiting delivery survived one more. */
  checked(): void {
    for (const u of this.awaiting.values()) u.checks++;
  }

  /**
   * Waiting deliveries to look up by signature: those `orphanSlots` behind the newest live slot
   * (all of them with `anyAge`), forks pending aside.
   */
  due(orphanSlots: number, anyAge: boolean): Listed[] {
    const out: Listed[] = [];
    for (const [signature, u] of this.awaiting) {
      if (this.pending.has(signature)) continue;
      if (anyAge || u.slot + orphanSlots < this.liveSlot) out.push({ signature, slot: u.slot });
    }
    return out;
  }

  /**
   * What a lookup by signature found for a due delivery: the chain's slot, or undefined if the
   * chain does not have it. At the delivery's slot (notified once) it is confirmed; else a fork.
   */
  lookedUp(x: Listed, chainSlot: number | undefined): Orphan | null {
    const twice = this.twice.get(x.signature);
    if (chainSlot === x.slot && twice === undefined) {
      this.awaiting.delete(x.signature);
      return null;
    }
    return [x.signature, Math.min(x.slot, twice ?? x.slot), chainSlot];
  }

  /**
   * One program's listing after its cursor (newest first): the signatures not delivered at their
   * slot, and the one the cursor may move to, just older than the oldest undelivered (none past a
   * `full` page: older signatures beyond it were not looked at). Delivered ones are confirmed.
   */
  sweep(listed: Listed[], full: boolean): { undelivered: string[]; moveTo: Listed | undefined } {
    const undelivered: string[] = [];
    let oldest = -1;
    listed.forEach((x, i) => {
      if (this.confirm(x)) return;
      undelivered.push(x.signature);
      oldest = i;
    });
    return { undelivered, moveTo: oldest + 1 < listed.length && !full ? listed[oldest + 1] : undefined };
  }

  /**
   * The signatures a gap check lists undelivered that the previous check listed undelivered too:
   * missed by the live stream. What is missed starts the watch over; otherwise these are watched.
   */
  missed(undelivered: Set<string>): string[] {
    const missed = [...undelivered].filter((x) => this.suspects.has(x));
    this.suspects = missed.length ? new Set() : undelivered;
    return missed;
  }

  /** Delivered signatures below `slot`: no listing after a cursor at `slot` can show them again. */
  forgetBelow(slot: number): void {
    this.forget((s) => s < slot);
  }

  /** Delivered signatures from `slot` on: a history read after a cursor rewound before `slot` fetches them again. */
  forgetFrom(slot: number): void {
    this.forget((s) => s >= slot);
  }

  private forget(at: (slot: number) => boolean): void {
    for (const [signature, slot] of this.live) {
      if (!at(slot)) continue;
      this.live.delete(signature);
      this.twice.delete(signature);
    }
  }

  /**
   * Forks to retract: the slot the history cursors rewind before (FORK_MARGIN_SLOTS ahead of the
   * lowest slot concerned), and every fork that rewinding concerns: `found`, and the deliveries
   * notified at two slots from there on, which are forks too. They are pending until `retracted`,
   * and what the live stream said about them is forgotten, since the re-read replaces it.
   */
  retract(found: Orphan[]): { from: number; forks: Orphan[] } {
    const from = Math.min(...found.map(([, live, chain]) => Math.min(live, chain ?? live))) - FORK_MARGIN_SLOTS;
    const forks = [...found];
    for (const [signature, slot] of this.twice) if (slot >= from && !forks.some((o) => o[0] === signature)) forks.push([signature, slot, undefined]);
    for (const o of forks) {
      this.pending.set(o[0], o);
      this.live.delete(o[0]);
      this.twice.delete(o[0]);
      this.awaiting.delete(o[0]);
    }
    return { from, forks };
  }

  /** Forks found that this round cannot retract: kept for the next one. */
  keepPending(forks: Orphan[]): void {
    for (const o of forks) this.pending.set(o[0], o);
  }

  /** The retraction of these forks committed. */
  retracted(signatures: Iterable<string>): void {
    for (const signature of signatures) this.pending.delete(signature);
  }

  pendingForks(): Orphan[] {
    return [...this.pending.values()];
  }

  /** The deliveries that have waited for their listing longer than one gap check, for the checkpoint. */
  waiting(): Waiting[] {
    const out: Waiting[] = [];
    for (const [signature, u] of this.awaiting) {
      if (u.checks < 1) continue;
      const twice = this.twice.get(signature);
      out.push(twice === undefined ? [signature, u.slot] : [signature, u.slot, twice]);
      if (out.length >= UNCONFIRMED_KEPT) break;
    }
    return out;
  }

  /** The checkpoint's waiting deliveries, back after a restart: due for a lookup at once. */
  restore(waiting: Waiting[]): void {
    for (const [signature, slot, twice] of waiting) {
      this.awaiting.set(signature, { slot, checks: 1 });
      if (twice !== undefined) this.twice.set(signature, twice);
    }
  }
}

/** The checkpoint's cursor: each program's history cursor, and the waiting deliveries (`_unconfirmed`). */
export function encodeCursor(cursors: Map<string, string>, waiting: Waiting[]): string {
  const out: Record<string, unknown> = Object.fromEntries(cursors);
  if (waiting.length) out._unconfirmed = waiting;
  return JSON.stringify(out);
}

export function decodeCursor(text: string): { cursors: Map<string, string>; waiting: Waiting[] } {
  const parsed = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  return {
    cursors: new Map(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === "string")),
    waiting: (parsed._unconfirmed ?? []) as Waiting[],
  };
}
