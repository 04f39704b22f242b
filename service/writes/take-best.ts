/**
 * The take-best write (issue 24): POST /contracts/{contractAddress}/take-best and the takeBest
 * mutation, on the WriteService (./write-service.ts owns the token, the idempotency and the
 * request hash; this file the plan and the transactions). Decisions (docs/api-guide.md, "Take
 * the best price"):
 *
 * - The plan: the indexed book's offers for the side (service/read/book.ts `indexedBookOrder`),
 *   each read fresh from the chain with the caller's position on it (the plan's holdings,
 *   service/read/holdings.ts: from the chain here, why below), blocked creators left out,
 *   planned by the program's own sweep (service/read/take-plan.ts over take-best-rules.ts
 *   `planTakeBest`) at the contract and Config as they are now. Fill-or-kill the plan cannot fill
 *   is a 409 before anything is signed; fill-and-kill that takes nothing is a 409 too.
 * - The transactions: one take_best lists at most `offersPerTransaction` offers (10 in a legacy
 *   transaction with the service paying the fee: OffersClient.takeBestOffersThatFit). A plan that
 *   fits one transaction lists, besides its offers, the next offers of the book that could be
 *   taken (up to that number): a concurrent taker who got there first then costs the caller a
 *   worse-priced offer within the limit, not the request. Fill-or-kill is one transaction always
 *   (409 when its plan needs more offers); fill-and-kill splits a larger plan across at most
 *   MAX_TRANSACTIONS transactions, each take_best fill-and-kill for its part of the plan, sent one
 *   after the other; a part refused before it was sent (the rate, the chain) ends the request
 *   with the parts already sent, as a fill-and-kill may.
 * - The rate: one token of the caller's write bucket per transaction (./wallet-guard.ts), the
 *   positions cap for every position the plan opens.
 * - Idempotency: the row of the key records each transaction before it is sent (the last one is
 *   what a replay follows); the answer of a replay is the recorded answer, all signatures.
 */
import { PublicKey } from "@solana/web3.js";
import { decodeContract, decodeOffer, decodePosition } from "../../idl/client/offers";
import { ApiError } from "../api-error";
import { isSubmitFailure } from "../chain/submitter";
import type { Principal } from "../custody/custody";
import { quoteOf, type Quote } from "../read/quote";
import { holdingsOf, type Holdings } from "../read/holdings";
import { planOverBook, type BookOffer, type Plan, type PlannedFill } from "../read/take-plan";
import { refusalError } from "./errors";
import type { Recorder, StoredResult } from "./idempotency";
import type { TakeBestRequestBody } from "./validate";
import type { WriteService } from "./write-service";

type PlanRequest = Parameters<typeof planOverBook>[2];

/** Most transactions one fill-and-kill request sends. */
export const MAX_TRANSACTIONS = 4;

export interface TakeBestResponse {
  /** The last transaction sent (the one a replay of the key follows). */
  signature: string;
  /** Every transaction sent, in order. */
  signatures: string[];
  status: "pending";
  mode: TakeBestRequestBody["mode"];
  /** What the transactions were built to take (the quote's shape). */
  plan: Quote;
}

const offersPerTx = new WeakMap<object, Promise<number>>();

/** How many offers one take_best of the service (a fee payer apart from the taker) lists. */
export function offersPerTransaction(ws: WriteService): Promise<number> {
  const known = offersPerTx.get(ws.client);
  if (known) return known;
  const n = ws.client.takeBestOffersThatFit();
  offersPerTx.set(ws.client, n);
  return n;
}

/** The plan's fills cut to `fills` (what was sent). */
function partOf(plan: Plan, fills: PlannedFill[], amount: bigint): Plan {
  const filled = fills.reduce((s, f) => s + f.amount, 0n);
  return { fills, filled, matched: fills.reduce((s, f) => s + f.matched, 0n), unfilled: amount - filled, error: null };
}

