/**
 * Payouts never wait on an account the payee controls (programs/SECURITY.md, #15.1): closed,
 * frozen or re-owned token accounts, Claims credited then withdrawn only by their owner, the
 * claim hostage and the treasury findings of the steal review.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AuthorityType, createCloseAccountInstruction, createSetAuthorityInstruction } from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";
import { TestMint } from "../../../harness/token";
import { UNIT } from "../../../harness/pools-world";
import { deployProgramAt, drain } from "../../support/loader";
import { expectOk } from "../../support/expect";
import { parsePoolsEvents } from "../../../idl/client/pools";

import { setUp, bob, carol, cast4, expectError, forgedConfig, mallory, payout, poolWith, refused, resolvedPool, toClose, ui, w } from "./scene";

beforeAll(setUp);

describe("pools: payouts never wait on the payee, claims and the treasury", () => {
  it("a closed token account does not block a payout", async () => {
    const winner = await w.user(14n * UNIT);
    const reowner = await w.user(5n * UNIT);
    const pool = await poolWith(carol, [
      [winner, 0, 10n * UNIT],
      [bob, 1, 30n * UNIT],
      [reowner, 0, 5n * UNIT],
    ]);
    const canceled = await poolWith(carol, [[winner, 0, 4n * UNIT]]);
    expectOk(await w.cancel(carol.key, canceled));
    // The winner closes its (now empty) token account; the other re-owns its account to mallory.
    await w.closeTokenAccount(winner);
    expectOk(
      await w.send([createSetAuthorityInstruction(reowner.token, reowner.key.publicKey, AuthorityType.AccountOwner, mallory.key.publicKey)], [reowner.key]),
    );
    const start = await w.balances();
    // The refund goes to the winner's claim, created with the rent of whoever cranks it (here a sponsor)...
    const sponsor = await w.chain.fundedKeypair();
    const refundIx = await w.client.refundParticipant({
      pool: canceled,
      participant: w.participantOf(canceled, winner.key.publicKey),
      user: winner.key.publicKey,
      userToken: winner.token,
      payer: sponsor.publicKey,
    });
    const sponsorBefore = await w.chain.lamports(sponsor.publicKey);
    const r = await w.send([refundIx], [sponsor]);
    expectOk(r);
    const claimAddress = w.client.pda.claim(winner.key.publicKey)[0];
    const rent = await w.chain.lamports(claimAddress);
    expect(sponsorBefore - (await w.chain.lamports(sponsor.publicKey))).toBe(rent);
    expect((await w.claim(winner.key.publicKey))!.rentPayer).toEqual(sponsor.publicKey);
    expect(parsePoolsEvents(r.logs).map((e) => [e.name, e.data.amount ?? e.data.payout, e.data.total])).toEqual([
      ["claimCredited", 4n * UNIT, 4n * UNIT],
      ["participantSettled", 4n * UNIT, undefined],
      ["poolStateChanged", undefined, undefined],
    ]);
    expect((await w.pool(canceled)).state).toBe("REFUNDED");
    // ...and so does the payout, added to it.
    await toClose(pool);
    expectOk(await w.propose(carol.key, pool, 0));
    await w.chain.advance(86_400n);
    expectOk(await w.resolve(mallory.key, pool));
    const mine = payout(10n * UNIT, 45n * UNIT, 15n * UNIT),
      theirs = payout(5n * UNIT, 45n * UNIT, 15n * UNIT);
    expectOk(await w.settle(pool, winner.key.publicKey));
    expectOk(await w.settle(pool, bob.key.publicKey));
    expectOk(await w.settle(pool, reowner.key.publicKey)); // its account, now mallory's, gets nothing
    expect((await w.pool(pool)).state).toBe("DISTRIBUTED");
    expect((await w.claim(winner.key.publicKey))!.amount).toBe(4n * UNIT + mine);
    expect((await w.claim(reowner.key.publicKey))!.amount).toBe(theirs);
    const mid = await w.balances();
    expect(mid.users[ui(reowner)]).toBe(start.users[ui(reowner)]); // the re-owned account received nothing
    expect(mid.users[ui(bob)]).toBe(start.users[ui(bob)]); // the loser
    expect(mid.treasury - start.treasury).toBe(45n * UNIT - mine - theirs);
    expect(start.vault - mid.vault).toBe(45n * UNIT - mine - theirs); // both claims stay in the vault

    // Withdrawal: only the owner, only to a token account of the mint it owns, rent back to the payer.
    const fresh = await w.mint.account(winner.key.publicKey);
    const otherMint = await TestMint.create(w.chain);
    const foreign = await otherMint.account(winner.key.publicKey);
    const claimState = async () => [await w.claim(winner.key.publicKey), await w.mint.balance(fresh)];
    await refused(
      w.client.withdrawClaim({ owner: mallory.key.publicKey, destination: mallory.token, rentPayer: sponsor.publicKey, overrides: { claim: claimAddress } }),
      [mallory.key],
      "AccountMismatch",
      claimState,
    );
    await refused(
      w.client.withdrawClaim({ owner: winner.key.publicKey, destination: mallory.token, rentPayer: sponsor.publicKey }),
      [winner.key],
      "NotTokenOwner",
      claimState,
    );
    await refused(
      w.client.withdrawClaim({ owner: winner.key.publicKey, destination: foreign, rentPayer: sponsor.publicKey }),
      [winner.key],
      "WrongMint",
      claimState,
    );
    await refused(
      w.client.withdrawClaim({ owner: winner.key.publicKey, destination: fresh, rentPayer: mallory.key.publicKey }),
      [winner.key],
      "AccountMismatch",
      claimState,
    );
    await refused(
      w.client.withdrawClaim({ owner: winner.key.publicKey, destination: fresh, rentPayer: w.chain.payer.publicKey }),
      [winner.key],
      "AccountMismatch",
      claimState,
    );
    await refused(
      w.client.withdrawClaim({ owner: winner.key.publicKey, destination: w.client.pda.vault()[0], rentPayer: sponsor.publicKey }),
      [winner.key],
      "NotTokenOwner",
      claimState,
    );
    const sponsorMid = await w.chain.lamports(sponsor.publicKey);
    const wr = await w.withdrawClaim(winner, fresh);
    expectOk(wr);
    expect(parsePoolsEvents(wr.logs).map((e) => [e.name, e.data.amount])).toEqual([["claimWithdrawn", 4n * UNIT + mine]]);
    expect(await w.mint.balance(fresh)).toBe(4n * UNIT + mine);
    expect(await w.chain.account(claimAddress)).toBeNull();
    expect((await w.chain.lamports(sponsor.publicKey)) - sponsorMid).toBe(rent); // the rent back to whoever paid it
    expectError(await w.withdrawClaim(winner, fresh), "WrongAccountOwner");
    expectOk(await w.withdrawClaim(reowner, await w.mint.account(reowner.key.publicKey)));
    expect((await w.balances()).vault).toBe(mid.vault - 4n * UNIT - mine - theirs);
  });

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

  it("every account is pinned: owner signs, token program, canonical config, its vault, the claim's owner and rent payer, a token account of the mint held by the owner", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const pool = await resolvedPool(w, carol, alice, bob, 0);
    const aliceNew = await w.mint.closeAccount(alice.token, alice.key);
    expectOk(await w.settle(pool, alice.key.publicKey));
    const c = (await w.claim(alice.key.publicKey))!;
    expect(c.amount).toBeGreaterThan(0n);
    const vault = w.client.pda.vault()[0];
    const vaultBefore = await w.mint.balance(vault);
    const wd = (o: {
      owner?: PublicKey;
      destination?: PublicKey;
      rentPayer?: PublicKey;
      overrides?: Parameters<typeof w.client.withdrawClaim>[0]["overrides"];
    }) =>
      w.client.withdrawClaim({
        owner: o.owner ?? alice.key.publicKey,
        destination: o.destination ?? aliceNew,
        rentPayer: o.rentPayer ?? c.rentPayer,
        overrides: o.overrides,
      });

    // The owner named but not signing (mallory sends).
    const unsigned = await wd({});
    unsigned.keys[0].isSigner = false;
    expectError(await w.send([unsigned]), "MissingSignature");
    // A fake token program.
    expectError(await w.send([await wd({ overrides: { tokenProgram: Keypair.generate().publicKey } })], [alice.key]), "WrongProgram");
    // A Config copy elsewhere (its vault field pointing at mallory's account).
    const fake = await forgedConfig(alice.key.publicKey);
    const fakeAcc = (await w.chain.account(fake))!;
    const fd = Buffer.from(fakeAcc.data);
    mallory.token.toBuffer().copy(fd, 8 + 96); // vault field
    w.chain.setAccount(fake, { ...fakeAcc, data: fd });
    expectError(await w.send([await wd({ overrides: { config: fake, vault: mallory.token } })], [alice.key]), "AccountMismatch");
    // Another vault.
    expectError(await w.send([await wd({ overrides: { vault: mallory.token } })], [alice.key]), "AccountMismatch");
    // Another rent payer.
    expectError(await w.send([await wd({ rentPayer: mallory.key.publicKey })], [alice.key]), "AccountMismatch");
    // A token account of another mint (the program's own WrongMint, not a kit error).
    const other = await TestMint.create(w.chain);
    const foreign = await other.account(alice.key.publicKey);
    expectError(await w.send([await wd({ destination: foreign })], [alice.key]), "WrongMint");
    // A token account of the mint held by someone else: mallory's, and the vault itself.
    expectError(await w.send([await wd({ destination: mallory.token })], [alice.key]), "NotTokenOwner");
    expectError(await w.send([await wd({ destination: vault })], [alice.key]), "NotTokenOwner");
    // The claim passed read-only.
    const ro = await wd({});
    ro.keys[2].isWritable = false;
    expectError(await w.send([ro], [alice.key]), "AccountNotWritable");

    expect(await w.mint.balance(vault)).toBe(vaultBefore);
    expect((await w.claim(alice.key.publicKey))!.amount).toBe(c.amount);
    const destBefore = await w.mint.balance(aliceNew);
    expectOk(await w.withdrawClaim({ key: alice.key, token: aliceNew }, aliceNew));
    expect((await w.mint.balance(aliceNew)) - destBefore).toBe(c.amount);
    expect(await w.mint.balance(vault)).toBe(vaultBefore - c.amount);
  });

  it("refund_participant (kit::setup::send signed by the Config's bump; credit on a closed account) pays exactly the stake", async () => {
    const [carol, alice, bob] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, 3n * UNIT));
    expectOk(await w.pick(bob, pool, 1, 4n * UNIT));
    expectOk(await w.cancel(carol.key, pool));
    const b0 = await w.balanceOf(bob.token);
    expectOk(await w.refund(pool, bob.key.publicKey));
    expect((await w.balanceOf(bob.token)) - b0).toBe(4n * UNIT);
    await w.mint.closeAccount(alice.token, alice.key);
    // A Participant in the claim's place is refused; then alice's own Claim is created.
    const participant = w.participantOf(pool, alice.key.publicKey);
    const ix = await w.client.refundParticipant({
      pool,
      participant,
      user: alice.key.publicKey,
      userToken: alice.token,
      payer: w.chain.payer.publicKey,
      overrides: { userClaim: w.participantOf(pool, bob.key.publicKey) },
    });
    expectError(await w.send([ix]), "WrongAccountType");
    expectOk(await w.refund(pool, alice.key.publicKey));
    expect((await w.claim(alice.key.publicKey))!.amount).toBe(3n * UNIT);
  });
});
