/**
 * What both program clients share: the upgradeable loader, whose ProgramData account of a
 * program names its upgrade authority (the only key that may initialise the program's Config);
 * the PDAs both programs have (config, vault, claim) with the same seeds; and the encodings of
 * u64 arguments and seeds.
 */
import { PublicKey } from "@solana/web3.js";
import { BN } from "./anchor";

/** The BPF upgradeable loader (loader v3). */
export const LOADER_V3 = new PublicKey("BPFLoaderUpgradeab1e11111111111111111111111");
export const TOKEN_PROGRAM = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
export const SYSTEM_PROGRAM = new PublicKey("11111111111111111111111111111111");

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

/** Custom program error code in an error string ("custom program error: 0x..", "Custom(n)"). */
export function customCode(s: string | null | undefined): number | null {
  const m = s ? (/custom program error: 0x([0-9a-f]+)/i.exec(s) ?? /Custom\((\d+)\)/.exec(s) ?? /"Custom":\s*(\d+)/.exec(s)) : null;
  if (!m) return null;
  return m[0].toLowerCase().startsWith("custom program") ? parseInt(m[1], 16) : Number(m[1]);
}
