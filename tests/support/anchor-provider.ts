/**
 * An Anchor provider whose connection reads the test chain, for Anchor's own account resolution:
 * a PDA seeded by another account's data (a claim by `offer.creator`) makes Anchor fetch and
 * decode that account. Instructions are still sent through TestChain.send.
 */
import { expect } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { AnchorProvider } from "../../idl/client/anchor";
import { programDataAddress, SYSTEM_PROGRAM, TOKEN_PROGRAM, type ProgramPdas } from "../../idl/client/common";
import type { TestChain } from "../../harness/chain";

export function readingProvider(chain: TestChain): AnchorProvider {
  const connection = { getAccountInfo: (address: PublicKey) => chain.account(address) };
  return { connection, publicKey: chain.payer.publicKey, wallet: { publicKey: chain.payer.publicKey } } as unknown as AnchorProvider;
}

/** Resolved account keys as base58, to compare with expected addresses. */
export const b58 = (keys: Record<string, PublicKey | null | undefined>) => Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, v?.toBase58()]));

/** initialize_config's accounts Anchor resolved itself: the program's config and vault PDAs, its ProgramData, the token and system programs. */
export function expectConfigAccountsResolved(resolved: Record<string, PublicKey | null | undefined>, pda: ProgramPdas): void {
  expect(b58(resolved)).toMatchObject({
    config: pda.config()[0].toBase58(),
    vault: pda.vault()[0].toBase58(),
    programData: programDataAddress(pda.programId).toBase58(),
    tokenProgram: TOKEN_PROGRAM.toBase58(),
    systemProgram: SYSTEM_PROGRAM.toBase58(),
  });
}
