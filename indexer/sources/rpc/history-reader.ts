/**
 * The programs' transaction history over RPC (getSignaturesForAddress + getTransaction), read after
 * a cursor, at one finality: "finalized" if the source is, else "confirmed".
 *
 * History cursor: one signature per program, the newest one a history read returned. Live events
 * never move it: an event received right after a reconnect says nothing about the ones missed
 * before it. A read lists the signatures after the cursor and fetches only those the live stream
 * did not deliver (the delivery ledger says which), so a healthy stream costs one
 * getSignaturesForAddress per program. The cursor is stored with the checkpoint as JSON
 * (`{"<program>": "<signature>"}`, `encodeCursor`).
 */
import type { Commitment, ConfirmedSignatureInfo, Connection, Finality, PublicKey } from "@solana/web3.js";
import type { TxEvent } from "../types";
import type { DeliveryLedger, Listed, Orphan } from "./delivery-ledger";

/** A history read: events to deliver, and where each program's cursor moves once they are. */
export interface History {
  events: TxEvent[];
  newest: Map<string, string>;
  /** The newest listed slot: delivered signatures below it cannot be listed again. */
  floor: number;
  /** Listed transactions the live stream delivered at another slot, or at two (see "Forks" in the ledger). */
  forked: Orphan[];
}

/** One program's signatures after its cursor, newest first, and the cursor they were listed after. */
export interface Listing {
  id: string;
  from: string | undefined;
  listed: ConfirmedSignatureInfo[];
}

/** The most a listing page holds (getSignaturesForAddress). */
export const PAGE = 1000;
/** Signatures per getSignatureStatuses call, at most. */
const STATUS_CHUNK = 256;

export class HistoryReader {
  /** Per program (base58): newest signature a history read returned. */
  private cursors = new Map<string, string>();
  readonly finality: Finality;

  constructor(
    private readonly connection: Connection,
    private readonly programs: PublicKey[],
    commitment: Commitment,
    private readonly ledger: DeliveryLedger,
  ) {
    this.finality = commitment === "finalized" ? "finalized" : "confirmed";
  }

  cursorOf(program: string): string | undefined {
    return this.cursors.get(program);
  }

  /** The cursors, with `moved` ones replaced (those a delivery is about to make). */
  positions(moved?: Map<string, string>): Map<string, string> {
    return moved ? new Map([...this.cursors, ...moved]) : this.cursors;
  }

  /** Moves these programs' cursors (a read's `newest` once delivered, or a gap check's moves). */
  move(moved: Map<string, string>): void {
    for (const [k, v] of moved) this.cursors.set(k, v);
  }

  /** The checkpoint's cursors, back after a restart. */
  restore(cursors: Map<string, string>): void {
    this.cursors = cursors;
  }

  /**
   * One program's signatures after its cursor, one page (the gap check's and caughtUpTo's
   * question); `minContextSlot` makes the node answer only once it has seen that slot.
   */
  async listAfterCursor(program: PublicKey, minContextSlot?: number): Promise<Listing> {
    const id = program.toBase58();
    const from = this.cursors.get(id);
    const options = minContextSlot === undefined ? { until: from, limit: PAGE } : { until: from, limit: PAGE, minContextSlot };
    return { id, from, listed: await this.connection.getSignaturesForAddress(program, options, this.finality) };
  }

  /**
   * Moves each program's cursor back to its newest signature older than `slot`, unless the cursor
   * is older already (none older: no cursor, the next read starts over, up to its limit). The
   * caller forgets the live deliveries from `slot` on, so the next read fetches them again.
   */
  async rewindBefore(slot: number): Promise<void> {
    for (const program of this.programs) {
      const id = program.toBase58();
      const cur = this.cursors.get(id);
      let before: string | undefined;
      let passed = cur === undefined;
      let to: string | null = null;
      for (;;) {
        const page = await this.connection.getSignaturesForAddress(program, { before, limit: PAGE }, this.finality);
        for (const x of page) {
          if (x.signature === cur) passed = true;
          if (x.slot < slot) {
            to = x.signature;
            break;
          }
        }
        if (to !== null || page.length < PAGE) break;
        before = page[page.length - 1].signature;
      }
      if (to === null) this.cursors.delete(id);
      else if (passed) this.cursors.set(id, to);
    }
  }

  /**
   * Due waiting deliveries looked up by signature (getSignatureStatuses): those the chain does not
   * have at their slot, as forks; the ledger confirms the others.
   */
  async orphans(due: Listed[]): Promise<Orphan[]> {
    const out: Orphan[] = [];
    for (let i = 0; i < due.length; i += STATUS_CHUNK) {
      const chunk = due.slice(i, i + STATUS_CHUNK);
      const st = await this.connection.getSignatureStatuses(
        chunk.map((x) => x.signature),
        { searchTransactionHistory: true },
      );
      chunk.forEach((x, j) => {
        const fork = this.ledger.lookedUp(x, st.value[j]?.slot);
        if (fork) out.push(fork);
      });
    }
    return out;
  }

  /**
   * Transactions of the programs after each program's cursor (all of them without one, up to
   * `limit` per program), oldest first, leaving out those the live stream already delivered at
   * their slot, with the newest signature listed per program (where the cursors move once these
   * are delivered).
   */
  async read(limit: number): Promise<History> {
    const listed = new Map<string, ConfirmedSignatureInfo>();
    const newest = new Map<string, string>();
    for (const program of this.programs) {
      const id = program.toBase58();
      const until = this.cursors.get(id);
      const pages: ConfirmedSignatureInfo[][] = [];
      let before: string | undefined;
      let got = 0;
      for (;;) {
        const page = await this.connection.getSignaturesForAddress(program, { before, until, limit: PAGE }, this.finality);
        pages.push(page);
        got += page.length;
        // The limit bounds a first read (no cursor); after a gap, read back to the cursor whatever its length.
        if (page.length < PAGE || (!until && got >= limit)) break;
        before = page[page.length - 1].signature;
      }
      const all = pages.flat();
      if (all.length) newest.set(id, all[0].signature);
      // Newest first from the node: reversed, so the order within a slot is kept when sorted.
      for (const s of all.reverse()) if (!listed.has(s.signature)) listed.set(s.signature, s);
    }
    const ordered = [...listed.values()].sort((a, b) => a.slot - b.slot);
    const events: TxEvent[] = [];
    const forked: Orphan[] = [];
    for (const s of ordered) {
      // Not a fork and seen live: delivered at the listed slot (forkOf confirmed it).
      const fork = this.ledger.forkOf(s);
      if (fork) forked.push(fork);
      else if (this.ledger.wasDelivered(s.signature)) continue;
      events.push(await this.transaction(s.signature));
    }
    return { events, newest, floor: ordered.length ? ordered[ordered.length - 1].slot : 0, forked };
  }

  /** One transaction as the chain has it: the authority on its slot and events. */
  private async transaction(signature: string): Promise<TxEvent> {
    const get = () => this.connection.getTransaction(signature, { commitment: this.finality, maxSupportedTransactionVersion: 0 });
    let tx = await get();
    // Listed but not yet readable happens for a moment on some nodes.
    for (let i = 0; !tx && i < 10; i++) {
      await new Promise((r) => setTimeout(r, 200));
      tx = await get();
    }
    if (!tx) throw new Error(`getTransaction ${signature}: not found at ${this.finality}`);
    return {
      signature,
      slot: tx.slot,
      writeVersion: 0,
      err: tx.meta?.err ? JSON.stringify(tx.meta.err) : null,
      logs: tx.meta?.logMessages ?? [],
      fromHistory: true,
    };
  }
}
