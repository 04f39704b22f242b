/**
 * The RPC source (@solana/web3.js), for a validator or cluster:
 * - snapshot: getProgramAccounts (with context slot) per program, and the programs' transaction
 *   history by signature (getSignaturesForAddress + getTransaction) for events;
 * - live: programSubscribe (onProgramAccountChange) for account writes and logsSubscribe
 *   (onLogs, mentions = program) for events, at the configured commitment;
 * - reconnect: when the websocket reopens (web3.js resubscribes) and every reconcileMs, a
 *   reconciling snapshot runs: current accounts (deletions of known accounts that are gone
 *   included) and the transactions since the last signature seen, so nothing missed during a
 *   drop is lost.
 *
 * Write versions: RPC notifications carry a slot but no write version; the source numbers
 * live updates with an arrival counter seeded from the checkpoint (so it keeps rising across
 * restarts), and gives snapshot rows write version 0 at the snapshot's slot: a live update of
 * the same slot wins over the snapshot (it is at least as new), a later slot always wins.
 *
 * Status: written against web3.js's documented API; not yet run against a solana-test-validator
 * (see the indexer's report / README).
 */
import { Connection, PublicKey, type Commitment, type ConfirmedSignatureInfo, type KeyedAccountInfo, type Context, type Logs } from "@solana/web3.js";
import type { AccountSource, AccountUpdate, Batch, BatchSink, Checkpoint, TxEvent } from "./types";

export interface RpcSourceOptions {
  url: string;
  wsUrl?: string;
  programs: (string | PublicKey)[];
  commitment?: Commitment;
  name?: string;
  /** Accounts the store already has (pubkey list), so a reconcile can report those now gone. */
  known?: Iterable<string>;
  /** Max transactions of history to read per program in a snapshot (newest first). */
  historyLimit?: number;
  /** Live updates are flushed as one batch every flushMs (or at maxBatch items). */
  flushMs?: number;
  maxBatch?: number;
  /** Periodic reconcile interval; 0 disables it (reconcile still runs on reconnect). */
  reconcileMs?: number;
  connection?: Connection;
  onError?: (e: unknown) => void;
}

const SNAPSHOT_CHUNK = 500;

