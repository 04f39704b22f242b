/**
 * The service's only way to the chain: read accounts, submit signed transactions and learn what
 * became of them. Two implementations:
 * - `EngineGateway` (./engine-gateway.ts): an in-process SVM (solana-bankrun or LiteSVM) running
 *   the compiled programs, for tests and the local stack;
 * - `RpcGateway` (./rpc-gateway.ts): a Solana JSON-RPC endpoint through @solana/web3.js.
 *
 * `submit` returns as soon as the transaction is accepted for processing (after the runtime's
 * preflight); a preflight failure is thrown as a `SubmitError` carrying the program's custom
 * error code, so the write service can map a race (RevisionMismatch, AmountExceedsRemaining, ...)
 * to the same HTTP status its own pre-checks give.
 */
import type { AccountInfo, PublicKey, Transaction } from "@solana/web3.js";

export type SubmissionState = "pending" | "confirmed" | "failed" | "unknown";

export interface SubmissionStatus {
  state: SubmissionState;
  /** Custom program error code when the transaction failed with one. */
  code: number | null;
  error: string | null;
  slot: number | null;
}

/** Thrown by `submit` when the runtime refuses the transaction before it lands. */
export class SubmitError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    readonly logs: string[] = [],
  ) {
    super(message);
    this.name = "SubmitError";
  }
}

/** The chain could not be reached (maps to 503). */
export class ChainUnavailableError extends Error {
  constructor(message = "chain unavailable") {
    super(message);
    this.name = "ChainUnavailableError";
  }
}

export interface ChainGateway {
  readonly kind: "engine" | "rpc";
  /** A recent blockhash to sign with. */
  blockhash(): Promise<string>;
  /** Whether a blockhash can still land a transaction. */
  isBlockhashValid(blockhash: string): Promise<boolean>;
  getAccount(address: PublicKey): Promise<AccountInfo<Buffer> | null>;
  getAccounts(addresses: PublicKey[]): Promise<(AccountInfo<Buffer> | null)[]>;
  /** Lamports an account of `bytes` data needs to be rent exempt. */
  rentExempt(bytes: number): Promise<bigint>;
  /** Chain time (unix seconds) of the latest slot. */
  now(): Promise<bigint>;
  /** Submits a fully signed transaction; resolves with its signature once accepted (pending). */
  submit(tx: Transaction): Promise<string>;
  /** What became of a signature. "unknown": never seen (dropped, or not yet propagated). */
  status(signature: string): Promise<SubmissionStatus>;
  /** Waits until the signature is confirmed or failed, or the timeout passes ("unknown"/"pending"). */
  waitFor(signature: string, timeoutMs?: number): Promise<SubmissionStatus>;
  close?(): Promise<void>;
}
