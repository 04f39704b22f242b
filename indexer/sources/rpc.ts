/**
 * The RPC source (@solana/web3.js), for a validator or cluster: it owns the subscriptions and the
 * timers, and wires the parts in `rpc/`, one mechanism each:
 * - `program-accounts.ts`: the snapshot of accounts (getProgramAccounts per program);
 * - `history-reader.ts`: the history cursors and the transactions after them (signatures +
 *   getTransaction at one finality), rewinds, lookups by signature;
 * - `close-detector.ts`: account deletions, which programSubscribe cannot report;
 * - `delivery-ledger.ts` (no I/O): what the live stream delivered at which slot, deliveries
 *   waiting for a listing, forks pending ("Forks" there), the checkpoint's cursor.
 *
 * Live: programSubscribe (onProgramAccountChange) for account writes and logsSubscribe (onLogs,
 * mentions = program) for events, at the configured commitment, flushed every `flushMs`. When the
 * websocket reopens (web3.js resubscribes) a reconcile runs at once and again `settleMs` later (a
 * change between the first one and the resubscription taking effect is caught by the second), and
 * every `reconcileMs`: the transactions since the history cursors, then the accounts as of now.
 *
 * Gap check: a node may confirm a slot without notifying its subscribers of it (no reconnect,
 * nothing said), and a subscription is not in effect the moment it is asked for (a source
 * starting, a standby taking over): events and account changes of such a slot would wait for the
 * periodic reconcile, a minute. Every `gapCheckMs` the source lists each program's signatures
 * after its cursor (one getSignaturesForAddress per program, as caughtUpTo does): one the live
 * stream has not delivered by the next check was missed, and a reconcile runs at once. Otherwise
 * the cursor moves past the signatures the stream did deliver, so the list stays short. The same
 * check finds forks and looks up old waiting deliveries, and a reconcile retracts what it found.
 *
 * Write versions: RPC notifications carry a slot but no write version; the source numbers live
 * updates with an arrival counter seeded from the checkpoint (so it keeps rising across restarts).
 *
 * Tested against solana-test-validator in tests/rpc (snapshot, live at two commitments, a
 * websocket drop, restart from the checkpoint, backfill, the gap check, forks); the ledger alone
 * in tests/indexer/delivery-ledger.test.ts.
 */
import { Connection, PublicKey, type Commitment, type KeyedAccountInfo, type Context, type Logs } from "@solana/web3.js";
import type { AccountSource, AccountUpdate, BatchSink, Checkpoint, TxEvent } from "./types";
import { CloseDetector } from "./rpc/close-detector";
import { DeliveryLedger, decodeCursor, encodeCursor, type Listed, type Orphan } from "./rpc/delivery-ledger";
import { programAccounts } from "./rpc/program-accounts";
import { HistoryReader, PAGE, type History, type Listing } from "./rpc/history-reader";

export interface RpcSourceOptions {
  url: string;
  wsUrl?: string;
  programs: (string | PublicKey)[];
  commitment?: Commitment;
  name?: string;
  /** Accounts the store already has (pubkey list), so a reconcile can report those now gone. */
  known?: Iterable<string>;
  /** Max transactions of history a first read (no cursor yet) takes per program, newest first; reads after a cursor go back to it whatever the count. */
  historyLimit?: number;
  /** Live updates are flushed as one batch every flushMs (or at maxBatch items). */
  flushMs?: number;
  maxBatch?: number;
  /** Periodic reconcile interval; 0 disables it (reconcile still runs on reconnect). */
  reconcileMs?: number;
  /** The second reconcile after a reconnect, once the resubscription has surely taken effect. */
  settleMs?: number;
  /**
   * Gap check interval (see the header); 0 disables it. A transaction listed after the history
   * cursor and still not delivered live one check later makes a reconcile run at once.
   */
  gapCheckMs?: number;
  /** Told the signatures a gap check found missed (before the reconcile it runs): for the log. */
  onGap?: (missed: string[]) => void;
  /**
   * Slots a live transaction no listing confirmed may lag the live stream before it is looked up
   * (see "Forks" in rpc/delivery-ledger.ts); default 160, past the 150 blocks a blockhash lives.
   */
  orphanSlots?: number;
  /** Told the live transactions found not on the chain (retracted), for the log. */
  onRetract?: (signatures: string[]) => void;
  connection?: Connection;
  onError?: (e: unknown) => void;
}

