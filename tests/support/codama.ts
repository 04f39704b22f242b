/**
 * Comparing the Codama clients (idl/codama/<program>, @solana/kit types) with the project's
 * Anchor-based ones (web3.js types), and sending a Kit instruction on the test chain.
 */
import { expect } from "vitest";
import { PublicKey, TransactionInstruction } from "@solana/web3.js";
import { isSignerRole, isWritableRole, type Instruction, type ProgramDerivedAddress } from "@solana/kit";
import { BN } from "../../idl/client/anchor";

/** Keys as base58, u64/i64 as bigint, byte arrays as number[]: what both decoders agree on. */
export function plain(v: unknown): unknown {
  if (v instanceof PublicKey) return v.toBase58();
  if (BN.isBN(v)) return BigInt((v as BN).toString());
  if (v instanceof Uint8Array) return [...v];
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** A web3.js `[address, bump]` in Kit's form. */
export const asPda = ([key, bump]: [PublicKey, number]): ProgramDerivedAddress => [key.toBase58(), bump] as unknown as ProgramDerivedAddress;

export function web3Instruction(ix: Instruction): TransactionInstruction {
  return new TransactionInstruction({
    programId: new PublicKey(ix.programAddress),
    keys: (ix.accounts ?? []).map((a) => ({ pubkey: new PublicKey(a.address), isSigner: isSignerRole(a.role), isWritable: isWritableRole(a.role) })),
    data: Buffer.from(ix.data ?? []),
  });
}

/** An instruction's accounts and data, to compare two builders. */
export function shape(ix: TransactionInstruction) {
  return { keys: ix.keys.map((k) => ({ ...k, pubkey: k.pubkey.toBase58() })), data: [...ix.data] };
}

/**
 * Each `[account name, address, Codama decoder]` read from the chain and decoded by Codama and by
 * Anchor's `coder`: the discriminator and every field agree.
 */
export async function expectDecodersAgree(
  cases: readonly (readonly [string, PublicKey, { decode(bytes: Uint8Array): { discriminator: ArrayLike<number> } }])[],
  data: (k: PublicKey) => Promise<Buffer>,
  coder: { decode(name: string, data: Buffer): unknown },
): Promise<void> {
  for (const [name, key, decoder] of cases) {
    const bytes = await data(key);
    const { discriminator, ...fields } = decoder.decode(bytes);
    expect([...Array.from(discriminator)], name).toEqual([...bytes.subarray(0, 8)]);
    expect(plain(fields), name).toEqual(plain(coder.decode(name, bytes)));
  }
}
