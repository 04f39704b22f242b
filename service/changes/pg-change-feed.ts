/**
 * The change feed across processes: the indexer's ChangeSets (indexer/changes.ts) go out as
 * PostgreSQL NOTIFY on a channel of the store's schema, and every process that subscribes hears
 * them through LISTEN on a dedicated session (service/pg/session.ts), its own announcements included.
 *
 * Why PostgreSQL and not Redis: the store already is PostgreSQL wherever more than one process runs,
 * so the feed adds no service to deploy, secure or fail over; and a notification is delivered only
 * to sessions listening when it is sent, in commit order per sender, which is all a cache drop
 * needs. Durability is not needed either: a listener that lost its session may have missed some,
 * so it announces `everything: true` to its subscribers after reconnecting (drop all, re-read).
 *
 * - Payload: NOTIFY carries at most 8000 bytes. A change set is sent in a compact JSON form; a large
 *   one is split into several, each a valid ChangeSet of the same slot (lists divided, never cut);
 *   one that would need more than MAX_PARTS goes as its slot with `everything: true`.
 * - Publishing: after the batch's commit (StoreWriter.onApplied), over one dedicated session, in
 *   order, with `synchronous_commit` off on that session (no WAL flush per NOTIFY). While a NOTIFY
 *   is in flight, further change sets are merged into one (union of lists, highest slot): under a
 *   fast indexer the feed sends one notification per round trip, whatever the batch rate, and never
 *   holds the writer up. Not inside the batch's transaction, though that would save the round trip:
 *   PostgreSQL refuses a commit whose NOTIFY finds its queue full (a listener that stopped reading
 *   holds the queue's tail), so the indexer would stop for a stuck API replica; here that NOTIFY
 *   fails alone and is logged.
 */
import { LocalChangeFeed, mergeChanges, type ChangeFeed, type ChangeListener, type ChangeSet } from "../../indexer/changes";
import { openSession, pgTarget, sleep, type Session, type SessionOptions } from "../pg/session";

/** Below PostgreSQL's 8000-byte NOTIFY payload limit, with room for the envelope. */
export const MAX_PAYLOAD = 7_600;
/** A change set needing more notifications than this (about 1,200 addresses: a reconcile, a backfill) goes as "everything changed". */
export const MAX_PARTS = 8;

interface Wire {
  s: number;
  o?: string[];
  p?: string[];
  f?: [string, string, number][];
  w?: string[];
  l?: string[];
  c?: string[];
  g?: 1;
  e?: 1;
}

const NOTIFY_SQL = "SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS t(p, i) ORDER BY i";

export function changeChannel(storeUrl: string): string {
  return `offers_changes_${pgTarget(storeUrl).schema}`;
}

const empty = (slot: number): ChangeSet => ({ slot, offers: [], positions: [], fills: [], wallets: [], pools: [], contracts: [], config: false });

/** The address lists in wire order, fills (tuples) between positions and wallets. */
const LISTS = [
  ["o", "offers"],
  ["p", "positions"],
  ["f", "fills"],
  ["w", "wallets"],
  ["l", "pools"],
  ["c", "contracts"],
] as const;

/**
 * The change set's notification payloads, each at most `max` bytes (one unless it is large).
 * Sizes are counted, not serialised: every value is a base58 address (JSON needs no escapes for it),
 * so an element costs its length plus quotes and comma. A part takes whole runs of a list (sliced,
 * no per-element property writes: the feed runs this once per batch, mostly before the JIT has
 * optimised it); only the finished parts are stringified, and a part that still came out too long
 * (a value that is not plain ASCII) makes the whole set "everything".
 */
export function encodeChange(c: ChangeSet, max = MAX_PAYLOAD, maxParts = MAX_PARTS): string[] {
  const everything = () => [JSON.stringify({ s: c.slot, e: 1 } satisfies Wire)];
  const parts: Wire[] = [];
  const fresh = (): Wire => ({ s: c.slot });
  let cur: Wire = fresh();
  if (c.config) cur.g = 1;
  if (c.everything) cur.e = 1;
  let size = 16;
  for (const [k, field] of LISTS) {
    const vs: (string | [string, string, number])[] = field === "fills" ? c.fills.map((f) => [f.offer, f.taker, f.revision]) : c[field];
    let i = 0;
    while (i < vs.length) {
      // 6: quotes, comma, and the key of a list this element may be the first of; a fill's tuple 22 more.
      let j = i;
      let add = 6;
      for (; j < vs.length; j++) {
        const v = vs[j];
        const n = typeof v === "string" ? v.length + 6 : v[0].length + v[1].length + 22;
        if (size + add + n > max) break;
        add += n;
      }
      if (j === i) {
        // Not even one more fits: the part is full (or a single value is larger than any part).
        if (size === 16) return everything();
        parts.push(cur);
        cur = fresh();
        size = 16;
        continue;
      }
      (cur as unknown as Record<string, unknown[]>)[k] = ((cur[k] as unknown[] | undefined) ?? []).concat(vs.slice(i, j));
      size += add;
      i = j;
    }
  }
  parts.push(cur);
  if (parts.length > maxParts) return everything();
  const out = parts.map((p) => JSON.stringify(p));
  return out.some((p) => p.length > max || Buffer.byteLength(p) > max) ? everything() : out;
}

