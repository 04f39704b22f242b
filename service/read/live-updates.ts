/**
 * Live updates: the registry of every subscription (GraphQL over SSE or WebSocket) this process
 * serves, and its bounds. A subscription opens here (the connection's, the caller's and the
 * process's limits checked), is fed by the change-driven dispatch (./live-dispatch.ts: shared reads
 * per change), queues what it is sent in its own bounded, coalescing queue
 * (./live-subscription.ts), and ends within `authRecheckMs` of its token being revoked or expiring
 * (./live-token-checks.ts). What each subscription follows is ./live-topics.ts; each caller's share
 * of the capacity is ./live-shares.ts. A subscription whose client goes away is kept, still fed, for
 * `resumeWindowMs`: a client that comes back with the id of the last event it saw (SSE's
 * Last-Event-ID, the fields' `after` argument) gets every value after it, or, when the stream is
 * gone or its log no longer holds them, a re-read signal first (docs/api-guide.md, "Resuming"). The GraphQL layer executes and serialises a value once for
 * the subscribers it shares (graphql/shared-subscription-events.ts).
 */
import type { ChangeFeed } from "../../indexer/changes";
import type { Custody } from "../custody/custody";
import { ApiError } from "../api-error";
import type { ReadService } from "./read-service";
import { Gauge, type Registry } from "prom-client";
import { LiveShares } from "./live-shares";
import { LIVE_LIMITS, type LiveLimits } from "./live-limits";
import { tokenBucketKey } from "../rate/caller-key";
import { LiveReread, LiveSubscription, type LiveEnded } from "./live-subscription";
import type { LiveTopic } from "./live-topics";
import { LiveDispatch } from "./live-dispatch";
import { LiveTokenChecks } from "./live-token-checks";

// The bounds live apart (./live-limits.ts) so the entry points read them without loading this.
export { LIVE_LIMITS, type LiveLimits } from "./live-limits";

export interface LiveUpdatesOptions {
  read: ReadService;
  feed: ChangeFeed;
  custody: Custody | null;
  limits?: Partial<LiveLimits>;
  log?: (e: unknown) => void;
  /** Where the subscription gauges go (the instance's Prometheus registry). */
  metrics?: Registry;
  /** How often the chain's clock is read while a subscription waits for a deadline (a book's cutoff), ms; default 1,000. */
  clockCheckMs?: number;
}

/** Who opens a subscription: the connection it runs on, the Authorization it was made with, the client's address group. */
export interface LiveCaller {
  connection: object;
  authorization: string | null;
  /** The address group (graphql/rate-limit.ts clientAddress); absent only for in-process callers, who share one. */
  address?: string;
}

/** A resume asked for: the id of the last event the client saw, and what the subscription follows (the field and its arguments). */
export interface LiveResume {
  eventId: string | null;
  key: string;
}

/** An event id as the server writes it: the stream's 22 characters, a dot, the sequence number. */
const EVENT_ID = /^([A-Za-z0-9_-]{22})\.(\d{1,15})$/;

/** A consumer of one subscription (its stream: `subscription`). */
export type LiveConsumer<T> = AsyncIterableIterator<T | LiveEnded | LiveReread> & { subscription: LiveSubscription<T> };

export class LiveUpdates {
  readonly limits: LiveLimits;
  private readonly subs = new Set<LiveSubscription<unknown>>();
  private readonly perConnection = new WeakMap<object, number>();
  /** Each caller's share of the subscriptions and connections (live-shares.ts). */
  readonly shares: LiveShares;
  private readonly releases = new Map<LiveSubscription<unknown>, () => void>();
  /** Every subscription by its stream id (a resume finds it here). */
  private readonly byId = new Map<string, LiveSubscription<unknown>>();
  /** Subscriptions whose client went away, oldest first, with the timer that ends each. */
  private readonly detached = new Map<LiveSubscription<unknown>, ReturnType<typeof setTimeout>>();
  private readonly dispatch: LiveDispatch;
  private readonly tokenChecks: LiveTokenChecks;
  private closed = false;
  /**
   * Executions of subscription documents over the values sent, and answers reused instead: the
   * GraphQL layer counts them here (graphql/shared-subscription-events.ts).
   */
  readonly events = { executions: 0, shared: 0 };

  constructor(o: LiveUpdatesOptions) {
    this.limits = { ...LIVE_LIMITS, ...o.limits };
    this.shares = new LiveShares(this.limits);
    this.dispatch = new LiveDispatch(o.read, o.feed, this.subs, o.log, o.clockCheckMs);
    this.tokenChecks = new LiveTokenChecks(this.subs, o.custody, this.limits.authRecheckMs, o.log);
    if (o.metrics) registerGauges(o.metrics, () => this.stats());
  }

