/**
 * Idempotency of writes, per (caller, idempotencyKey), in the `idempotency` table.
 *
 * - Insert first: a request inserts a `reserved` row under the primary key (user_id, idem_key)
 *   before any check runs; a concurrent request in another process loses the insert and reads the
 *   row. Within one process, concurrent requests with one key share one promise (`inflight`), so
 *   100 concurrent identical requests run the checks and submit exactly once.
 * - The signed transaction and the response are recorded (`submitted`) before the transaction is
 *   sent, so a crash between the two leaves a row that a replay resends.
 * - A replay with the same request hash returns the recorded response; with another hash, 400.
 * - A replay whose signature never landed resends through the submitter
 *   (service/chain/submitter.ts): the same bytes while their blockhash is valid (same
 *   signature), else the same instructions re-signed with a fresh blockhash (new signature). No duplicate is possible: a create's offer PDA derives from the key, and a take or
 *   close carries `expectedRevision`, which the first landing would have moved.
 * - A request refused before anything landed (a 4xx by the checks or by the program's preflight)
 *   releases its row: the key stays usable, and a replay re-runs the checks against fresh state.
 * - A `reserved` row (checks running; nothing was sent, since the transaction is recorded first)
 *   answers 409 "in progress" with `Retry-After` until it is `staleSeconds` old (its process died
 *   mid-check), then it is taken over. A crash after the recording leaves a `submitted` row, which
 *   a replay resolves at once by asking the chain (`replay`), not by waiting.
 * - Fencing: the row carries its owner's token (`owner`, random, set at the insert and replaced
 *   at each takeover), and every later write of the request (record, release on refusal) is a
 *   compare-and-set on it. A request
 *   that merely stalled past `staleSeconds` and was taken over (a stale owner) finds its record
 *   refused: it does not send its transaction, deletes nothing, and answers the row's current
 *   state like any retry (`answerStale`). The confirmation a tracker records, and a replay's
 *   `mark`, are conditioned on the signature they saw.
 * - A `TEST` fail point (./fail-point.ts, armed only from the process environment) can kill the
 *   process at each step of the recorder: tests/rpc/kill-window.test.ts.
 * - Rows untouched for `RETENTION_SECONDS` (7 days) are pruned (`prune`, hourly in the service).
 *   A key replayed after that is a new request, and cannot do anything twice: its blockhash is
 *   long expired, a create's offer PDA already exists and a take or close names a revision the
 *   first landing moved.
 */
import { randomUUID } from "node:crypto";
import { Transaction, type Keypair } from "@solana/web3.js";
import type { Kysely } from "kysely";
import { isSubmitFailure, type SubmitFailure, type Submitter } from "../chain/submitter";
import type { CustodyDatabase, IdempotencyTable } from "../custody/schema";
import { CHAIN_UNREACHABLE, programRefusal, submitFailureError } from "./errors";
import { ApiError } from "../api-error";
import { armedFailPoint, reachFailPoint, type WriteFailPoint } from "./fail-point";

/** Records the signed transaction before sending; called with "sent" once it was accepted. */
export type Recorder = (r: StoredResult | "sent") => Promise<void>;

export interface StoredResult {
  signature: string;
  txBase64: string;
  response: { signature: string };
  offerAddress: string | null;
}

const nowSec = () => Math.floor(Date.now() / 1000);

/** How long a key is remembered after its last use. */
export const RETENTION_SECONDS = 7 * 86_400;

/** How long a `reserved` row is left to the request that inserted it (default `staleSeconds`). */
const STALE_SECONDS = 60;

const FAILED_ON_CHAIN = "the transaction failed on chain; re-read and retry with a new idempotencyKey";

/** A transaction that failed after it was accepted: the program's refusal, else 409. */
const failedOnChain = (f: SubmitFailure) => programRefusal(f) ?? new ApiError(409, FAILED_ON_CHAIN);

