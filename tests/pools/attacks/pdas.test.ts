/**
 * Canonical, unique PDAs (programs/SECURITY.md, "bump canonicalisation", "a PDA at a keypair the
 * caller signs with", "PDA sharing", re-initialisation of records): each seed tuple names one
 * account, at its canonical bump, never another user's; the attacker fuzzer's findings F1 are here.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import { OFFERS_PROGRAM_ID } from "../../../idl/client/offers";
import { POOLS_ERRORS, POOLS_PROGRAM_ID, SYSTEM_PROGRAM, TOKEN_PROGRAM } from "../../../idl/client/pools";
import { UNIT } from "../../../harness/pools-world";
import { buildIx, decodeAs, errorName } from "../../support/attacker";
import { expectOk } from "../../support/expect";
import { forgedClaim } from "../../support/forged-claim";
import { nonCanonical } from "../../support/bent-ix";
import {
  setUp,
  alice,
  bob,
  carol,
  cast4,
  expectError,
  mallory,
  nonCanonicalClaim,
  open,
  part,
  pickIx,
  poolWith,
  refused,
  rejected,
  resolvedPool,
  w,
} from "./scene";
import { coder, helpers, program, world } from "./fuzzer-findings";

beforeAll(setUp);

describe("pools: canonical, unique PDAs", () => {
  it("another user's participant record on pick", async () => {
    await rejected(pickIx(mallory, { overrides: { participant: part(open, alice) } }), [mallory.key], "AccountMismatch");
  });

  it("a participant address that is not the PDA of (pool, user), and a pool address that is not the PDA of (creator, nonce)", async () => {
    await rejected(pickIx(mallory, { overrides: { participant: Keypair.generate().publicKey } }), [mallory.key]);
    const ix = w.client.createPool({
      payer: w.chain.payer.publicKey,
      creator: alice.key.publicKey,
      nonce: 78n,
      question: "q",
      closesAt: (await w.chain.now()) + 1_000n,
      overrides: { pool: w.client.pda.pool(alice.key.publicKey, 79n)[0] },
    });
    await rejected(ix, [alice.key]);
  });

  it("a participant exists once per (pool, user)", async () => {
    const [pool] = [await poolWith(carol, [], 1_000n)];
    const seeds = [Buffer.from("participant"), pool.toBuffer(), alice.key.publicKey.toBuffer()];
    const [second, bump] = nonCanonical(seeds, POOLS_PROGRAM_ID);
    const pick = (o: { participant?: PublicKey; bump?: number } = {}) =>
      w.client.placePick({
        payer: w.chain.payer.publicKey,
        user: alice.key.publicKey,
        userToken: alice.token,
        pool,
        outcome: 0,
        amount: 7n * UNIT,
        participantBump: o.bump,
        overrides: o.participant ? { participant: o.participant } : {},
      });
    const poolState = () => w.pool(pool);
    // A second record at a non-canonical bump: before and after the canonical one exists.
    await refused(pick({ participant: second, bump }), [alice.key], "AccountMismatch", poolState);
    expectOk(await w.send([await pick()], [alice.key]));
    await refused(pick({ participant: second, bump }), [alice.key], "AccountMismatch", poolState);
    expectOk(await w.send([await pick()], [alice.key])); // existing: a second pick, same record
    expect(await w.chain.account(second)).toBeNull();
    // The canonical address declared with a lower bump is refused too.
    const [, bobBump] = nonCanonical([Buffer.from("participant"), pool.toBuffer(), bob.key.publicKey.toBuffer()], POOLS_PROGRAM_ID);
    await refused(
      w.client.placePick({
        payer: w.chain.payer.publicKey,
        user: bob.key.publicKey,
        userToken: bob.token,
        pool,
        outcome: 0,
        amount: UNIT,
        participantBump: bobBump,
      }),
      [bob.key],
      "AccountMismatch",
      poolState,
    );
    // Distinct people: alice 3 picks, bob 2, mallory 1 -> 3 participants.
    expectOk(await w.pick(alice, pool, 1, UNIT));
    expectOk(await w.pick(bob, pool, 0, UNIT));
    expectOk(await w.pick(bob, pool, 1, UNIT));
    expectOk(await w.pick(mallory, pool, 1, UNIT));
    const p = await w.pool(pool);
    expect([p.participantCount, p.outcomes.map((o) => o.wagerCount), p.totalOi]).toEqual([3, [3, 3], 18n * UNIT]);
    expect((await w.participant(w.participantOf(pool, alice.key.publicKey))).total).toBe(15n * UNIT);
  });

  it("a pool exists once per (creator, nonce): a non-canonical bump and a replay fail", async () => {
    const nonce = 900_001n;
    const seeds = [Buffer.from("pool"), carol.key.publicKey.toBuffer(), Buffer.from(new BigUint64Array([nonce]).buffer)];
    const [second, bump] = nonCanonical(seeds, POOLS_PROGRAM_ID);
    const closesAt = (await w.chain.now()) + 1_000n;
    const create = (o: { pool?: PublicKey; bump?: number }) =>
      w.client.createPool({
        payer: w.chain.payer.publicKey,
        creator: carol.key.publicKey,
        nonce,
        question: "once?",
        closesAt,
        bump: o.bump,
        overrides: o.pool ? { pool: o.pool } : {},
      });
    await refused(create({ pool: second, bump }), [carol.key], "AccountMismatch");
    expect(await w.chain.account(second)).toBeNull();
    expectOk(await w.send([await create({})], [carol.key]));
    await refused(create({}), [carol.key], "AlreadyInitialized");
    await refused(create({ pool: second, bump }), [carol.key], "AccountMismatch");
  });

  it("no record at a signing keypair's address: a second pool, participant or claim of the same seeds", async () => {
    // A keypair the caller holds can sign the system program's CreateAccount whatever the seeds
    // say; the program refuses a signing account where it creates a PDA.
    const K = Keypair.generate();
    const nonce = w.nextNonce();
    const closesAt = (await w.chain.now()) + 100n;
    // (carol pays her own fees here: a third signature would not fit create_pool's transaction)
    const make = (pool?: PublicKey) =>
      w.client.createPool({ payer: carol.key.publicKey, creator: carol.key.publicKey, nonce, question: "twice?", closesAt, overrides: pool ? { pool } : {} });
    expectOk(await w.chain.send([await make()], [], carol.key));
    const before = await w.balances();
    expectError(await w.chain.send([await make(K.publicKey)], [K], carol.key), "AccountMismatch");
    expect(await w.balances()).toEqual(before);
    expect(await w.chain.account(K.publicKey)).toBeNull();
    const pool = w.client.pda.pool(carol.key.publicKey, nonce)[0];
    const victim = await w.user(3n * UNIT);
    expectOk(await w.pick(victim, pool, 0, 2n * UNIT));
    const pickAt = (participant: PublicKey) =>
      w.client.placePick({
        payer: w.chain.payer.publicKey,
        user: victim.key.publicKey,
        userToken: victim.token,
        pool,
        outcome: 1,
        amount: UNIT,
        overrides: { participant },
      });
    await refused(pickAt(K.publicKey), [victim.key, K], "AccountMismatch", () => w.pool(pool));
    expect((await w.pool(pool)).participantCount).toBe(1);
    // The crank hides a payout in a Claim of its choosing: refused, and the canonical claim receives it.
    expectOk(await w.cancel(carol.key, pool));
    await w.closeTokenAccount(victim, carol.token);
    const refundTo = (userClaim?: PublicKey) =>
      w.client.refundParticipant({
        pool,
        participant: w.participantOf(pool, victim.key.publicKey),
        user: victim.key.publicKey,
        userToken: victim.token,
        payer: mallory.key.publicKey,
        overrides: userClaim ? { userClaim } : {},
      });
    await refused(refundTo(K.publicKey), [mallory.key, K], "AccountMismatch", () => w.claim(victim.key.publicKey));
    expect(await w.chain.account(K.publicKey)).toBeNull();
    expectOk(await w.send([await refundTo()], [mallory.key]));
    expect((await w.claim(victim.key.publicKey))!.amount).toBe(2n * UNIT);
  });

  it("a claim cannot be another user's or at a non-canonical address", async () => {
    const [a, b] = [await w.user(3n * UNIT), await w.user(2n * UNIT)];
    const pool = await poolWith(carol, [
      [a, 0, 3n * UNIT],
      [b, 1, 2n * UNIT],
    ]);
    expectOk(await w.cancel(carol.key, pool));
    await w.closeTokenAccount(a);
    await w.closeTokenAccount(b);
    expectOk(await w.refund(pool, a.key.publicKey)); // a's claim exists now
    const refundB = (o: { userClaim?: PublicKey; claimBump?: number }) =>
      w.client.refundParticipant({
        pool,
        participant: w.participantOf(pool, b.key.publicKey),
        user: b.key.publicKey,
        userToken: b.token,
        payer: w.chain.payer.publicKey,
        claimBump: o.claimBump,
        overrides: o.userClaim ? { userClaim: o.userClaim } : {},
      });
    const state = async () => [await w.claim(a.key.publicKey), await w.pool(pool)];
    await refused(refundB({ userClaim: w.client.pda.claim(a.key.publicKey)[0] }), [], "AccountMismatch", state);
    const [second, bump] = nonCanonical([Buffer.from("claim"), b.key.publicKey.toBuffer()], POOLS_PROGRAM_ID);
    await refused(refundB({ userClaim: second, claimBump: bump }), [], "AccountMismatch", state);
    // A participant record (program-owned, another type) as the claim.
    await refused(refundB({ userClaim: w.participantOf(pool, b.key.publicKey) }), [], "WrongAccountType", state);
    expectOk(await w.send([await refundB({})]));
    expect((await w.claim(b.key.publicKey))!.amount).toBe(2n * UNIT);
    expect((await w.claim(a.key.publicKey))!.amount).toBe(3n * UNIT);
  });

  it("non-canonical participant PDA and a pre-funded participant address: refused / not blocking", async () => {
    const [carol, alice] = await cast4(w);
    const { r, pool } = await w.createPool(carol, { closesIn: 1_000n });
    expectOk(r);
    const seeds = [Buffer.from("participant"), pool.toBuffer(), alice.key.publicKey.toBuffer()];
    const [, canon] = PublicKey.findProgramAddressSync(seeds, w.client.program.programId);
    let bump = canon - 1;
    let addr: PublicKey | null = null;
    for (; bump >= 0; bump--) {
      try {
        addr = PublicKey.createProgramAddressSync([...seeds, Buffer.from([bump])], w.client.program.programId);
        break;
      } catch {
        /* on curve */
      }
    }
    const ix = await w.pickIx(alice, pool, 0, UNIT, { participantBump: bump, overrides: { participant: addr! } });
    expectError(await w.send([ix], [alice.key]), "AccountMismatch");
    // Pre-funding the canonical address does not block alice's first pick.
    const canonAddr = w.participantOf(pool, alice.key.publicKey);
    expectOk(await w.send([SystemProgram.transfer({ fromPubkey: w.chain.payer.publicKey, toPubkey: canonAddr, lamports: 1_000_000 })]));
    expectOk(await w.pick(alice, pool, 0, UNIT));
  });

  it("settle_participant credits only the payee's canonical Claim: another owner's Claim, a non-canonical PDA, another program's Claim and other accounts are refused", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    // Mallory gets a Claim of her own (a refunded pick to a closed account).
    const m = await resolvedPool(w, carol, mallory, bob, 0);
    await w.mint.closeAccount(mallory.token, mallory.key);
    expectOk(await w.settle(m, mallory.key.publicKey));
    const malloryClaim = w.client.pda.claim(mallory.key.publicKey)[0];
    const mBefore = (await w.claim(mallory.key.publicKey))!.amount;

    const pool = await resolvedPool(w, carol, alice, bob, 0);
    await w.mint.closeAccount(alice.token, alice.key);
    const participant = w.participantOf(pool, alice.key.publicKey);
    const settle = (overrides: { userClaim?: PublicKey }, claimBump?: number) =>
      w.client.settleParticipant({
        pool,
        participant,
        user: alice.key.publicKey,
        userToken: alice.token,
        treasury: w.treasury,
        payer: w.chain.payer.publicKey,
        claimBump,
        overrides,
      });
    // Mallory's own (existing) Claim in alice's place.
    expectError(await w.send([await settle({ userClaim: malloryClaim })]), "AccountMismatch");
    // A non-canonical PDA of ["claim", alice].
    const [nc, ncBump] = nonCanonicalClaim(alice.key.publicKey);
    expectError(await w.send([await settle({ userClaim: nc }, ncBump)]), "AccountMismatch");
    // The canonical address with a wrong bump.
    const [canon, canonBump] = w.client.pda.claim(alice.key.publicKey);
    expectError(await w.send([await settle({ userClaim: canon }, ncBump)]), "AccountMismatch");
    // A Claim of another program naming alice (not ours: never loaded, and not creatable).
    const offersClaim = await forgedClaim(w.chain, OFFERS_PROGRAM_ID, alice.key.publicKey, 0n, mallory.key.publicKey);
    expectError(await w.send([await settle({ userClaim: offersClaim })]), "AlreadyInitialized");
    // Other pools accounts in the claim's place.
    expectError(await w.send([await settle({ userClaim: w.participantOf(pool, bob.key.publicKey) })]), "WrongAccountType");
    expectError(await w.send([await settle({ userClaim: w.client.pda.config()[0] })]), "WrongAccountType");
    // A keypair address that signs (F1): refused.
    const kp = Keypair.generate();
    const withKp = await settle({ userClaim: kp.publicKey }, canonBump);
    expectError(await w.send([withKp], [kp]), "AccountMismatch");

    expect((await w.participant(participant)).settled).toBeFalsy();
    expect((await w.claim(mallory.key.publicKey))!.amount).toBe(mBefore);
    expect(await w.claim(alice.key.publicKey)).toBeNull();
    // The honest settle credits alice's canonical Claim, rent payer recorded.
    expectOk(await w.settle(pool, alice.key.publicKey));
    const c = (await w.claim(alice.key.publicKey))!;
    expect(c.owner.toBase58()).toBe(alice.key.publicKey.toBase58());
    expect(c.rentPayer.toBase58()).toBe(w.chain.payer.publicKey.toBase58());
    expect(c.amount).toBeGreaterThan(0n);
  });

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
