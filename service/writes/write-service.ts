/**
 * The write service: create, take and close of the spec, used by both the REST POST routes and
 * the GraphQL mutations. Every rule is checked against fresh chain state before anything is
 * signed (so no fee is spent on a request the program would refuse), the transaction is signed
 * with the service's wallet (fee payer, rent payer) and the caller's custodial key (creator,
 * taker or closer), and submitted; the answer is `pending` with the signature.
 *
 * Statuses: 400 malformed input or a rule of the limits; 401 auth; 403 compliance only (caller
 * or offer creator blocked on create/take); 404 unknown offer or contract; 409 the state moved
 * (fee, revision, amount, contract/offer no longer open, a finished offer whose account is gone,
 * a stranger closing before the cutoff, or a concurrent request with the same key in flight
 * elsewhere) or the caller holds the most offers
 * or positions one user may (./wallet-guard.ts); 429 the caller's write rate (with
 * `retryAfterSeconds`); 503 offers switched off or the chain unreachable. A program error on a
 * race maps to the same status (./errors.ts).
 *
 * The rules the pre-checks apply (who may take or close, matched stake, odds, cutoff, refund)
 * come from idl/client/offers-rules.ts, the mirror of the program's rules, by the program's
 * error names; ./errors.ts answers each name with its status and message. Transactions go
 * through the one submitter (service/chain/submitter.ts).
 *
 * The bound on the service's wallet (./wallet-guard.ts): a write that passed every check takes a
 * token of the caller's write bucket and, for a create or a new position, passes the holdings
 * cap, under a per-user lock held until the transaction is submitted.
 *
 * Idempotency (per caller and key): see ./idempotency.ts.
 */
