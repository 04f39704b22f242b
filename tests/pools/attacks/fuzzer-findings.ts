/**
 * The attacker fuzzer's world for its findings (F1...), replayed as named tests in pdas.test.ts.
 *
 * Findings of the attacker fuzzer (tests/pools/attacks/attacker-fuzz.test.ts), each reduced to a minimal
 * named test that asserts the secure behaviour (so it fails while the hole is open).
 *
 * F1 — "canonical" accounts created at any address whose key signs. `kit::cpi::create_canonical`
 * (and `create_pda` under it) relies on `invoke_signed` to prove `account == PDA(seeds, bump)`;
 * but when the account passed is itself a signer of the transaction (a keypair the caller
 * holds), the system program's CreateAccount (or Allocate + Assign on the pre-funded path)
 * succeeds whatever the seeds are. `verify_canonical` checks only that no higher bump of the
 * seeds is a PDA, never that the account is that PDA. So every Pool, Participant and Claim can
 * be created at an address of the caller's choosing:
 *   - create_pool: a second pool of the same (creator, nonce) (replay protection gone);
 *   - place_pick: a second Participant of the same (pool, user): `participant_count` counts one
 *     person twice (the spec's distinct-participants aggregate is wrong) and each record votes;
 *   - settle_participant / refund_participant (anyone may call them): when a participant's
 *     recorded token account cannot receive, the caller passes its own keypair as `user_claim`
 *     and the participant's payout is credited to a Claim at that address; the participant's
 *     canonical claim (["claim", owner], what clients derive) does not exist, so its
 *     withdraw_claim fails: the money is hidden from its owner (recoverable only by scanning the
 *     program's accounts for Claims naming it).
 * Fix (kit, one check): `create_pda` refuses a `new` account that is a signer (a PDA has no
 * private key, so it can sign only through `invoke_signed`, whose seeds then prove the address).
 * Status: fixed in the working tree (kit::cpi::create_pda, `AccountMismatch`); these tests failed
 * before it (the payout of F1c sat in a Claim at the attacker's keypair) and pass after it, on
 * both engines. The fuzzer first hit it at step 1072 of seed 1510 (a `dup` mutation put the fee
 * payer's own wallet in create_pool's `pool` slot: the wallet became a Pool).
 */

import { PublicKey } from "@solana/web3.js";
import { PoolsClient, poolsAccountsCoder } from "../../../idl/client/pools";
import type { Idl, Program } from "../../../idl/client/anchor";
import { type AccountsCoder, AttackerWorld, attackerWorldOf, SYSTEM_PROGRAM, TOKEN_PROGRAM, buildIx, decodeAs, u64le } from "../../support/attacker";

export const UNIT = 1_000_000n;
export const coder = poolsAccountsCoder as unknown as AccountsCoder;
export const program = PoolsClient.fromProvider({ publicKey: PublicKey.default } as never).program as unknown as Program<Idl>;

export const world = () =>
  attackerWorldOf("pools", {
    seed: 7,
    actions: 0,
    label: "pools findings",
    honestCount: 2,
    honestFunds: [1_000n * UNIT, 1_000n * UNIT],
    attackerFunds: 1_000n * UNIT,
  });

export function helpers(w: AttackerWorld) {
  const poolPda = (creator: PublicKey, nonce: bigint) => w.pda([Buffer.from("pool"), creator.toBuffer(), u64le(nonce)]);
  const partPda = (pool: PublicKey, user: PublicKey) => w.pda([Buffer.from("participant"), pool.toBuffer(), user.toBuffer()]);
  const createPool = (creator: PublicKey, nonce: bigint, closesAt: bigint, pool = poolPda(creator, nonce)) => {
    const q = Buffer.alloc(160);
    q.write("Finding?");
    return buildIx(
      program,
      "createPool",
      {
        nonce,
        bump: w.bumpOf(poolPda(creator, nonce)),
        outcomeCount: 2,
        closesAt,
        resolutionAt: 0n,
        questionLen: 8,
        question: [...q],
        criteriaLen: 0,
        criteria: Array(280).fill(0),
        coverUrlLen: 0,
        coverUrl: Array(128).fill(0),
        labelLens: Array(8).fill(0),
        labels: Array(192).fill(0),
      },
      { payer: creator, creator, config: w.CONFIG, pool, systemProgram: SYSTEM_PROGRAM },
    );
  };
  const pick = (user: PublicKey, userToken: PublicKey, pool: PublicKey, outcome: number, amount: bigint, participant = partPda(pool, user)) =>
    buildIx(
      program,
      "placePick",
      { outcome, amount, participantBump: w.bumpOf(partPda(pool, user)) },
      { payer: user, user, userToken, config: w.CONFIG, pool, participant, vault: w.VAULT, tokenProgram: TOKEN_PROGRAM, systemProgram: SYSTEM_PROGRAM },
    );
  const readPool = async (k: PublicKey) =>
    decodeAs<{ creator: PublicKey; nonce: bigint; participantCount: number; totalOi: bigint }>(coder, "pool", (await w.chain.account(k))?.data);
  return { poolPda, partPda, createPool, pick, readPool };
}
