/**
 * Transactions for a wallet that keeps its own keys (the POST of a Solana Action): a take of an
 * offer, a pick on a pool. The visitor's wallet is the taker (or the picker), the only signer and
 * the fee and rent payer, and pays from its own associated token account of the program's mint;
 * the service signs nothing and sends nothing. Every rule is checked on fresh chain state before
 * the transaction is built, by the same rule functions and with the same messages as the
 * custodial writes (idl/client/offers-rules.ts `takeRefusal`, ./../writes/errors.ts), so a
 * wallet is never handed a transaction the program would refuse at the time of asking.
 */
import { PublicKey, Transaction, type AccountInfo, type TransactionInstruction } from "@solana/web3.js";
import { AccountLayout, getAssociatedTokenAddressSync } from "@solana/spl-token";
import { decodeConfig, decodeContract, decodeOffer, decodePosition, offersAccountKind, type OfferAccount } from "../../idl/client/offers";
import { decodeParticipant, decodePool, decodePoolsConfig, poolsAccountKind } from "../../idl/client/pools";
import { matchedForTake, takeRefusal } from "../../idl/client/offers-rules";
import { pickRefusal, poolState, type PickRefusalName } from "../../idl/client/pools-rules";
import { ChainUnavailableError, type ChainGateway } from "../chain/gateway";
import { offersClientFor, poolsClientFor } from "../chain/service-chain";
import { ApiError } from "../api-error";
import { refusalError } from "../writes/errors";
import { formatMicros } from "../read/share-format";

/** No idempotency key here: a retry simply asks again. */
const CHAIN_UNREACHABLE_NOW = "the chain is temporarily unreachable; retry";

/** A built, unsigned transaction for the visitor's wallet, and what it will do in words. */
export interface UnsignedWrite {
  /** Base64 of the serialized transaction (no signature yet; the wallet signs as fee payer). */
  transaction: string;
  message: string;
  /** The account the write creates or adds to (position or participant). */
  account: string;
  amountMicros: bigint;
}

export interface SelfCustodyDeps {
  gateway: ChainGateway;
  /** Compliance: which of these wallets the service blocks from wagering (custody's list). */
  blockedWallets?: (wallets: string[]) => Promise<Set<string>>;
  /** The indexed status of an offer whose account is gone (settled and reclaimed), for a clear 409. */
  indexedOfferStatus?: (address: string) => Promise<string | null>;
}

const PICK_ANSWERS: Record<PickRefusalName, { status: 400 | 409; message: string }> = {
  PoolNotOpen: { status: 409, message: "the pool no longer takes picks" },
  PoolClosed: { status: 409, message: "the pool's picks have closed" },
  InvalidOutcome: { status: 400, message: "outcome is not one of the pool's outcomes" },
  ZeroAmount: { status: 400, message: "amount must be positive" },
};

/** A base58 address that can sign: an ed25519 point (a program address cannot sign a take). */
export function walletAddress(raw: unknown): PublicKey {
  let key: PublicKey | null = null;
  try {
    if (typeof raw === "string" && /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(raw)) key = new PublicKey(raw);
  } catch {
    key = null;
  }
  if (!key || !PublicKey.isOnCurve(key.toBytes())) throw new ApiError(400, "account must be the base58 address of a wallet that can sign");
  return key;
}

export class SelfCustodyWrites {
  private readonly offers = offersClientFor(PublicKey.default);
  private readonly pools = poolsClientFor(PublicKey.default);

  constructor(private readonly d: SelfCustodyDeps) {}

