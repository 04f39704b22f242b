/**
 * The test chain: the compiled programs (target/deploy/*.so) on an SVM engine (solana-bankrun
 * by default, LiteSVM with `engine: "litesvm"` or SVM_ENGINE=litesvm), with a settable clock,
 * a provider for Anchor's instruction builders, and helpers to send transactions and read
 * accounts.
 */
import { Keypair, PublicKey, Transaction, type TransactionInstruction, type AccountInfo } from "@solana/web3.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AnchorProvider } from "../idl/client/anchor";
import { utils } from "../idl/client/anchor";
import { OFFERS_PROGRAM_ID } from "../idl/client/offers";
import { BankrunEngine, LiteSvmEngine, type Engine, type EngineName, type ProgramSpec } from "./engines";

export const DEPLOY_DIR = join(import.meta.dirname, "..", "target", "deploy");
export type { ProgramSpec, EngineName } from "./engines";

export interface TxResult {
  ok: boolean;
  /** Custom program error code, when the failure was one. */
  code: number | null;
  error: string | null;
  logs: string[];
  computeUnits: bigint;
  signature: string;
}

/** What an observer of TestChain.send sees of each processed transaction (the indexer's hook). */
export interface ObservedTx {
  signature: string;
  err: string | null;
  logs: string[];
  /** Every account key of the message, base58. */
  accountKeys: string[];
}
export type TxObserver = (tx: ObservedTx) => Promise<void> | void;

export class TestChain {
  private readonly observers: TxObserver[] = [];
  /** Signatures sent under `sentUnder`, the engine's latest blockhash (see signUnique). */
  private readonly sentSignatures = new Set<string>();
  private sentUnder = "";
  private constructor(
    readonly engine: Engine,
    /** The programs' upgrade authority (loader v3), funded; it signs initialize_config. */
    readonly upgradeAuthority: Keypair,
  ) {}

  /** Registers an observer called (and awaited) after every transaction `send` processes. */
  observe(fn: TxObserver): () => void {
    this.observers.push(fn);
    return () => {
      const i = this.observers.indexOf(fn);
      if (i >= 0) this.observers.splice(i, 1);
    };
  }

  static async start(
    programs: ProgramSpec[] = [{ name: "offers", programId: OFFERS_PROGRAM_ID }],
    opts: { engine?: EngineName; upgradeAuthority?: Keypair } = {},
  ): Promise<TestChain> {
    for (const p of programs) {
      if (!existsSync(join(DEPLOY_DIR, `${p.name}.so`))) throw new Error(`${p.name}.so missing in ${DEPLOY_DIR}: run npm run build:programs`);
    }
    const name = opts.engine ?? ((process.env.SVM_ENGINE as EngineName | undefined) || "bankrun");
    const upgradeAuthority = opts.upgradeAuthority ?? Keypair.generate();
    const startOpts = { upgradeAuthority: upgradeAuthority.publicKey };
    const engine = name === "litesvm" ? await LiteSvmEngine.start(DEPLOY_DIR, programs, startOpts) : await BankrunEngine.start(DEPLOY_DIR, programs, startOpts);
    const chain = new TestChain(engine, upgradeAuthority);
    await chain.fund(upgradeAuthority.publicKey, 10_000_000_000n);
    return chain;
  }

  /**
   * A chain over an engine started elsewhere (a validator's RpcEngine). The upgrade authority is
   * the given one, else the engine's (RpcEngine: TestValidator.upgradeAuthority, by default the
   * validator's payer).
   */
  static over(engine: Engine, upgradeAuthority?: Keypair): TestChain {
    const authority = upgradeAuthority ?? engine.upgradeAuthority;
    if (!authority) throw new Error(`TestChain.over: the ${engine.name} engine knows no upgrade authority; pass it`);
    return new TestChain(engine, authority);
  }

  get payer(): Keypair {
    return this.engine.payer;
  }