const SNAPSHOT_CHUNK = 500;
/** Rewinds and re-reads one reconcile makes at most for forks found while reading (see "Forks"). */
const FORK_ROUNDS = 3;

export class RpcSource implements AccountSource {
  readonly name: string;
  readonly connection: Connection;
  private readonly programs: PublicKey[];
  private readonly commitment: Commitment;
  private readonly ledger: DeliveryLedger;
  private readonly reader: HistoryReader;
  private readonly closes: CloseDetector;
  private wv = 0;
  private queueAccounts: AccountUpdate[] = [];
  private queueTxs: TxEvent[] = [];
  private gapInFlight = false;
  private accountSubs: number[] = [];
  private logSubs: number[] = [];
  private timers: NodeJS.Timeout[] = [];
  private sink: BatchSink | null = null;
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(readonly opts: RpcSourceOptions) {
    this.programs = opts.programs.map((p) => new PublicKey(p));
    this.commitment = opts.commitment ?? "confirmed";
    this.name = opts.name ?? `rpc:${opts.url}`;
    this.connection = opts.connection ?? new Connection(opts.url, { commitment: this.commitment, wsEndpoint: opts.wsUrl });
    this.ledger = new DeliveryLedger(this.gapCheckMs() > 0);
    this.reader = new HistoryReader(this.connection, this.programs, this.commitment, this.ledger);
    this.closes = new CloseDetector(this.connection, this.programs, this.commitment, () => ++this.wv, opts.known);
  }

  private gapCheckMs(): number {
    return this.opts.gapCheckMs ?? 2_000;
  }

  /** Serializes deliveries: flushes and reconciles never interleave. */
  private run(f: () => Promise<void>): Promise<void> {
    const p = this.chain.then(f);
    this.chain = p.catch((e) => this.opts.onError?.(e));
    return p;
  }

  snapshot(sink: BatchSink, onTotal?: (n: number) => void): Promise<void> {
    return this.snapshotInto(sink, onTotal, true);
  }

  private async snapshotInto(sink: BatchSink, onTotal: ((n: number) => void) | undefined, withHistory: boolean): Promise<void> {
    const perProgram = await programAccounts(this.connection, this.programs, this.commitment);
    const history = withHistory ? await this.reader.read(this.historyLimit()) : null;
    onTotal?.(perProgram.reduce((n, p) => n + p.accounts.length, 0) + (history?.events.length ?? 0));
    // Events first (oldest first), then the accounts as of the snapshot.
    if (history) await this.deliverHistory(sink, history, 0);
    const seen = new Set<string>();
    let maxSlot = 0;
    for (const p of perProgram) {
      maxSlot = Math.max(maxSlot, p.slot);
      for (let i = 0; i < p.accounts.length; i += SNAPSHOT_CHUNK) {
        const accounts = p.accounts.slice(i, i + SNAPSHOT_CHUNK);
        for (const a of accounts) seen.add(a.pubkey);
        await sink({ slot: p.slot, writeVersion: 0, accounts, transactions: [], cursor: this.cursor() });
      }
    }
    const gone = this.closes.absentFrom(seen);
    for (let i = 0; i < gone.length; i += SNAPSHOT_CHUNK) {
      const accounts = gone.slice(i, i + SNAPSHOT_CHUNK).map((pubkey) => ({ slot: maxSlot, writeVersion: 0, pubkey, owner: "", data: null }));
      await sink({ slot: maxSlot, writeVersion: 0, accounts, transactions: [], cursor: this.cursor() });
    }
    this.closes.snapshotApplied(gone, seen);
  }

