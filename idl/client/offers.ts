/**
 * Client of the offers program, on top of Anchor's `Program` built from idl/offers.json:
 * PDA derivation, account decoding and instruction builders. Used by the tests, the indexer,
 * the API's write path and the simulations; it knows nothing of any of them.
 */
import { Program, type Provider } from "./anchor";
import { Keypair, PublicKey, Transaction, type TransactionInstruction } from "@solana/web3.js";
import { ProgramClient, ProgramPdas, SYSTEM_PROGRAM, TOKEN_PROGRAM, bigints, bn, programCodec, type ClaimAccount, u64le } from "./common";
import { offersIdl, type Offers } from "../offers";

/** The IDL with camelCased names, as Anchor's TypeScript client uses it. */
export const OFFERS_IDL: Offers = offersIdl;
export const OFFERS_PROGRAM_ID = new PublicKey(offersIdl.address);

export const Side = { sideA: 1, sideB: 2 } as const;
export type SideName = keyof typeof Side;
/** take_best's `mode` byte (the rules are in take-best-rules.ts). */
export const TakeBestMode = { "fill-and-kill": 0, "fill-or-kill": 1 } as const;
export type TakeBestModeName = keyof typeof TakeBestMode;
/** Most (offer, position) pairs one take_best takes: the length of its `position_bumps`. */
export const TAKE_BEST_MAX_OFFERS = 16;
/** A legacy transaction's size limit (the packet size less headers). */
const PACKET_DATA_SIZE = 1232;
// The statuses by on-chain code (state.rs), each declared here only: the decoders, the indexer's
// rows, the read API's filters, the GraphQL enums and the OpenAPI schemas all take them from here.
export const ContractStatus = ["Open", "Resolved", "Voided"] as const;
export const ContractResult = ["none", "sideA", "sideB", "void"] as const;
export const OfferStatus = ["Open", "Filled", "Closed", "Settled"] as const;
export type OfferStatusName = (typeof OfferStatus)[number];
export const PositionStatus = ["Open", "SettledCreatorWin", "SettledTakerWin", "Refunded"] as const;
export type PositionStatusName = (typeof PositionStatus)[number];
/** A settled position's statuses (every status but Open). */
export type SettlementStatusName = Exclude<PositionStatusName, "Open">;
export const SETTLEMENT_STATUSES: readonly SettlementStatusName[] = PositionStatus.filter((s): s is SettlementStatusName => s !== "Open");

export interface LimitsArgs {
  minimumCreatorMicros: bigint;
  minimumTakeMicros: bigint;
  maximumWagerMicros: bigint;
  warningRatioNumerator: bigint;
  warningRatioDenominator: bigint;
  minimumOddsNumerator: bigint;
  minimumOddsDenominator: bigint;
  maximumOddsNumerator: bigint;
  maximumOddsDenominator: bigint;
}

/** Launch values of the spec (amounts in micro-units). */
export const LAUNCH_LIMITS: LimitsArgs = {
  minimumCreatorMicros: 1_000_000n,
  minimumTakeMicros: 1_000_000n,
  maximumWagerMicros: 500_000_000n,
  warningRatioNumerator: 5n,
  warningRatioDenominator: 1n,
  minimumOddsNumerator: 1n,
  minimumOddsDenominator: 10n,
  maximumOddsNumerator: 10n,
  maximumOddsDenominator: 1n,
};
export const LAUNCH_FEE_BPS = 1000;

