/**
 * An offers deployment on the test chain: mint, treasury, config with the spec's launch
 * settings, and helpers to make users and contracts and to run every instruction. Suites of the
 * program, the indexer, the API and the simulations build on it.
 */
import { randomUUID } from "node:crypto";
import { Keypair, PublicKey, type TransactionInstruction } from "@solana/web3.js";
import {
  LAUNCH_FEE_BPS,
  LAUNCH_LIMITS,
  OffersClient,
  decodeClaim,
  decodeConfig,
  decodeContract,
  decodeOffer,
  decodePosition,
  type ClaimAccount,
  type LimitsArgs,
  type OfferAccount,
  type PositionAccount,
  type ContractAccount,
  type SideName,
  type ConfigAccount,
} from "../idl/client/offers";
import { TestChain, type TxResult } from "./chain";
import { ProgramWorld, UNIT, deploymentParts, type User } from "./program-world";

export { UNIT, type User };

type CreateOfferArgs = Parameters<OffersClient["createOffer"]>[0];
type TakeOfferArgs = Parameters<OffersClient["takeOffer"]>[0];
type SettlePositionArgs = Parameters<OffersClient["settlePosition"]>[0];
type TakeBestArgs = Parameters<OffersClient["takeBest"]>[0];

/** An offer's terms as the tests write them (amounts in micro-units). */
export interface OfferTerms {
  side?: SideName;
  total: bigint;
  target: bigint;
  minTake?: bigint;
  feeBps?: number;
  nonce?: bigint;
  /** Unix seconds; none when omitted. */
  expiresAt?: bigint;
}

export class OffersWorld extends ProgramWorld<OffersClient> {
  /** `freezableMint`: the mint has a freeze authority (the chain's payer), as USDC has. */
  static async create(
    opts: { chain?: TestChain; feeBps?: number; limits?: LimitsArgs; offersEnabled?: boolean; freezableMint?: boolean } = {},
  ): Promise<OffersWorld> {
    const chain = opts.chain ?? (await TestChain.start());
    const { mint, authority, treasury } = await deploymentParts(chain, opts.freezableMint ? chain.payer.publicKey : null);
    const client = OffersClient.fromProvider(chain.anchorProvider);
    const w = new OffersWorld(chain, mint, client, authority, treasury);
    await w.initialize(
      await client.initializeConfig({
        authority: authority.publicKey,
        mint: mint.mint,
        treasury,
        feeBps: opts.feeBps ?? LAUNCH_FEE_BPS,
        offersEnabled: opts.offersEnabled ?? true,
        limits: opts.limits ?? LAUNCH_LIMITS,
        deployer: chain.upgradeAuthority.publicKey,
      }),
    );
    return w;
  }

  protected decodeClaim(data: Buffer): ClaimAccount {
    return decodeClaim(data);
  }

  /** A contract whose cutoff is `cutoffIn` seconds from the chain's now. */
  /**
   * A create_contract instruction signed by `by` (default the authority, also the payer), at
   * `cutoffIn` seconds from `now` with its deadline `deadlineAfterCutoff` later; fresh ids unless given.
   */
  contractIx(
    now: bigint,
    o: { by?: PublicKey; templateId?: string; eventId?: string; cutoffIn?: bigint; deadlineAfterCutoff?: bigint; config?: PublicKey } = {},
  ): Promise<TransactionInstruction> {
    const by = o.by ?? this.authority.publicKey;
    const cutoffAt = now + (o.cutoffIn ?? 3_600n);
    return this.client.createContract({
      authority: by,
      payer: by,
      templateId: o.templateId ?? randomUUID(),
      eventId: o.eventId ?? randomUUID(),
      cutoffAt,
      resolutionDeadline: cutoffAt + (o.deadlineAfterCutoff ?? 86_400n),
      config: o.config,
    });
  }

  async contract(opts: { cutoffIn?: bigint; deadlineAfterCutoff?: bigint } = {}): Promise<PublicKey> {
    const [templateId, eventId] = [randomUUID(), randomUUID()];
    const r = await this.send([await this.contractIx(await this.chain.now(), { ...opts, templateId, eventId })], [this.authority]);
    if (!r.ok) throw new Error(`create_contract failed: ${r.error}`);
    return this.client.pda.contract(templateId, eventId)[0];
  }

  async createOffer(creator: User, contract: PublicKey, o: OfferTerms): Promise<{ r: TxResult; offer: PublicKey }> {
    const nonce = o.nonce ?? this.nextNonce();
    const r = await this.send([await this.createOfferIx(creator, contract, { ...o, nonce })], [creator.key]);
    return { r, offer: this.client.pda.offer(contract, creator.key.publicKey, nonce)[0] };
  }

