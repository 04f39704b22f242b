/**
 * What both program clients share: the upgradeable loader, whose ProgramData account of a
 * program names its upgrade authority (the only key that may initialise the program's Config);
 * the PDAs both programs have (config, vault, claim) with the same seeds; and the encodings of
 * u64 arguments and seeds.
 */
import { PublicKey } from "@solana/web3.js";
import { BN, BorshAccountsCoder, BorshEventCoder, type Idl, type Program } from "./anchor";

/** The BPF upgradeable loader (loader v3). */
export const LOADER_V3 = new PublicKey("BPFLoaderUpgradeab1e11111111111111111111111");
export const TOKEN_PROGRAM = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
export const SYSTEM_PROGRAM = new PublicKey("11111111111111111111111111111111");

/** SPL Token's error names, indexed by its custom error codes (spl-token's `TokenError`). */
export const TOKEN_ERRORS = [
  "NotRentExempt",
  "InsufficientFunds",
  "InvalidMint",
  "MintMismatch",
  "OwnerMismatch",
  "FixedSupply",
  "AlreadyInUse",
  "InvalidNumberOfProvidedSigners",
  "InvalidNumberOfRequiredSigners",
  "UninitializedState",
  "NativeNotSupported",
  "NonNativeHasBalance",
  "InvalidInstruction",
  "InvalidState",
  "Overflow",
  "AuthorityTypeNotSupported",
  "MintCannotFreeze",
  "AccountFrozen",
  "MintDecimalsMismatch",
  "NonNativeNotSupported",
];

/** `PDA([programId], loader v3)`: the ProgramData account of an upgradeable program. */
export const programDataAddress = (programId: PublicKey): PublicKey => PublicKey.findProgramAddressSync([programId.toBuffer()], LOADER_V3)[0];

/** A u64/i64 argument as Anchor's coder takes it (exact: through the decimal string). */
export const bn = (v: bigint | number): BN => new BN(v.toString());

/** A u64 seed, as the programs read it: 8 bytes little-endian. */
export function u64le(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
}

/**
 * The PDAs of a program, each `[address, canonical bump]`; the same seeds are in the IDL
 * (idl/<program>.json), from which Anchor and the Codama clients derive them.
 */
export class ProgramPdas {
  constructor(readonly programId: PublicKey) {}
  protected find(seeds: (Buffer | Uint8Array)[]): [PublicKey, number] {
    return PublicKey.findProgramAddressSync(seeds, this.programId);
  }
  /** The settings; its PDA is also the token owner of the vault. */
  config() {
    return this.find([Buffer.from("config")]);
  }
  vault() {
    return this.find([Buffer.from("vault")]);
  }
  /** What the vault owes `owner` when a payout or refund could not reach its token account. */
  claim(owner: PublicKey) {
    return this.find([Buffer.from("claim"), owner.toBuffer()]);
  }
}

/** A claim account, decoded: what the vault owes `owner` (both programs have the same layout). */
export interface ClaimAccount {
  owner: PublicKey;
  amount: bigint;
  rentPayer: PublicKey;
  bump: number;
}

/**
 * A program's Anchor `Program` (instruction building, IDL) and its PDAs: the base of both clients.
 * The account lists of the instructions both programs have alike are built here; the
 * instructions themselves stay in the subclasses, where `program.methods` is typed by the IDL.
 */
export class ProgramClient<T extends Idl, P extends ProgramPdas> {
  constructor(
    readonly program: Program<T>,
    readonly pda: P,
  ) {}

  /** initialize_config's accounts: `deployer` (default: the authority) is the upgrade authority. */
  protected initializeConfigAccounts(a: { authority: PublicKey; mint: PublicKey; treasury: PublicKey; deployer?: PublicKey }) {
    return {
      deployer: a.deployer ?? a.authority,
      authority: a.authority,
      config: this.pda.config()[0],
      vault: this.pda.vault()[0],
      mint: a.mint,
      treasury: a.treasury,
      programData: programDataAddress(this.program.programId),
      tokenProgram: TOKEN_PROGRAM,
      systemProgram: SYSTEM_PROGRAM,
    };
  }

