/**
 * Live updates: what each subscription (GraphQL over SSE or WebSocket) is sent, fed by the
 * indexer's ChangeFeed. The store is read again, through ReadService, only for subscriptions a
 * ChangeSet concerns, and once per distinct read per change however many subscribers share it
 * (2,000 anonymous subscribers of one offer cost one read; the GraphQL layer then executes and
 * serialises that value once for them, graphql/shared-subscription-events.ts).
 *
 * Bounds: subscriptions per connection and per process; each subscriber holds at most
 * `queueLimit` undelivered values, coalesced by key (a state such as an offer keeps only its
 * latest value; lists such as fills drop their oldest when a slow consumer falls that far
 * behind); changes that arrive while one is being dispatched are merged into one. A subscription
 * made with a token ends (UNAUTHENTICATED) within `authRecheckMs` of the token being revoked or
 * expiring.
 */
import { mergeChanges, type ChangeFeed, type ChangeSet } from "../../indexer/changes";
import type { DerivedFill, PoolAggregate } from "../../indexer";
import type { Custody } from "../custody/custody";
import { ApiError } from "../api-error";
import type { BrowseParams } from "./params";
import { ReadService, type Offer } from "./read-service";
import { resolveViewer } from "./viewer";
import { Gauge, type Registry } from "prom-client";
import { LIVE_SHARES, LiveShares, type LiveShareLimits } from "./live-shares";
import { tokenBucketKey } from "../rate/caller-key";

/** The process's bounds; the per-caller shares are live-shares.ts's (LIVE_SHARES), overridable here too. */
export interface LiveLimits extends LiveShareLimits {
  /** Subscriptions one connection may hold at once (a WebSocket; an SSE request holds one). */
  maxPerConnection: number;
  /** Subscriptions this process serves at once, all connections together. */
  maxPerProcess: number;
  /** Undelivered values one subscriber may hold before the oldest are dropped. */
  queueLimit: number;
  /** How often the tokens of signed-in subscriptions are checked again (ms). */
  authRecheckMs: number;
}

export const LIVE_LIMITS: LiveLimits = { maxPerConnection: 25, maxPerProcess: 10_000, queueLimit: 64, authRecheckMs: 5_000, ...LIVE_SHARES };

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
}

/** The last value of a subscription that ended on an error (a revoked token, a vanished offer). */
export class LiveEnded {
  constructor(readonly error: ApiError) {}
}

/** One subscriber: an async iterator over its bounded, coalescing queue. */
export class LiveSubscription<T> implements AsyncIterableIterator<T | LiveEnded> {
  private readonly queue = new Map<string, T>();
  private waiter: ((r: IteratorResult<T | LiveEnded>) => void) | null = null;
  private ended: LiveEnded | null = null;
  private done = false;
  /** Values dropped because the consumer fell `queueLimit` behind. */
  dropped = 0;

  constructor(
    readonly topic: LiveTopic<T>,
    readonly connection: object,
    readonly authorization: string | null,
    private readonly limit: number,
    private readonly onDone: (s: LiveSubscription<T>) => void,
  ) {}

  get queued(): number {
    return this.queue.size;
  }

  push(key: string, value: T): void {
    if (this.done || this.ended) return;
    if (this.waiter) return this.wake({ value, done: false });
    // An undelivered value of the same key is replaced where it stands: the consumer gets the latest state once.
    this.queue.set(key, value);
    if (this.queue.size > this.limit) {
      this.queue.delete(this.queue.keys().next().value!);
      this.dropped++;
    }
  }

  /** Ends with `error` as the last value; what was still queued is not sent. */
  end(error: ApiError): void {
    if (this.done || this.ended) return;
    this.queue.clear();
    this.ended = new LiveEnded(error);
    if (this.waiter) this.finishWith({ value: this.ended, done: false });
  }

  /** Ends without an error (the server is closing). */
  finish(): void {
    if (this.done) return;
    this.finishWith({ value: undefined, done: true });
  }

  async next(): Promise<IteratorResult<T | LiveEnded>> {
    if (this.ended && !this.done) {
      this.finishWith(null);
      return { value: this.ended, done: false };
    }
    if (this.queue.size > 0) {
      const [key, value] = this.queue.entries().next().value!;
      this.queue.delete(key);
      return { value, done: false };
    }
    if (this.done) return { value: undefined, done: true };
    return new Promise((r) => (this.waiter = r));
  }

  async return(): Promise<IteratorResult<T | LiveEnded>> {
    this.finishWith({ value: undefined, done: true });
    return { value: undefined, done: true };
  }