export async function takeBest(ws: WriteService, p: Principal, req: TakeBestRequestBody, record: Recorder, requestId?: string): Promise<TakeBestResponse> {
  const contract = req.contract.toBase58();
  const wallet = p.user.wallet.toBase58();
  const addresses = (await ws.deps.bookOffers?.(contract, req.side)) ?? [];
  const perTx = await offersPerTransaction(ws);
  // Enough of the book for the most transactions a request sends, and a few offers beyond.
  const considered = addresses.slice(0, perTx * MAX_TRANSACTIONS + perTx);
  const offerKeys = considered.map((a) => new PublicKey(a));
  const positionKeys = offerKeys.map((o) => ws.client.pda.position(o, p.user.wallet)[0]);
  const { cfg, k, token, accounts, now } = await ws.read(async () => {
    const cfg = await ws.config();
    const [k, token, ...accounts] = await ws.deps.gateway.getAccounts([req.contract, p.user.tokenAccount, ...offerKeys, ...positionKeys]);
    return { cfg, k, token, accounts, now: await ws.deps.gateway.now() };
  });
  const kd = ws.owned(k, "contract");
  if (!kd) throw new ApiError(404, "unknown contract address");
  const c = decodeContract(kd);
  const offers: BookOffer[] = [];
  const held: [string, bigint][] = [];
  const creators = new Map<string, boolean>();
  for (let i = 0; i < offerKeys.length; i++) {
    const d = ws.owned(accounts[i], "offer");
    if (!d) continue;
    const o = decodeOffer(d);
    const creator = o.creator.toBase58();
    if (!creators.has(creator)) creators.set(creator, (await ws.deps.custody.userByWallet(creator))?.blocked ?? false);
    if (creators.get(creator)) continue;
    const pd = ws.owned(accounts[offerKeys.length + i], "position");
    if (pd) held.push([considered[i], decodePosition(pd).takerAmount]);
    offers.push({ ...o, address: considered[i], creator, contract: o.contract.toBase58(), feeBps: o.feeBps });
  }
  // Read from the chain, in the same read as the offers, not from the store as the quote does:
  // the program judges what is signed against the chain, and a position the indexer has not shown
  // yet (the caller's take a moment ago) would leave room the program refuses and miscount the
  // positions this take opens (the positions cap below).
  const holdings = holdingsOf(held);
  const request = {
    side: req.side,
    amount: req.amount,
    worstOdds: req.worstOdds,
    taker: wallet,
    maximumWager: cfg.limits.maximumWagerMicros,
    offersEnabled: cfg.offersEnabled,
    contract: { address: contract, status: c.status, cutoffAt: c.cutoffAt },
    now,
  };
  const plan = planOverBook(offers, holdings, request);
  if (plan.error === "OffersDisabled" || plan.error === "ContractNotOpen" || plan.error === "CutoffPassed") throw refusalError(plan.error, { contract: c });
  if (plan.error) throw new ApiError(409, `the book cannot be taken now (${plan.error}); re-read it`);
  if (req.mode === "fill-or-kill" && plan.unfilled > 0n)
    throw new ApiError(
      409,
      `fill-or-kill: the book holds ${plan.filled} of the ${req.amount} micros asked at worstOdds ${req.worstOdds.numerator}/${req.worstOdds.denominator} or better; nothing was taken`,
    );
  if (plan.filled === 0n)
    throw new ApiError(
      409,
      `nothing on the book can be taken at worstOdds ${req.worstOdds.numerator}/${req.worstOdds.denominator} or better; nothing was taken`,
    );
  if (req.mode === "fill-or-kill" && plan.fills.length > perTx)
    throw new ApiError(409, `fill-or-kill: filling it needs ${plan.fills.length} offers, more than the ${perTx} one transaction takes; nothing was taken`);
  const available = await ws.tokenBalance(token);
  if (available < plan.filled) throw new ApiError(400, `insufficient balance: needed ${plan.filled} micros, available ${available} micros`);

  const parts = transactionsOf(plan, offers, holdings, request, perTx);
  const user = await ws.deps.custody.signer(p.user.id);
  return ws.guard.serial(p.user.id, async () => {
    const sent: string[] = [];
    const done: PlannedFill[] = [];
    // What the key's row holds once a part was sent: re-recorded when a later part is refused, so a replay follows a sent one.
    let kept: StoredResult | null = null;
    let pending: StoredResult | null = null;
    for (const part of parts) {
      try {
        if (sent.length === 0) await ws.guard.admitTake(p.user, plan.fills.filter((f) => holdings(f.address) === 0n).length);
        else await ws.guard.consume(p.user.id);
      } catch (e) {
        if (sent.length === 0) throw e;
        break;
      }
      const ix = await ws.client.takeBest({
        payer: ws.payer.publicKey,
        taker: p.user.wallet,
        takerToken: p.user.tokenAccount,
        contract: req.contract,
        side: req.side,
        amount: part.amount,
        worstOdds: req.worstOdds,
        mode: req.mode,
        offers: part.list.map((a) => offerKeys[considered.indexOf(a)]),
      });
      const base = { status: "pending" as const, mode: req.mode, plan: quoteOf({ ...req, contract }, partOf(plan, [...done, ...part.fills], req.amount)) };
      const r = await ws.submitter.send([ix], [ws.payer, user], {
        feePayer: ws.payer.publicKey,
        requestId,
        beforeSubmit: async (tx, signature) => {
          const response: TakeBestResponse = { ...base, signature, signatures: [...sent, signature] };
          pending = { signature, txBase64: tx.serialize({ verifySignatures: false }).toString("base64"), response, offerAddress: null };
          await record(pending);
        },
      });
      if (isSubmitFailure(r)) {
        if (!kept) throw ws.idem.failureError(r);
        // A later part refused: the parts sent stand, as a fill-and-kill's partial fill.
        await record(kept);
        break;
      }
      kept = pending!;
      sent.push(kept.signature);
      done.push(...part.fills);
    }
    // Tracked once, after the last part: a confirmed row takes no further record.
    await record("sent");
    return kept!.response as TakeBestResponse;
  });
}

