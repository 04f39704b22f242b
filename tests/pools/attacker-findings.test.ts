/**
 * Findings of the attacker fuzzer (tests/pools/attacker-fuzz.test.ts), each reduced to a minimal
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
import { describe, expect, it } from "vitest";
import { Keypair, PublicKey } from "@solana/web3.js";
import { POOLS_ERRORS, PoolsClient, poolsAccountsCoder } from "../../idl/client/pools";
import type { Idl, Program } from "../../idl/client/anchor";
import { type AccountsCoder, AttackerWorld, attackerWorldOf, SYSTEM_PROGRAM, TOKEN_PROGRAM, buildIx, decodeAs, errorName, u64le } from "../support/attacker";

const UNIT = 1_000_000n;
const coder = poolsAccountsCoder as unknown as AccountsCoder;
const program = PoolsClient.fromProvider({ publicKey: PublicKey.default } as never).program as unknown as Program<Idl>;

const world = () =>
  attackerWorldOf("pools", {
    seed: 7,
    actions: 0,
    label: "pools findings",
    honestCount: 2,
    honestFunds: [1_000n * UNIT, 1_000n * UNIT],
    attackerFunds: 1_000n * UNIT,
  });

function helpers(w: AttackerWorld) {
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

describe("pools attacker findings", () => {
  it("F1a: create_pool refuses a pool account that is not the canonical PDA of (creator, nonce), even when its key signs", async () => {
    const w = await world();
    const { createPool, poolPda, readPool } = helpers(w);
    const A = w.A;
    const closesAt = (await w.chain.now()) + 3_600n;
    const r1 = await w.chain.send([createPool(A.publicKey, 1n, closesAt)], [A], A);
    expect(r1.error).toBeNull();
    // The same (creator, nonce) again, into an account whose key the attacker holds and signs with.
    const K = Keypair.generate();
    const r2 = await w.chain.send([createPool(A.publicKey, 1n, closesAt, K.publicKey)], [A, K], A);
    const second = await readPool(K.publicKey);
    expect(second, `a second pool of (creator, nonce 1) exists at ${K.publicKey.toBase58()}, not at ${poolPda(A.publicKey, 1n).toBase58()}`).toBeNull();
    expect(r2.ok).toBe(false);
  });

  it("F1b: place_pick refuses a second Participant record of the same (pool, user) at a signing keypair (participant_count counts people)", async () => {
    const w = await world();
    const { createPool, poolPda, pick, readPool } = helpers(w);
    const [H] = w.honest;
    const A = w.A;
    const closesAt = (await w.chain.now()) + 3_600n;
    expect((await w.chain.send([createPool(H.keys[0].publicKey, 1n, closesAt)], [H.keys[0]])).error).toBeNull();
    const pool = poolPda(H.keys[0].publicKey, 1n);
    expect((await w.chain.send([pick(A.publicKey, w.aMain.address, pool, 0, 10n * UNIT)], [A], A)).error).toBeNull();
    const K = Keypair.generate();
    const r = await w.chain.send([pick(A.publicKey, w.aMain.address, pool, 1, 10n * UNIT, K.publicKey)], [A, K], A);
    const p = (await readPool(pool))!;
    expect(
      p.participantCount,
      `one user counted as ${p.participantCount} participants (second record at ${K.publicKey.toBase58()}: ${errorName(r, POOLS_ERRORS)})`,
    ).toBe(1);
    expect(r.ok).toBe(false);
  });

  it("F1c: settle_participant refuses to credit a participant's payout to a Claim at an address the caller chose", async () => {
    const w = await world();
    const { createPool, poolPda, partPda, pick } = helpers(w);
    const [H] = w.honest;
    const A = w.A;
    const key = H.keys[0];
    const closesAt = (await w.chain.now()) + 3_600n;
    // The attacker's pool; the honest user backs outcome 0, the attacker outcome 1.
    expect((await w.chain.send([createPool(A.publicKey, 1n, closesAt)], [A], A)).error).toBeNull();
    const pool = poolPda(A.publicKey, 1n);
    expect((await w.chain.send([pick(key.publicKey, H.current.address, pool, 0, 100n * UNIT)], [key])).error).toBeNull();
    expect((await w.chain.send([pick(A.publicKey, w.aMain.address, pool, 1, 10n * UNIT)], [A], A)).error).toBeNull();
    // The honest user closes its (emptied) token account, as wallets do: its payout must become its claim.
    await w.honestRotate();
    // Outcome 0 proposed (the truth), nobody disputes, the window passes, the pool resolves.
    await w.chain.setTime(closesAt + 1n);
    expect((await w.chain.send([buildIx(program, "proposeOutcome", { outcome: 0 }, { creator: A.publicKey, pool })], [A], A)).error).toBeNull();
    await w.chain.setTime(closesAt + 2n + 86_400n);
    expect((await w.chain.send([buildIx(program, "resolvePool", {}, { caller: A.publicKey, pool })], [A], A)).error).toBeNull();
    // Anyone may settle: the attacker does, passing its own keypair as the user's claim account.
    const K = Keypair.generate();
    const participant = partPda(pool, key.publicKey);
    const part = decodeAs<{ userToken: PublicKey }>(coder, "participant", (await w.chain.account(participant))!.data)!;
    const canonical = w.claimOf(key.publicKey);
    const r = await w.chain.send(
      [
        buildIx(
          program,
          "settleParticipant",
          { claimBump: w.bumpOf(canonical) },
          {
            config: w.CONFIG,
            pool,
            participant,
            vault: w.VAULT,
            userToken: part.userToken,
            treasury: w.treasury,
            tokenProgram: TOKEN_PROGRAM,
            payer: A.publicKey,
            userClaim: K.publicKey,
            systemProgram: SYSTEM_PROGRAM,
          },
        ),
      ],
      [A, K],
      A,
    );
    const hidden = decodeAs<{ owner: PublicKey; amount: bigint }>(coder, "claim", (await w.chain.account(K.publicKey))?.data);
    expect(
      hidden,
      `the user's payout (${hidden?.amount}) sits in a Claim at ${K.publicKey.toBase58()}; its canonical claim ${canonical.toBase58()} ${(await w.chain.account(canonical)) ? "exists" : "does not exist"}`,
    ).toBeNull();
    expect(r.ok).toBe(false);
  });
});