  private historyLimit(): number {
    return this.opts.historyLimit ?? 10_000;
  }

  /** The checkpoint's cursor: the history cursors, with `moved` ones replaced, and the waiting deliveries. */
  private cursor(moved?: Map<string, string>): string {
    return encodeCursor(this.reader.positions(moved), this.ledger.waiting());
  }

  async start(from: Checkpoint | null, sink: BatchSink): Promise<void> {
    this.sink = sink;
    this.stopped = false;
    this.wv = from?.writeVersion ?? 0;
    const { cursors, waiting } = decodeCursor(from?.cursor ?? "");
    this.reader.restore(cursors);
    this.ledger.restore(waiting);
    for (const program of this.programs) {
      this.accountSubs.push(
        this.connection.onProgramAccountChange(program, (a, ctx) => this.onAccount(a, ctx), { commitment: this.commitment, encoding: "base64" }),
      );
      this.logSubs.push(this.connection.onLogs(program, (l, ctx) => this.onLogs(l, ctx), this.commitment));
    }
    const ws = (this.connection as unknown as { _rpcWebSocket?: { on(ev: string, f: () => void): void } })._rpcWebSocket;
    let opened = 0;
    ws?.on("open", () => {
      if (opened++ === 0 || this.stopped) return;
      void this.reconcile();
      this.timers.push(setTimeout(() => void (this.stopped || this.reconcile()), this.opts.settleMs ?? 2_000));
    });
    this.timers.push(setInterval(() => void this.flush(), this.opts.flushMs ?? 50));
    if ((this.opts.reconcileMs ?? 60_000) > 0) this.timers.push(setInterval(() => void this.reconcile(), this.opts.reconcileMs ?? 60_000));
    if (this.gapCheckMs() > 0) this.timers.push(setInterval(() => void this.gapCheck().catch((e) => this.opts.onError?.(e)), this.gapCheckMs()));
    // Live deliveries the checkpoint kept as unconfirmed: looked up now, whatever their age, so a
    // fork among them is retracted with this first read rather than after a second one.
    const restored = this.ledger.hasWaiting() ? await this.orphans(true).catch(() => [] as Orphan[]) : [];
    await this.run(async () => {
      if (this.sink) await this.reconcileNow(this.sink, restored);
    });
  }

  private onAccount(a: KeyedAccountInfo, ctx: Context): void {
    this.ledger.sawSlot(ctx.slot);
    this.queueAccounts.push(this.closes.notified(a, ctx.slot, ++this.wv));
    if (this.queueAccounts.length + this.queueTxs.length >= (this.opts.maxBatch ?? 1000)) void this.flush();
  }

  private onLogs(l: Logs, ctx: Context): void {
    this.ledger.sawSlot(ctx.slot);
    this.queueTxs.push({ signature: l.signature, slot: ctx.slot, writeVersion: ++this.wv, err: l.err ? JSON.stringify(l.err) : null, logs: l.logs });
    this.closes.logged(l, ctx.slot);
  }

  /** Waiting deliveries `orphanSlots` behind the node (any with `anyAge`) that the chain does not have at their slot. */
  private orphans(anyAge = false): Promise<Orphan[]> {
    return this.reader.orphans(this.ledger.due(this.opts.orphanSlots ?? 160, anyAge));
  }

  /**
   * Delivers queued live updates as one batch, then (in a batch of their own, so RPC round trips
   * never delay the live updates) the deletions found by the close checks that are due.
   */
  flush(): Promise<void> {
    return this.run(async () => {
      if (!this.sink) return;
      const [accounts, transactions] = [this.queueAccounts, this.queueTxs];
      this.queueAccounts = [];
      this.queueTxs = [];
      await this.deliverLive(this.sink, accounts, transactions);
      if (this.closes.hasChecks()) await this.deliverLive(this.sink, await this.closes.closed(), []);
    });
  }

