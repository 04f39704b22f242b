/**
 * The two SVM engines the harness can run on, behind one small interface: solana-bankrun
 * (runtime 1.18, deprecated upstream) and LiteSVM (current runtime). Both load the same compiled
 * programs from target/deploy, as upgradeable (loader v3) programs with a chosen upgrade
 * authority, as a real deployment has. Select with `TestChain.start({ engine })` or SVM_ENGINE.
 */
import { Clock as BankrunClock, start, type ProgramTestContext } from "solana-bankrun";
import { Clock as LiteClock, FailedTransactionMetadata, LiteSVM } from "litesvm";
import { getTransactionDecoder, address as kitAddress, lamports as kitLamports } from "@solana/kit";
import { Keypair, PublicKey, type AccountInfo, type Transaction } from "@solana/web3.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LOADER_V3, customCode, programDataAddress } from "../idl/client/common";

export type EngineName = "bankrun" | "litesvm";

export interface ClockState {
  slot: bigint;
  epochStartTimestamp: bigint;
  epoch: bigint;
  leaderScheduleEpoch: bigint;
  unixTimestamp: bigint;
}
/** The fields of an engine's Clock object (its getters), as a plain ClockState. */
const plainClock = (c: ClockState): ClockState => ({
  slot: c.slot,
  epochStartTimestamp: c.epochStartTimestamp,
  epoch: c.epoch,
  leaderScheduleEpoch: c.leaderScheduleEpoch,
  unixTimestamp: c.unixTimestamp,
});
export interface Processed {
  error: string | null;
  code: number | null;
  logs: string[];
  computeUnits: bigint;
}
export interface ProgramSpec {
  name: string;
  programId: PublicKey;
}

export interface Engine {
  /** The SVM engines, or "validator" for a real node behind RPC (harness/rpc-engine.ts). */
  readonly name: EngineName | "validator";
  readonly payer: Keypair;
  /** The programs' upgrade authority, where the engine holds its keypair (a validator's). */
  readonly upgradeAuthority?: Keypair;
  blockhash(): Promise<string>;
  /** Makes the next blockhash() differ from the last one (the clock's time stays where it is). */
  renewBlockhash(): Promise<void>;
  process(tx: Transaction): Promise<Processed>;
  getAccount(address: PublicKey): Promise<AccountInfo<Buffer> | null>;
  setAccount(address: PublicKey, info: AccountInfo<Buffer>): void;
  getClock(): Promise<ClockState>;
  setClock(c: ClockState): void;
  rentExempt(bytes: number): Promise<bigint>;
  /**
   * Engines whose state cannot be written directly (a real validator) fund accounts with a
   * transfer and let time pass instead of setting the clock; the SVM engines leave these out.
   */
  fund?(address: PublicKey, lamports: bigint): Promise<void>;
  waitForTime?(unix: bigint): Promise<void>;
}

export { LOADER_V3, programDataAddress };

/** Bytes before the ELF in a ProgramData account: u32 tag 3, u64 slot, Option<Pubkey>. */
export const PROGRAM_DATA_METADATA_SIZE = 4 + 8 + 1 + 32;

/** Rent exemption under the default Rent (3480 lamports/byte-year, 2 years, 128 bytes overhead). */
export function defaultRentExempt(bytes: number): bigint {
  return BigInt(128 + bytes) * 3480n * 2n;
}

export interface AccountSpec {
  address: PublicKey;
  info: AccountInfo<Buffer>;
}

/**
 * The two accounts of an upgradeable program deployed at slot 0: the ProgramData account first
 * (LiteSVM loads a program account into its cache when it is set, and needs its ProgramData for
 * that), then the program account.
 */
export function upgradeableProgramAccounts(
  programId: PublicKey,
  elf: Uint8Array,
  upgradeAuthority: PublicKey | null,
  rentExempt: (bytes: number) => bigint = defaultRentExempt,
): [AccountSpec, AccountSpec] {
  const dataAddress = programDataAddress(programId);
  const data = Buffer.alloc(PROGRAM_DATA_METADATA_SIZE + elf.length);
  data.writeUInt32LE(3, 0);
  data.writeBigUInt64LE(0n, 4);
  if (upgradeAuthority) {
    data[12] = 1;
    upgradeAuthority.toBuffer().copy(data, 13);
  }
  Buffer.from(elf).copy(data, PROGRAM_DATA_METADATA_SIZE);
  const program = Buffer.alloc(36);
  program.writeUInt32LE(2, 0);
  dataAddress.toBuffer().copy(program, 4);
  return [
    { address: dataAddress, info: { data, lamports: Number(rentExempt(data.length)), owner: LOADER_V3, executable: false, rentEpoch: 0 } },
    { address: programId, info: { data: program, lamports: Number(rentExempt(program.length)), owner: LOADER_V3, executable: true, rentEpoch: 0 } },
  ];
}