interface Part {
  /** The offers the take_best lists, in the book's order. */
  list: string[];
  /** What the plan takes with it. */
  fills: PlannedFill[];
  amount: bigint;
}

/**
 * The plan's transactions: one when its offers fit (with the book's next takeable offers as
 * spares), else its fills `perTx` at a time (fill-and-kill only), at most MAX_TRANSACTIONS.
 */
function transactionsOf(plan: Plan, offers: BookOffer[], holdings: Holdings, request: PlanRequest, perTx: number): Part[] {
  const sum = (fs: PlannedFill[]) => fs.reduce((s, f) => s + f.amount, 0n);
  if (plan.fills.length <= perTx) {
    const planned = new Set(plan.fills.map((f) => f.address));
    let spares = perTx - planned.size;
    const list: string[] = [];
    for (const o of offers) {
      if (planned.has(o.address)) list.push(o.address);
      else if (spares > 0 && spareFits(o, holdings, request)) {
        list.push(o.address);
        spares--;
      }
    }
    return [{ list, fills: plan.fills, amount: plan.filled }];
  }
  const parts: Part[] = [];
  for (let i = 0; i < plan.fills.length && parts.length < MAX_TRANSACTIONS; i += perTx) {
    const fills = plan.fills.slice(i, i + perTx);
    parts.push({ list: fills.map((f) => f.address), fills, amount: sum(fills) });
  }
  return parts;
}

/** An offer the sweep would take from if the ones before it were gone: within the limit, not the caller's, room left. */
function spareFits(o: BookOffer, holdings: Holdings, request: PlanRequest): boolean {
  const alone = planOverBook([o], holdings, { ...request, amount: o.takerTarget - o.takerFilled > 0n ? o.takerTarget - o.takerFilled : 1n });
  return alone.filled > 0n;
}
