/**
 * The RPC source (@solana/web3.js), for a validator or cluster:
 * - snapshot: getProgramAccounts (with context slot) per program, and the programs' transaction
 *   history by signature (getSignaturesForAddress + getTransaction) for events;
 * - live: programSubscribe (onProgramAccountChange) for account writes and logsSubscribe
 *   (onLogs, mentions = program) for events, at the configured commitment; closes (rent
 *   reclaims), which programSubscribe cannot report, by checking the accounts of the programs'
 *   transactions that log no event (getTransaction + getMultipleAccountsInfo);
 * - reconnect: when the websocket reopens (web3.js resubscribes) a reconciling snapshot runs at
 *   once and again `settleMs` later (a change between the first one and the resubscription taking
 *   effect is caught by the second), and every `reconcileMs`: current accounts (deletions of known
 *   accounts that are gone included) and the transactions since the history cursor.
 *
 * History cursor: one signature per program, the newest one a history read returned. Live events
 * never move it: an event received right after a reconnect says nothing about the ones missed
 * before it. A reconcile lists the signatures after the cursor and fetches only those the live
 * stream did not deliver, so a healthy stream costs one getSignaturesForAddress per program. The
 * cursor is stored with the checkpoint as JSON (`{"<program>": "<signature>"}`).
 *
 * Gap check: a node may confirm a slot without notifying its subscribers of it (no reconnect,
 * nothing said), and a subscription is not in effect the moment it is asked for (a source
 * starting, a standby taking over): events and account changes of such a slot would wait for the
 * periodic reconcile, a minute. Every `gapCheckMs` the source lists each program's signatures
 * after its cursor (one getSignaturesForAddress per program, as caughtUpTo does): one the live
 * stream has not delivered by the next check was missed, and a reconcile (events and accounts)
 * runs at once. Otherwise the cursor moves past the signatures the stream did deliver, so the
 * list stays short.
 *
 * Forks: a live notification names the bank that ran the transaction, and a validator may run one
 * transaction in banks of two forks and notify both, or only the abandoned one (seen on
 * solana-test-validator under load, at "confirmed": a settlement notified at slot 170 whose chain
 * history says 171, its event's time one second apart). So a live delivery counts only at the slot
 * the chain's listing shows, and only if it was notified at one slot. A transaction the chain lists
 * at another slot than the live stream's, or that the chain does not have at all (looked up by
 * signature once its slot is `orphanSlots` behind the node, past any blockhash's life, when no
 * listing showed it), is retracted: its rows are deleted, the cursors rewind to the newest signature
 * of each program FORK_MARGIN_SLOTS before the slot concerned, the live deliveries from there on are
 * forgotten, and the stretch is read from history; the retraction and the read go in one batch, so
 * a reader never sees the chain's rows missing, and a row another transaction of the chain holds
 * under a key the fork's version took is read again too. Forks stay pending until that batch
 * commits. A live delivery awaiting its listing for longer than one check is kept in the
 * checkpoint's cursor (`_unconfirmed`) and looked up as soon as the source starts again.
 *
 * Write versions: RPC notifications carry a slot but no write version; the source numbers
 * live updates with an arrival counter seeded from the checkpoint (so it keeps rising across
 * restarts), and gives snapshot rows write version 0 at the snapshot's slot: a live update of
 * the same slot wins over the snapshot (it is at least as new), a later slot always wins.
 *
 * Tested against solana-test-validator in tests/rpc (snapshot, live at two commitments, a
 * websocket drop, restart from the checkpoint, backfill).
 */
import {
  Connection,
  PublicKey,
  type Commitment,
  type ConfirmedSignatureInfo,
  type Finality,
  type KeyedAccountInfo,
  type Context,
  type Logs,
} from "@solana/web3.js";
import type { AccountSource, AccountUpdate, BatchSink, Checkpoint, TxEvent } from "./types";

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
   * (see "Forks" in the header); default 160, past the 150 blocks a blockhash lives.
   */
  orphanSlots?: number;
  /** Told the live transactions found not on the chain (retracted), for the log. */
  onRetract?: (signatures: string[]) => void;
  connection?: Connection;
  onError?: (e: unknown) => void;
}