  private async deliverLive(sink: BatchSink, accounts: AccountUpdate[], transactions: TxEvent[]): Promise<void> {
    if (accounts.length === 0 && transactions.length === 0) return;
    const slot = Math.max(0, ...accounts.map((a) => a.slot), ...transactions.map((t) => t.slot));
    await sink({ slot, writeVersion: this.wv, accounts, transactions, cursor: this.cursor() });
    // Delivered: a reconcile's history read need not fetch these again (at the same slot).
    for (const t of transactions) this.ledger.delivered(t.signature, t.slot);
  }

  /** Reconciling snapshot: the transactions since the history cursors, then the accounts as of now. */
  reconcile(): Promise<void> {
    return this.run(async () => {
      if (this.sink) await this.reconcileNow(this.sink);
    });
  }

  /**
   * History since the cursors, then the accounts as of now. Forks (`retract`, those pending, and
   * those the history read finds) rewind the cursors and are read again, their retraction
   * delivered with that read.
   */
  private async reconcileNow(sink: BatchSink, retract: Orphan[] = []): Promise<void> {
    // Forks known already rewind before the first read; a read that finds more rewinds again.
    let found = [...this.ledger.pendingForks(), ...retract];
    let h: History | null = null;
    if (!found.length) {
      h = await this.reader.read(this.historyLimit());
      found = h.forked;
    }
    const forked = new Map<string, Orphan>();
    for (let round = 0; found.length && round < FORK_ROUNDS; round++) {
      // Pending until the retraction commits: rewinding forgets what the live stream said about them.
      const { from, forks } = this.ledger.retract(found);
      for (const o of forks) forked.set(o[0], o);
      await this.reader.rewindBefore(from);
      this.ledger.forgetFrom(from);
      h = await this.reader.read(this.historyLimit());
      found = h.forked;
    }
    if (!h) throw new Error("unreachable: a fork round reads history");
    if (found.length) {
      // Still finding forks: deliver what was read but move no cursor, so the next check lists
      // these again (they stay delivered in the ledger, and pending) and retracts them.
      this.ledger.keepPending(found);
      h = { ...h, newest: new Map(), floor: 0 };
    }
    const retractions = [...forked.values()].map(([signature, slot]): TxEvent => ({ signature, slot, writeVersion: 0, err: null, logs: [], retracted: true }));
    if (retractions.length) this.opts.onRetract?.([...forked.keys()]);
    await this.deliverHistory(sink, h, this.wv, retractions);
    this.ledger.retracted(forked.keys());
    await this.snapshotInto(sink, undefined, false);
  }

  /**
   * Delivers history events in chunks. The moved cursors ride only on the last chunk, and are
   * kept only once it is applied: a crash or a failed write before that re-reads the whole gap
   * (events are idempotent), never skips part of it.
   */
  private async deliverHistory(sink: BatchSink, h: History, writeVersion: number, retractions: TxEvent[] = []): Promise<void> {
    // Retractions go in one batch with the whole re-read: their rows are deleted in the database
    // transaction that inserts the chain's, so a reader never sees a row of the chain missing.
    const events = [...retractions, ...h.events];
    const chunk = retractions.length ? Math.max(events.length, 1) : SNAPSHOT_CHUNK;
    for (let i = 0; i < events.length; i += chunk) {
      const txs = events.slice(i, i + chunk);
      const last = i + chunk >= events.length;
      await sink({
        slot: Math.max(...txs.map((t) => t.slot)),
        writeVersion,
        accounts: [],
        transactions: txs,
        cursor: this.cursor(last ? h.newest : undefined),
      });
    }
    this.reader.move(h.newest);
    this.ledger.forgetBelow(h.floor);
  }