  private async chain<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ChainUnavailableError) throw new ApiError(503, CHAIN_UNREACHABLE_NOW);
      throw e;
    }
  }

  private owned(a: AccountInfo<Buffer> | null, program: PublicKey): Buffer | null {
    return a && a.owner.equals(program) ? a.data : null;
  }

  /** The wallet's token account of `mint` with at least `amount`, and SOL for the fee. */
  private fundsRefusal(
    wallet: PublicKey,
    walletInfo: AccountInfo<Buffer> | null,
    token: PublicKey,
    tokenInfo: AccountInfo<Buffer> | null,
    mint: PublicKey,
    amount: bigint,
  ): ApiError | null {
    if (!walletInfo || walletInfo.lamports === 0) return new ApiError(400, `the wallet ${wallet.toBase58()} holds no SOL to pay the transaction fee`);
    if (!tokenInfo || tokenInfo.data.length < AccountLayout.span)
      return new ApiError(400, `the wallet ${wallet.toBase58()} has no token account of the stablecoin (mint ${mint.toBase58()})`);
    const t = AccountLayout.decode(tokenInfo.data);
    if (!t.mint.equals(mint) || !t.owner.equals(wallet))
      return new ApiError(400, `the wallet's associated token account ${token.toBase58()} is not of the stablecoin mint`);
    if (t.amount < amount) return new ApiError(400, `insufficient balance: needed ${amount} micros, available ${t.amount} micros`);
    return null;
  }

  private async unsigned(payer: PublicKey, ix: TransactionInstruction): Promise<string> {
    const tx = new Transaction({ feePayer: payer, recentBlockhash: await this.chain(() => this.d.gateway.blockhash()) }).add(ix);
    return tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString("base64");
  }

  private async loadOffer(address: PublicKey): Promise<OfferAccount> {
    const a = await this.chain(() => this.d.gateway.getAccount(address));
    const data = this.owned(a, this.offers.program.programId);
    if (data && offersAccountKind(data) === "offer") return decodeOffer(data);
    const status = (await this.d.indexedOfferStatus?.(address.toBase58())) ?? null;
    if (status !== null) throw new ApiError(409, `the offer is ${status} and finished: it can no longer be taken`);
    throw new ApiError(404, "unknown offer address");
  }

  /** A take of `amount` micro-units of `offerAddress` by `wallet`, checked against every rule first. */
  async takeOffer(offerAddress: PublicKey, wallet: PublicKey, amount: bigint): Promise<UnsignedWrite> {
    const o = await this.loadOffer(offerAddress);
    const programId = this.offers.program.programId;
    const [position] = this.offers.pda.position(offerAddress, wallet);
    const { cfgInfo, contract, pos, walletInfo, now } = await this.chain(async () => {
      const [cfgInfo, contract, pos, walletInfo] = await this.d.gateway.getAccounts([this.offers.pda.config()[0], o.contract, position, wallet]);
      return { cfgInfo, contract, pos, walletInfo, now: await this.d.gateway.now() };
    });
    const cfgData = this.owned(cfgInfo, programId);
    if (!cfgData) throw new ApiError(503, "offers are not configured on this chain");
    const cfg = decodeConfig(cfgData);
    const kd = this.owned(contract, programId);
    if (!kd) throw new ApiError(404, "unknown contract of this offer");
    const k = decodeContract(kd);
    const pd = this.owned(pos, programId);
    const held = pd ? decodePosition(pd).takerAmount : 0n;
    const blocked = (await this.d.blockedWallets?.([wallet.toBase58(), o.creator.toBase58()])) ?? new Set<string>();
    const maximumWager = cfg.limits.maximumWagerMicros;
    const refused = takeRefusal({
      offer: { ...o, creator: o.creator.toBase58() },
      contract: k,
      taker: { wallet: wallet.toBase58(), blocked: blocked.has(wallet.toBase58()), held },
      creatorBlocked: blocked.has(o.creator.toBase58()),
      amount,
      now,
      config: { offersEnabled: cfg.offersEnabled, maximumWager },
    });
    if (refused) throw refusalError(refused, { offer: o, contract: k, amount, held, maximumWager });
    const token = getAssociatedTokenAddressSync(cfg.mint, wallet, true);
    const tokenInfo = await this.chain(() => this.d.gateway.getAccount(token));
    const poor = this.fundsRefusal(wallet, walletInfo, token, tokenInfo, cfg.mint, amount);
    if (poor) throw poor;
    const ix = await this.offers.takeOffer({
      payer: wallet,
      taker: wallet,
      takerToken: token,
      contract: o.contract,
      offer: offerAddress,
      amount,
      expectedRevision: o.revision,
    });
    const matched = matchedForTake(amount, o.creatorTotal, o.takerTarget, o.takerFilled, o.creatorAllocated);
    return {
      transaction: await this.unsigned(wallet, ix),
      message: `It stands against ${formatMicros(String(matched))} of the creator's stake; the position ${position.toBase58()} is settled to your token account.`,
      account: position.toBase58(),
      amountMicros: amount,
    };
  }

  /** A pick of `amount` micro-units on outcome `outcome` of `poolAddress` by `wallet`. */
  async placePick(poolAddress: PublicKey, outcome: number, wallet: PublicKey, amount: bigint): Promise<UnsignedWrite> {
    const programId = this.pools.program.programId;
    const [participant] = this.pools.pda.participant(poolAddress, wallet);
    const { cfgInfo, poolInfo, walletInfo, now } = await this.chain(async () => {
      const [cfgInfo, poolInfo, walletInfo] = await this.d.gateway.getAccounts([this.pools.pda.config()[0], poolAddress, wallet]);
      return { cfgInfo, poolInfo, walletInfo, now: await this.d.gateway.now() };
    });
    const pd = this.owned(poolInfo, programId);
    if (!pd || poolsAccountKind(pd) !== "pool") throw new ApiError(404, "unknown pool address");
    const cfgData = this.owned(cfgInfo, programId);
    if (!cfgData) throw new ApiError(503, "pools are not configured on this chain");
    const cfg = decodePoolsConfig(cfgData);
    const p = decodePool(pd);
    const blocked = (await this.d.blockedWallets?.([wallet.toBase58()])) ?? new Set<string>();
    if (blocked.has(wallet.toBase58())) throw refusalError("CallerBlocked");
    const refused = pickRefusal(p, outcome, amount, now);
    if (refused) throw new ApiError(PICK_ANSWERS[refused].status, PICK_ANSWERS[refused].message);
    const token = getAssociatedTokenAddressSync(cfg.mint, wallet, true);
    const tokenInfo = await this.chain(() => this.d.gateway.getAccount(token));
    const poor = this.fundsRefusal(wallet, walletInfo, token, tokenInfo, cfg.mint, amount);
    if (poor) throw poor;
    const ix = await this.pools.placePick({ payer: wallet, user: wallet, userToken: token, pool: poolAddress, outcome, amount });
    return {
      transaction: await this.unsigned(wallet, ix),
      message: `Your picks on this ${poolState(p.state, p.closesAt, now)} pool are paid to your token account when it is decided.`,
      account: participant.toBase58(),
      amountMicros: amount,
    };
  }

  /** What a sent transaction became, and the position or participant it wrote (null when none yet). */
  async outcome(signature: string): Promise<{ state: string; error: string | null }> {
    const s = await this.chain(() => this.d.gateway.status(signature));
    return { state: s.state, error: s.error };
  }

  /** A participant's total on a pool, to say what a pick did (0 when none). */
  async participantTotal(poolAddress: PublicKey, wallet: PublicKey): Promise<bigint> {
    const a = await this.chain(() => this.d.gateway.getAccount(this.pools.pda.participant(poolAddress, wallet)[0]));
    const d = this.owned(a, this.pools.program.programId);
    return d ? decodeParticipant(d).total : 0n;
  }

  /** A wallet's position on an offer (0 when none). */
  async positionTotal(offerAddress: PublicKey, wallet: PublicKey): Promise<bigint> {
    const a = await this.chain(() => this.d.gateway.getAccount(this.offers.pda.position(offerAddress, wallet)[0]));
    const d = this.owned(a, this.offers.program.programId);
    return d && offersAccountKind(d) === "position" ? decodePosition(d).takerAmount : 0n;
  }
}
