/**
 * Client of the offers program, on top of Anchor's `Program` built from idl/offers.json:
 * PDA derivation, account decoding and instruction builders. Used by the tests, the indexer,
 * the API's write path and the simulations; it knows nothing of any of them.
 */
import { BN, BorshAccountsCoder, BorshEventCoder, Program, type Provider } from "./anchor";
import { PublicKey, type TransactionInstruction } from "@solana/web3.js";
import { offersIdl, type Offers } from "../offers";

/** The IDL with camelCased names, as Anchor's TypeScript client uses it. */
export const OFFERS_IDL: Offers = offersIdl;
export const OFFERS_PROGRAM_ID = new PublicKey(offersIdl.address);

export const Side = { sideA: 1, sideB: 2 } as const;
export type SideName = keyof typeof Side;
export const ContractStatus = ["Open", "Resolved", "Voided"] as const;
export const ContractResult = ["none", "sideA", "sideB", "void"] as const;
export const OfferStatus = ["Open", "Filled", "Closed", "Settled"] as const;
export const PositionStatus = ["Open", "SettledCreatorWin", "SettledTakerWin", "Refunded"] as const;

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

const bn = (v: bigint | number) => new BN(v.toString());
const u64le = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
};

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

export class OffersPda {
  constructor(readonly programId: PublicKey = OFFERS_PROGRAM_ID) {}
  private find(seeds: (Buffer | Uint8Array)[]) {
    return PublicKey.findProgramAddressSync(seeds, this.programId);
  }
  config() {
    return this.find([Buffer.from("config")]);
  }
  vault() {
    return this.find([Buffer.from("vault")]);
  }
  contract(templateId: string, eventId: string) {
    return this.find([Buffer.from("contract"), Buffer.from(uuidBytes(templateId)), Buffer.from(uuidBytes(eventId))]);
  }
  offer(creator: PublicKey, nonce: bigint) {
    return this.find([Buffer.from("offer"), creator.toBuffer(), u64le(nonce)]);
  }
  position(offer: PublicKey, taker: PublicKey) {
    return this.find([Buffer.from("position"), offer.toBuffer(), taker.toBuffer()]);
  }
}

export const offersAccountsCoder = new BorshAccountsCoder(OFFERS_IDL);
export const offersEventCoder = new BorshEventCoder(OFFERS_IDL);

/** Instruction builders. Every builder returns a TransactionInstruction; signing is the caller's. */
export class OffersClient {
  readonly pda: OffersPda;
  constructor(readonly program: Program<Offers>) {
    this.pda = new OffersPda(program.programId);
  }

  static fromProvider(provider: Provider, programId: PublicKey = OFFERS_PROGRAM_ID): OffersClient {
    return new OffersClient(new Program<Offers>({ ...OFFERS_IDL, address: programId.toBase58() }, provider));
  }

  private limits(l: LimitsArgs) {
    return Object.fromEntries(Object.entries(l).map(([k, v]) => [k, bn(v)])) as never;
  }

  initializeConfig(a: { authority: PublicKey; mint: PublicKey; treasury: PublicKey; feeBps: number; offersEnabled: boolean; limits: LimitsArgs }) {
    const [config, configBump] = this.pda.config();
    const [vault, vaultBump] = this.pda.vault();
    return this.program.methods
      .initializeConfig(configBump, vaultBump, a.feeBps, a.offersEnabled ? 1 : 0, this.limits(a.limits))
      .accountsStrict({ authority: a.authority, config, vault, mint: a.mint, treasury: a.treasury, tokenProgram: TOKEN_PROGRAM, systemProgram: SYSTEM_PROGRAM })
      .instruction();
  }

  updateConfig(a: { authority: PublicKey; feeBps: number; offersEnabled: boolean; limits: LimitsArgs; config?: PublicKey }) {
    return this.program.methods
      .updateConfig(a.feeBps, a.offersEnabled ? 1 : 0, this.limits(a.limits))
      .accountsStrict({ authority: a.authority, config: a.config ?? this.pda.config()[0] })
      .instruction();
  }

