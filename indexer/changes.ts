/**
 * What one applied write changed, announced after its database transaction commits: the
 * indexer's side of live updates. Consumers (read caches, GraphQL subscriptions, other API
 * processes through a shared feed) decide from it whether anything they hold or show moved,
 * without reading the store first.
 */
import type { Batch } from "./sources/types";
import type { AccountTable } from "./store/schema";
import type { DecodedEvents } from "./decode";

export interface ChangeSet {
  /** The indexed slot after this write (the checkpoint's slot). */
  slot: number;
  /** Offers whose row, positions, fills, close or settlements changed. */
  offers: string[];
  /** Position accounts written or closed. */
  positions: string[];
  /** Fill events recorded (an offer's fills list grew). */
  fills: { offer: string; taker: string; revision: number }[];
  /** Wallets whose own offers or positions changed (creators and takers): per-viewer feeds filter on it. */
  wallets: string[];
  /** Pools whose row, outcomes, picks or participants changed. */
  pools: string[];
  contracts: string[];
  /** Whether the program Config changed (settings, treasury). */
  config: boolean;
  /**
   * Set when what changed is not known (a listener of a shared feed reconnected and may have missed
   * announcements): consumers treat everything as changed (drop caches, re-read what they show).
   */
  everything?: boolean;
}

/**
 * Union of two change sets (the later slot): what a consumer that fell behind, or a notification
 * still in flight, must treat as changed.
 */
export function mergeChanges(a: ChangeSet, b: ChangeSet): ChangeSet {
  const u = (x: string[], y: string[]) => [...new Set([...x, ...y])];
  const fills = new Map(a.fills.map((f) => [`${f.offer}:${f.revision}`, f]));
  for (const f of b.fills) fills.set(`${f.offer}:${f.revision}`, f);
  return {
    slot: Math.max(a.slot, b.slot),
    offers: u(a.offers, b.offers),
    positions: u(a.positions, b.positions),
    fills: [...fills.values()],
    wallets: u(a.wallets, b.wallets),
    pools: u(a.pools, b.pools),
    contracts: u(a.contracts, b.contracts),
    config: a.config || b.config,
    ...(a.everything || b.everything ? { everything: true } : {}),
  };
}

export type ChangeListener = (change: ChangeSet) => void;

/** Where changes are announced and heard: in-process here; a shared implementation spans processes. */
export interface ChangeFeed {
  publish(change: ChangeSet): void | Promise<void>;
  /** Returns the unsubscribe function. Listeners must not throw (a throw is isolated and dropped). */
  subscribe(listener: ChangeListener): () => void;
  close?(): Promise<void>;
}

/** One process: listeners are called synchronously, in subscription order. */
export class LocalChangeFeed implements ChangeFeed {
  private readonly listeners = new Set<ChangeListener>();

  publish(change: ChangeSet): void {
    for (const l of this.listeners) {
      try {
        l(change);
      } catch {
        // A consumer's failure must not stop the indexer or the other consumers.
      }
    }
  }

  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): number {
    return this.listeners.size;
  }
}

/** The row fields a change set is built from (decoded rows of the accepted account updates). */
export interface WrittenRow {
  table: AccountTable;
  address: string;
  row: Record<string, unknown> | null;
}

/** What the event rows a retraction deleted named (indexer/store/writer.ts): changed too. */
export interface Retracted {
  offers: Iterable<string>;
  wallets: Iterable<string>;
  positions: Iterable<string>;
  pools: Iterable<string>;
}

export function changeSetOf(last: Batch, written: WrittenRow[], events: DecodedEvents, retracted?: Retracted): ChangeSet {
  const offers = new Set<string>(retracted?.offers);
  const positions = new Set<string>(retracted?.positions);
  const wallets = new Set<string>(retracted?.wallets);
  const pools = new Set<string>(retracted?.pools);
  const contracts = new Set<string>();
  let config = false;
  const str = (v: unknown) => (typeof v === "string" && v ? v : null);
  for (const w of written) {
    const r = w.row ?? {};
    switch (w.table) {
      case "offers":
        offers.add(w.address);
        if (str(r.creator)) wallets.add(r.creator as string);
        break;
      case "positions":
        positions.add(w.address);
        if (str(r.offer)) offers.add(r.offer as string);
        if (str(r.taker)) wallets.add(r.taker as string);
        break;
      case "pools":
        pools.add(w.address);
        break;
      case "pool_wagers":
      case "pool_participants":
        if (str(r.pool)) pools.add(r.pool as string);
        break;
      case "contracts":
        contracts.add(w.address);
        break;
      case "config":
        config = true;
        break;
    }
  }
  for (const f of events.fills) {
    offers.add(f.offer);
    wallets.add(f.taker);
  }
  for (const c of events.closes) offers.add(c.offer);
  for (const s of events.settlements) {
    offers.add(s.offer);
    positions.add(s.position);
  }
  return {
    slot: last.slot,
    offers: [...offers],
    positions: [...positions],
    fills: events.fills.map((f) => ({ offer: f.offer, taker: f.taker, revision: f.revision })),
    wallets: [...wallets],
    pools: [...pools],
    contracts: [...contracts],
    config,
  };
}
