/**
 * ChainGateway over an in-process SVM engine (solana-bankrun or LiteSVM) running the compiled
 * programs: the local stack and the tests. Transactions are processed one at a time in arrival
 * order (a single-leader chain); `submit` resolves after processing, so a failure comes back as a
 * preflight `SubmitError` and a success is confirmed by the time the caller answers `pending`.
 *
 * Listeners registered with `onProcessed` see every processed transaction with the accounts it
 * referenced (the indexer's bankrun source reads their post-state from the engine).
 *
 * Fault injection for the local stack: `dropNext(n)` makes the next n submissions vanish (a
 * signature is returned but the transaction never lands), as an RPC node may lose them.
 */
import { PublicKey, Transaction, type AccountInfo } from "@solana/web3.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { utils } from "../../idl/client/anchor";
import { BankrunEngine, LiteSvmEngine, type Engine, type EngineName, type ProgramSpec, type StartOptions } from "../../harness/engines";
import { SubmitError, type ChainGateway, type SubmissionStatus } from "./gateway";

export interface ProcessedTx {
  signature: string;
  slot: bigint;
  err: string | null;
  code: number | null;
  logs: string[];
  /** Every account key of the message, base58 (the shape indexer/sources/bankrun.ts takes). */
  accountKeys: string[];
}

export type ProcessedListener = (p: ProcessedTx) => void | Promise<void>;

export class EngineGateway implements ChainGateway {
  readonly kind = "engine" as const;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly statuses = new Map<string, SubmissionStatus>();
  private readonly listeners: ProcessedListener[] = [];
  private drops = 0;
  /** Blockhashes handed out and still "recent" (engine blockhashes change with the slot). */
  private readonly recent: string[] = [];

  constructor(readonly engine: Engine) {
    // LiteSVM knows only its latest blockhash (and the engine expires it after every
    // transaction); like a validator, the gateway accepts any of the last 150 it handed out.
    if (engine instanceof LiteSvmEngine) {
      engine.svm.withBlockhashCheck(false);
      this.checkBlockhash = true;
    }
  }
  private readonly checkBlockhash: boolean = false;

  /** Deploys `programs` as upgradeable programs whose upgrade authority is `opts.upgradeAuthority`. */
  static async start(deployDir: string, programs: ProgramSpec[], engine: EngineName = "bankrun", opts: StartOptions = {}): Promise<EngineGateway> {
    for (const p of programs) {
      if (!existsSync(join(deployDir, `${p.name}.so`))) throw new Error(`${p.name}.so missing in ${deployDir}: run npm run build:programs`);
    }
    return new EngineGateway(
      engine === "litesvm" ? await LiteSvmEngine.start(deployDir, programs, opts) : await BankrunEngine.start(deployDir, programs, opts),
    );
  }

  onProcessed(l: ProcessedListener): () => void {
    this.listeners.push(l);
    return () => {
      const i = this.listeners.indexOf(l);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /**
   * Asynchronous submission (RPC-like, no preflight): `submit` returns the signature at once and
   * the transaction is processed afterwards in order; a failure is reported by `status` only.
   */
  asyncSubmit = false;

  /** The next `n` submissions are accepted but never processed (a lost transaction). */
  dropNext(n = 1): void {
    this.drops += n;
  }

  async blockhash(): Promise<string> {
    const h = await this.engine.blockhash();
    if (this.recent[this.recent.length - 1] !== h) {
      this.recent.push(h);
      if (this.recent.length > 150) this.recent.shift();
    }
    return h;
  }

  async isBlockhashValid(blockhash: string): Promise<boolean> {
    return this.recent.includes(blockhash);
  }

  getAccount(address: PublicKey): Promise<AccountInfo<Buffer> | null> {
    return this.engine.getAccount(address);
  }

  getAccounts(addresses: PublicKey[]): Promise<(AccountInfo<Buffer> | null)[]> {
    return Promise.all(addresses.map((a) => this.engine.getAccount(a)));
  }

  rentExempt(bytes: number): Promise<bigint> {
    return this.engine.rentExempt(bytes);
  }

  async now(): Promise<bigint> {
    return (await this.engine.getClock()).unixTimestamp;
  }

  /** LocalChainReader of the indexer's bankrun source. */
  async getSlot(): Promise<bigint> {
    return (await this.engine.getClock()).slot;
  }

  /** Moves the chain clock (and the slot by one). */
  async setTime(unix: bigint): Promise<void> {
    await this.serial(async () => {
      const c = await this.engine.getClock();
      this.engine.setClock({ ...c, slot: c.slot + 1n, unixTimestamp: unix });
    });
  }

  async advance(seconds: bigint): Promise<void> {
    await this.setTime((await this.now()) + seconds);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  async submit(tx: Transaction): Promise<string> {
    if (!tx.signature) throw new SubmitError("transaction is not signed", null);
    const signature = utils.bytes.bs58.encode(tx.signature);
    const known = this.statuses.get(signature);
    if (known && (known.state === "confirmed" || known.state === "pending")) return signature;
    if (this.checkBlockhash && !this.recent.includes(tx.recentBlockhash ?? "")) throw new SubmitError("Blockhash not found", null);
    if (this.drops > 0) {
      this.drops--;
      return signature;
    }
    this.statuses.set(signature, { state: "pending", code: null, error: null, slot: null });
    if (this.asyncSubmit) {
      // Like an RPC node with skipPreflight: accepted now, processed in order, failures only
      // visible through status().
      void this.process(tx, signature).catch(() => undefined);
      return signature;
    }
    await this.process(tx, signature);
    return signature;
  }

  private async process(tx: Transaction, signature: string): Promise<void> {
    // Listeners run inside the serial section, so they read each transaction's post-state before
    // the next one is processed (the indexer's source reads accounts lazily).
    const r = await this.serial(async () => {
      const r = await this.engine.process(tx);
      const slot = (await this.engine.getClock()).slot;
      const status: SubmissionStatus =
        r.error === null
          ? { state: "confirmed", code: null, error: null, slot: Number(slot) }
          : { state: "failed", code: r.code, error: r.error, slot: Number(slot) };
      this.statuses.set(signature, status);
      const accountKeys = tx.compileMessage().accountKeys.map((k) => k.toBase58());
      const p: ProcessedTx = { signature, slot, err: r.error, code: r.code, logs: r.logs, accountKeys };
      for (const l of this.listeners) await l(p);
      return r;
    });
    if (r.error !== null) {
      // Preflight semantics: the runtime refused it; nothing but the fee moved.
      if (!this.asyncSubmit) this.statuses.delete(signature);
      throw new SubmitError(r.error, r.code, r.logs);
    }
  }

  async status(signature: string): Promise<SubmissionStatus> {
    return this.statuses.get(signature) ?? { state: "unknown", code: null, error: null, slot: null };
  }

  /** Processing is synchronous within `submit`: an unknown signature will never land. */
  async waitFor(signature: string, timeoutMs = 30_000): Promise<SubmissionStatus> {
    if (!this.statuses.has(signature)) return this.status(signature);
    const until = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.status(signature);
      if (s.state === "confirmed" || s.state === "failed" || Date.now() >= until) return s;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
