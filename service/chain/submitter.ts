/**
 * The one way the service sends a transaction: sign with a fresh blockhash, submit, re-sign when
 * the blockhash was not found, optionally wait for confirmation, and classify every failure once
 * into a `SubmitFailure`. Callers (the write service, idempotency's resend and tracking, the
 * settlement worker, the local chain's bootstrap and the operator's commands) switch on `kind`;
 * none of them reads an error message.
 *
 * A custom program error is attributed to the program that failed (the last `Program <id>
 * failed` log line, else the top-level instruction the error names) and decoded to its name from
 * that program's IDL (idl/offers.json, idl/pools.json) or SPL Token's error list.
 *
 * `onResult` sees every result the submitter hands back (sent, confirmed or a failure), so
 * metrics can count them by `kind` (and a program failure by `name`), with the `requestId` the
 * caller gave (the HTTP request a write was made in), so the log line names the request.
 */
import { Transaction, type Keypair, type PublicKey, type TransactionInstruction } from "@solana/web3.js";
import { utils } from "../../idl/client/anchor";
import { OFFERS_ERRORS, OFFERS_PROGRAM_ID } from "../../idl/client/offers";
import { POOLS_ERRORS, POOLS_PROGRAM_ID } from "../../idl/client/pools";
import { TOKEN_ERRORS, TOKEN_PROGRAM, customCode } from "../../idl/client/common";
import { ChainUnavailableError, SubmitError, type ChainGateway, type SubmissionStatus } from "./gateway";

export type ProgramName = "offers" | "pools" | "token";

export type SubmitFailure =
  /** A program refused with a custom error code; `name` as its IDL (or SPL Token) names it, null if unknown. */
  | { kind: "program"; program: ProgramName | null; programId: string | null; code: number; name: string | null; logs: string[] }
  /** The runtime did not know the transaction's blockhash (still so after the submitter's re-signs). */
  | { kind: "blockhash_expired" }
  /** Accepted, but neither confirmed nor failed within the wait. */
  | { kind: "timeout"; signature: string; state: "pending" | "unknown" }
  /** The chain could not be reached. */
  | { kind: "rpc"; message: string }
  /** Refused without a program error code (signatures, the fee payer's funds, a runtime check, ...). */
  | { kind: "rejected"; message: string; logs: string[] };

export type SubmitResult =
  { kind: "sent"; signature: string; tx: Transaction } | { kind: "confirmed"; signature: string; tx: Transaction | null } | SubmitFailure;

export type SubmitKind = SubmitResult["kind"];

export const isSubmitFailure = (r: SubmitResult): r is SubmitFailure => r.kind !== "sent" && r.kind !== "confirmed";

export interface SubmitterOptions {
  /** Re-signs with a fresh blockhash after "blockhash not found" (default 8). */
  blockhashRetries?: number;
  /** How long a confirmation is awaited (default 60 s). */
  confirmTimeoutMs?: number;
  /** Every result handed back (metrics: sent / confirmed / failed by kind), with the request id the caller gave. */
  onResult?: (r: SubmitResult, requestId?: string) => void;
}

function programOf(id: string | null): ProgramName | null {
  if (id === OFFERS_PROGRAM_ID.toBase58()) return "offers";
  if (id === POOLS_PROGRAM_ID.toBase58()) return "pools";
  if (id === TOKEN_PROGRAM.toBase58()) return "token";
  return null;
}

function errorName(program: ProgramName | null, code: number): string | null {
  switch (program) {
    case "offers":
      return OFFERS_ERRORS.get(code)?.name ?? null;
    case "pools":
      return POOLS_ERRORS.get(code)?.name ?? null;
    case "token":
      return TOKEN_ERRORS[code] ?? null;
    default:
      return null;
  }
}

/** The runtime's refusal of an unknown blockhash, as the engines and JSON-RPC spell it. */
const BLOCKHASH_NOT_FOUND = /blockhash ?not ?found/i;