export class RpcSource implements AccountSource {
  readonly name: string;
  readonly connection: Connection;
  private readonly programs: PublicKey[];
  private readonly commitment: Commitment;
  private readonly known = new Set<string>();
  private wv = 0;
  private lastSignature = "";
  private queueAccounts: AccountUpdate[] = [];
  private queueTxs: TxEvent[] = [];
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
    const history = withHistory ? await this.history(null, this.opts.historyLimit ?? 10_000) : [];
    onTotal?.(total + history.length);
    // Events first (oldest first), then the accounts as of the snapshot.
    for (let i = 0; i < history.length; i += SNAPSHOT_CHUNK) {
      const txs = history.slice(i, i + SNAPSHOT_CHUNK);
      const last = txs[txs.length - 1];
      await sink({ slot: last.slot, writeVersion: 0, accounts: [], transactions: txs, cursor: last.signature });
      this.lastSignature = last.signature;
    }
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
        await sink({ slot: p.slot, writeVersion: 0, accounts, transactions: [], cursor: this.lastSignature });
      }
    }
    // Known accounts absent from the snapshot were closed.
    const gone = [...this.known].filter((k) => !seen.has(k));
    for (let i = 0; i < gone.length; i += SNAPSHOT_CHUNK) {
      const accounts = gone.slice(i, i + SNAPSHOT_CHUNK).map((pubkey) => ({ slot: maxSlot, writeVersion: 0, pubkey, owner: "", data: null }));
      await sink({ slot: maxSlot, writeVersion: 0, accounts, transactions: [], cursor: this.lastSignature });
    }
    for (const k of gone) this.known.delete(k);
    for (const k of seen) this.known.add(k);
  }

  /** Successful and failed transactions of the programs after `until` (exclusive), oldest first. */
  private async history(until: string | null, limit: number): Promise<TxEvent[]> {
    const sigs = new Map<string, ConfirmedSignatureInfo>();
    const finality = this.commitment === "finalized" ? "finalized" : "confirmed";
    for (const program of this.programs) {
      let before: string | undefined;
      let got = 0;
      for (;;) {
        const page = await this.connection.getSignaturesForAddress(program, { before, until: until ?? undefined, limit: 1000 }, finality);
        for (const s of page) sigs.set(s.signature, s);
        got += page.length;
        if (page.length < 1000 || got >= limit) break;
        before = page[page.length - 1].signature;
      }
    }
    const ordered = [...sigs.values()].sort((a, b) => a.slot - b.slot);
    const out: TxEvent[] = [];
    for (const s of ordered) {
      const tx = await this.connection.getTransaction(s.signature, { commitment: finality, maxSupportedTransactionVersion: 0 });
      if (!tx) continue;
      out.push({ signature: s.signature, slot: tx.slot, writeVersion: 0, err: tx.meta?.err ? JSON.stringify(tx.meta.err) : null, logs: tx.meta?.logMessages ?? [] });
    }
    return out;
  }

  async start(from: Checkpoint | null, sink: BatchSink): Promise<void> {
    this.sink = sink;
    this.stopped = false;
    this.wv = from?.writeVersion ?? 0;
    this.lastSignature = from?.cursor ?? "";
    for (const program of this.programs) {
      this.accountSubs.push(this.connection.onProgramAccountChange(program, (a, ctx) => this.onAccount(a, ctx), { commitment: this.commitment, encoding: "base64" }));
      this.logSubs.push(this.connection.onLogs(program, (l, ctx) => this.onLogs(l, ctx), this.commitment));
    }
    const ws = (this.connection as unknown as { _rpcWebSocket?: { on(ev: string, f: () => void): void } })._rpcWebSocket;
    let opened = 0;
    ws?.on("open", () => {
      if (opened++ > 0 && !this.stopped) void this.reconcile();
    });
    this.timers.push(setInterval(() => void this.flush(), this.opts.flushMs ?? 50));
    if ((this.opts.reconcileMs ?? 60_000) > 0) this.timers.push(setInterval(() => void this.reconcile(), this.opts.reconcileMs ?? 60_000));
    await this.reconcile();
  }

  private onAccount(a: KeyedAccountInfo, ctx: Context): void {
    const pubkey = a.accountId.toBase58();
    const owner = a.accountInfo.owner.toBase58();
    const ours = this.programs.some((p) => p.toBase58() === owner) && a.accountInfo.lamports > 0;
    this.queueAccounts.push({ slot: ctx.slot, writeVersion: ++this.wv, pubkey, owner, data: ours ? Buffer.from(a.accountInfo.data) : null });
    if (ours) this.known.add(pubkey);
    else this.known.delete(pubkey);
    if (this.queueAccounts.length + this.queueTxs.length >= (this.opts.maxBatch ?? 1000)) void this.flush();
  }

  private onLogs(l: Logs, ctx: Context): void {
    this.queueTxs.push({ signature: l.signature, slot: ctx.slot, writeVersion: ++this.wv, err: l.err ? JSON.stringify(l.err) : null, logs: l.logs });
  }

  /** Delivers queued live updates as one batch. */
  flush(): Promise<void> {
    return this.run(async () => {
      if (!this.sink || (this.queueAccounts.length === 0 && this.queueTxs.length === 0)) return;
      const accounts = this.queueAccounts;
      const transactions = this.queueTxs;
      this.queueAccounts = [];
      this.queueTxs = [];
      const slot = Math.max(0, ...accounts.map((a) => a.slot), ...transactions.map((t) => t.slot));
      const lastTx = transactions.filter((t) => !t.err).at(-1);
      if (lastTx) this.lastSignature = lastTx.signature;
      const b: Batch = { slot, writeVersion: this.wv, accounts, transactions, cursor: this.lastSignature };
      await this.sink(b);
    });
  }

  /** Reconciling snapshot: current accounts and the transactions since the last signature. */
  reconcile(): Promise<void> {
    return this.run(async () => {
      if (!this.sink) return;
      const sink = this.sink;
      // The signature gap first (events), then the accounts as of now.
      if (this.lastSignature) {
        const missed = await this.history(this.lastSignature, this.opts.historyLimit ?? 10_000);
        if (missed.length) {
          const last = missed[missed.length - 1];
          await sink({ slot: last.slot, writeVersion: this.wv, accounts: [], transactions: missed, cursor: last.signature });
          this.lastSignature = last.signature;
        }
      }
      await this.snapshotInto(sink, undefined, !this.lastSignature);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
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