const SNAPSHOT_CHUNK = 500;

interface CloseCheck {
  signature: string;
  slot: number;
  attempts: number;
  nextAt: number;
}

/** A history read: events to deliver, and where each program's cursor moves once they are. */
interface History {
  events: TxEvent[];
  newest: Map<string, string>;
  floor: number;
  /** Listed transactions the live stream delivered at another slot, or at two (see "Forks"). */
  forked: Orphan[];
}

/** A live delivery not on the chain at its slot: signature, live slot, the chain's slot if any. */
type Orphan = [string, number, number | undefined];

/** Rewinds and re-reads one reconcile makes at most for forks found while reading (see "Forks"). */
const FORK_ROUNDS = 3;
/**
 * How far before a fork a retraction rewinds: a chain transaction under the key the fork's version
 * took may have a lower slot (sibling banks) and have been read after it (missed live, found by the
 * gap check within a few checks), and must be read again once the fork's row is gone.
 */
const FORK_MARGIN_SLOTS = 64;
/** Unconfirmed live deliveries kept in the checkpoint's cursor, at most. */
const UNCONFIRMED_KEPT = 1_000;
/** Live transactions awaiting a listing's confirmation, at most (the oldest are dropped). */
const UNVERIFIED_MAX = 100_000;

export class RpcSource implements AccountSource {
  readonly name: string;
  readonly connection: Connection;
  private readonly programs: PublicKey[];
  private readonly commitment: Commitment;
  /** What history reads (listings, getTransaction) ask for: "finalized" if the source is, else "confirmed". */
  private readonly finality: Finality;
  private readonly known = new Set<string>();
  private wv = 0;
  /** Per program (base58): newest signature a history read returned (see the header). */
  private cursors = new Map<string, string>();
  /** Signatures the live stream delivered, with their slot, so a reconcile skips them. */
  private seenLive = new Map<string, number>();
  /** Live deliveries notified at two slots: the lower one (see "Forks" in the header). */
  private forkedLive = new Map<string, number>();
  /** Forks found whose retraction has not committed yet (a failed reconcile keeps them here). */
  private pendingForks = new Map<string, Orphan>();
  /** Live deliveries no listing has shown at their slot yet, with the gap checks they survived. */
  private unverified = new Map<string, { slot: number; checks: number }>();
  /** The newest slot a live notification named. */
  private liveSlot = 0;
  private queueAccounts: AccountUpdate[] = [];
  private queueTxs: TxEvent[] = [];
  private closeChecks: CloseCheck[] = [];
  /** Signatures a gap check listed that the live stream had not delivered yet (see the header). */
  private suspects = new Set<string>();
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
    this.finality = this.commitment === "finalized" ? "finalized" : "confirmed";
    this.name = opts.name ?? `rpc:${opts.url}`;
    this.connection = opts.connection ?? new Connection(opts.url, { commitment: this.commitment, wsEndpoint: opts.wsUrl });
    for (const k of opts.known ?? []) this.known.add(k);
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
    let total = 0;
    const perProgram: { slot: number; accounts: KeyedAccountInfo[] }[] = [];
    for (const program of this.programs) {
      const res = await this.connection.getProgramAccounts(program, { commitment: this.commitment, withContext: true, encoding: "base64" });
      perProgram.push({ slot: res.context.slot, accounts: res.value.map((v) => ({ accountId: v.pubkey, accountInfo: v.account })) });
      total += res.value.length;
    }
    const history = withHistory ? await this.history(this.opts.historyLimit ?? 10_000) : null;
    onTotal?.(total + (history?.events.length ?? 0));
    // Events first (oldest first), then the accounts as of the snapshot.
    if (history) await this.deliverHistory(sink, history, 0);
    const seen = new Set<string>();
    let maxSlot = 0;
    for (const p of perProgram) {
      maxSlot = Math.max(maxSlot, p.slot);
      for (let i = 0; i < p.accounts.length; i += SNAPSHOT_CHUNK) {
        const accounts: AccountUpdate[] = p.accounts.slice(i, i + SNAPSHOT_CHUNK).map((a) => {
          const pubkey = a.accountId.toBase58();
          seen.add(pubkey);
          return { slot: p.slot, writeVersion: 0, pubkey, owner: a.accountInfo.owner.toBase58(), data: Buffer.from(a.accountInfo.data) };
        });
        await sink({ slot: p.slot, writeVersion: 0, accounts, transactions: [], cursor: this.cursor() });
      }
    }
    // Known accounts absent from the snapshot were closed.
    const gone = [...this.known].filter((k) => !seen.has(k));
    for (let i = 0; i < gone.length; i += SNAPSHOT_CHUNK) {
      const accounts = gone.slice(i, i + SNAPSHOT_CHUNK).map((pubkey) => ({ slot: maxSlot, writeVersion: 0, pubkey, owner: "", data: null }));
      await sink({ slot: maxSlot, writeVersion: 0, accounts, transactions: [], cursor: this.cursor() });
    }
    for (const k of gone) this.known.delete(k);
    for (const k of seen) this.known.add(k);
  }

  /**
   * The checkpoint's cursor: every program's history cursor, with `moved` ones replaced, and the
   * live deliveries that have waited for their listing longer than one gap check.
   */
  private cursor(moved?: Map<string, string>): string {
    const out: Record<string, unknown> = Object.fromEntries(moved ? new Map([...this.cursors, ...moved]) : this.cursors);
    const waiting: [string, number, number?][] = [];
    for (const [sig, u] of this.unverified) {
      if (u.checks < 1) continue;
      const forked = this.forkedLive.get(sig);
      waiting.push(forked === undefined ? [sig, u.slot] : [sig, u.slot, forked]);
      if (waiting.length >= UNCONFIRMED_KEPT) break;
    }
    if (waiting.length) out._unconfirmed = waiting;
    return JSON.stringify(out);
  }

  private restoreCursor(c: string): void {
    const parsed = (c ? JSON.parse(c) : {}) as Record<string, unknown>;
    this.cursors = new Map(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === "string"));
    const waiting = (parsed._unconfirmed ?? []) as [string, number, number?][];
    for (const [sig, slot, forked] of waiting) {
      this.unverified.set(sig, { slot, checks: 1 });
      if (forked !== undefined) this.forkedLive.set(sig, forked);
    }
  }

  /**
   * Moves each program's cursor back to its newest signature older than `slot`, unless the cursor
   * is older already (none older: no cursor, the next read starts over, up to historyLimit), and
   * forgets the live deliveries from `slot` on, so the next history read fetches them again.
   */
  private async rewindBefore(slot: number): Promise<void> {
    for (const program of this.programs) {
      const id = program.toBase58();
      const cur = this.cursors.get(id);
      let before: string | undefined;
      let passed = cur === undefined;
      let to: string | null = null;
      for (;;) {
        const page = await this.connection.getSignaturesForAddress(program, { before, limit: 1000 }, this.finality);
        for (const x of page) {
          if (x.signature === cur) passed = true;
          if (x.slot < slot) {
            to = x.signature;
            break;
          }
        }
        if (to !== null || page.length < 1000) break;
        before = page[page.length - 1].signature;
      }
      if (to === null) this.cursors.delete(id);
      else if (passed) this.cursors.set(id, to);
    }
    for (const [sig, s] of this.seenLive) {
      if (s < slot) continue;
      this.seenLive.delete(sig);
      this.forkedLive.delete(sig);
    }
  }

  /**
   * Live deliveries no listing confirmed whose slot is `orphanSlots` behind the node, looked up by
   * signature: those the chain does not have at that slot (see "Forks" in the header), with the
   * slot the chain has them at, if any.
   */
  private async orphans(anyAge = false): Promise<Orphan[]> {
    const due = [...this.unverified].filter(([sig, u]) => !this.pendingForks.has(sig) && (anyAge || u.slot + (this.opts.orphanSlots ?? 160) < this.liveSlot));
    const out: Orphan[] = [];
    for (let i = 0; i < due.length; i += 256) {
      const chunk = due.slice(i, i + 256);
      const st = await this.connection.getSignatureStatuses(
        chunk.map(([sig]) => sig),
        { searchTransactionHistory: true },
      );
      chunk.forEach(([sig, u], j) => {
        const x = st.value[j];
        if (x && x.slot === u.slot && !this.forkedLive.has(sig)) this.unverified.delete(sig);
        else out.push([sig, Math.min(u.slot, this.forkedLive.get(sig) ?? u.slot), x?.slot]);
      });
    }
    return out;
  }

  /**
   * Whether the live stream delivered a listed transaction at the slot the chain lists it at (and
   * at that slot only); if so, it is confirmed.
   */
  private delivered(x: ConfirmedSignatureInfo): boolean {
    const ok = this.seenLive.get(x.signature) === x.slot && !this.forkedLive.has(x.signature);
    if (ok) this.unverified.delete(x.signature);
    return ok;
  }

  /** A listed transaction the live stream delivered, but not (only) at the listed slot. */
  private forkOf(x: ConfirmedSignatureInfo): Orphan | null {
    const at = this.seenLive.get(x.signature);
    if (at === undefined || this.delivered(x)) return null;
    return [x.signature, Math.min(at, this.forkedLive.get(x.signature) ?? at), x.slot];
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
    for (const [k, v] of h.newest) this.cursors.set(k, v);
    // Signatures below the newest listed slot cannot be listed again.
    for (const [sig, slot] of this.seenLive) {
      if (slot >= h.floor) continue;
      this.seenLive.delete(sig);
      this.forkedLive.delete(sig);
    }
  }

  /**
   * Transactions of the programs after each program's cursor (all of them without one, up to
   * `limit` per program), oldest first, leaving out those the live stream already delivered,
   * with the newest signature listed per program (where deliverHistory moves the cursors).
   */
  private async history(limit: number): Promise<History> {
    const listed = new Map<string, ConfirmedSignatureInfo>();
    const newest = new Map<string, string>();
    for (const program of this.programs) {
      const id = program.toBase58();
      const until = this.cursors.get(id);
      const pages: ConfirmedSignatureInfo[][] = [];
      let before: string | undefined;
      let got = 0;
      for (;;) {
        const page = await this.connection.getSignaturesForAddress(program, { before, until, limit: 1000 }, this.finality);
        pages.push(page);
        got += page.length;
        // The limit bounds a first read (no cursor); after a gap, read back to the cursor whatever its length.
        if (page.length < 1000 || (!until && got >= limit)) break;
        before = page[page.length - 1].signature;
      }
      const all = pages.flat();
      if (all.length) newest.set(id, all[0].signature);
      // Newest first from the node: reversed, so the order within a slot is kept when sorted.
      for (const s of all.reverse()) if (!listed.has(s.signature)) listed.set(s.signature, s);
    }
    const ordered = [...listed.values()].sort((a, b) => a.slot - b.slot);
    const out: TxEvent[] = [];
    const forked: Orphan[] = [];
    for (const s of ordered) {
      // Not a fork and seen live: delivered at the listed slot (forkOf confirmed it).
      const fork = this.forkOf(s);
      if (fork) forked.push(fork);
      else if (this.seenLive.has(s.signature)) continue;
      let tx = await this.connection.getTransaction(s.signature, { commitment: this.finality, maxSupportedTransactionVersion: 0 });
      // Listed but not yet readable happens for a moment on some nodes.
      for (let i = 0; !tx && i < 10; i++) {
        await new Promise((r) => setTimeout(r, 200));
        tx = await this.connection.getTransaction(s.signature, { commitment: this.finality, maxSupportedTransactionVersion: 0 });
      }
      if (!tx) throw new Error(`getTransaction ${s.signature}: not found at ${this.finality}`);
      out.push({
        signature: s.signature,
        slot: tx.slot,
        writeVersion: 0,
        err: tx.meta?.err ? JSON.stringify(tx.meta.err) : null,
        logs: tx.meta?.logMessages ?? [],
        fromHistory: true,
      });
    }
    return { events: out, newest, floor: ordered.length ? ordered[ordered.length - 1].slot : 0, forked };
  }

  async start(from: Checkpoint | null, sink: BatchSink): Promise<void> {
    this.sink = sink;
    this.stopped = false;
    this.wv = from?.writeVersion ?? 0;
    this.restoreCursor(from?.cursor ?? "");
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
    if ((this.opts.gapCheckMs ?? 2_000) > 0)
      this.timers.push(setInterval(() => void this.gapCheck().catch((e) => this.opts.onError?.(e)), this.opts.gapCheckMs ?? 2_000));
    // Live deliveries the checkpoint kept as unconfirmed: looked up now, whatever their age, so a
    // fork among them is retracted with this first read rather than after a second one.
    const restored = this.unverified.size ? await this.orphans(true).catch(() => [] as Orphan[]) : [];
    await this.run(async () => {
      if (this.sink) await this.reconcileNow(this.sink, restored);
    });
  }

  private onAccount(a: KeyedAccountInfo, ctx: Context): void {
    this.liveSlot = Math.max(this.liveSlot, ctx.slot);
    const pubkey = a.accountId.toBase58();
    const owner = a.accountInfo.owner.toBase58();
    const ours = this.programs.some((p) => p.toBase58() === owner) && a.accountInfo.lamports > 0;
    this.queueAccounts.push({ slot: ctx.slot, writeVersion: ++this.wv, pubkey, owner, data: ours ? Buffer.from(a.accountInfo.data) : null });
    if (ours) this.known.add(pubkey);
    else this.known.delete(pubkey);
    if (this.queueAccounts.length + this.queueTxs.length >= (this.opts.maxBatch ?? 1000)) void this.flush();
  }

  private onLogs(l: Logs, ctx: Context): void {
    this.liveSlot = Math.max(this.liveSlot, ctx.slot);
    this.queueTxs.push({ signature: l.signature, slot: ctx.slot, writeVersion: ++this.wv, err: l.err ? JSON.stringify(l.err) : null, logs: l.logs });
    // Rent reclaims close accounts and log no event; a closed account belongs to the system
    // program afterwards, so programSubscribe never reports it. Check such transactions' accounts.
    if (!l.err && !l.logs.some((x) => x.startsWith("Program data: ")))
      this.closeChecks.push({ signature: l.signature, slot: ctx.slot, attempts: 0, nextAt: 0 });
  }

  /**
   * Deletions caused by the due close checks: the accounts of their transactions this source
   * knows that no longer exist (or left the programs). A transaction not yet readable at
   * "confirmed" (an indexer at "processed" sees it a slot earlier) is retried every 200 ms, 25
   * times at most; the periodic reconcile covers the rest.
   */
  private async closedBy(): Promise<AccountUpdate[]> {
    const now = Date.now();
    const due = this.closeChecks.filter((c) => c.nextAt <= now);
    this.closeChecks = this.closeChecks.filter((c) => c.nextAt > now);
    const out: AccountUpdate[] = [];
    for (const c of due) {
      const tx = await this.connection.getTransaction(c.signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 }).catch(() => null);
      if (!tx) {
        if (++c.attempts < 25) this.closeChecks.push({ ...c, nextAt: now + 200 });
        continue;
      }
      const keys = [
        ...tx.transaction.message.staticAccountKeys.map((k) => k.toBase58()),
        ...(tx.meta?.loadedAddresses?.writable ?? []).map((k) => k.toBase58()),
      ];
      const candidates = keys.filter((k) => this.known.has(k));
      if (!candidates.length) continue;
      const infos = await this.connection.getMultipleAccountsInfo(
        candidates.map((k) => new PublicKey(k)),
        this.commitment,
      );
      candidates.forEach((pubkey, i) => {
        const a = infos[i];
        const ours = a && a.lamports > 0 && this.programs.some((p) => p.equals(a.owner));
        if (ours) return;
        out.push({ slot: Math.max(c.slot, tx.slot), writeVersion: ++this.wv, pubkey, owner: "", data: null });
        this.known.delete(pubkey);
      });
    }
    return out;
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
      if (this.closeChecks.length) await this.deliverLive(this.sink, await this.closedBy(), []);
    });
  }

  private async deliverLive(sink: BatchSink, accounts: AccountUpdate[], transactions: TxEvent[]): Promise<void> {
    if (accounts.length === 0 && transactions.length === 0) return;
    const slot = Math.max(0, ...accounts.map((a) => a.slot), ...transactions.map((t) => t.slot));
    await sink({ slot, writeVersion: this.wv, accounts, transactions, cursor: this.cursor() });
    // Delivered: a reconcile's history read need not fetch these again (at the same slot).
    for (const t of transactions) {
      const at = this.seenLive.get(t.signature);
      if (at === undefined) this.seenLive.set(t.signature, t.slot);
      else if (at !== t.slot) this.forkedLive.set(t.signature, Math.min(at, t.slot, this.forkedLive.get(t.signature) ?? at));
      // Only the gap check confirms (or retracts) them; without it nothing would empty this map.
      if ((this.opts.gapCheckMs ?? 2_000) > 0 && !this.unverified.has(t.signature)) {
        this.unverified.set(t.signature, { slot: t.slot, checks: 0 });
        if (this.unverified.size > UNVERIFIED_MAX) this.unverified.delete(this.unverified.keys().next().value as string);
      }
    }
  }

  /** Reconciling snapshot: the transactions since the history cursors, then the accounts as of now. */
  reconcile(): Promise<void> {
    return this.run(async () => {
      if (this.sink) await this.reconcileNow(this.sink);
    });
  }

  /**
   * History since the cursors, then the accounts as of now. Forks (`retract`, and those the history
   * read finds) rewind the cursors and are read again, their retraction delivered with that read.
   */
  private async reconcileNow(sink: BatchSink, retract: Orphan[] = []): Promise<void> {
    const limit = this.opts.historyLimit ?? 10_000;
    // Forks known already rewind before the first read; a read that finds more rewinds again.
    let found = [...this.pendingForks.values(), ...retract];
    let h: History | null = null;
    if (!found.length) {
      h = await this.history(limit);
      found = h.forked;
    }
    const forked = new Map<string, Orphan>();
    for (let round = 0; found.length && round < FORK_ROUNDS; round++) {
      const from = Math.min(...found.map(([, live, chain]) => Math.min(live, chain ?? live))) - FORK_MARGIN_SLOTS;
      // Kept until the retraction commits: rewinding forgets what the live stream said about them,
      // and about every transaction notified at two slots from `from` on, which are forks too.
      for (const [sig, slot] of this.forkedLive) if (slot >= from && !found.some((o) => o[0] === sig)) found.push([sig, slot, undefined]);
      for (const o of found) {
        forked.set(o[0], o);
        this.pendingForks.set(o[0], o);
        this.seenLive.delete(o[0]);
        this.forkedLive.delete(o[0]);
        this.unverified.delete(o[0]);
      }
      await this.rewindBefore(from);
      h = await this.history(limit);
      found = h.forked;
    }
    if (!h) throw new Error("unreachable: a fork round reads history");
    if (found.length) {
      // Still finding forks: deliver what was read but move no cursor, so the next check lists
      // these again (they stay in seenLive, and pending) and retracts them.
      for (const o of found) this.pendingForks.set(o[0], o);
      h = { ...h, newest: new Map(), floor: 0 };
    }
    const retractions = [...forked.values()].map(([signature, slot]): TxEvent => ({ signature, slot, writeVersion: 0, err: null, logs: [], retracted: true }));
    if (retractions.length) this.opts.onRetract?.([...forked.keys()]);
    await this.deliverHistory(sink, h, this.wv, retractions);
    for (const sig of forked.keys()) this.pendingForks.delete(sig);
    await this.snapshotInto(sink, undefined, false);
  }

  /**
   * The gap check (see the header): a reconcile now when a signature listed by the previous check
   * is still undelivered; otherwise each program's cursor moves to the newest signature that has
   * no undelivered one before it.
   */
  async gapCheck(): Promise<void> {
    if (!this.sink || this.stopped || this.gapInFlight) return;
    this.gapInFlight = true;
    try {
      // Listed outside the delivery chain, so the live flushes never wait for these round trips.
      const lists: { id: string; from: string | undefined; listed: ConfirmedSignatureInfo[] }[] = [];
      for (const program of this.programs) {
        const id = program.toBase58();
        const from = this.cursors.get(id);
        lists.push({ id, from, listed: await this.connection.getSignaturesForAddress(program, { until: from, limit: 1000 }, this.finality) });
      }
      // What these lists show delivered at its slot is confirmed; for what is left, the node's slot
      // says whether it is old enough to look up (live notifications alone stop with the activity).
      const forks: Orphan[] = [];
      for (const { listed } of lists) {
        for (const x of listed) {
          const fork = this.forkOf(x);
          if (fork) forks.push(fork);
        }
      }
      for (const u of this.unverified.values()) u.checks++;
      let orphans: Orphan[] = [];
      try {
        if (this.unverified.size) this.liveSlot = Math.max(this.liveSlot, await this.connection.getSlot(this.commitment));
        orphans = await this.orphans();
      } catch (e) {
        // The lookup waits for the next check; the gap check itself goes on.
        this.opts.onError?.(e);
      }
      await this.run(async () => {
        if (!this.sink || this.stopped) return;
        // Still unresolved (a reconcile meanwhile may have read them again).
        const gone = [...forks.filter(([sig]) => this.seenLive.has(sig)), ...orphans.filter(([sig]) => this.unverified.has(sig))];
        if (gone.length || this.pendingForks.size) {
          await this.reconcileNow(this.sink, gone);
          return;
        }
        const undelivered = new Set<string>();
        const moves = new Map<string, ConfirmedSignatureInfo>();
        // Whether every program listing something moves its cursor (then seenLive can be pruned).
        let allMove = true;
        for (const { id, from, listed } of lists) {
          // A reconcile moved this cursor meanwhile: this list is stale, the next check reads anew.
          if (this.cursors.get(id) !== from) {
            allMove = false;
            continue;
          }
          // Newest first: the cursor may move to the one just older than the oldest undelivered;
          // not past a full page (older signatures beyond it were not looked at).
          let oldest = -1;
          listed.forEach((x, i) => {
            if (this.delivered(x)) return;
            undelivered.add(x.signature);
            oldest = i;
          });
          if (oldest + 1 < listed.length && listed.length < 1000) moves.set(id, listed[oldest + 1]);
          else if (listed.length) allMove = false;
        }
        const missed = [...undelivered].filter((x) => this.suspects.has(x));
        this.suspects = missed.length ? new Set() : undelivered;
        if (missed.length) {
          this.opts.onGap?.(missed);
          await this.reconcileNow(this.sink);
          return;
        }
        for (const [id, x] of moves) this.cursors.set(id, x.signature);
        // Delivered signatures below every moved cursor's slot cannot be listed again.
        if (allMove && moves.size) {
          const floor = Math.min(...[...moves.values()].map((x) => x.slot));
          for (const [sig, slot] of this.seenLive) {
            if (slot >= floor) continue;
            this.seenLive.delete(sig);
            this.forkedLive.delete(sig);
          }
        }
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
      const listed = await this.connection.getSignaturesForAddress(
        program,
        { until: this.cursors.get(program.toBase58()), limit: 1000, minContextSlot: slot },
        this.finality,
      );
      if (listed.length === 1000) return false;
      if (listed.some((s) => s.slot <= slot && (this.seenLive.get(s.signature) !== s.slot || this.forkedLive.has(s.signature)))) return false;
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
