/**
 * An Anchor provider whose connection reads the test chain, for Anchor's own account resolution:
 * a PDA seeded by another account's data (a claim by `offer.creator`) makes Anchor fetch and
 * decode that account. Instructions are still sent through TestChain.send.
 */
import type { PublicKey } from "@solana/web3.js";
import type { AnchorProvider } from "../../idl/client/anchor";
import type { TestChain } from "../../harness/chain";

export function readingProvider(chain: TestChain): AnchorProvider {
  const connection = { getAccountInfo: (address: PublicKey) => chain.account(address) };
  return { connection, publicKey: chain.payer.publicKey, wallet: { publicKey: chain.payer.publicKey } } as unknown as AnchorProvider;
}