/** A refusal as the gateways report it (SubmitError, or a failed SubmissionStatus) -> its kind. */
function classifyRefusal(message: string, code: number | null, logs: string[], tx?: Transaction): SubmitFailure {
  if (code === null) {
    if (BLOCKHASH_NOT_FOUND.test(message)) return { kind: "blockhash_expired" };
    return { kind: "rejected", message: message.slice(0, 500), logs };
  }
  // The program that failed: the last "Program <id> failed" line (a CPI's callee), else the
  // top-level instruction the error names.
  let programId =
    [...logs]
      .reverse()
      .map((l) => /^Program (\w+) failed/.exec(l)?.[1])
      .find(Boolean) ?? null;
  if (!programId && tx) {
    const i = /Instruction(?:Error"?:\s*\[|\s+)(\d+)/.exec(message)?.[1];
    if (i !== undefined) programId = tx.instructions[Number(i)]?.programId.toBase58() ?? null;
  }
  let program = programOf(programId);
  // Neither logs nor an instruction to go by: the offers program's codes are the service's own.
  if (programId === null && OFFERS_ERRORS.has(code)) program = "offers";
  return { kind: "program", program, programId, code, name: errorName(program, code), logs };
}

/** Classifies what a gateway threw; anything that is not a chain refusal or outage is rethrown. */
export function classifyError(e: unknown, tx?: Transaction): SubmitFailure {
  if (e instanceof SubmitError) return classifyRefusal(e.message, e.code, e.logs, tx);
  if (e instanceof ChainUnavailableError) return { kind: "rpc", message: e.message };
  throw e;
}

/** Classifies a failed status (a transaction that failed after it was accepted). */
export function classifyStatus(st: SubmissionStatus, tx?: Transaction): SubmitFailure {
  return classifyRefusal(st.error ?? "failed", st.code ?? customCode(st.error), [], tx);
}

/** A failure in a few words, for operators (the worker's `last_reason`, logs, thrown errors). */
export function describeFailure(f: SubmitFailure): string {
  switch (f.kind) {
    case "program":
      if (f.program === "token") return `token program: ${f.name ?? `custom error ${f.code}`}`;
      if (f.name) return f.program === "offers" ? f.name : `${f.program} program: ${f.name}`;
      return `${f.programId ? `program ${f.programId}: ` : ""}custom error ${f.code}`;
    case "blockhash_expired":
      return "blockhash not found (expired)";
    case "timeout":
      return `not confirmed within the wait (${f.state})`;
    case "rpc":
      return f.message;
    case "rejected":
      return f.message;
  }
}

/** Thrown by `sendAndConfirm`: the transaction did not land; `failure` says why. */
export class TransactionFailed extends Error {
  constructor(readonly failure: SubmitFailure) {
    super(`transaction failed: ${describeFailure(failure)}${"logs" in failure && failure.logs.length ? `\n${failure.logs.join("\n")}` : ""}`);
    this.name = "TransactionFailed";
  }
}

const signatureOf = (tx: Transaction) => utils.bytes.bs58.encode(tx.signature!);

export class Submitter {
  constructor(
    readonly gateway: ChainGateway,
    readonly opts: SubmitterOptions = {},
  ) {}

  private done<R extends SubmitResult>(r: R, requestId: string | undefined): R {
    this.opts.onResult?.(r, requestId);
    return r;
  }

  /** Signs `ixs` with a fresh blockhash; the fee payer is the first signer unless given. */
  async sign(ixs: TransactionInstruction[], signers: Keypair[], feePayer: PublicKey = signers[0].publicKey): Promise<Transaction> {
    const tx = new Transaction();
    tx.feePayer = feePayer;
    tx.recentBlockhash = await this.gateway.blockhash();
    tx.add(...ixs);
    tx.sign(...signers);
    return tx;
  }

  /**
   * Signs and submits; an unknown blockhash is re-signed with a fresh one (the refused
   * transaction never landed). `beforeSubmit` runs before each submission with the signed
   * transaction (the write service records it there, so a crash leaves a resendable row).
   * `confirm`: also waits until it is confirmed or failed. `requestId`: the HTTP request it is sent
   * for, handed to `onResult`.
   */
  async send(
    ixs: TransactionInstruction[],
    signers: Keypair[],
    o: { feePayer?: PublicKey; confirm?: boolean; beforeSubmit?: (tx: Transaction, signature: string) => Promise<void>; requestId?: string } = {},
  ): Promise<SubmitResult> {
    const retries = this.opts.blockhashRetries ?? 8;
    for (let attempt = 0; ; attempt++) {
      const tx = await this.sign(ixs, signers, o.feePayer);
      await o.beforeSubmit?.(tx, signatureOf(tx));
      const r = await this.submitOnce(tx);
      if (r.kind === "blockhash_expired" && attempt < retries) continue;
      if (r.kind !== "sent" || !o.confirm) return this.done(r, o.requestId);
      return this.confirm(r.signature, tx, undefined, o.requestId);
    }
  }

  /** Submits signed bytes as they are (a resend keeps its signature): an expired blockhash is reported, not re-signed. */
  async resend(tx: Transaction, requestId?: string): Promise<SubmitResult> {
    return this.done(await this.submitOnce(tx), requestId);
  }

  private async submitOnce(tx: Transaction): Promise<SubmitResult> {
    try {
      const signature = await this.gateway.submit(tx);
      return { kind: "sent", signature, tx };
    } catch (e) {
      return classifyError(e, tx);
    }
  }

  /** Waits for a submitted transaction: confirmed, failed (classified) or timeout. */
  async confirm(signature: string, tx?: Transaction, timeoutMs = this.opts.confirmTimeoutMs ?? 60_000, requestId?: string): Promise<SubmitResult> {
    let st: SubmissionStatus;
    try {
      st = await this.gateway.waitFor(signature, timeoutMs);
    } catch (e) {
      return this.done(classifyError(e, tx), requestId);
    }
    if (st.state === "confirmed") return this.done({ kind: "confirmed", signature, tx: tx ?? null }, requestId);
    if (st.state === "failed") return this.done(classifyStatus(st, tx), requestId);
    return this.done({ kind: "timeout", signature, state: st.state }, requestId);
  }

  /** What became of a signature so far: confirmed, pending, unknown, or its failure. */
  async status(signature: string, tx?: Transaction): Promise<{ kind: "confirmed" | "pending" | "unknown" } | SubmitFailure> {
    let st: SubmissionStatus;
    try {
      st = await this.gateway.status(signature);
    } catch (e) {
      return classifyError(e, tx);
    }
    return st.state === "failed" ? classifyStatus(st, tx) : { kind: st.state };
  }
}

/** Signs, submits and waits for confirmation; throws `TransactionFailed` otherwise. */
export async function sendAndConfirm(gateway: ChainGateway, ixs: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  const r = await new Submitter(gateway).send(ixs, signers, { confirm: true });
  if (r.kind === "confirmed") return r.signature;
  throw new TransactionFailed(r.kind === "sent" ? { kind: "timeout", signature: r.signature, state: "pending" } : r);
}