  /**
   * `creator`'s create_offer (from its token account, the chain's payer paying rent): side A, a
   * minimum take of one unit and the config's fee unless `o` says otherwise; `overrides` bend it.
   */
  async createOfferIx(creator: User, contract: PublicKey, o: OfferTerms & { nonce: bigint; overrides?: CreateOfferArgs["overrides"] }) {
    return this.client.createOffer({
      payer: this.chain.payer.publicKey,
      creator: creator.key.publicKey,
      creatorToken: creator.token,
      contract,
      nonce: o.nonce,
      side: o.side ?? "sideA",
      creatorTotal: o.total,
      takerTarget: o.target,
      minimumTake: o.minTake ?? UNIT,
      expectedFeeBps: o.feeBps ?? (await this.config()).feeBps,
      expiresAt: o.expiresAt,
      overrides: o.overrides,
    });
  }

  async take(taker: User, offer: PublicKey, amount: bigint, expectedRevision?: bigint): Promise<TxResult> {
    return this.send([await this.takeIx(taker, offer, amount, { expectedRevision })], [taker.key]);
  }

  /**
   * `taker`'s take_offer of `amount` (from its token account, the chain's payer paying rent); the
   * contract and the expected revision are the offer's as it is now unless given.
   */
  async takeIx(
    taker: User,
    offer: PublicKey,
    amount: bigint,
    o: { expectedRevision?: bigint; contract?: PublicKey; overrides?: TakeOfferArgs["overrides"] } = {},
  ) {
    const now = o.contract === undefined || o.expectedRevision === undefined ? await this.offer(offer) : undefined;
    return this.client.takeOffer({
      payer: this.chain.payer.publicKey,
      taker: taker.key.publicKey,
      takerToken: taker.token,
      contract: o.contract ?? now!.contract,
      offer,
      amount,
      expectedRevision: o.expectedRevision ?? now!.revision,
      overrides: o.overrides,
    });
  }

  /**
   * `taker`'s take_best over `offers` of `contract` (from its token account, the chain's payer
   * paying rent): fill-and-kill, backing sideB (the offers' creators back sideA, as createOffer's
   * default), any odds, unless `o` says otherwise.
   */
  takeBestIx(taker: User, contract: PublicKey, offers: PublicKey[], amount: bigint, o: Partial<TakeBestArgs> = {}) {
    return this.client.takeBest({
      payer: this.chain.payer.publicKey,
      taker: taker.key.publicKey,
      takerToken: taker.token,
      contract,
      side: "sideB",
      amount,
      worstOdds: { numerator: 1n, denominator: 1n },
      mode: "fill-and-kill",
      offers,
      ...o,
    });
  }

  async takeBest(taker: User, contract: PublicKey, offers: PublicKey[], amount: bigint, o: Partial<TakeBestArgs> = {}): Promise<TxResult> {
    return this.send([await this.takeBestIx(taker, contract, offers, amount, o)], [taker.key]);
  }

  async close(caller: Keypair, offer: PublicKey, expectedRevision?: bigint): Promise<TxResult> {
    const o = await this.offer(offer);
    const ix = await this.client.closeOffer({
      caller: caller.publicKey,
      contract: o.contract,
      offer,
      creatorToken: o.creatorToken,
      creator: o.creator,
      expectedRevision: expectedRevision ?? o.revision,
    });
    return this.send([ix], [caller]);
  }

  async resolve(contract: PublicKey, result: "sideA" | "sideB" | "void"): Promise<TxResult> {
    return this.send([await this.client.resolveContract({ authority: this.authority.publicKey, contract, result })], [this.authority]);
  }

  async settle(position: PublicKey): Promise<TxResult> {
    return this.send([await this.settleIx(position)]);
  }

  /** settle_position of `position` as its accounts record it (payouts, claims, the treasury); `over` bends it. */
  async settleIx(position: PublicKey, over: Partial<SettlePositionArgs> = {}) {
    const p = await this.position(position);
    const o = await this.offer(p.offer);
    return this.client.settlePosition({
      contract: o.contract,
      offer: p.offer,
      position,
      creatorToken: o.creatorToken,
      takerToken: p.takerToken,
      treasury: this.treasury,
      creator: o.creator,
      taker: p.taker,
      ...over,
    });
  }

  /** Closes a finished offer's account (its contract resolved or voided); rent to its payer. */
  async closeOfferAccount(offer: PublicKey): Promise<TxResult> {
    const o = await this.offer(offer);
    return this.send([await this.client.closeOfferAccount({ offer, rentPayer: o.rentPayer, contract: o.contract })]);
  }

  /** The owner withdraws its whole claim to `destination`. */
  withdrawClaim(owner: Keypair, destination: PublicKey): Promise<TxResult> {
    return this.withdrawClaimAs(owner, destination);
  }

  positionOf(offer: PublicKey, taker: User): PublicKey {
    return this.client.pda.position(offer, taker.key.publicKey)[0];
  }

  config(): Promise<ConfigAccount> {
    return this.read(this.client.pda.config()[0], decodeConfig);
  }
  contractAccount(address: PublicKey): Promise<ContractAccount> {
    return this.read(address, decodeContract);
  }
  offer(address: PublicKey): Promise<OfferAccount> {
    return this.read(address, decodeOffer);
  }
  position(address: PublicKey): Promise<PositionAccount> {
    return this.read(address, decodePosition);
  }
}