export interface ProgramDataState {
  slot: bigint;
  upgradeAuthority: PublicKey | null;
  elf: Buffer;
}

/** Decodes a ProgramData account's data (throws when it is not one). */
export function decodeProgramData(data: Buffer): ProgramDataState {
  if (data.length < 13 || data.readUInt32LE(0) !== 3) throw new Error("not a ProgramData account");
  const hasAuthority = data[12] === 1;
  return {
    slot: data.readBigUInt64LE(4),
    upgradeAuthority: hasAuthority ? new PublicKey(data.subarray(13, 45)) : null,
    elf: data.subarray(PROGRAM_DATA_METADATA_SIZE),
  };
}

export interface StartOptions {
  /** The programs' upgrade authority; none given: a fresh key nobody holds. */
  upgradeAuthority?: PublicKey;
}

export class BankrunEngine implements Engine {
  readonly name = "bankrun";
  constructor(readonly ctx: ProgramTestContext) {}

  static async start(deployDir: string, programs: ProgramSpec[], opts: StartOptions = {}): Promise<BankrunEngine> {
    process.env.RUST_LOG ??= "error";
    const authority = opts.upgradeAuthority ?? Keypair.generate().publicKey;
    // Genesis accounts rather than `programs` (which deploys with the non-upgradeable loader v2).
    const accounts = programs.flatMap((p) => upgradeableProgramAccounts(p.programId, readFileSync(join(deployDir, `${p.name}.so`)), authority));
    return new BankrunEngine(await start([], accounts));
  }
  get payer() {
    return this.ctx.payer;
  }
  async blockhash() {
    return (await this.ctx.banksClient.getLatestBlockhash())?.[0] ?? this.ctx.lastBlockhash;
  }
  async renewBlockhash() {
    // program-test registers a new blockhash only about every 400 ms of wall time; warping one
    // slot ahead registers one now. setClock keeps the time (warping alone would recompute it).
    const c = await this.getClock();
    const slot = (await this.ctx.banksClient.getSlot()) + 1n;
    this.ctx.warpToSlot(slot);
    this.setClock({ ...c, slot: slot > c.slot ? slot : c.slot });
  }
  async process(tx: Transaction): Promise<Processed> {
    const res = await this.ctx.banksClient.tryProcessTransaction(tx);
    const error = res.result ? String(res.result) : null;
    return { error, code: customCode(error), logs: res.meta?.logMessages ?? [], computeUnits: res.meta?.computeUnitsConsumed ?? 0n };
  }
  async getAccount(address: PublicKey) {
    const a = await this.ctx.banksClient.getAccount(address);
    return a ? { ...a, data: Buffer.from(a.data) } : null;
  }
  setAccount(address: PublicKey, info: AccountInfo<Buffer>) {
    this.ctx.setAccount(address, { ...info, lamports: Number(info.lamports) });
  }
  async getClock() {
    const c = await this.ctx.banksClient.getClock();
    return plainClock(c);
  }
  setClock(c: ClockState) {
    // Warping the bank to the new slot also gives a new blockhash: otherwise a transaction
    // identical to one sent before the clock moved (same accounts, same blockhash) is refused
    // as "already processed" instead of being run at the new time.
    try {
      this.ctx.warpToSlot(c.slot);
    } catch {
      /* not ahead of the bank's slot: keep the bank, move the clock only */
    }
    this.ctx.setClock(new BankrunClock(c.slot, c.epochStartTimestamp, c.epoch, c.leaderScheduleEpoch, c.unixTimestamp));
  }
  async rentExempt(bytes: number) {
    return (await this.ctx.banksClient.getRent()).minimumBalance(BigInt(bytes));
  }
}