  /** A provider for Anchor's instruction builders (they never touch the connection). */
  get anchorProvider(): AnchorProvider {
    return { publicKey: this.payer.publicKey, wallet: { publicKey: this.payer.publicKey } } as unknown as AnchorProvider;
  }

  async now(): Promise<bigint> {
    return (await this.engine.getClock()).unixTimestamp;
  }

  /**
   * Moves the clock to `unix` seconds (and the slot forward by one, so blockhashes change). On a
   * validator, whose clock follows the wall, waits until its clock reaches `unix` instead.
   */
  async setTime(unix: bigint): Promise<void> {
    if (this.engine.waitForTime) return this.engine.waitForTime(unix);
    const c = await this.engine.getClock();
    this.engine.setClock({ ...c, slot: c.slot + 1n, unixTimestamp: unix });
  }

  async advance(seconds: bigint): Promise<void> {
    await this.setTime((await this.now()) + seconds);
  }

  async slot(): Promise<bigint> {
    return (await this.engine.getClock()).slot;
  }

  /** Sends one transaction; the engine's payer pays fees unless `feePayer` is given. */
  async send(ixs: TransactionInstruction[], signers: Keypair[] = [], feePayer: Keypair = this.payer): Promise<TxResult> {
    const tx = new Transaction();
    tx.feePayer = feePayer.publicKey;
    tx.add(...ixs);
    const uniq = new Map([feePayer, ...signers].map((k) => [k.publicKey.toBase58(), k]));
    await this.signUnique(tx, [...uniq.values()]);
    const r = await this.engine.process(tx);
    const signature = tx.signature ? utils.bytes.bs58.encode(tx.signature) : "";
    if (this.observers.length) {
      const accountKeys = tx.compileMessage().accountKeys.map((k) => k.toBase58());
      for (const o of this.observers) await o({ signature, err: r.error, logs: r.logs, accountKeys });
    }
    return { ok: r.error === null, code: r.code, error: r.error, logs: r.logs, computeUnits: r.computeUnits, signature };
  }

  /**
   * Signs with a blockhash under which this exact transaction was not sent yet. Signatures are
   * deterministic, so a test that repeats a call (a second vote, a second refund) would otherwise
   * produce the same signature and get "already processed" instead of the program's error,
   * depending on whether the engine's blockhash happened to move in between.
   */
  private async signUnique(tx: Transaction, signers: Keypair[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (attempt === 3) throw new Error("the engine gave no new blockhash to send a repeated transaction under");
      const hash = await this.engine.blockhash();
      if (hash !== this.sentUnder) {
        this.sentUnder = hash;
        this.sentSignatures.clear();
      }
      tx.recentBlockhash = hash;
      tx.sign(...signers);
      const sig = utils.bytes.bs58.encode(tx.signature!);
      if (!this.sentSignatures.has(sig)) {
        this.sentSignatures.add(sig);
        return;
      }
      await this.engine.renewBlockhash();
    }
  }

  account(address: PublicKey): Promise<AccountInfo<Buffer> | null> {
    return this.engine.getAccount(address);
  }

  setAccount(address: PublicKey, info: AccountInfo<Buffer>): void {
    this.engine.setAccount(address, info);
  }

  async lamports(address: PublicKey): Promise<bigint> {
    return BigInt((await this.engine.getAccount(address))?.lamports ?? 0);
  }

  rentExempt(bytes: number): Promise<bigint> {
    return this.engine.rentExempt(bytes);
  }

  /** Funds a fresh keypair with SOL for fees and rent. */
  async fundedKeypair(lamports = 10_000_000_000n): Promise<Keypair> {
    const k = Keypair.generate();
    await this.fund(k.publicKey, lamports);
    return k;
  }

  private async fund(address: PublicKey, lamports: bigint): Promise<void> {
    if (this.engine.fund) return this.engine.fund(address, lamports);
    this.engine.setAccount(address, {
      lamports: Number(lamports),
      data: Buffer.alloc(0),
      owner: new PublicKey("11111111111111111111111111111111"),
      executable: false,
      rentEpoch: 0,
    });
  }
}