  async throw(): Promise<IteratorResult<T | LiveEnded>> {
    return this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private wake(r: IteratorResult<T | LiveEnded>): void {
    const w = this.waiter;
    this.waiter = null;
    w?.(r);
  }

  private finishWith(last: IteratorResult<T | LiveEnded> | null): void {
    const first = !this.done;
    this.done = true;
    this.queue.clear();
    if (last) this.wake(last);
    if (first) this.onDone(this);
  }
}

export interface LiveUpdatesOptions {
  read: ReadService;
  feed: ChangeFeed;
  custody: Custody | null;
  limits?: Partial<LiveLimits>;
  log?: (e: unknown) => void;
  /** Where the subscription gauges go (the instance's Prometheus registry). */
  metrics?: Registry;
}

/** Who opens a subscription: the connection it runs on, the Authorization it was made with, the client's address group. */
export interface LiveCaller {
  connection: object;
  authorization: string | null;
  /** The address group (graphql/rate-limit.ts clientAddress); absent only for in-process callers, who share one. */
  address?: string;
}

export class LiveUpdates {
  readonly limits: LiveLimits;
  private readonly subs = new Set<LiveSubscription<unknown>>();
  private readonly perConnection = new WeakMap<object, number>();
  /** Each caller's share of the subscriptions and connections (live-shares.ts). */
  readonly shares: LiveShares;
  private readonly releases = new Map<LiveSubscription<unknown>, () => void>();
  /** Reads never served from ReadService's short-lived caches: a change must show at once. */
  private readonly fresh: ReadService;
  private pending: ChangeSet | null = null;
  private starting: LiveSubscription<unknown>[] = [];
  private running: Promise<void> | null = null;
  private readonly stopFeed: () => void;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** Store reads run for subscriptions (one per distinct read per change, however many subscribers share it). */
  private reads = 0;
  /**
   * Executions of subscription documents over the values sent, and answers reused instead: the
   * GraphQL layer counts them here (graphql/shared-subscription-events.ts).
   */
  readonly events = { executions: 0, shared: 0 };

  constructor(private readonly o: LiveUpdatesOptions) {
    this.limits = { ...LIVE_LIMITS, ...o.limits };
    this.shares = new LiveShares(this.limits);
    const read = o.read;
    this.fresh = new ReadService({
      db: read.db,
      now: () => read.now(),
      publicBaseUrl: read.publicBaseUrl,
      anonymousTtlMs: 0,
      embedTtlMs: 0,
      settingsTtlMs: 0,
      clockCacheMs: 0,
      blockedWallets: (w) => read.blockedWallets(w),
    });
    this.stopFeed = o.feed.subscribe((c) => this.onChange(c));
    this.timer = setInterval(() => void this.recheckTokens(), this.limits.authRecheckMs);
    this.timer.unref();
    if (o.metrics) {
      const stats = () => this.stats();
      // A second app on the same instance's registry reports its own subscriptions instead.
      for (const name of ["offers_live_subscriptions", "offers_live_queued_values"]) o.metrics.removeSingleMetric(name);
      new Gauge({
        name: "offers_live_subscriptions",
        help: "GraphQL subscriptions open in this process (SSE and WebSocket)",
        registers: [o.metrics],
        collect() {
          this.set(stats().subscriptions);
        },
      });
      new Gauge({
        name: "offers_live_queued_values",
        help: "Values waiting in subscribers' queues (a lasting high figure: consumers that do not keep up)",
        registers: [o.metrics],
        collect() {
          this.set(stats().queued);
        },
      });
    }
  }

  /**
   * Opens a subscription; ApiError 429 (this connection, address or token holds its share) or 503
   * (the process holds all it may, or is closing): the caller's shares first, the process's cap last.
   */
  subscribe<T>(topic: LiveTopic<T>, caller: LiveCaller): LiveSubscription<T> {
    if (this.closed) throw new ApiError(503, "live updates are shutting down on this server; reconnect");
    const held = this.perConnection.get(caller.connection) ?? 0;
    if (held >= this.limits.maxPerConnection)
      throw new ApiError(429, `at most ${this.limits.maxPerConnection} subscriptions per connection; complete one first`, 1);
    const holder = { address: caller.address ?? "unknown", token: caller.authorization ? tokenBucketKey(caller.authorization) : null };
    this.shares.checkSubscription(holder);
    if (this.subs.size >= this.limits.maxPerProcess) throw new ApiError(503, "this server holds as many subscriptions as it may; retry later");
    const sub = new LiveSubscription<T>(topic, caller.connection, caller.authorization, this.limits.queueLimit, (s) =>
      this.remove(s as LiveSubscription<unknown>),
    );
    this.releases.set(sub as LiveSubscription<unknown>, this.shares.takeSubscription(holder));
    this.subs.add(sub as LiveSubscription<unknown>);
    this.perConnection.set(caller.connection, held + 1);
    if (topic.initial) {
      this.starting.push(sub as LiveSubscription<unknown>);
      this.schedule();
    }
    return sub;
  }