/**
 * How long LiteSVM may run transactions back to back before the event loop gets a turn. LiteSVM
 * runs each one synchronously inside an async call, so a loop of them turns only microtasks: no
 * timer and no message from the test runner is handled until it ends. A fuzzer of three minutes
 * then held vitest's answer to the worker's call past the worker's 60-second RPC timeout, and the
 * run failed with `Timeout calling "onTaskUpdate"` although every test passed.
 */
const LITESVM_TURN_MS = 1_000;

export class LiteSvmEngine implements Engine {
  readonly name = "litesvm";
  private readonly decoder = getTransactionDecoder();
  private lastTurn = performance.now();
  private constructor(
    readonly svm: LiteSVM,
    readonly payer: Keypair,
  ) {}

  static async start(deployDir: string, programs: ProgramSpec[], opts: StartOptions = {}): Promise<LiteSvmEngine> {
    const svm = new LiteSVM();
    const payer = Keypair.generate();
    const engine = new LiteSvmEngine(svm, payer);
    const authority = opts.upgradeAuthority ?? Keypair.generate().publicKey;
    const rent = (n: number) => svm.minimumBalanceForRentExemption(BigInt(n));
    // addProgram* deploys with no upgrade authority, so the accounts are set by hand, ProgramData
    // first: setting the program account loads it into the cache from its ProgramData, and without
    // one it is silently cached as "Program is not deployed".
    for (const p of programs) {
      for (const a of upgradeableProgramAccounts(p.programId, readFileSync(join(deployDir, `${p.name}.so`)), authority, rent))
        engine.setAccount(a.address, a.info);
    }
    engine.setAccount(payer.publicKey, {
      lamports: 1_000_000_000_000_000,
      data: Buffer.alloc(0),
      owner: new PublicKey("11111111111111111111111111111111"),
      executable: false,
      rentEpoch: 0,
    });
    return engine;
  }
  async blockhash() {
    return this.svm.latestBlockhash();
  }
  async renewBlockhash() {
    this.svm.expireBlockhash();
  }
  async process(tx: Transaction): Promise<Processed> {
    if (performance.now() - this.lastTurn > LITESVM_TURN_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.lastTurn = performance.now();
    }
    const res = this.svm.sendTransaction(this.decoder.decode(tx.serialize()) as never);
    // A new blockhash per transaction, so an identical later transaction is not a duplicate.
    this.svm.expireBlockhash();
    if (res instanceof FailedTransactionMetadata) {
      // Fieldless errors are plain enum numbers; instruction errors wrap the program's error.
      const err: unknown = res.err();
      const inner: unknown = err !== null && typeof err === "object" && "err" in err ? (err as { err(): unknown }).err() : null;
      const code = inner !== null && typeof inner === "object" && "code" in inner ? Number((inner as { code: number }).code) : null;
      const meta = res.meta();
      const error =
        code !== null
          ? `custom program error: 0x${code.toString(16)}`
          : String(err !== null && typeof err === "object" ? err.toString() : `TransactionError(${String(err)})`);
      return { error, code, logs: meta.logs(), computeUnits: meta.computeUnitsConsumed() };
    }
    const meta = res as { logs(): string[]; computeUnitsConsumed(): bigint };
    return { error: null, code: null, logs: meta.logs(), computeUnits: meta.computeUnitsConsumed() };
  }
  async getAccount(address: PublicKey) {
    const a = this.svm.getAccount(kitAddress(address.toBase58()));
    if (!a.exists) return null;
    return { data: Buffer.from(a.data), lamports: Number(a.lamports), owner: new PublicKey(a.programAddress), executable: a.executable, rentEpoch: 0 };
  }
  setAccount(address: PublicKey, info: AccountInfo<Buffer>) {
    this.svm.setAccount({
      address: kitAddress(address.toBase58()),
      data: new Uint8Array(info.data),
      executable: info.executable,
      lamports: kitLamports(BigInt(info.lamports)),
      programAddress: kitAddress(info.owner.toBase58()),
      space: BigInt(info.data.length),
    });
  }
  async getClock() {
    const c = this.svm.getClock();
    return plainClock(c);
  }
  setClock(c: ClockState) {
    this.svm.setClock(new LiteClock(c.slot, c.epochStartTimestamp, c.epoch, c.leaderScheduleEpoch, c.unixTimestamp));
    this.svm.warpToSlot(c.slot);
  }
  async rentExempt(bytes: number) {
    return this.svm.minimumBalanceForRentExemption(BigInt(bytes));
  }
}