  /**
   * Opens a subscription, or resumes one (`resume.eventId`); ApiError 400 (a malformed event id),
   * 429 (this connection, address or token holds its share) or 503 (the process holds all it may,
   * or is closing): the caller's shares first, the process's cap last.
   */
  subscribe<T>(topic: LiveTopic<T>, caller: LiveCaller, resume: LiveResume = { eventId: null, key: "" }): LiveConsumer<T> {
    if (this.closed) throw new ApiError(503, "live updates are shutting down on this server; reconnect");
    const token = caller.authorization ? tokenBucketKey(caller.authorization) : null;
    const resumeKey = `${token ?? "anonymous"}\n${resume.key}`;
    let found: { s: LiveSubscription<T>; after: number } | null = null;
    let reread: string | null = null;
    if (resume.eventId !== null) {
      const m = EVENT_ID.exec(resume.eventId);
      if (!m) throw new ApiError(400, "the last event id is not one this server sent (<stream>.<sequence>)");
      const s = this.byId.get(m[1]) as LiveSubscription<T> | undefined;
      const after = Number(m[2]);
      if (s && s.resumeKey === resumeKey && s.canResume(after)) found = { s, after };
      else
        reread =
          s && s.resumeKey === resumeKey
            ? "the events after the last one received are no longer kept; read the state again"
            : "this subscription is no longer kept (or is another's); read the state again";
    }
    const held = this.perConnection.get(caller.connection) ?? 0;
    const holder = { address: caller.address ?? "unknown", token };
    // Checked before a stream still held open is handed over (its share still counted), so a refusal leaves it as it was.
    if (held >= this.limits.maxPerConnection)
      throw new ApiError(429, `at most ${this.limits.maxPerConnection} subscriptions per connection; complete one first`, 1);
    this.shares.checkSubscription(holder);
    if (this.subs.size - this.detached.size >= this.limits.maxPerProcess)
      throw new ApiError(503, "this server holds as many subscriptions as it may; retry later");
    // A client back before the server noticed it left: its old consumer reads nothing more.
    if (found?.s.attached) this.release(found.s as LiveSubscription<unknown>);
    let sub: LiveSubscription<T>;
    if (found) {
      sub = found.s;
      const timer = this.detached.get(sub as LiveSubscription<unknown>);
      if (timer) clearTimeout(timer);
      this.detached.delete(sub as LiveSubscription<unknown>);
      sub.connection = caller.connection;
    } else {
      sub = new LiveSubscription<T>(
        topic,
        caller.connection,
        caller.authorization,
        this.limits.queueLimit,
        (s) => this.remove(s as LiveSubscription<unknown>),
        (s) => this.keepDetached(s as LiveSubscription<unknown>),
        resumeKey,
      );
      this.subs.add(sub as LiveSubscription<unknown>);
      this.byId.set(sub.id, sub as LiveSubscription<unknown>);
    }
    this.releases.set(sub as LiveSubscription<unknown>, this.shares.takeSubscription(holder));
    this.perConnection.set(caller.connection, (this.perConnection.get(caller.connection) ?? 0) + 1);
    const consumer = Object.assign(sub.consume(found?.after), { subscription: sub });
    if (reread !== null) sub.push("reread", new LiveReread(reread));
    if (!found && topic.initial) this.dispatch.start(sub as LiveSubscription<unknown>);
    return consumer;
  }

  /**
   * Subscriptions open now (and kept for a resume), values waiting in their queues, values dropped so far by the open ones;
   * since start: store reads run, documents executed over values sent, answers reused.
   */
  stats(): {
    subscriptions: number;
    detached: number;
    queued: number;
    maxQueued: number;
    dropped: number;
    reads: number;
    executions: number;
    sharedExecutions: number;
  } {
    let queued = 0,
      maxQueued = 0,
      dropped = 0;
    for (const s of this.subs) {
      if (!s.attached) continue;
      queued += s.queued;
      maxQueued = Math.max(maxQueued, s.queued);
      dropped += s.dropped;
    }
    return {
      subscriptions: this.subs.size - this.detached.size,
      detached: this.detached.size,
      queued,
      maxQueued,
      dropped,
      reads: this.dispatch.reads,
      executions: this.events.executions,
      sharedExecutions: this.events.shared,
    };
  }

  /** Ends every subscription (their streams complete) and stops listening to the feed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const dispatched = this.dispatch.close();
    this.tokenChecks.stop();
    for (const t of this.detached.values()) clearTimeout(t);
    for (const s of [...this.subs]) s.finish();
    await dispatched;
  }

  /** Gives back the share and the connection's count a consumer held. */
  private release(s: LiveSubscription<unknown>): void {
    const r = this.releases.get(s);
    if (!r) return;
    r();
    this.releases.delete(s);
    const n = (this.perConnection.get(s.connection) ?? 1) - 1;
    if (n > 0) this.perConnection.set(s.connection, n);
    else this.perConnection.delete(s.connection);
  }

  /** The client went away: the stream stays, fed, for resumeWindowMs (the oldest kept one goes when too many are). */
  private keepDetached(s: LiveSubscription<unknown>): void {
    this.release(s);
    if (this.closed || this.detached.has(s)) return;
    if (this.detached.size >= this.limits.maxDetachedPerProcess) this.detached.keys().next().value!.finish();
    const timer = setTimeout(() => s.finish(), this.limits.resumeWindowMs);
    timer.unref?.();
    this.detached.set(s, timer);
  }

  private remove(s: LiveSubscription<unknown>): void {
    if (!this.subs.delete(s)) return;
    this.byId.delete(s.id);
    const timer = this.detached.get(s);
    if (timer) clearTimeout(timer);
    this.detached.delete(s);
    this.release(s);
  }
}

/** The subscription gauges on the instance's registry; a second app on the same registry reports its own subscriptions instead. */
function registerGauges(registry: Registry, stats: () => ReturnType<LiveUpdates["stats"]>): void {
  for (const name of ["offers_live_subscriptions", "offers_live_queued_values"]) registry.removeSingleMetric(name);
  new Gauge({
    name: "offers_live_subscriptions",
    help: "GraphQL subscriptions open in this process (SSE and WebSocket)",
    registers: [registry],
    collect() {
      this.set(stats().subscriptions);
    },
  });
  new Gauge({
    name: "offers_live_queued_values",
    help: "Values waiting in subscribers' queues (a lasting high figure: consumers that do not keep up)",
    registers: [registry],
    collect() {
      this.set(stats().queued);
    },
  });
}