  /** The accounts of an authority-only instruction on the config (update_config). */
  protected authorityAccounts(a: { authority: PublicKey; config?: PublicKey }) {
    return { authority: a.authority, config: a.config ?? this.pda.config()[0] };
  }

  /** withdraw_claim's accounts: the owner's claim paid out of the vault to `destination`. */
  protected withdrawClaimAccounts(a: {
    owner: PublicKey;
    destination: PublicKey;
    rentPayer: PublicKey;
    overrides?: Partial<Record<"config" | "vault" | "claim" | "tokenProgram", PublicKey>>;
  }) {
    return {
      owner: a.owner,
      config: this.pda.config()[0],
      claim: this.pda.claim(a.owner)[0],
      vault: this.pda.vault()[0],
      destination: a.destination,
      rentPayer: a.rentPayer,
      tokenProgram: TOKEN_PROGRAM,
      ...a.overrides,
    };
  }
}

/** Custom program error code in an error string ("custom program error: 0x..", "Custom(n)"). */
export function customCode(s: string | null | undefined): number | null {
  const m = s ? (/custom program error: 0x([0-9a-f]+)/i.exec(s) ?? /Custom\((\d+)\)/.exec(s) ?? /"Custom":\s*(\d+)/.exec(s)) : null;
  if (!m) return null;
  return m[0].toLowerCase().startsWith("custom program") ? parseInt(m[1], 16) : Number(m[1]);
}

/** Decoded Anchor values with every BN (u64/i64) turned into a bigint, recursively. */
export function bigints<T>(v: unknown): T {
  if (BN.isBN(v)) return BigInt((v as BN).toString()) as T;
  if (v instanceof PublicKey || v === null || typeof v !== "object") return v as T;
  if (Array.isArray(v)) return v.map((x) => bigints(x)) as T;
  return Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, bigints(x)])) as T;
}

/** The events a program emitted in a transaction's log messages ("Program data: ..." lines its coder decodes). */
export function parseEvents<N extends string>(
  coder: { decode(log: string): { name: string; data: unknown } | null },
  logs: string[],
): { name: N; data: Record<string, unknown> }[] {
  const out: { name: N; data: Record<string, unknown> }[] = [];
  for (const line of logs) {
    if (!line.startsWith("Program data: ")) continue;
    const ev = coder.decode(line.slice("Program data: ".length).split(" ")[0]);
    if (ev) out.push({ name: ev.name as N, data: bigints(ev.data) });
  }
  return out;
}

/** Which account type of `idl` a program-owned account holds, by its discriminator. */
export function accountKindIn<N extends string>(idl: { accounts: readonly { name: string; discriminator: readonly number[] }[] }, data: Buffer): N | null {
  for (const a of idl.accounts) {
    if (data.length >= 8 && Buffer.from(a.discriminator).equals(data.subarray(0, 8))) return a.name as N;
  }
  return null;
}

/** Program error code -> name (as in the Rust enum, e.g. "RevisionMismatch") and message. */
export function programErrors(idl: { errors: readonly { code: number; name: string; msg: string }[] }): Map<number, { name: string; msg: string }> {
  return new Map(idl.errors.map((e) => [e.code, { name: e.name[0].toUpperCase() + e.name.slice(1), msg: e.msg }]));
}

/**
 * A program's Borsh coders and what both clients read with them: the account type of an account
 * (`K`: the IDL's account names), the events of a transaction (`E`: its event names) and the
 * error table.
 */
export function programCodec<K extends string, E extends string>(
  idl: Idl & { accounts: readonly { name: string; discriminator: readonly number[] }[]; errors: readonly { code: number; name: string; msg: string }[] },
) {
  const accounts = new BorshAccountsCoder(idl);
  const events = new BorshEventCoder(idl);
  return {
    accounts,
    events,
    accountKind: (data: Buffer): K | null => accountKindIn<K>(idl, data),
    parseEvents: (logs: string[]) => parseEvents<E>(events, logs),
    errors: programErrors(idl),
  };
}
