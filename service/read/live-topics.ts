/**
 * What each subscription follows: the topics the API offers (one offer, browse filters, an offer's
 * fills, the caller's positions and settlements, a pool, the indexed slot). A topic decides from a
 * ChangeSet alone, without reading, whether a change may concern it, and reads through the
 * dispatch's Reader (./live-dispatch.ts), so subscribers that need the same read share it.
 */
import type { ChangeSet } from "../../indexer/changes";
import type { DerivedFill, PoolAggregate } from "../../indexer";
import { ApiError } from "../api-error";
import type { BrowseParams } from "./params";
import { contractBook, contractsOfOffers, type Book } from "./book";
import type { ReadService, Offer } from "./read-service";

/** Reads shared by every subscription during one dispatch: `key` names the read and its parameters. */
export type Reader = <T>(key: string, load: (read: ReadService) => Promise<T>) => Promise<T>;

/** A value to send, with the key it is coalesced under while undelivered. */
export type Delivery<T> = readonly [key: string, value: T];

/** What one subscription follows. */
export interface LiveTopic<T> {
  /** The current state, sent first; throws ApiError (404) when the thing does not exist. */
  initial?: (r: Reader) => Promise<Delivery<T>[]>;
  /** Whether a change may concern the subscription: synchronous, no store read. */
  concerns: (c: ChangeSet) => boolean;
  /** What to send for a change that concerns it. */
  load: (c: ChangeSet, r: Reader) => Promise<Delivery<T>[]>;
  /**
   * For a state that changes with the clock alone, no write announcing it (a contract's cutoff):
   * the chain time (seconds) from which it must be read again, and what to send once it passed.
   */
  clock?: { deadline: () => number | null; reached: (r: Reader) => Promise<Delivery<T>[]> };
}

/** Settlement marks mySettlements remembers: a subscription held for months must not grow without bound. */
const SETTLED_KEYS_KEPT = 1_000;

