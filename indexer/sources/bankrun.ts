/**
 * The local-chain source (solana-bankrun, or any in-process SVM that can read accounts): the
 * chain calls `onTransaction` after each processed transaction (TestChain's observer hook, or
 * `IndexedBankrun` below for the local stack); the source reads every account the transaction
 * touched, keeps those owned by the indexed programs (and reports deletions of ones it knew),
 * and delivers one batch per transaction with the transaction's logs.
 *
 * Write versions: the source numbers transactions 1, 2, 3... (a chain-wide order, as a
 * validator's write_version is); every update of one transaction carries its number.
 * History: it keeps the account keys and the event-bearing transactions it has seen, so a
 * snapshot (backfill) can rebuild the store as getProgramAccounts + getTransaction would.
 */
import { PublicKey, type Transaction } from "@solana/web3.js";
import type { ProgramTestContext } from "solana-bankrun";
import type { AccountSource, AccountUpdate, Batch, BatchSink, Checkpoint, TxEvent } from "./types";
import { newer } from "./types";
import { utils } from "../../idl/client/anchor";

export interface ProcessedTx {
  signature: string;
  err: string | null;
  logs: string[];
  accountKeys: string[];
}

export interface LocalAccount {
  owner: PublicKey;
  data: Uint8Array;
  lamports: number | bigint;
}
export interface LocalChainReader {
  getAccount(address: PublicKey): Promise<LocalAccount | null>;
  getSlot(): Promise<bigint | number>;
}

export class BankrunSource implements AccountSource {
  readonly name: string;
  private readonly programs: Set<string>;
  private seq = 0;
  private sink: BatchSink | null = null;
  private from: Checkpoint | null = null;
  /** Program-owned accounts seen so far, with their owner. */
  private readonly owned = new Map<string, string>();
  /** Successful transactions with logs of an indexed program (the chain's history). */
  private readonly history: TxEvent[] = [];
  private queue: Promise<void> = Promise.resolve();
  /** Transactions the chain reported, and those handled without error (a failed apply is lost: no reconcile here). */
  private received = 0;
  private handled = 0;

  constructor(
    readonly reader: LocalChainReader,
    opts: { programs: (string | PublicKey)[]; name?: string },
  ) {
    this.programs = new Set(opts.programs.map((p) => p.toString()));
    this.name = opts.name ?? "bankrun";
  }

  /** Transactions processed so far (the last write version). */
  get writeVersion(): number {
    return this.seq;
  }

  /** Called by the chain after each processed transaction; resolves once the batch is applied. */
  onTransaction(tx: ProcessedTx): Promise<void> {
    this.received++;
    const run = this.queue.then(() => this.handle(tx)).then(() => void this.handled++);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async handle(tx: ProcessedTx): Promise<void> {
    const wv = ++this.seq;
    const slot = Number(await this.reader.getSlot());
    const accounts: AccountUpdate[] = [];
    if (!tx.err) {
      for (const key of new Set(tx.accountKeys)) {
        const a = await this.reader.getAccount(new PublicKey(key));
        const owner = a?.owner.toBase58();
        const live = a && Number(a.lamports) > 0 && owner !== undefined && this.programs.has(owner);
        if (live) {
          this.owned.set(key, owner);
          accounts.push({ slot, writeVersion: wv, pubkey: key, owner, data: Buffer.from(a.data) });
        } else if (this.owned.has(key)) {
          accounts.push({ slot, writeVersion: wv, pubkey: key, owner: this.owned.get(key)!, data: null });
          this.owned.delete(key);
        }
      }
    }
    const ev: TxEvent = { signature: tx.signature, slot, writeVersion: wv, err: tx.err, logs: tx.logs };
    const mentions = tx.logs.some((l) => [...this.programs].some((p) => l.startsWith(`Program ${p} invoke`)));
    if (!tx.err && mentions) this.history.push(ev);
    if (!this.sink) return;
    if (this.from && !newer(slot, wv, this.from.slot, this.from.writeVersion)) return;
    await this.sink({ slot, writeVersion: wv, accounts, transactions: mentions ? [ev] : [], cursor: tx.signature });
  }

  async snapshot(sink: BatchSink, onTotal?: (n: number) => void): Promise<void> {
    await this.queue;
    const slot = Number(await this.reader.getSlot());
    const wv = this.seq;
    const keys = [...this.owned.keys()];
    onTotal?.(keys.length + this.history.length);
    for (let i = 0; i < this.history.length; i += 500) {
      await sink({ slot, writeVersion: wv, accounts: [], transactions: this.history.slice(i, i + 500) });
    }
    for (let i = 0; i < keys.length; i += 500) {
      const accounts: AccountUpdate[] = [];
      for (const key of keys.slice(i, i + 500)) {
        const a = await this.reader.getAccount(new PublicKey(key));
        if (a && Number(a.lamports) > 0) accounts.push({ slot, writeVersion: wv, pubkey: key, owner: a.owner.toBase58(), data: Buffer.from(a.data) });
      }
      await sink({ slot, writeVersion: wv, accounts, transactions: [] });
    }
  }

  async start(from: Checkpoint | null, sink: BatchSink): Promise<void> {
    // A local chain's state lives only in this process: a checkpoint past what this source has
    // seen belongs to an earlier chain, whose rows would shadow this one's (same PDAs, higher
    // slots). Refuse rather than silently skip or mix; empty the chain tables first.
    if (from && from.writeVersion > this.seq) {
      throw new Error(
        `store checkpoint "${from.source}" is at write version ${from.writeVersion}, past this local chain (${this.seq}): it holds an earlier chain; call resetChainTables(store) or use a fresh store`,
      );
    }
    this.from = from;
    this.sink = sink;
  }

  async stop(): Promise<void> {
    await this.queue;
    this.sink = null;
  }

  /**
   * The chain reports every transaction here before the next one runs, so with none in flight
   * and none lost the store holds everything up to the current slot.
   */
  async caughtUpTo(_slot: number): Promise<boolean> {
    return this.sink !== null && this.handled === this.received;
  }

  /** Waits until every transaction seen so far is delivered. */
  drain(): Promise<void> {
    return this.queue;
  }
}

/** A reader over a solana-bankrun context. */
export function bankrunReader(ctx: ProgramTestContext): LocalChainReader {
  return {
    async getAccount(address) {
      const a = await ctx.banksClient.getAccount(address);
      return a ? { owner: a.owner, data: a.data, lamports: a.lamports } : null;
    },
    async getSlot() {
      return ctx.banksClient.getSlot();
    },
  };
}

/**
 * The local stack's chain: a bankrun context whose every processed transaction is reported to
 * a BankrunSource. Depends on solana-bankrun only.
 */
export class IndexedBankrun {
  readonly source: BankrunSource;
  constructor(
    readonly ctx: ProgramTestContext,
    programs: (string | PublicKey)[],
    name = "bankrun",
  ) {
    this.source = new BankrunSource(bankrunReader(ctx), { programs, name });
  }

  async process(tx: Transaction): Promise<{ err: string | null; logs: string[]; signature: string }> {
    const res = await this.ctx.banksClient.tryProcessTransaction(tx);
    const err = res.result ? String(res.result) : null;
    const logs = res.meta?.logMessages ?? [];
    const signature = tx.signature ? utils.bytes.bs58.encode(tx.signature) : "";
    const accountKeys = tx.compileMessage().accountKeys.map((k) => k.toBase58());
    await this.source.onTransaction({ signature, err, logs, accountKeys });
    return { err, logs, signature };
  }
}
