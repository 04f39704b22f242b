/**
 * Steal review of the pools program (independent audit). Every test asserts the SAFE behaviour:
 * it passes when the program holds and fails when the attack works.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import { PROPOSAL_DEADLINE_SECONDS, AUTHORITY_DEADLINE_SECONDS, MAX_OPEN_SECONDS } from "../../idl/client/pools";
import { PoolsWorld, UNIT } from "../../harness/pools-world";
import { createCloseAccountInstruction } from "@solana/spl-token";
import { expectOk } from "../support/expect";
import { cast4, expectError, resolvedPool } from "./review-fixture";
import { deployProgramAt, drain } from "../support/loader";
import { LOADER_V3 } from "../../idl/client/common";

let w: PoolsWorld;
beforeAll(async () => {
  w = await PoolsWorld.create({ feeBps: 500 });
});

const I64_MAX = (1n << 63n) - 1n;

describe("pools steal review: findings, fixed", () => {
  it("claim hostage: a settler that pays a Claim's rent cannot later make withdraw_claim fail (rent_payer turned executable)", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const pool = await resolvedPool(w, carol, alice, bob, 0);
    // The honest winner closes her (recorded) token account, as wallets do; payouts go to her Claim.
    const aliceNew = await w.mint.closeAccount(alice.token, alice.key);
    // Mallory settles alice first, with a throwaway keypair K as the payer of the Claim's rent.
    const k = await w.chain.fundedKeypair(1_000_000_000n);
    const participant = w.participantOf(pool, alice.key.publicKey);
    const ix = await w.client.settleParticipant({
      pool,
      participant,
      user: alice.key.publicKey,
      userToken: alice.token,
      treasury: w.treasury,
      payer: k.publicKey,
    });
    expectOk(await w.chain.send([ix], [k, mallory.key], mallory.key));
    const claim = await w.claim(alice.key.publicKey);
    expect(claim?.rentPayer.toBase58()).toBe(k.publicKey.toBase58());
    const owed = claim!.amount;
    expect(owed).toBeGreaterThan(0n);
    // Mallory empties K and deploys a program (loader v3) at K's address.
    await drain(w.chain, k, mallory.key.publicKey);
    await deployProgramAt(w.chain, k, mallory.key);
    // SAFE: alice can still withdraw what she is owed, to her new token account.
    const before = await w.mint.balance(aliceNew);
    expectOk(await w.withdrawClaim({ key: alice.key, token: aliceNew }, aliceNew));
    expect((await w.mint.balance(aliceNew)) - before).toBe(owed);
  });

  it("treasury closed: winners are blocked only until the authority names a new treasury (set_treasury), which only it can, and only to a sound account", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const pool = await resolvedPool(w, carol, alice, bob, 0);
    const old = w.treasury;
    const saved = (await w.chain.account(old))!;
    const tb = await w.mint.balance(old);
    if (tb > 0n) await w.mint.transfer(old, carol.token, w.authority, tb);
    expectOk(await w.send([createCloseAccountInstruction(old, w.authority.publicKey, w.authority.publicKey)], [w.authority]));
    const before = await w.balanceOf(alice.token);
    expect((await w.settle(pool, alice.key.publicKey)).ok).toBe(false); // the fee cannot reach a closed treasury
    const fresh = await w.mint.account(w.authority.publicKey);
    const set = (treasury: PublicKey, signer = w.authority) => w.client.setTreasury({ authority: signer.publicKey, treasury });
    expectError(await w.send([await set(fresh, mallory.key)], [mallory.key]), "Unauthorized");
    expectError(await w.send([await set(w.client.pda.vault()[0])], [w.authority]), "AccountMismatch");
    expect((await w.send([await set(old)], [w.authority])).ok).toBe(false); // closed: not a token account
    expectOk(await w.send([await set(fresh)], [w.authority]));
    w.treasury = fresh;
    expectOk(await w.settle(pool, alice.key.publicKey));
    expect(await w.balanceOf(alice.token)).toBeGreaterThan(before);
    // Back to the world's treasury for the other tests.
    w.chain.setAccount(old, saved);
    expectOk(await w.send([await set(old)], [w.authority]));
    w.treasury = old;
  });
});

describe("pools steal review: resisted attacks (regressions)", () => {
  it("extreme times: closes_at = i64::MAX and resolution_at = i64::MAX are refused at creation", async () => {
    const [carol] = await cast4(w);
    expectError((await w.createPool(carol, { closesAt: I64_MAX })).r, "ClosesAtTooFar");
    const now = await w.chain.now();
    expectError((await w.createPool(carol, { closesAt: now + 100n, resolutionAt: I64_MAX })).r, "ResolutionTooLate");
    expectError((await w.createPool(carol, { closesAt: now + MAX_OPEN_SECONDS + 1n })).r, "ClosesAtTooFar");
    expectError((await w.createPool(carol, { closesAt: now + 100n, resolutionAt: -5n })).r, "InvalidResolutionTime");
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

  it("vote spoofing: voting with another user's participant record, or twice, is refused", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, UNIT));
    expectOk(await w.pick(mallory, pool, 1, UNIT));
    await w.chain.advance(101n);
    expectOk(await w.propose(carol.key, pool, 0));
    const ix = await w.client.castVote({ voter: bob.key.publicKey, pool, outcome: 1, participant: w.participantOf(pool, alice.key.publicKey) });
    expectError(await w.send([ix], [bob.key]), "NotParticipant");
    expectOk(await w.vote(mallory, pool, 1));
    expectError(await w.vote(mallory, pool, 1), "AlreadyVoted");
  });

  it("coalition early close: all participants but one voting cannot end the dispute window early", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, UNIT));
    expectOk(await w.pick(bob, pool, 1, 50n * UNIT));
    expectOk(await w.pick(mallory, pool, 1, 50n * UNIT));
    await w.chain.advance(101n);
    expectOk(await w.propose(carol.key, pool, 1)); // false
    expectOk(await w.vote(bob, pool, 1));
    expectOk(await w.vote(mallory, pool, 1));
    expectError(await w.resolve(mallory.key, pool), "DisputeWindowOpen");
    expectOk(await w.vote(alice, pool, 0)); // the honest dispute
    expectOk(await w.resolve(mallory.key, pool));
    expect((await w.pool(pool)).escalated).toBe(true);
  });

  it("payout redirection: settling with a substituted user_token or treasury, or twice, is refused", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const pool = await resolvedPool(w, carol, alice, bob, 0);
    const participant = w.participantOf(pool, alice.key.publicKey);
    const steal = await w.client.settleParticipant({
      pool,
      participant,
      user: alice.key.publicKey,
      userToken: mallory.token,
      treasury: w.treasury,
      payer: w.chain.payer.publicKey,
    });
    expectError(await w.send([steal]), "AccountMismatch");
    const wrongTreasury = await w.client.settleParticipant({
      pool,
      participant,
      user: alice.key.publicKey,
      userToken: alice.token,
      treasury: mallory.token,
      payer: w.chain.payer.publicKey,
    });
    expectError(await w.send([wrongTreasury]), "AccountMismatch");
    expectOk(await w.settle(pool, alice.key.publicKey));
    expectError(await w.settle(pool, alice.key.publicKey), "AlreadySettled");
  });

  it("rogue config: a program-shaped Config at another address is refused", async () => {
    const [carol, alice] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 1_000n });
    const real = await w.chain.account(w.client.pda.config()[0]);
    const fake = Keypair.generate().publicKey;
    const data = Buffer.from(real!.data);
    w.chain.setAccount(fake, { ...real!, data });
    const ix = await w.pickIx(alice, pool, 0, UNIT, { overrides: { config: fake } });
    expectError(await w.send([ix], [alice.key]), "AccountMismatch");
  });

  it("silent creator and silent authority: stakes are never locked (escalate, cancel after 7 days, refund all)", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, 7n * UNIT));
    expectOk(await w.pick(bob, pool, 1, 3n * UNIT));
    await w.chain.advance(101n);
    expectError(await w.resolve(mallory.key, pool), "ProposalDeadlineNotPassed");
    await w.chain.advance(PROPOSAL_DEADLINE_SECONDS);
    expectOk(await w.resolve(mallory.key, pool));
    expectError(await w.cancel(mallory.key, pool), "EscalationPending");
    await w.chain.advance(AUTHORITY_DEADLINE_SECONDS);
    expectError(await w.authorityResolve(pool, 0), "AuthorityDeadlinePassed");
    expectOk(await w.cancel(mallory.key, pool));
    const [a0, b0] = [await w.balanceOf(alice.token), await w.balanceOf(bob.token)];
    expectOk(await w.refund(pool, alice.key.publicKey));
    expectOk(await w.refund(pool, bob.key.publicKey));
    expect((await w.balanceOf(alice.token)) - a0).toBe(7n * UNIT);
    expect((await w.balanceOf(bob.token)) - b0).toBe(3n * UNIT);
    expectError(await w.refund(pool, bob.key.publicKey), "AlreadyRefunded");
  });

  it("claim theft: withdrawing another user's claim, or to a token account the owner does not hold, is refused", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const pool = await resolvedPool(w, carol, alice, bob, 0);
    const aliceNew = await w.mint.closeAccount(alice.token, alice.key);
    expectOk(await w.settle(pool, alice.key.publicKey));
    const c = await w.claim(alice.key.publicKey);
    expect(c!.amount).toBeGreaterThan(0n);
    const other = await w.client.withdrawClaim({
      owner: mallory.key.publicKey,
      destination: mallory.token,
      rentPayer: c!.rentPayer,
      overrides: { claim: w.client.pda.claim(alice.key.publicKey)[0] },
    });
    expectError(await w.send([other], [mallory.key]), "AccountMismatch");
    const toMallory = await w.client.withdrawClaim({ owner: alice.key.publicKey, destination: mallory.token, rentPayer: c!.rentPayer });
    expectError(await w.send([toMallory], [alice.key]), "NotTokenOwner");
    expectOk(await w.withdrawClaim({ key: alice.key, token: aliceNew }, aliceNew));
    // Revival: withdrawing again (claim closed) fails.
    expectError(await w.withdrawClaim({ key: alice.key, token: aliceNew }, aliceNew), "WrongAccountOwner");
  });

  it("config takeover: initialize_config again with a forged ProgramData, or update_config by a non-authority, is refused", async () => {
    const [mallory] = await cast4(w);
    const fakePd = Keypair.generate().publicKey;
    const data = Buffer.alloc(45);
    data.writeUInt32LE(3, 0);
    data[12] = 1;
    mallory.key.publicKey.toBuffer().copy(data, 13);
    w.chain.setAccount(fakePd, { lamports: 10_000_000, data, owner: LOADER_V3, executable: false, rentEpoch: 0 });
    const init = await w.client.initializeConfig({
      authority: mallory.key.publicKey,
      mint: w.mint.mint,
      treasury: mallory.token,
      feeBps: 10_000,
      deployer: mallory.key.publicKey,
      overrides: { programData: fakePd },
    });
    expectError(await w.send([init], [mallory.key]), "AccountMismatch");
    const init2 = await w.client.initializeConfig({
      authority: mallory.key.publicKey,
      mint: w.mint.mint,
      treasury: mallory.token,
      feeBps: 10_000,
      deployer: mallory.key.publicKey,
    });
    expectError(await w.send([init2], [mallory.key]), "MissingSignature");
    const upd = await w.client.updateConfig({ authority: mallory.key.publicKey, feeBps: 10_000 });
    expectError(await w.send([upd], [mallory.key]), "Unauthorized");
    expect((await w.config()).feeBps).toBe(500);
  });

  it("lifecycle bypass: non-creator cancel before close, non-creator propose, and picks after close are refused", async () => {
    const [carol, alice, , mallory] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, UNIT));
    expectError(await w.cancel(mallory.key, pool), "CancelNotAllowed");
    expectError(await w.propose(mallory.key, pool, 0), "NotCreator");
    await w.chain.advance(101n);
    expectError(await w.pick(mallory, pool, 1, UNIT), "PoolClosed");
    expectError(await w.cancel(carol.key, pool), "CancelNotAllowed");
  });
});