import { createHash } from "node:crypto";
import type { AccountInfo, Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import { AccountLayout } from "@solana/spl-token";
import {
  OFFERS_PROGRAM_ID,
  OffersClient,
  decodeConfig,
  decodeContract,
  decodeOffer,
  decodePosition,
  offersAccountKind,
  type ConfigAccount,
  type OfferAccount,
} from "../../idl/client/offers";
import {
  closeRefusal,
  contractRefusal,
  expiryRefusal,
  matchedForTake,
  oddsRefusal,
  takeRefusal,
  unmatchedStake,
  type OfferTerms,
} from "../../idl/client/offers-rules";
import { ChainUnavailableError, type ChainGateway } from "../chain/gateway";
import { Submitter, isSubmitFailure, type SubmitterOptions } from "../chain/submitter";
import type { Custody, Principal } from "../custody/custody";
import { bearerToken } from "../custody/custody";
import { CHAIN_UNREACHABLE, refusalError, submitFailureError } from "./errors";
import { Idempotency, type Recorder } from "./idempotency";
import { ApiError } from "../api-error";
import { takeBest, type TakeBestResponse } from "./take-best";
import { parseClose, parseCreate, parseTake, parseTakeBest, type CloseRequest, type CreateRequest, type TakeRequest } from "./validate";
import { TAKE_BEST_OPERATION, WalletGuard, type WalletLimits } from "./wallet-guard";

export interface CreateResponse {
  signature: string;
  status: "pending";
  offerAddress: string;
}
export interface TakeResponse {
  signature: string;
  status: "pending";
  offerAddress: string;
  positionAddress: string;
  takeAmountMicros: string;
  creatorMatchedMicros: string;
  expectedRevision: string;
}
export interface CloseResponse {
  signature: string;
  status: "pending";
  offerAddress: string;
  refundMicros: string;
  expectedRevision: string;
}

export interface WriteServiceDeps {
  custody: Custody;
  gateway: ChainGateway;
  /** The service's wallet: fee payer and rent payer. */
  payer: Keypair;
  programId?: PublicKey;
  /** Errors the service could not classify (logged, answered as 503 without detail). */
  onInternalError?: (e: unknown) => void;
  /** Per-user bound on the service's fees and rent (./wallet-guard.ts); defaults DEFAULT_WALLET_LIMITS. */
  walletLimits?: Partial<WalletLimits>;
  /** The wall clock of the write rate limit in unix milliseconds (default Date.now; tests move it). */
  walletClockMs?: () => number;
  /** Every submission result of the writes (service/chain/submitter.ts), e.g. for metrics. */
  onSubmitResult?: SubmitterOptions["onResult"];
  /**
   * The indexed status of an offer whose account is no longer on chain (settled and reclaimed),
   * so that a take or close of it is a 409 a client can show rather than "unknown offer".
   */
  indexedOfferStatus?: (address: string) => Promise<string | null>;
  /** The indexed book of a contract for a taker backing `side`, best first (take-best plans over it: ./take-best.ts). */
  bookOffers?: (contract: string, side: "sideA" | "sideB") => Promise<string[]>;
}

export class WriteService {
  readonly client: OffersClient;
  readonly idem: Idempotency;
  readonly guard: WalletGuard;
  readonly submitter: Submitter;
  readonly payer: Keypair;

  constructor(readonly deps: WriteServiceDeps) {
    this.payer = deps.payer;
    const provider = { publicKey: deps.payer.publicKey, wallet: { publicKey: deps.payer.publicKey } };
    this.client = OffersClient.fromProvider(provider as never, deps.programId ?? OFFERS_PROGRAM_ID);
    this.submitter = new Submitter(deps.gateway, { onResult: deps.onSubmitResult });
    this.idem = new Idempotency(deps.custody.db, this.submitter, (userId) => this.userSigners(userId));
    this.idem.failureError = (f) => submitFailureError(f, (x) => this.deps.onInternalError?.(x));
    this.guard = new WalletGuard(deps.custody.db, deps.payer.publicKey, deps.walletLimits, this.client, deps.walletClockMs);
  }

  /** `Authorization` header -> principal with `bet:write`, else 401. */
  async authorize(authorization: string | null | undefined): Promise<Principal> {
    const token = bearerToken(authorization);
    if (!token) throw new ApiError(401, "missing or malformed Authorization: Bearer token");
    const p = await this.deps.custody.authenticate(token);
    if (!p) throw new ApiError(401, "invalid, revoked or expired token");
    if (!p.scopes.has("bet:write")) throw new ApiError(401, "token lacks the bet:write scope");
    return p;
  }

  private async userSigners(userId: string): Promise<Keypair[]> {
    return [this.payer, await this.deps.custody.signer(userId)];
  }

  // ---- chain reads -------------------------------------------------------------------------

  async read<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ApiError) throw e;
      if (e instanceof ChainUnavailableError) throw new ApiError(503, CHAIN_UNREACHABLE);
      throw e;
    }
  }

  owned(a: AccountInfo<Buffer> | null, kind: "config" | "contract" | "offer" | "position"): Buffer | null {
    if (!a || !a.owner.equals(this.client.program.programId) || offersAccountKind(a.data) !== kind) return null;
    return a.data;
  }

  async config(): Promise<ConfigAccount> {
    const d = this.owned(await this.deps.gateway.getAccount(this.client.pda.config()[0]), "config");
    if (!d) throw new ApiError(503, "offers are not configured on this chain");
    return decodeConfig(d);
  }

  async tokenBalance(a: AccountInfo<Buffer> | null): Promise<bigint> {
    if (!a || a.data.length < AccountLayout.span) return 0n;
    return AccountLayout.decode(a.data).amount;
  }

  // ---- create ------------------------------------------------------------------------------

  /** The offer nonce of (user, key): the offer PDA is fixed by the idempotency key. */
  nonceFor(userId: string, key: string): bigint {
    const h = createHash("sha256").update("offer-nonce\u0000").update(userId).update("\u0000").update(key).digest();
    return h.readBigUInt64LE(0);
  }

  /** `requestId` (here and in take, takeBest and close): the HTTP request it is made in, logged with its transactions. */
  async create(p: Principal, body: unknown, requestId?: string): Promise<CreateResponse> {
    const req = parseCreate(body);
    const hash = requestHash("create", "", {
      ...req,
      contract: req.contract.toBase58(),
      creatorTotal: String(req.creatorTotal),
      takerTarget: String(req.takerTarget),
      minimumTake: String(req.minimumTake),
      // Absent and none hash alike: the same offer.
      expiresAt: req.expiresAt === 0n ? undefined : String(req.expiresAt),
      idempotencyKey: undefined,
    });
    return (await this.idem.run(
      p.user.id,
      req.idempotencyKey,
      "create",
      hash,
      async (record) => {
        if (p.user.blocked) throw refusalError("CallerBlocked");
        return this.doCreate(p, req, record, requestId);
      },
      requestId,
    )) as CreateResponse;
  }

  private async doCreate(p: Principal, req: CreateRequest, record: Recorder, requestId: string | undefined): Promise<CreateResponse> {
    const nonce = this.nonceFor(p.user.id, req.idempotencyKey);
    const [offer] = this.client.pda.offer(req.contract, p.user.wallet, nonce);
    const { cfg, contract, token, existing, now } = await this.read(async () => {
      const cfg = await this.config();
      const [contract, token, existing] = await this.deps.gateway.getAccounts([req.contract, p.user.tokenAccount, offer]);
      return { cfg, contract, token, existing, now: await this.deps.gateway.now() };
    });
    if (!cfg.offersEnabled) throw refusalError("OffersDisabled");
    if (req.expectedFeeBps !== cfg.feeBps)
      throw new ApiError(409, `expectedFeeBps ${req.expectedFeeBps} differs from the current feeBps ${cfg.feeBps}; re-read /contracts`);
    const kd = this.owned(contract, "contract");
    if (!kd) throw new ApiError(404, "unknown contract address");
    const k = decodeContract(kd);
    const closed = contractRefusal(k, now);
    if (closed) throw refusalError(closed, { contract: k });
    if (expiryRefusal(req.expiresAt, now, k.cutoffAt)) {
      const [at, cutoff, clock] = [isoOf(req.expiresAt), isoOf(k.cutoffAt), isoOf(now)];
      throw new ApiError(
        400,
        req.expiresAt > k.cutoffAt
          ? `expiresAt ${at} is after the contract's cutoff ${cutoff}; it must be no later than the cutoff`
          : `expiresAt ${at} is not in the future (chain time ${clock}); it must be after now`,
      );
    }
    const l = cfg.limits;
    const { creatorTotal: total, takerTarget: target, minimumTake: minTake } = req;
    if (total < l.minimumCreatorMicros) throw new ApiError(400, `creatorTotalMicros must be at least minimumCreatorMicros ${l.minimumCreatorMicros}`);
    if (total > l.maximumWagerMicros) throw new ApiError(400, `creatorTotalMicros must be at most maximumWagerMicros ${l.maximumWagerMicros}`);
    if (target === 0n) throw new ApiError(400, "takerTargetMicros must be positive");
    if (oddsRefusal(total, target, l) !== null) {
      throw new ApiError(
        400,
        `odds out of range: creatorTotalMicros : takerTargetMicros must be between ${l.minimumOddsNumerator}:${l.minimumOddsDenominator} and ${l.maximumOddsNumerator}:${l.maximumOddsDenominator}`,
      );
    }
    if (minTake < l.minimumTakeMicros) throw new ApiError(400, `minimumTakeMicros must be at least ${l.minimumTakeMicros}`);
    if (minTake > target) throw new ApiError(400, "minimumTakeMicros must not exceed takerTargetMicros");
    const available = await this.tokenBalance(token);
    if (available < total) throw new ApiError(400, `insufficient balance: needed ${total} micros, available ${available} micros`);
    if (existing) throw new ApiError(409, "an offer for this idempotencyKey already exists");

    const user = await this.deps.custody.signer(p.user.id);
    const ix = await this.client.createOffer({
      payer: this.payer.publicKey,
      creator: p.user.wallet,
      creatorToken: p.user.tokenAccount,
      contract: req.contract,
      nonce,
      side: req.side,
      creatorTotal: total,
      takerTarget: target,
      minimumTake: minTake,
      expectedFeeBps: req.expectedFeeBps,
      expiresAt: req.expiresAt,
    });
    return this.submitForUser(p, user, ix, () => this.guard.admitCreate(p.user), { offerAddress: offer.toBase58() }, record, requestId);
  }

  /**
   * A user's write, one at a time per wallet: `admit` holds it to the wallet's limits, then `ix`
   * is signed by the payer and the user's custodial key, recorded and submitted; the client gets
   * `fields` back as a pending write with its signature.
   */
  private submitForUser<F extends object>(
    p: Principal,
    user: Keypair,
    ix: TransactionInstruction,
    admit: () => Promise<void>,
    fields: F,
    record: Recorder,
    requestId: string | undefined,
  ) {
    return this.guard.serial(p.user.id, async () => {
      await admit();
      return this.submitRecorded([ix], [this.payer, user], { signature: "", status: "pending" as const, ...fields }, record, requestId);
    });
  }

  /**
   * Signs, records the signed transaction before each submission (a crash after sending leaves a
   * resendable row), then submits; the submitter re-signs when the blockhash was not found.
   */
  private async submitRecorded<T extends { signature: string }>(
    ixs: TransactionInstruction[],
    signers: Keypair[],
    response: T,
    record: Recorder,
    requestId: string | undefined,
  ): Promise<T> {
    let out = response;
    const r = await this.submitter.send(ixs, signers, {
      feePayer: this.payer.publicKey,
      requestId,
      beforeSubmit: async (tx, signature) => {
        out = { ...response, signature };
        await record({
          signature,
          txBase64: tx.serialize({ verifySignatures: false }).toString("base64"),
          response: out,
          offerAddress: (out as { offerAddress?: string }).offerAddress ?? null,
        });
      },
    });
    if (isSubmitFailure(r)) throw this.idem.failureError(r);
    await record("sent");
    return out;
  }

  // ---- take --------------------------------------------------------------------------------

  async take(p: Principal, offerAddress: string, body: unknown, requestId?: string): Promise<TakeResponse> {
    const req = parseTake(offerAddress, body);
    const hash = requestHash("take", req.offer.toBase58(), { amount: String(req.amount), expectedRevision: String(req.expectedRevision) });
    return (await this.idem.run(
      p.user.id,
      req.idempotencyKey,
      "take",
      hash,
      async (record) => {
        // Compliance before any chain read (takeRefusal states it again for the viewer).
        if (p.user.blocked) throw refusalError("CallerBlocked");
        return this.doTake(p, req, record, requestId);
      },
      requestId,
    )) as TakeResponse;
  }

  private async loadOffer(address: PublicKey, op: "take" | "close"): Promise<OfferAccount> {
    const d = this.owned(await this.read(() => this.deps.gateway.getAccount(address)), "offer");
    if (d) return decodeOffer(d);
    const status = (await this.deps.indexedOfferStatus?.(address.toBase58())) ?? null;
    if (status !== null) throw new ApiError(409, `the offer is ${status} and finished: it can no longer be ${op === "take" ? "taken" : "closed"}`);
    throw new ApiError(404, "unknown offer address");
  }

  private async doTake(p: Principal, req: TakeRequest, record: Recorder, requestId: string | undefined): Promise<TakeResponse> {
    const o = await this.loadOffer(req.offer, "take");
    const creator = await this.deps.custody.userByWallet(o.creator.toBase58());
    const [position] = this.client.pda.position(req.offer, p.user.wallet);
    const { cfg, contract, token, pos, now } = await this.read(async () => {
      const cfg = await this.config();
      const [contract, token, pos] = await this.deps.gateway.getAccounts([o.contract, p.user.tokenAccount, position]);
      return { cfg, contract, token, pos, now: await this.deps.gateway.now() };
    });
    const kd = this.owned(contract, "contract");
    if (!kd) throw new ApiError(404, "unknown contract of this offer");
    const k = decodeContract(kd);
    const pd = this.owned(pos, "position");
    const held = pd ? decodePosition(pd).takerAmount : 0n;
    const maximumWager = cfg.limits.maximumWagerMicros;
    const refused = takeRefusal({
      offer: offerTerms(o),
      contract: k,
      taker: { wallet: p.user.wallet.toBase58(), blocked: p.user.blocked, held },
      creatorBlocked: creator?.blocked ?? false,
      amount: req.amount,
      expectedRevision: req.expectedRevision,
      now,
      config: { offersEnabled: cfg.offersEnabled, maximumWager },
    });
    if (refused) throw refusalError(refused, { offer: o, contract: k, amount: req.amount, held, expectedRevision: req.expectedRevision, maximumWager });
    const matched = matchedForTake(req.amount, o.creatorTotal, o.takerTarget, o.takerFilled, o.creatorAllocated);
    const available = await this.tokenBalance(token);
    if (available < req.amount) throw new ApiError(400, `insufficient balance: needed ${req.amount} micros, available ${available} micros`);

    const user = await this.deps.custody.signer(p.user.id);
    const ix = await this.client.takeOffer({
      payer: this.payer.publicKey,
      taker: p.user.wallet,
      takerToken: p.user.tokenAccount,
      contract: o.contract,
      offer: req.offer,
      amount: req.amount,
      expectedRevision: req.expectedRevision,
    });
    const fields = {
      offerAddress: req.offer.toBase58(),
      positionAddress: position.toBase58(),
      takeAmountMicros: String(req.amount),
      creatorMatchedMicros: String(matched),
      expectedRevision: String(req.expectedRevision),
    };
    return this.submitForUser(p, user, ix, () => this.guard.admitTake(p.user, pd === null), fields, record, requestId);
  }

  // ---- take-best ---------------------------------------------------------------------------

  /** POST /contracts/{contractAddress}/take-best: ./take-best.ts. */
  async takeBest(p: Principal, contractAddress: string, body: unknown, requestId?: string): Promise<TakeBestResponse> {
    const req = parseTakeBest(contractAddress, body);
    const hash = requestHash("take-best", req.contract.toBase58(), {
      side: req.side,
      amount: String(req.amount),
      worstOdds: `${req.worstOdds.numerator}/${req.worstOdds.denominator}`,
      mode: req.mode,
    });
    return (await this.idem.run(
      p.user.id,
      req.idempotencyKey,
      TAKE_BEST_OPERATION,
      hash,
      async (record) => {
        if (p.user.blocked) throw refusalError("CallerBlocked");
        return takeBest(this, p, req, record, requestId);
      },
      requestId,
    )) as TakeBestResponse;
  }

  // ---- close -------------------------------------------------------------------------------

  async close(p: Principal, offerAddress: string, body: unknown, requestId?: string): Promise<CloseResponse> {
    const req = parseClose(offerAddress, body);
    const hash = requestHash("close", req.offer.toBase58(), { expectedRevision: String(req.expectedRevision) });
    return (await this.idem.run(p.user.id, req.idempotencyKey, "close", hash, (record) => this.doClose(p, req, record, requestId), requestId)) as CloseResponse;
  }

  private async doClose(p: Principal, req: CloseRequest, record: Recorder, requestId: string | undefined): Promise<CloseResponse> {
    const o = await this.loadOffer(req.offer, "close");
    const { contract, now } = await this.read(async () => ({ contract: await this.deps.gateway.getAccount(o.contract), now: await this.deps.gateway.now() }));
    const kd = this.owned(contract, "contract");
    if (!kd) throw new ApiError(404, "unknown contract of this offer");
    const k = decodeContract(kd);
    const refused = closeRefusal({ offer: offerTerms(o), contract: k, caller: p.user.wallet.toBase58(), expectedRevision: req.expectedRevision, now });
    if (refused) throw refusalError(refused, { offer: o, contract: k, expectedRevision: req.expectedRevision });
    const user = await this.deps.custody.signer(p.user.id);
    const ix = await this.client.closeOffer({
      caller: p.user.wallet,
      contract: o.contract,
      offer: req.offer,
      creatorToken: o.creatorToken,
      creator: o.creator,
      expectedRevision: req.expectedRevision,
    });
    const fields = { offerAddress: req.offer.toBase58(), refundMicros: String(unmatchedStake(o)), expectedRevision: String(req.expectedRevision) };
    return this.submitForUser(p, user, ix, () => this.guard.admitClose(p.user), fields, record, requestId);
  }
}

/** The chain's offer as the take and close rules read it. */
function offerTerms(o: OfferAccount): OfferTerms {
  return { ...o, creator: o.creator.toBase58() };
}

/** Unix seconds as ISO 8601 UTC, for messages. */
const isoOf = (unix: bigint | number) => new Date(Number(unix) * 1000).toISOString();

/** sha256 of the canonical request: operation, path address and normalized fields (sorted). */
export function requestHash(op: string, address: string, fields: Record<string, unknown>): string {
  const canon = Object.keys(fields)
    .filter((k) => fields[k] !== undefined)
    .sort()
    .map((k) => [k, String(fields[k])]);
  return createHash("sha256")
    .update(JSON.stringify([op, address, canon]))
    .digest("hex");
}