  /**
   * The gap check (see the header): a reconcile now when a signature listed by the previous check
   * is still undelivered, or a fork shows; otherwise each program's cursor moves to the newest
   * signature that has no undelivered one before it.
   */
  async gapCheck(): Promise<void> {
    if (!this.sink || this.stopped || this.gapInFlight) return;
    this.gapInFlight = true;
    try {
      // Listed outside the delivery chain, so the live flushes never wait for these round trips.
      const lists: Listing[] = [];
      for (const program of this.programs) lists.push(await this.reader.listAfterCursor(program));
      // What these lists show delivered at its slot is confirmed; for what is left, the node's slot
      // says whether it is old enough to look up (live notifications alone stop with the activity).
      const forks: Orphan[] = [];
      for (const { listed } of lists) {
        for (const x of listed) {
          const fork = this.ledger.forkOf(x);
          if (fork) forks.push(fork);
        }
      }
      this.ledger.checked();
      let orphans: Orphan[] = [];
      try {
        if (this.ledger.hasWaiting()) this.ledger.sawSlot(await this.connection.getSlot(this.commitment));
        orphans = await this.orphans();
      } catch (e) {
        // The lookup waits for the next check; the gap check itself goes on.
        this.opts.onError?.(e);
      }
      await this.run(async () => {
        if (!this.sink || this.stopped) return;
        // Still unresolved (a reconcile meanwhile may have read them again).
        const gone = [...forks.filter(([sig]) => this.ledger.wasDelivered(sig)), ...orphans.filter(([sig]) => this.ledger.isWaiting(sig))];
        if (gone.length || this.ledger.pendingForks().length) {
          await this.reconcileNow(this.sink, gone);
          return;
        }
        const undelivered = new Set<string>();
        const moves = new Map<string, Listed>();
        // Whether every program listing something moves its cursor (then the ledger can forget below).
        let allMove = true;
        for (const { id, from, listed } of lists) {
          // A reconcile moved this cursor meanwhile: this list is stale, the next check reads anew.
          if (this.reader.cursorOf(id) !== from) {
            allMove = false;
            continue;
          }
          const sweep = this.ledger.sweep(listed, listed.length >= PAGE);
          for (const s of sweep.undelivered) undelivered.add(s);
          if (sweep.moveTo) moves.set(id, sweep.moveTo);
          else if (listed.length) allMove = false;
        }
        const missed = this.ledger.missed(undelivered);
        if (missed.length) {
          this.opts.onGap?.(missed);
          await this.reconcileNow(this.sink);
          return;
        }
        this.reader.move(new Map([...moves].map(([id, x]) => [id, x.signature])));
        // Delivered signatures below every moved cursor's slot cannot be listed again.
        if (allMove && moves.size) this.ledger.forgetBelow(Math.min(...[...moves.values()].map((x) => x.slot)));
        // A failure here is reported by run() itself.
      }).catch(() => undefined);
    } finally {
      this.gapInFlight = false;
    }
  }

  /**
   * Whether every transaction of the programs up to `slot` was applied: each program's
   * signatures after its history cursor (one getSignaturesForAddress per program) are all
   * delivered, or newer than `slot`. A transaction the live stream missed keeps this false until
   * a reconcile reads it.
   */
  async caughtUpTo(slot: number): Promise<boolean> {
    if (!this.sink || this.stopped) return false;
    for (const program of this.programs) {
      const { listed } = await this.reader.listAfterCursor(program, slot);
      if (listed.length === PAGE) return false;
      if (listed.some((s) => s.slot <= slot && !this.ledger.deliveredAt(s))) return false;
    }
    return true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    for (const id of this.accountSubs) await this.connection.removeProgramAccountChangeListener(id).catch(() => undefined);
    for (const id of this.logSubs) await this.connection.removeOnLogsListener(id).catch(() => undefined);
    this.accountSubs = [];
    this.logSubs = [];
    await this.flush();
    await this.chain;
    this.sink = null;
  }
}