/** The subscriptions the API offers; `wallet` is the signed-in caller's (null: anonymous). */
export const liveTopics = {
  /** One offer as the query returns it: its current state, then after each change to it, its contract or the settings. */
  offer(address: string, wallet: string | null): LiveTopic<Offer> {
    let contract: string | null = null;
    const load = async (r: Reader): Promise<Delivery<Offer>[]> => {
      const o = await r(`offer:${address}:${wallet ?? ""}`, (read) => read.offer(address, wallet));
      if (!o) throw new ApiError(404, "offer not found");
      contract = o.contract.address;
      return [["offer", o]];
    };
    return {
      initial: load,
      concerns: (c) => c.offers.includes(address) || c.config || (contract !== null && c.contracts.includes(contract)),
      load: (_c, r) => load(r),
    };
  },

  /** Offers created or changed that pass the browse filters (nothing first: the list itself is a query). */
  offers(filters: Partial<BrowseParams>, wallet: string | null): LiveTopic<Offer> {
    const f = { sport: filters.sport, query: filters.query, status: filters.status, view: filters.view };
    return {
      concerns: (c) => c.offers.length > 0,
      load: async (c, r) =>
        (await r(`among:${JSON.stringify(f)}:${wallet ?? ""}`, (read) => read.offersAmong(c.offers, f, wallet))).map((o) => [o.address, o] as const),
    };
  },

  /** An offer's new fills, oldest first (after a check that the offer exists). */
  offerFills(address: string): LiveTopic<DerivedFill> {
    return {
      initial: async (r) => {
        if (!(await r(`offer:${address}:`, (read) => read.offer(address, null)))) throw new ApiError(404, "offer not found");
        return [];
      },
      concerns: (c) => c.fills.some((f) => f.offer === address),
      load: async (c, r) => {
        const revisions = c.fills.filter((f) => f.offer === address).map((f) => f.revision);
        const fills = await r(`fills:${address}:${revisions.join(",")}`, (read) => read.fillsAt(address, revisions));
        return fills.map((f) => [f.revision, f] as const);
      },
    };
  },

  /** The caller's offers (created or taken) whose state changed, each with the caller's viewer block. */
  myPositions(wallet: string): LiveTopic<Offer> {
    return {
      concerns: (c) => c.wallets.includes(wallet),
      load: async (c, r) => (await mine(c, r, wallet)).map((o) => [o.address, o] as const),
    };
  },

  /**
   * The caller's offers on which a settlement reached the caller: as taker, the caller's position
   * settled or refunded; as creator, one more of the offer's positions settled. Each is sent once.
   */
  mySettlements(wallet: string): LiveTopic<Offer> {
    const sent = new Set<string>();
    return {
      concerns: (c) => c.wallets.includes(wallet) && c.positions.length > 0,
      load: async (c, r) => {
        const out: Delivery<Offer>[] = [];
        for (const o of await mine(c, r, wallet)) {
          const p = o.viewer.position;
          const mark =
            o.viewer.role === "taker" && p && p.settledAt !== null && c.positions.includes(p.address)
              ? `${o.address}:${p.status}`
              : o.viewer.role === "creator" && o.viewer.settlement && o.viewer.settlement.settledPositionCount > 0
                ? `${o.address}:${o.viewer.settlement.settledPositionCount}`
                : null;
          if (mark === null || sent.has(mark)) continue;
          sent.add(mark);
          if (sent.size > SETTLED_KEYS_KEPT) sent.delete(sent.values().next().value!);
          out.push([o.address, o]);
        }
        return out;
      },
    };
  },

  /** A public pool's aggregate (the embed's data, never participants): now, then after each change to the pool. */
  pool(identifier: string): LiveTopic<PoolAggregate> {
    let address: string | null = null;
    const load = async (r: Reader): Promise<Delivery<PoolAggregate>[]> => {
      const p = await r(`pool:${identifier}`, (read) => read.poolAggregate(identifier));
      if (!p) throw new ApiError(404, "Poll not found");
      address = p.id;
      return [["pool", p]];
    };
    return { initial: load, concerns: (c) => address !== null && c.pools.includes(address), load: (_c, r) => load(r) };
  },

  /**
   * A contract's book to `depth` levels, as `wallet` may take it: now, then each time its revision
   * changes (a take, a close, a new offer, the contract's status, the cutoff passing), never the
   * same revision twice. A change names offers, not their contracts: one read per change, shared
   * by every book subscription, finds the contracts of the changed offers.
   */
  book(contract: string, depth: number, wallet: string | null): LiveTopic<Book> {
    let sent: string | null = null;
    let cutoff: number | null = null;
    const load = async (r: Reader): Promise<Delivery<Book>[]> => {
      const first = sent === null;
      const [book, c] = await Promise.all([
        r(`book:${contract}:${depth}:${wallet ?? ""}`, (read) => contractBook(read, contract, depth, wallet)),
        // The cutoff, once: a contract's cutoff never moves (a status change is a write, announced).
        first ? r(`contract:${contract}`, (read) => read.contractsByAddress([contract]).then((m) => m.get(contract) ?? null)) : null,
      ]);
      if (first && c && c.status === "Open") cutoff = Math.floor(Date.parse(c.cutoffAt) / 1000);
      if (book.revision === sent) return [];
      sent = book.revision;
      return [["book", book]];
    };
    return {
      initial: load,
      concerns: (c) => c.contracts.includes(contract) || c.offers.length > 0,
      load: async (c, r) => {
        if (c.contracts.includes(contract)) return load(r);
        const touched = await r(`contractsOf:${[...c.offers].sort().join(",")}`, (read) => contractsOfOffers(read.db, c.offers));
        return touched.has(contract) ? load(r) : [];
      },
      clock: {
        deadline: () => cutoff,
        reached: (r) => {
          cutoff = null;
          return load(r);
        },
      },
    };
  },

  /** The highest slot the indexer has applied: now, then after every applied write (no store read). */
  indexedSlot(): LiveTopic<string> {
    return {
      initial: async (r) => [["slot", String(await r("slot", (read) => read.indexedSlot()))]],
      concerns: () => true,
      load: async (c) => [["slot", String(c.slot)]],
    };
  },
};

/** The changed offers the caller created or holds a position on, read once per change for every subscription of that caller. */
async function mine(c: ChangeSet, r: Reader, wallet: string): Promise<Offer[]> {
  const offers = await r(`among:{}:${wallet}`, (read) => read.offersAmong(c.offers, {}, wallet));
  return offers.filter((o) => o.viewer.role !== "none");
}
