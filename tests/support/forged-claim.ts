/**
 * A Claim-shaped account planted on the test chain: kit's shared Claim layout and discriminator
 * (`account:Claim`), so either program's claim checks must tell it from a real one by its owner
 * or its address. The attack suites of both programs pass it in a Claim's place.
 */
import { Keypair, type PublicKey } from "@solana/web3.js";
import type { TestChain } from "../../harness/chain";

/** A Claim of `owner` for `amount` (rent payer `rentPayer`) at a fresh address owned by `ownerProgram`. */
export async function forgedClaim(chain: TestChain, ownerProgram: PublicKey, owner: PublicKey, amount: bigint, rentPayer: PublicKey): Promise<PublicKey> {
  const data = Buffer.alloc(8 + 32 + 8 + 32 + 1);
  Buffer.from([0x9b, 0x46, 0x16, 0xb0, 0x7b, 0xd7, 0xf6, 0x66]).copy(data, 0);
  owner.toBuffer().copy(data, 8);
  data.writeBigUInt64LE(amount, 40);
  rentPayer.toBuffer().copy(data, 48);
  data[80] = 255;
  const at = Keypair.generate().publicKey;
  chain.setAccount(at, { lamports: Number(await chain.rentExempt(data.length)), data, owner: ownerProgram, executable: false, rentEpoch: 0 });
  return at;
}