export function decodeChange(payload: string): ChangeSet {
  const w = JSON.parse(payload) as Wire;
  if (typeof w.s !== "number") throw new Error("not a change set");
  return {
    slot: w.s,
    offers: w.o ?? [],
    positions: w.p ?? [],
    fills: (w.f ?? []).map(([offer, taker, revision]) => ({ offer, taker, revision })),
    wallets: w.w ?? [],
    pools: w.l ?? [],
    contracts: w.c ?? [],
    config: w.g === 1,
    ...(w.e === 1 ? { everything: true } : {}),
  };
}

export interface PgChangeFeedOptions extends SessionOptions {
  storeUrl: string;
  /** Pause before reconnecting a lost listening session (default 500 ms). */
  retryMs?: number;
  log?: (msg: string, extra?: Record<string, unknown>) => void;
}

export class PgChangeFeed implements ChangeFeed {
  readonly channel: string;
  private readonly local = new LocalChangeFeed();
  private listener: Session | null = null;
  private listening: Promise<void> | null = null;
  private publisher: Session | null = null;
  private pending: ChangeSet | null = null;
  private flushing: Promise<void> | null = null;
  private closed = false;
  private lastSlot = 0;
  /** Notifications sent and heard by this process (tests, the benchmark). */
  readonly counts = { sent: 0, heard: 0, reconnects: 0 };

  constructor(readonly o: PgChangeFeedOptions) {
    this.channel = changeChannel(o.storeUrl);
  }

  /** Starts listening; resolves once LISTEN is in effect (notifications from then on are heard). */
  listen(): Promise<void> {
    if (!this.listening) {
      let ready!: () => void;
      this.listening = new Promise<void>((r) => (ready = r));
      void this.listenLoop(ready);
    }
    return this.listening;
  }

  /** The server pid of the listening session (tests end it to check the reconnect). */
  get listenerPid(): number | null {
    return this.listener?.pid ?? null;
  }

  private async listenLoop(ready: () => void): Promise<void> {
    let first = true;
    while (!this.closed) {
      try {
        const s = await openSession(this.o.storeUrl, this.o);
        if (this.closed) return void (await s.close());
        this.listener = s;
        s.client.on("notification", (m) => {
          if (m.channel !== this.channel || !m.payload) return;
          let c: ChangeSet;
          try {
            c = decodeChange(m.payload);
          } catch {
            return;
          }
          this.counts.heard++;
          this.lastSlot = Math.max(this.lastSlot, c.slot);
          this.local.publish(c);
        });
        await s.client.query(`LISTEN "${this.channel}"`);
        if (first) ready();
        else {
          // Whatever was announced while no session listened is lost: subscribers re-read everything.
          this.counts.reconnects++;
          this.local.publish({ ...empty(this.lastSlot), everything: true });
        }
        first = false;
        const why = await s.ended;
        if (this.closed) return;
        this.o.log?.("change feed: listening session lost, reconnecting", { why });
      } catch (e) {
        this.o.log?.("change feed: cannot listen, retrying", { error: (e as Error).message });
      }
      this.listener = null;
      await sleep(this.o.retryMs ?? 500);
    }
  }

  subscribe(listener: ChangeListener): () => void {
    return this.local.subscribe(listener);
  }

  /** Queues the change set for NOTIFY; resolves once it (or a merge holding it) was sent. */
  publish(change: ChangeSet): Promise<void> {
    this.pending = this.pending ? mergeChanges(this.pending, change) : change;
    if (!this.flushing) this.flushing = this.flush().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async flush(): Promise<void> {
    while (this.pending && !this.closed) {
      const c = this.pending;
      this.pending = null;
      try {
        if (!this.publisher) {
          const s = await openSession(this.o.storeUrl, this.o);
          // A NOTIFY is a transaction with an id, so its commit would wait for a WAL flush (an
          // fsync per notification). Nothing here needs to survive a crash: the data it announces
          // committed, and was flushed, before publish was called; and the notification is
          // delivered at this commit either way.
          await s.client.query("SET synchronous_commit TO off");
          this.publisher = s;
          void s.ended.then(() => {
            if (this.publisher === s) this.publisher = null;
          });
        }
        // All parts in one statement: one round trip, delivered together at its commit.
        const parts = encodeChange(c);
        // A named statement: parsed and planned once per session, not per notification.
        await this.publisher.client.query({ name: "offers_notify", text: NOTIFY_SQL, values: [this.channel, parts] });
        this.counts.sent += parts.length;
      } catch (e) {
        // Listeners whose session survived keep their caches until their own TTLs and slot checks
        // catch up; the ones that lost it drop everything on reconnecting.
        this.o.log?.("change feed: notify failed", { error: (e as Error).message, slot: c.slot });
        await this.publisher?.close();
        this.publisher = null;
      }
    }
  }

  async close(): Promise<void> {
    await this.flushing;
    this.closed = true;
    await this.listener?.close();
    await this.publisher?.close();
  }
}
