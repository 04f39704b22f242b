/**
 * The harness's Engine over a real validator's JSON-RPC, so the same worlds (OffersWorld,
 * PoolsWorld) and scenarios run against solana-test-validator. What a real node cannot do is
 * replaced by what it can: accounts are funded by transfers from the payer (no setAccount) and
 * time passes by waiting for the validator's clock (no setClock).
 *
 * Every transaction is sent without preflight and awaited at "confirmed", then read back with
 * getTransaction for its error, logs and compute units, so a rejected transaction reports the
 * program's error exactly as the SVM engines do.
 */
import { Connection, Keypair, PublicKey, SYSVAR_CLOCK_PUBKEY, SystemProgram, Transaction, type AccountInfo, type Commitment } from "@solana/web3.js";
import type { ClockState, Engine, Processed } from "./engines";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The runtime's JSON error (`{"InstructionError":[0,{"Custom":6001}]}`) in the SVM engines' form. */
export function describeTxError(err: unknown): { error: string; code: number | null } {
  const ie = (err as { InstructionError?: [number, unknown] } | null)?.InstructionError;
  const custom = ie && typeof ie[1] === "object" && ie[1] !== null ? (ie[1] as { Custom?: number }).Custom : undefined;
  if (custom !== undefined) return { error: `custom program error: 0x${custom.toString(16)}`, code: custom };
  return { error: JSON.stringify(err), code: null };
}

export class RpcEngine implements Engine {
  readonly name = "validator";
  private lastHash = "";

  constructor(
    readonly connection: Connection,
    /** Funded at genesis (solana-test-validator --mint). */
    readonly payer: Keypair,
    readonly commitment: Commitment = "confirmed",
    /** The programs' upgrade authority; TestValidator deploys them with its payer by default. */
    readonly upgradeAuthority: Keypair = payer,
  ) {}

  async blockhash(): Promise<string> {
    this.lastHash = (await this.connection.getLatestBlockhash(this.commitment)).blockhash;
    return this.lastHash;
  }

  /** A validator moves to a new blockhash every slot (400 ms): wait for it. */
  async renewBlockhash(): Promise<void> {
    const before = this.lastHash;
    for (let i = 0; i < 50; i++) {
      if ((await this.blockhash()) !== before) return;
      await sleep(100);
    }
    throw new Error("the validator produced no new blockhash in 5 s");
  }

  async process(tx: Transaction): Promise<Processed> {
    const signature = await this.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true, maxRetries: 5 });
    const latest = { blockhash: tx.recentBlockhash!, lastValidBlockHeight: (await this.connection.getBlockHeight(this.commitment)) + 150 };
    await this.connection.confirmTransaction({ signature, ...latest }, this.commitment);
    // getTransaction can trail the confirmation by a moment.
    for (let i = 0; i < 50; i++) {
      const t = await this.connection.getTransaction(signature, {
        commitment: this.commitment === "processed" ? "confirmed" : (this.commitment as "confirmed" | "finalized"),
        maxSupportedTransactionVersion: 0,
      });
      if (t) {
        const logs = t.meta?.logMessages ?? [];
        const computeUnits = BigInt(t.meta?.computeUnitsConsumed ?? 0);
        if (!t.meta?.err) return { error: null, code: null, logs, computeUnits };
        return { ...describeTxError(t.meta.err), logs, computeUnits };
      }
      await sleep(100);
    }
    throw new Error(`transaction ${signature} confirmed but not readable`);
  }

  async getAccount(address: PublicKey): Promise<AccountInfo<Buffer> | null> {
    const a = await this.connection.getAccountInfo(address, this.commitment);
    // A closed account reads as absent, as on the SVM engines.
    return a && a.lamports > 0 ? a : null;
  }

  setAccount(): void {
    throw new Error("a validator's accounts cannot be written directly: use fund() or transactions");
  }

  async fund(address: PublicKey, lamports: bigint): Promise<void> {
    const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: this.payer.publicKey, toPubkey: address, lamports }));
    tx.feePayer = this.payer.publicKey;
    tx.recentBlockhash = await this.blockhash();
    tx.sign(this.payer);
    const r = await this.process(tx);
    if (r.error) throw new Error(`fund ${address.toBase58()}: ${r.error}`);
  }

  async getClock(): Promise<ClockState> {
    const a = await this.connection.getAccountInfo(SYSVAR_CLOCK_PUBKEY, this.commitment);
    if (!a) throw new Error("no clock sysvar");
    const d = a.data;
    return {
      slot: d.readBigUInt64LE(0),
      epochStartTimestamp: d.readBigInt64LE(8),
      epoch: d.readBigUInt64LE(16),
      leaderScheduleEpoch: d.readBigUInt64LE(24),
      unixTimestamp: d.readBigInt64LE(32),
    };
  }

  setClock(): void {
    throw new Error("a validator's clock follows the wall: use waitForTime()");
  }

  async waitForTime(unix: bigint): Promise<void> {
    for (;;) {
      const now = (await this.getClock()).unixTimestamp;
      if (now >= unix) return;
      await sleep(Math.min(1_000, Number(unix - now) * 500));
    }
  }

  async rentExempt(bytes: number): Promise<bigint> {
    return BigInt(await this.connection.getMinimumBalanceForRentExemption(bytes, this.commitment));
  }
}
