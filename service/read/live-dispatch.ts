/**
 * The change-driven dispatch of live updates: each ChangeSet of the indexer's feed goes to the
 * subscriptions it may concern (decided without reading), and the store is read again, through a
 * ReadService whose caches are off, once per distinct read per change however many subscribers
 * share it (2,000 anonymous subscribers of one offer cost one read). One change (or changes merged
 * while one is dispatched) at a time, in order; subscriptions just opened read their current state
 * in the same round. A state that changes with the clock alone (a book at its contract's cutoff)
 * has no write to announce it: every `clockCheckMs`, while some subscription names a deadline,
 * the chain's time is read once and the subscriptions whose deadline passed are read again.
 */
import { mergeChanges, type ChangeFeed, type ChangeSet } from "../../indexer/changes";
import { ApiError } from "../api-error";
import { ReadService } from "./read-service";
import type { Delivery, Reader } from "./live-topics";
import type { LiveSubscription } from "./live-subscription";

export class LiveDispatch {
  /** Reads never served from ReadService's short-lived caches: a change must show at once. */
  private readonly fresh: ReadService;
  private pending: ChangeSet | null = null;
  private starting: LiveSubscription<unknown>[] = [];
  private due = new Set<LiveSubscription<unknown>>();
  private readonly clockTimer: ReturnType<typeof setInterval>;
  private clockReading = false;
  private running: Promise<void> | null = null;
  private readonly stopFeed: () => void;
  private closed = false;
  /** Store reads run for subscriptions (one per distinct read per change, however many subscribers share it). */
  reads = 0;

  constructor(
    read: ReadService,
    feed: ChangeFeed,
    /** The open subscriptions (the registry's set, read at each change). */
    private readonly subs: ReadonlySet<LiveSubscription<unknown>>,
    private readonly log?: (e: unknown) => void,
    clockCheckMs = 1_000,
  ) {
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
    this.stopFeed = feed.subscribe((c) => this.onChange(c));
    this.clockTimer = setInterval(() => void this.checkClock(), clockCheckMs);
    this.clockTimer.unref?.();
  }

  /** Subscriptions whose deadline the chain's clock passed go to the next round. */
  private async checkClock(): Promise<void> {
    if (this.closed || this.clockReading) return;
    const waiting = [...this.subs].filter((s) => s.topic.clock?.deadline() != null);
    if (waiting.length === 0) return;
    this.clockReading = true;
    try {
      const now = Number(await this.fresh.now());
      for (const s of waiting) if (s.topic.clock!.deadline()! <= now) this.due.add(s);
      if (this.due.size > 0) this.schedule();
    } catch (e) {
      this.log?.(e);
    } finally {
      this.clockReading = false;
    }
  }

  /** A subscription just opened: it reads its current state in the next round. */
  start(s: LiveSubscription<unknown>): void {
    this.starting.push(s);
    this.schedule();
  }

  /** Stops listening to the feed and forgets the subscriptions not yet started; resolves when the round under way ends. */
  close(): Promise<void> {
    this.closed = true;
    this.stopFeed();
    clearInterval(this.clockTimer);
    this.starting = [];
    this.due.clear();
    return this.running ?? Promise.resolve();
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
      if (this.pending || this.starting.length > 0 || this.due.size > 0) this.schedule();
    });
  }

  /** One change (or merged changes) at a time, in order; subscriptions starting meanwhile read their current state. */
  private async drain(): Promise<void> {
    await Promise.resolve();
    while (this.pending || this.starting.length > 0 || this.due.size > 0) {
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
      const due = [...this.due].filter((s) => !starting.has(s) && this.subs.has(s));
      this.due.clear();
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
      for (const s of due) jobs.push(this.deliver(s, () => s.topic.clock!.reached(reader)));
      await Promise.all(jobs);
    }
  }

  private async deliver(s: LiveSubscription<unknown>, load: () => Promise<Delivery<unknown>[]>): Promise<void> {
    try {
      for (const [k, v] of await load()) s.push(k, v);
    } catch (e) {
      if (e instanceof ApiError) s.end(e);
      else this.log?.(e);
    }
  }
}