/** UUID string -> 16 bytes, and back. */
export function uuidBytes(uuid: string): number[] {
  const hex = uuid.replace(/-/g, "");
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new Error(`not a UUID: ${uuid}`);
  return [...Buffer.from(hex, "hex")];
}
export function bytesUuid(bytes: ArrayLike<number>): string {
  const h = Buffer.from(Array.from(bytes)).toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export class OffersPda extends ProgramPdas {
  constructor(programId: PublicKey = OFFERS_PROGRAM_ID) {
    super(programId);
  }
  contract(templateId: string, eventId: string) {
    return this.find([Buffer.from("contract"), Buffer.from(uuidBytes(templateId)), Buffer.from(uuidBytes(eventId))]);
  }
  /** The contract is in the seeds: a closed offer's address can never be created again (see close_offer_account). */
  offer(contract: PublicKey, creator: PublicKey, nonce: bigint) {
    return this.find([Buffer.from("offer"), contract.toBuffer(), creator.toBuffer(), u64le(nonce)]);
  }
  position(offer: PublicKey, taker: PublicKey) {
    return this.find([Buffer.from("position"), offer.toBuffer(), taker.toBuffer()]);
  }
}

const codec = programCodec<OffersAccountKind, OffersEvent["name"]>(OFFERS_IDL);
export const offersAccountsCoder = codec.accounts;
export const offersEventCoder = codec.events;

/** Instruction builders. Every builder returns a TransactionInstruction; signing is the caller's. */
export class OffersClient extends ProgramClient<Offers, OffersPda> {
  constructor(program: Program<Offers>) {
    super(program, new OffersPda(program.programId));
  }

  static fromProvider(provider: Provider, programId: PublicKey = OFFERS_PROGRAM_ID): OffersClient {
    return new OffersClient(new Program<Offers>({ ...OFFERS_IDL, address: programId.toBase58() }, provider));
  }

  /**
   * The claim account of a payee and its bump, as close_offer / settle_position take them. A
   * caller that does not name the payee gets the program id in its place (Anchor's "no account"):
   * payouts to receivable token accounts work as before, and a payout that would need the claim
   * fails with ClaimAccountMissing instead of being credited.
   */
  private claimOf(owner: PublicKey | undefined): [PublicKey, number] {
    return owner ? this.pda.claim(owner) : [this.program.programId, 0];
  }

  /** Who pays the rent of a claim created on demand: the provider's key (the fee payer) unless given. */
  private payerOr(payer: PublicKey | undefined): PublicKey {
    const p = payer ?? this.program.provider.publicKey;
    if (!p) throw new Error("offers client: no payer given and the provider has no public key");
    return p;
  }

  private limits(l: LimitsArgs) {
    return Object.fromEntries(Object.entries(l).map(([k, v]) => [k, bn(v)])) as never;
  }

  /** `deployer` (default: the authority) must be the program's upgrade authority; it signs and pays. */
  initializeConfig(a: {
    authority: PublicKey;
    mint: PublicKey;
    treasury: PublicKey;
    feeBps: number;
    offersEnabled: boolean;
    limits: LimitsArgs;
    deployer?: PublicKey;
  }) {
    return this.program.methods
      .initializeConfig(a.feeBps, a.offersEnabled ? 1 : 0, this.limits(a.limits))
      .accountsStrict(this.initializeConfigAccounts(a))
      .instruction();
  }

  updateConfig(a: { authority: PublicKey; feeBps: number; offersEnabled: boolean; limits: LimitsArgs; config?: PublicKey }) {
    return this.program.methods
      .updateConfig(a.feeBps, a.offersEnabled ? 1 : 0, this.limits(a.limits))
      .accountsStrict(this.authorityAccounts(a))
      .instruction();
  }

  /** Names a new fee treasury (authority only), e.g. when the old one was closed or frozen. */
  setTreasury(a: { authority: PublicKey; treasury: PublicKey; config?: PublicKey }) {
    return this.program.methods
      .setTreasury()
      .accountsStrict({ ...this.authorityAccounts(a), treasury: a.treasury })
      .instruction();
  }

  createContract(a: {
    authority: PublicKey;
    payer: PublicKey;
    templateId: string;
    eventId: string;
    cutoffAt: bigint;
    resolutionDeadline: bigint;
    config?: PublicKey;
  }) {
    const [contract, bump] = this.pda.contract(a.templateId, a.eventId);
    return this.program.methods
      .createContract(uuidBytes(a.templateId), uuidBytes(a.eventId), bn(a.cutoffAt), bn(a.resolutionDeadline), bump)
      .accountsStrict({ authority: a.authority, payer: a.payer, config: a.config ?? this.pda.config()[0], contract, systemProgram: SYSTEM_PROGRAM })
      .instruction();
  }

  resolveContract(a: { authority: PublicKey; contract: PublicKey; result: "sideA" | "sideB" | "void" | number; config?: PublicKey }) {
    const result = typeof a.result === "number" ? a.result : ContractResult.indexOf(a.result);
    return this.program.methods
      .resolveContract(result)
      .accountsStrict({ authority: a.authority, config: a.config ?? this.pda.config()[0], contract: a.contract })
      .instruction();
  }

  voidExpiredContract(a: { contract: PublicKey }) {
    return this.program.methods.voidExpiredContract().accountsStrict({ contract: a.contract }).instruction();
  }

  createOffer(a: {
    payer: PublicKey;
    creator: PublicKey;
    creatorToken: PublicKey;
    contract: PublicKey;
    nonce: bigint;
    side: SideName | number;
    creatorTotal: bigint;
    takerTarget: bigint;
    minimumTake: bigint;
    expectedFeeBps: number;
    /** Unix seconds from which the offer takes no takes and anyone may close it; none when omitted (0). */
    expiresAt?: bigint;
    overrides?: Partial<Record<"config" | "vault" | "offer" | "tokenProgram" | "systemProgram", PublicKey>>;
  }): Promise<TransactionInstruction> & { offer?: PublicKey } {
    const [offer, bump] = this.pda.offer(a.contract, a.creator, a.nonce);
    const side = typeof a.side === "number" ? a.side : Side[a.side];
    return this.program.methods
      .createOffer(bn(a.nonce), bump, side, bn(a.creatorTotal), bn(a.takerTarget), bn(a.minimumTake), a.expectedFeeBps, bn(a.expiresAt ?? 0n))
      .accountsStrict({
        payer: a.payer,
        creator: a.creator,
        creatorToken: a.creatorToken,
        config: this.pda.config()[0],
        contract: a.contract,
        offer,
        vault: this.pda.vault()[0],
        tokenProgram: TOKEN_PROGRAM,
        systemProgram: SYSTEM_PROGRAM,
        ...a.overrides,
      })
      .instruction();
  }

  takeOffer(a: {
    payer: PublicKey;
    taker: PublicKey;
    takerToken: PublicKey;
    contract: PublicKey;
    offer: PublicKey;
    amount: bigint;
    expectedRevision: bigint;
    overrides?: Partial<Record<"config" | "vault" | "position" | "tokenProgram" | "systemProgram", PublicKey>>;
  }) {
    const [position, bump] = this.pda.position(a.offer, a.taker);
    return this.program.methods
      .takeOffer(bn(a.amount), bn(a.expectedRevision), bump)
      .accountsStrict({
        payer: a.payer,
        taker: a.taker,
        takerToken: a.takerToken,
        config: this.pda.config()[0],
        contract: a.contract,
        offer: a.offer,
        position,
        vault: this.pda.vault()[0],
        tokenProgram: TOKEN_PROGRAM,
        systemProgram: SYSTEM_PROGRAM,
        ...a.overrides,
      })
      .instruction();
  }

  /**
   * take_best: `taker` sweeps `offers` (of `contract`, in this order, best first) for up to
   * `amount`, no worse than the taker odds `worstOdds`, backing `side`; each offer's position is
   * the taker's canonical one unless `positions` bends it (attack tests), with its canonical bump
   * for creation unless `positionBumps` does.
   */
  takeBest(a: {
    payer: PublicKey;
    taker: PublicKey;
    takerToken: PublicKey;
    contract: PublicKey;
    side: SideName;
    amount: bigint;
    worstOdds: { numerator: bigint; denominator: bigint };
    mode: TakeBestModeName;
    offers: PublicKey[];
    positions?: PublicKey[];
    positionBumps?: number[];
    /** Raw bytes in place of `side` / `mode` (attack tests: values the program must refuse). */
    rawSide?: number;
    rawMode?: number;
    overrides?: Partial<Record<"config" | "vault" | "tokenProgram" | "systemProgram", PublicKey>>;
  }) {
    if (a.offers.length > TAKE_BEST_MAX_OFFERS) throw new Error(`takeBest: at most ${TAKE_BEST_MAX_OFFERS} offers, got ${a.offers.length}`);
    const canonical = a.offers.map((o) => this.pda.position(o, a.taker));
    const bumps = Array.from({ length: TAKE_BEST_MAX_OFFERS }, (_, i) => a.positionBumps?.[i] ?? canonical[i]?.[1] ?? 0);
    const pairs = a.offers.flatMap((offer, i) => [
      { pubkey: offer, isSigner: false, isWritable: true },
      { pubkey: a.positions?.[i] ?? canonical[i][0], isSigner: false, isWritable: true },
    ]);
    return this.program.methods
      .takeBest(a.rawSide ?? Side[a.side], bn(a.amount), bn(a.worstOdds.numerator), bn(a.worstOdds.denominator), a.rawMode ?? TakeBestMode[a.mode], bumps)
      .accountsStrict({
        payer: a.payer,
        taker: a.taker,
        takerToken: a.takerToken,
        config: this.pda.config()[0],
        contract: a.contract,
        vault: this.pda.vault()[0],
        tokenProgram: TOKEN_PROGRAM,
        systemProgram: SYSTEM_PROGRAM,
        ...a.overrides,
      })
      .remainingAccounts(pairs)
      .instruction();
  }

  /**
   * How many offers one take_best can list in a legacy transaction (1232 bytes), measured by
   * serializing one with distinct offers: 2 signatures (a fee payer other than the taker, as the
   * service's custodial takes) unless `payerIsTaker`, after `before` (e.g. compute-budget
   * instructions): 10 with a separate payer (with or without compute-budget instructions), 12 when the
   * taker pays (docs/api-guide.md).
   */
  async takeBestOffersThatFit(o: { payerIsTaker?: boolean; before?: TransactionInstruction[] } = {}): Promise<number> {
    const payer = Keypair.generate().publicKey;
    const taker = o.payerIsTaker ? payer : Keypair.generate().publicKey;
    const common = { payer, taker, takerToken: Keypair.generate().publicKey, contract: Keypair.generate().publicKey };
    for (let n = TAKE_BEST_MAX_OFFERS; n > 0; n--) {
      const offers = Array.from({ length: n }, () => Keypair.generate().publicKey);
      const ix = await this.takeBest({ ...common, side: "sideA", amount: 1n, worstOdds: { numerator: 1n, denominator: 1n }, mode: "fill-and-kill", offers });
      const tx = new Transaction({ feePayer: payer, recentBlockhash: PublicKey.default.toBase58() }).add(...(o.before ?? []), ix);
      const signatures = o.payerIsTaker ? 1 : 2;
      const size = tx.serializeMessage().length + 1 + 64 * signatures;
      if (size <= PACKET_DATA_SIZE) return n;
    }
    return 0;
  }

  /**
   * `creator` (the offer's creator) names the claim the refund is credited to when the recorded
   * token account cannot receive; `payer` (default: the provider's key) pays that claim's rent.
   */
  closeOffer(a: {
    caller: PublicKey;
    contract: PublicKey;
    offer: PublicKey;
    creatorToken: PublicKey;
    expectedRevision: bigint;
    creator?: PublicKey;
    payer?: PublicKey;
    overrides?: Partial<Record<"config" | "vault" | "creatorClaim" | "tokenProgram" | "systemProgram", PublicKey>>;
  }) {
    const [creatorClaim, creatorClaimBump] = this.claimOf(a.creator);
    return this.program.methods
      .closeOffer(bn(a.expectedRevision), creatorClaimBump)
      .accountsStrict({
        caller: a.caller,
        config: this.pda.config()[0],
        contract: a.contract,
        offer: a.offer,
        vault: this.pda.vault()[0],
        creatorToken: a.creatorToken,
        tokenProgram: TOKEN_PROGRAM,
        payer: this.payerOr(a.payer),
        creatorClaim,
        systemProgram: SYSTEM_PROGRAM,
        ...a.overrides,
      })
      .instruction();
  }

  settlePosition(a: {
    contract: PublicKey;
    offer: PublicKey;
    position: PublicKey;
    creatorToken: PublicKey;
    takerToken: PublicKey;
    treasury: PublicKey;
    /** The offer's creator and the position's taker: their claims take what their token accounts cannot. */
    creator?: PublicKey;
    taker?: PublicKey;
    payer?: PublicKey;
    overrides?: Partial<Record<"config" | "vault" | "creatorClaim" | "takerClaim" | "tokenProgram" | "systemProgram", PublicKey>>;
  }) {
    const [creatorClaim, creatorClaimBump] = this.claimOf(a.creator);
    const [takerClaim, takerClaimBump] = this.claimOf(a.taker);
    return this.program.methods
      .settlePosition(creatorClaimBump, takerClaimBump)
      .accountsStrict({
        config: this.pda.config()[0],
        contract: a.contract,
        offer: a.offer,
        position: a.position,
        vault: this.pda.vault()[0],
        creatorToken: a.creatorToken,
        takerToken: a.takerToken,
        treasury: a.treasury,
        tokenProgram: TOKEN_PROGRAM,
        payer: this.payerOr(a.payer),
        creatorClaim,
        takerClaim,
        systemProgram: SYSTEM_PROGRAM,
        ...a.overrides,
      })
      .instruction();
  }

  closePosition(a: { position: PublicKey; rentPayer: PublicKey }) {
    return this.program.methods.closePosition().accountsStrict(a).instruction();
  }

  /** `contract`: the offer's; it must be resolved or voided. */
  closeOfferAccount(a: { offer: PublicKey; rentPayer: PublicKey; contract: PublicKey }) {
    return this.program.methods.closeOfferAccount().accountsStrict({ offer: a.offer, rentPayer: a.rentPayer, contract: a.contract }).instruction();
  }

  /**
   * The owner takes its whole claim to `destination` (a token account of the mint it owns); the
   * claim account closes and its rent goes to `rentPayer` (the claim's recorded `rentPayer`).
   */
  withdrawClaim(a: {
    owner: PublicKey;
    destination: PublicKey;
    rentPayer: PublicKey;
    overrides?: Partial<Record<"config" | "vault" | "claim" | "tokenProgram", PublicKey>>;
  }) {
    return this.program.methods.withdrawClaim().accountsStrict(this.withdrawClaimAccounts(a)).instruction();
  }
}

export { TOKEN_PROGRAM, SYSTEM_PROGRAM };
export type { ClaimAccount };

/** Decoded accounts, with u64/i64 as bigint and enums as names. */
export interface ConfigAccount {
  authority: PublicKey;
  mint: PublicKey;
  treasury: PublicKey;
  vault: PublicKey;
  feeBps: number;
  offersEnabled: boolean;
  limits: LimitsArgs;
}
export interface ContractAccount {
  templateId: string;
  eventId: string;
  cutoffAt: bigint;
  resolutionDeadline: bigint;
  status: (typeof ContractStatus)[number];
  result: (typeof ContractResult)[number];
  createdAt: bigint;
  resolvedAt: bigint;
}
export interface OfferAccount {
  contract: PublicKey;
  creator: PublicKey;
  creatorToken: PublicKey;
  rentPayer: PublicKey;
  nonce: bigint;
  side: SideName;
  status: (typeof OfferStatus)[number];
  feeBps: number;
  creatorTotal: bigint;
  takerTarget: bigint;
  minimumTake: bigint;
  takerFilled: bigint;
  creatorAllocated: bigint;
  creatorRefunded: bigint;
  revision: bigint;
  fillCount: number;
  positionCount: number;
  settledPositionCount: number;
  createdAt: bigint;
  closedAt: bigint;
  /** 0: no expiry. */
  expiresAt: bigint;
}
export interface PositionAccount {
  offer: PublicKey;
  taker: PublicKey;
  takerToken: PublicKey;
  rentPayer: PublicKey;
  takerAmount: bigint;
  creatorMatched: bigint;
  status: (typeof PositionStatus)[number];
  fillCount: number;
  createdAt: bigint;
  settledAt: bigint;
  creatorPayout: bigint;
  takerPayout: bigint;
  fee: bigint;
}

const big = bigints;

export function decodeConfig(data: Buffer): ConfigAccount {
  const raw = big<Record<string, unknown>>(offersAccountsCoder.decode("config", data));
  return { ...(raw as unknown as ConfigAccount), offersEnabled: raw.offersEnabled === 1 };
}
export function decodeContract(data: Buffer): ContractAccount {
  const raw = big<Record<string, unknown>>(offersAccountsCoder.decode("contract", data));
  return {
    ...(raw as unknown as ContractAccount),
    templateId: bytesUuid(raw.templateId as number[]),
    eventId: bytesUuid(raw.eventId as number[]),
    status: ContractStatus[raw.status as number],
    result: ContractResult[raw.result as number],
  };
}
/** An Offer / a Position as the Borsh coder reads it (u64/i64 as bigint), with side and status as their codes. */
export type RawOffer = Omit<OfferAccount, "side" | "status"> & { side: number; status: number };
export type RawPosition = Omit<PositionAccount, "status"> & { status: number };

export function decodeOffer(data: Buffer): OfferAccount {
  const raw = big<RawOffer>(offersAccountsCoder.decode("offer", data));
  return { ...raw, side: raw.side === 1 ? "sideA" : "sideB", status: OfferStatus[raw.status] };
}
export function decodePosition(data: Buffer): PositionAccount {
  const raw = big<RawPosition>(offersAccountsCoder.decode("position", data));
  return { ...raw, status: PositionStatus[raw.status] };
}

export function decodeClaim(data: Buffer): ClaimAccount {
  return big<ClaimAccount>(offersAccountsCoder.decode("claim", data));
}

/** Which account type a program-owned account holds, by its discriminator. */
export type OffersAccountKind = "config" | "contract" | "offer" | "position" | "claim";
export const offersAccountKind = codec.accountKind;

export interface OffersEvent {
  name: "offerTaken" | "offerClosed" | "positionSettled" | "claimCredited" | "claimWithdrawn";
  data: Record<string, unknown>;
}
/** Events in a transaction's log messages ("Program data: ..." lines of this program). */
export function parseOffersEvents(logs: string[]): OffersEvent[] {
  return codec.parseEvents(logs);
}

/** Program error code -> name (as in the Rust enum, e.g. "RevisionMismatch") and message. */
export const OFFERS_ERRORS: Map<number, { name: string; msg: string }> = codec.errors;