export class Idempotency {
  private readonly inflight = new Map<string, { hash: string; promise: Promise<unknown> }>();
  /** A refused (re)submission as the API's error, like a first submission (set by the write service). */
  failureError: (f: SubmitFailure) => ApiError = (f) => submitFailureError(f);

  constructor(
    readonly db: Kysely<CustodyDatabase>,
    readonly submitter: Submitter,
    private readonly signers: (userId: string) => Promise<Keypair[]>,
    readonly opts: { staleSeconds?: number; failPoint?: WriteFailPoint | null } = {},
  ) {
    this.failPoint = opts.failPoint === undefined ? armedFailPoint() : opts.failPoint;
  }

  /** The TEST fail point this process was started with (./fail-point.ts); null: none. */
  private readonly failPoint: WriteFailPoint | null;

  /** Forgets keys last used more than `retentionSeconds` ago; returns how many. */
  async prune(retentionSeconds = RETENTION_SECONDS, now = nowSec()): Promise<number> {
    const r = await this.db
      .deleteFrom("idempotency")
      .where("updated_at", "<", now - retentionSeconds)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async run<R extends { signature: string }>(
    userId: string,
    key: string,
    op: string,
    hash: string,
    exec: (record: Recorder) => Promise<R>,
    requestId?: string,
  ): Promise<R> {
    const mk = `${userId}\u0000${key}`;
    const cur = this.inflight.get(mk);
    if (cur) {
      if (cur.hash !== hash) throw new ApiError(400, "idempotencyKey was already used with a different request");
      return cur.promise as Promise<R>;
    }
    const promise = this.runOnce(userId, key, op, hash, exec, requestId);
    this.inflight.set(mk, { hash, promise });
    try {
      return await promise;
    } finally {
      if (this.inflight.get(mk)?.promise === promise) this.inflight.delete(mk);
    }
  }

  private where(userId: string, key: string) {
    return this.db.selectFrom("idempotency").selectAll().where("user_id", "=", userId).where("idem_key", "=", key);
  }

  private async runOnce<R extends { signature: string }>(
    userId: string,
    key: string,
    op: string,
    hash: string,
    exec: (record: Recorder) => Promise<R>,
    requestId: string | undefined,
  ): Promise<R> {
    let row = await this.where(userId, key).executeTakeFirst();
    const now = nowSec();
    let owner = randomUUID();
    if (!row) {
      try {
        await this.db
          .insertInto("idempotency")
          .values({
            user_id: userId,
            idem_key: key,
            operation: op,
            request_hash: hash,
            state: "reserved",
            offer_address: null,
            signature: null,
            tx_base64: null,
            response_json: null,
            status_code: null,
            error: null,
            created_at: now,
            updated_at: now,
            owner,
          })
          .execute();
      } catch {
        row = await this.where(userId, key).executeTakeFirst();
        if (!row) throw new ApiError(503, "temporarily unavailable; retry with the same idempotencyKey");
      }
    }
    if (row) {
      const left = this.ensureSame(row, hash, now);
      if (left === null) return this.replay(row, requestId) as Promise<R>;
      if (left > 0) throw inProgress(left);
      owner = randomUUID();
      const took = await this.db
        .updateTable("idempotency")
        .set({ owner, updated_at: now })
        .where("user_id", "=", userId)
        .where("idem_key", "=", key)
        .where("state", "=", "reserved")
        .where("owner", "=", row.owner)
        .executeTakeFirst();
      if (Number(took.numUpdatedRows) !== 1) throw inProgress(1);
    }
    // The row while this request still owns it: its token, not yet resolved by anyone.
    const owned = () =>
      this.db
        .updateTable("idempotency")
        .where("user_id", "=", userId)
        .where("idem_key", "=", key)
        .where("owner", "=", owner)
        .where("state", "in", ["reserved", "submitted"]);
    let recorded = false;
    let lastSig = "";
    const record = async (r: StoredResult | "sent") => {
      if (r === "sent") {
        reachFailPoint(this.failPoint, "write-after-send");
        this.track(lastSig, userId, key, requestId);
        return;
      }
      reachFailPoint(this.failPoint, "write-before-record");
      const w = await owned()
        .set({
          state: "submitted",
          signature: r.signature,
          tx_base64: r.txBase64,
          response_json: JSON.stringify(r.response),
          offer_address: r.offerAddress,
          updated_at: nowSec(),
        })
        .executeTakeFirst();
      // Fenced: a retry took the row over while this request stalled; throwing here stops the
      // send (the recorder runs before each submission), so the chain sees the successor's only.
      if (Number(w.numUpdatedRows) !== 1) throw new Fenced();
      lastSig = r.signature;
      recorded = true;
      reachFailPoint(this.failPoint, "write-before-send");
    };
    try {
      return await exec(record);
    } catch (e) {
      if (e instanceof Fenced) return this.answerStale(userId, key, hash, requestId) as Promise<R>;
      // Nothing landed when the checks or the preflight refused it (a 4xx); a 503 after the
      // transaction was recorded may have landed: keep the row so a replay resends or returns it.
      const keep = recorded && !(e instanceof ApiError && e.status !== 503);
      if (keep) throw e;
      const released = await this.db
        .deleteFrom("idempotency")
        .where("user_id", "=", userId)
        .where("idem_key", "=", key)
        .where("owner", "=", owner)
        .where("state", "in", ["reserved", "submitted"])
        .executeTakeFirst();
      // Not ours any more: the refusal was seen against state the successor moved; its answer stands.
      if (Number(released.numDeletedRows) !== 1 && (await this.where(userId, key).executeTakeFirst())) {
        return this.answerStale(userId, key, hash, requestId) as Promise<R>;
      }
      throw e;
    }
  }

  /**
   * Checks a found row against the request: 400 for another request; null when it is resolved
   * (`submitted` or later, answered by `replay`); else the seconds its `reserved` owner has left.
   */
  private ensureSame(row: IdempotencyTable, hash: string, now: number): number | null {
    if (row.request_hash !== hash) throw new ApiError(400, "idempotencyKey was already used with a different request");
    if (row.state !== "reserved") return null;
    return (this.opts.staleSeconds ?? STALE_SECONDS) - (now - Number(row.updated_at));
  }

  /**
   * The answer of a request that lost its row to a takeover: the row's current state, as any
   * retry with the key would get it (the successor's result, or 409 while it still runs), never
   * its own stale outcome. Gone (the successor was refused and released the key): 409, retry.
   */
  private async answerStale(userId: string, key: string, hash: string, requestId: string | undefined): Promise<{ signature: string }> {
    const row = await this.where(userId, key).executeTakeFirst();
    if (!row) throw inProgress(1);
    const left = this.ensureSame(row, hash, nowSec());
    if (left === null) return this.replay(row, requestId);
    throw inProgress(Math.max(1, left));
  }

  private async replay(row: IdempotencyTable, requestId: string | undefined): Promise<{ signature: string }> {
    if (row.state === "failed") throw new ApiError((row.status_code ?? 409) as 409, row.error ?? "the transaction failed");
    const response = JSON.parse(row.response_json ?? "{}") as { signature: string };
    if (row.state === "confirmed") return response;
    const st = await this.submitter.status(row.signature!);
    switch (st.kind) {
      case "confirmed":
        await this.mark(row, "confirmed");
        return response;
      case "pending":
        return response;
      case "unknown":
        return this.resend(row, response, requestId);
      case "rpc":
        throw new ApiError(503, CHAIN_UNREACHABLE);
      default: {
        const e = failedOnChain(st);
        await this.mark(row, "failed", e);
        throw e;
      }
    }
  }

  private async mark(row: Pick<IdempotencyTable, "user_id" | "idem_key" | "signature">, state: "confirmed" | "failed", e?: ApiError) {
    await this.db
      .updateTable("idempotency")
      .set({ state, status_code: e?.status ?? null, error: e?.message ?? null, updated_at: nowSec() })
      .where("user_id", "=", row.user_id)
      .where("idem_key", "=", row.idem_key)
      .where("signature", "=", row.signature!)
      .execute();
  }

  /** The recorded transaction never landed: send it again (re-signed if its blockhash expired). */
  private async resend(row: IdempotencyTable, response: { signature: string }, requestId: string | undefined): Promise<{ signature: string }> {
    const old = Transaction.from(Buffer.from(row.tx_base64!, "base64"));
    if (await this.submitter.gateway.isBlockhashValid(old.recentBlockhash!)) {
      const r = await this.submitter.resend(old, requestId);
      if (r.kind === "sent") {
        this.track(row.signature!, row.user_id, row.idem_key, requestId);
        return response;
      }
      if (isSubmitFailure(r) && r.kind !== "blockhash_expired") throw this.failureError(r);
    }
    const wanted = new Set(old.signatures.map((s) => s.publicKey.toBase58()));
    const signers = (await this.signers(row.user_id)).filter((k) => wanted.has(k.publicKey.toBase58()));
    let next = response;
    const r = await this.submitter.send(old.instructions, signers, {
      feePayer: old.feePayer,
      requestId,
      beforeSubmit: async (tx, signature) => {
        next = resigned(response, row.signature!, signature);
        await this.db
          .updateTable("idempotency")
          .set({
            signature,
            tx_base64: tx.serialize({ verifySignatures: false }).toString("base64"),
            response_json: JSON.stringify(next),
            updated_at: nowSec(),
          })
          .where("user_id", "=", row.user_id)
          .where("idem_key", "=", row.idem_key)
          .execute();
      },
    });
    if (isSubmitFailure(r)) throw this.failureError(r);
    this.track(next.signature, row.user_id, row.idem_key, requestId);
    return next;
  }

  /** Follows a signature in the background and records confirmed / failed (its result logged with the request id that sent it). */
  track(signature: string, userId: string, key: string, requestId?: string): void {
    void (async () => {
      try {
        const r = await this.submitter.confirm(signature, undefined, 90_000, requestId);
        if (r.kind === "timeout" || r.kind === "rpc" || r.kind === "sent") return;
        const e = r.kind === "confirmed" ? undefined : failedOnChain(r);
        await this.db
          .updateTable("idempotency")
          .set({ state: e ? "failed" : "confirmed", status_code: e?.status ?? null, error: e?.message ?? null, updated_at: nowSec() })
          .where("user_id", "=", userId)
          .where("idem_key", "=", key)
          .where("signature", "=", signature)
          .where("state", "=", "submitted")
          .execute();
      } catch {
        // Tracking is best effort; a replay re-checks the signature.
      }
    })();
  }
}

/**
 * The answer of a re-signed transaction: its new `signature`, and the same one in place of the old
 * in `signatures` when the answer lists every transaction of the request (a take-best's), so the
 * list names the transactions that can land and ends with the one the row follows.
 */
export function resigned<R extends { signature: string; signatures?: unknown }>(response: R, old: string, signature: string): R {
  const next = { ...response, signature };
  if (Array.isArray(response.signatures)) next.signatures = response.signatures.map((s) => (s === old ? signature : s));
  return next;
}

/** The recorder's write was refused: the row belongs to another owner (a takeover). */
class Fenced extends Error {}

/** 409 "in progress" for a key whose first request is still running, with the seconds to wait. */
function inProgress(retryAfterSeconds: number): ApiError {
  return new ApiError(409, "a request with this idempotencyKey is in progress; retry shortly with the same key", Math.max(1, Math.ceil(retryAfterSeconds)));
}
