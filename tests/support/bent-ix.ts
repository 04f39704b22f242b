/**
 * Instructions as an attacker builds them (it is free to): an account swapped, a signer flag
 * cleared, an argument byte patched, a PDA at a non-canonical bump. The attack
 * suites of both programs send these and expect a refusal.
 */
import { PublicKey, TransactionInstruction } from "@solana/web3.js";

/** The instruction with one account replaced. */
export function rekey(ix: TransactionInstruction, from: PublicKey, to: PublicKey): TransactionInstruction {
  return new TransactionInstruction({ programId: ix.programId, data: ix.data, keys: ix.keys.map((k) => (k.pubkey.equals(from) ? { ...k, pubkey: to } : k)) });
}

/** The instruction with one byte of its data (after the 8-byte discriminator) replaced. */
export function patch(ix: TransactionInstruction, argOffset: number, byte: number): TransactionInstruction {
  const data = Buffer.from(ix.data);
  data[8 + argOffset] = byte;
  return new TransactionInstruction({ programId: ix.programId, keys: ix.keys, data });
}

/** The instruction with one account's signer flag cleared (a key the attacker cannot sign for). */
export function unsigned(ix: TransactionInstruction, key: PublicKey): TransactionInstruction {
  return new TransactionInstruction({
    programId: ix.programId,
    data: ix.data,
    keys: ix.keys.map((k) => (k.pubkey.equals(key) ? { ...k, isSigner: false } : k)),
  });
}

/** The highest non-canonical bump of `seeds` and its address: a valid PDA the program must refuse. */
export function nonCanonical(seeds: Buffer[], programId: PublicKey): [PublicKey, number] {
  const [, canonical] = PublicKey.findProgramAddressSync(seeds, programId);
  for (let b = canonical - 1; b >= 0; b--) {
    try {
      return [PublicKey.createProgramAddressSync([...seeds, Buffer.from([b])], programId), b];
    } catch {
      // on the curve: not a PDA, try the next lower bump
    }
  }
  throw new Error("no second bump");
}