  /**
   * Subscriptions open now, values waiting in their queues, values dropped so far by the open ones;
   * since start: store reads run, documents executed over values sent, answers reused.
   */
  stats(): { subscriptions: number; queued: number; maxQueued: number; dropped: number; reads: number; executions: number; sharedExecutions: number } {
    let queued = 0,
      maxQueued = 0,
      dropped = 0;
    for (const s of this.subs) {
      queued += s.queued;
      maxQueued = Math.max(maxQueued, s.queued);
      dropped += s.dropped;
    }
    return {
      subscriptions: this.subs.size,
      queued,
      maxQueued,
      dropped,
      reads: this.reads,
      executions: this.events.executions,
      sharedExecutions: this.events.shared,
    };
  }

  /** Ends every subscription (their streams complete) and stops listening to the feed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopFeed();
    clearInterval(this.timer);
    this.starting = [];
    for (const s of [...this.subs]) s.finish();
    await this.running;
  }

  private remove(s: LiveSubscription<unknown>): void {
    if (!this.subs.delete(s)) return;
    this.releases.get(s)?.();
    this.releases.delete(s);
    const n = (this.perConnection.get(s.connection) ?? 1) - 1;
    if (n > 0) this.perConnection.set(s.connection, n);
    else this.perConnection.delete(s.connection);
  }

  private onChange(c: ChangeSet): void {
    if (this.closed || this.subs.size === 0) return;
    this.pending = this.pending ? mergeChanges(this.pending, c) : c;
    this.schedule();
  }

  private schedule(): void {
    this.running ??= this.drain().finally(() => {
      this.running = null;
      // Work that arrived between the loop's last check and here would otherwise wait for the next change.
      if (this.pending || this.starting.length > 0) this.schedule();
    });
  }

  /** One change (or merged changes) at a time, in order; subscriptions starting meanwhile read their current state. */
  private async drain(): Promise<void> {
    await Promise.resolve();
    while (this.pending || this.starting.length > 0) {
      const memo = new Map<string, Promise<unknown>>();
      const reader: Reader = <T>(key: string, load: (read: ReadService) => Promise<T>) => {
        let p = memo.get(key) as Promise<T> | undefined;
        if (!p) {
          this.reads++;
          memo.set(key, (p = load(this.fresh)));
        }
        return p;
      };
      const change = this.pending;
      this.pending = null;
      const starting = new Set(this.starting.splice(0));
      const jobs: Promise<void>[] = [];
      // A subscription reading its current state now sees this change in it; it needs no second read.
      // "Everything changed" (a shared feed that reconnected, or a change set too big to announce)
      // names nothing: a state subscription sends its current state again; a list one cannot know
      // what it missed (docs/api-guide.md, "Live updates").
      if (change?.everything) {
        for (const s of this.subs) if (!starting.has(s) && s.topic.initial) jobs.push(this.deliver(s, () => s.topic.initial!(reader)));
      } else if (change)
        for (const s of this.subs) if (!starting.has(s) && s.topic.concerns(change)) jobs.push(this.deliver(s, () => s.topic.load(change, reader)));
      for (const s of starting) if (this.subs.has(s)) jobs.push(this.deliver(s, () => s.topic.initial!(reader)));
      await Promise.all(jobs);
    }
  }

  private async deliver(s: LiveSubscription<unknown>, load: () => Promise<Delivery<unknown>[]>): Promise<void> {
    try {
      for (const [k, v] of await load()) s.push(k, v);
    } catch (e) {
      if (e instanceof ApiError) s.end(e);
      else this.o.log?.(e);
    }
  }

  /** Each distinct token of the open subscriptions is checked once per round; a refused one ends its subscriptions. */
  private async recheckTokens(): Promise<void> {
    const byAuth = new Map<string, LiveSubscription<unknown>[]>();
    for (const s of this.subs) if (s.authorization) byAuth.set(s.authorization, [...(byAuth.get(s.authorization) ?? []), s]);
    for (const [authorization, subs] of byAuth) {
      try {
        await resolveViewer(this.o.custody, authorization);
      } catch (e) {
        if (e instanceof ApiError) for (const s of subs) s.end(e);
        else this.o.log?.(e);
      }
    }
  }
}

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