  createContract(a: { authority: PublicKey; payer: PublicKey; templateId: string; eventId: string; cutoffAt: bigint; resolutionDeadline: bigint; config?: PublicKey }) {
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
    overrides?: Partial<Record<"config" | "vault" | "offer" | "tokenProgram" | "systemProgram", PublicKey>>;
  }): Promise<TransactionInstruction> & { offer?: PublicKey } {
    const [offer, bump] = this.pda.offer(a.creator, a.nonce);
    const side = typeof a.side === "number" ? a.side : Side[a.side];
    return this.program.methods
      .createOffer(bn(a.nonce), bump, side, bn(a.creatorTotal), bn(a.takerTarget), bn(a.minimumTake), a.expectedFeeBps)
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

  closeOffer(a: { caller: PublicKey; contract: PublicKey; offer: PublicKey; creatorToken: PublicKey; expectedRevision: bigint; overrides?: Partial<Record<"config" | "vault", PublicKey>> }) {
    return this.program.methods
      .closeOffer(bn(a.expectedRevision))
      .accountsStrict({
        caller: a.caller,
        config: this.pda.config()[0],
        contract: a.contract,
        offer: a.offer,
        vault: this.pda.vault()[0],
        creatorToken: a.creatorToken,
        tokenProgram: TOKEN_PROGRAM,
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
    overrides?: Partial<Record<"config" | "vault", PublicKey>>;
  }) {
    return this.program.methods
      .settlePosition()
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
        ...a.overrides,
      })
      .instruction();
  }

  closePosition(a: { position: PublicKey; rentPayer: PublicKey }) {
    return this.program.methods.closePosition().accountsStrict(a).instruction();
  }

  closeOfferAccount(a: { offer: PublicKey; rentPayer: PublicKey }) {
    return this.program.methods.closeOfferAccount().accountsStrict(a).instruction();
  }
}

export const TOKEN_PROGRAM = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
export const SYSTEM_PROGRAM = new PublicKey("11111111111111111111111111111111");

/** Decoded accounts, with u64/i64 as bigint and enums as names. */
export interface ConfigAccount {
  authority: PublicKey; mint: PublicKey; treasury: PublicKey; vault: PublicKey;
  feeBps: number; offersEnabled: boolean; limits: LimitsArgs;
}
export interface ContractAccount {
  templateId: string; eventId: string; cutoffAt: bigint; resolutionDeadline: bigint;
  status: (typeof ContractStatus)[number]; result: (typeof ContractResult)[number]; createdAt: bigint; resolvedAt: bigint;
}
export interface OfferAccount {
  contract: PublicKey; creator: PublicKey; creatorToken: PublicKey; rentPayer: PublicKey; nonce: bigint;
  side: SideName; status: (typeof OfferStatus)[number]; feeBps: number;
  creatorTotal: bigint; takerTarget: bigint; minimumTake: bigint; takerFilled: bigint; creatorAllocated: bigint; creatorRefunded: bigint;
  revision: bigint; fillCount: number; positionCount: number; settledPositionCount: number; createdAt: bigint; closedAt: bigint;
}
export interface PositionAccount {
  offer: PublicKey; taker: PublicKey; takerToken: PublicKey; rentPayer: PublicKey; takerAmount: bigint; creatorMatched: bigint;
  status: (typeof PositionStatus)[number]; fillCount: number; createdAt: bigint; settledAt: bigint;
  creatorPayout: bigint; takerPayout: bigint; fee: bigint;
}

/** BN fields to bigint, recursively (u64/i64 decode as BN). */
function big<T>(v: unknown): T {
  if (BN.isBN(v)) return BigInt((v as BN).toString()) as T;
  if (v instanceof PublicKey || v === null || typeof v !== "object") return v as T;
  if (Array.isArray(v)) return v as T;
  return Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, big(x)])) as T;
}

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
export function decodeOffer(data: Buffer): OfferAccount {
  const raw = big<Record<string, unknown>>(offersAccountsCoder.decode("offer", data));
  return {
    ...(raw as unknown as OfferAccount),
    side: raw.side === 1 ? "sideA" : "sideB",
    status: OfferStatus[raw.status as number],
  };
}
export function decodePosition(data: Buffer): PositionAccount {
  const raw = big<Record<string, unknown>>(offersAccountsCoder.decode("position", data));
  return { ...(raw as unknown as PositionAccount), status: PositionStatus[raw.status as number] };
}

/** Which account type a program-owned account holds, by its discriminator. */
export function offersAccountKind(data: Buffer): "config" | "contract" | "offer" | "position" | null {
  for (const a of OFFERS_IDL.accounts) {
    if (data.length >= 8 && Buffer.from(a.discriminator).equals(data.subarray(0, 8))) return a.name as never;
  }
  return null;
}

export interface OffersEvent { name: "offerTaken" | "offerClosed" | "positionSettled"; data: Record<string, unknown> }
/** Events in a transaction's log messages ("Program data: ..." lines of this program). */
export function parseOffersEvents(logs: string[]): OffersEvent[] {
  const out: OffersEvent[] = [];
  for (const line of logs) {
    if (!line.startsWith("Program data: ")) continue;
    const ev = offersEventCoder.decode(line.slice("Program data: ".length).split(" ")[0]);
    if (ev) out.push({ name: ev.name as OffersEvent["name"], data: big(ev.data) });
  }
  return out;
}

/** Program error code -> name (as in the Rust enum, e.g. "RevisionMismatch") and message. */
export const OFFERS_ERRORS: Map<number, { name: string; msg: string }> = new Map(
  OFFERS_IDL.errors.map((e) => [e.code, { name: e.name[0].toUpperCase() + e.name.slice(1), msg: e.msg }]),
);
