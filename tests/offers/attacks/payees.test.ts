/**
 * Payouts never wait on an account the payee controls (programs/SECURITY.md, #15.1): closed,
 * frozen or re-owned token accounts, Claims credited then withdrawn only by their owner, the
 * claim hostage and the treasury findings of the steal review.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey } from "@solana/web3.js";
import { POOLS_PROGRAM_ID } from "../../../idl/client/pools";
import { TestMint } from "../../../harness/token";
import { UNIT } from "../../../harness/offers-world";
import { createThawAccountInstruction } from "@solana/spl-token";
import { deployProgramAt, drain } from "../../support/loader";
import { expectError, expectOk } from "../../support/expect";
import { forgedClaim } from "../../support/forged-claim";
import { parseOffersEvents } from "../../../idl/client/offers";
import { unsigned } from "../../support/bent-ix";
import {
  setUp,
  alice,
  bob,
  carol,
  closeTokenAccount,
  forgedConfig,
  ledger,
  looseAccounts,
  looseUser,
  mallory,
  matched,
  refused,
  resolvedOffer,
  users,
  w,
} from "./scene";

beforeAll(setUp);

describe("offers: payouts never wait on the payee, claims and the treasury", () => {
  it("a closed token account does not block the other side", async () => {
    // The creator closes its token account before close_offer and before settlement.
    const dave = await looseUser();
    const contract = await w.contract({ cutoffIn: 100n });
    const { offer } = await w.createOffer(dave, contract, { side: "sideA", total: 8n * UNIT, target: 10n * UNIT });
    expectOk(await w.take(bob, offer, 3n * UNIT));
    expectOk(await w.take(carol, offer, 2n * UNIT));
    const start = await ledger();
    await closeTokenAccount(dave);
    const daveKey = dave.key.publicKey;

    // close_offer: the refund (8 - 2.4 - 1.6 = 4 units) goes to dave's claim; a client that did
    // not name the creator gets a named error instead, and nothing moves.
    const o = await w.offer(offer);
    await refused(
      w.client.closeOffer({ caller: daveKey, contract, offer, creatorToken: o.creatorToken, expectedRevision: o.revision }),
      [dave.key],
      "ClaimAccountMissing",
    );
    const closed = await w.close(dave.key, offer);
    expectOk(closed);
    const events = parseOffersEvents(closed.logs);
    expect(events.map((e) => e.name)).toEqual(["claimCredited", "offerClosed"]);
    expect(events[0].data).toMatchObject({ owner: daveKey, amount: 4n * UNIT, total: 4n * UNIT });
    expect((await w.claim(daveKey))!.amount).toBe(4n * UNIT);
    const now = await ledger();
    expect([now.vault, now.total]).toEqual([start.vault, start.total]);

    // Settlement of a void contract: the takers are refunded into their accounts, the creator's
    // matched stake goes to its claim.
    await w.chain.advance(100n);
    expectOk(await w.resolve(contract, "void"));
    for (const [u, amount, matched] of [
      [bob, 3n * UNIT, 2_400_000n],
      [carol, 2n * UNIT, 1_600_000n],
    ] as const) {
      const before = await ledger();
      const claimBefore = (await w.claim(daveKey))!.amount;
      expectOk(await w.settle(w.positionOf(offer, u)));
      const after = await ledger();
      expect(after.users[w.users.indexOf(u)] - before.users[w.users.indexOf(u)]).toBe(amount);
      expect(after.vault - before.vault).toBe(-amount);
      expect((await w.claim(daveKey))!.amount - claimBefore).toBe(matched);
    }
    expect((await w.offer(offer)).status).toBe("Settled");

    // A creator win on another offer: the creator's payout is credited, the fee paid.
    const { offer: won } = await resolvedOffer(dave, [[bob, 10n * UNIT]], "sideA");
    await closeTokenAccount(dave);
    const before = await ledger();
    expectOk(await w.settle(w.positionOf(won, bob)));
    const after = await ledger();
    expect(after.treasury - before.treasury).toBe(UNIT); // 10% of the taker's 10 units
    expect(after.vault - before.vault).toBe(-UNIT);
    expect((await w.claim(daveKey))!.amount).toBe(8n * UNIT + 17n * UNIT); // + 8 matched + 10 taken - 1 fee

    // Withdrawal: every redirection is refused and moves nothing.
    const claim = (await w.claim(daveKey))!;
    const total = claim.amount;
    const otherMint = await TestMint.create(w.chain);
    const foreign = await otherMint.account(daveKey);
    const base = { owner: daveKey, destination: dave.token, rentPayer: claim.rentPayer };
    await refused(
      w.client.withdrawClaim({
        owner: mallory.key.publicKey,
        destination: mallory.token,
        rentPayer: claim.rentPayer,
        overrides: { claim: w.client.pda.claim(daveKey)[0] },
      }),
      [mallory.key],
      "AccountMismatch",
    );
    await refused(w.client.withdrawClaim({ ...base, destination: mallory.token }), [dave.key], "NotTokenOwner");
    await refused(w.client.withdrawClaim({ ...base, destination: foreign }), [dave.key], "WrongMint");
    await refused(w.client.withdrawClaim({ ...base, destination: w.client.pda.vault()[0] }), [dave.key], "NotTokenOwner");
    await refused(w.client.withdrawClaim({ ...base, rentPayer: mallory.key.publicKey }), [dave.key], "AccountMismatch");
    await refused(w.client.withdrawClaim({ ...base, overrides: { vault: mallory.token } }), [dave.key], "AccountMismatch");
    await refused(unsigned(await w.client.withdrawClaim(base), daveKey), [], "MissingSignature");
    // The owner takes the whole claim to a new token account; the claim's rent goes back.
    const fresh = await w.mint.account(daveKey);
    looseAccounts.push(fresh);
    const rent = BigInt((await w.chain.account(w.client.pda.claim(daveKey)[0]))!.lamports);
    const payerBefore = await w.chain.lamports(claim.rentPayer);
    const vaultBefore = (await ledger()).vault;
    const wd = await w.withdrawClaim(dave.key, fresh);
    expectOk(wd);
    expect(parseOffersEvents(wd.logs)).toMatchObject([{ name: "claimWithdrawn", data: { owner: daveKey, amount: total } }]);
    expect(await w.mint.balance(fresh)).toBe(total);
    expect((await ledger()).vault).toBe(vaultBefore - total);
    expect(await w.claim(daveKey)).toBeNull();
    expect((await w.chain.lamports(claim.rentPayer)) - payerBefore).toBe(rent - 10_000n); // the rent payer also paid this tx's fee (2 signatures)
    await refused(w.client.withdrawClaim({ ...base, destination: fresh }), [dave.key], "WrongAccountOwner");

    // The reverse: a taker closes its account before a void refund; the creator is refunded.
    const erin = await looseUser();
    const c3 = await w.contract({ cutoffIn: 100n });
    const { offer: o3 } = await w.createOffer(alice, c3, { total: 5n * UNIT, target: 5n * UNIT });
    expectOk(await w.take(erin, o3, 5n * UNIT));
    await closeTokenAccount(erin);
    await w.chain.advance(100n);
    expectOk(await w.resolve(c3, "void"));
    const b3 = await ledger();
    expectOk(await w.settle(w.positionOf(o3, erin)));
    const a3 = await ledger();
    expect(a3.users[w.users.indexOf(alice)] - b3.users[w.users.indexOf(alice)]).toBe(5n * UNIT);
    expect(a3.vault - b3.vault).toBe(-5n * UNIT);
    expect((await w.claim(erin.key.publicKey))!.amount).toBe(5n * UNIT);
    expectOk(await w.withdrawClaim(erin.key, erin.token));
    expect(await w.mint.balance(erin.token)).toBe(1_000n * UNIT);
    expect((await ledger()).total).toBe(a3.total);
  });

  it("a payout never follows a token account handed to someone else, nor fails on a frozen one", async () => {
    // The creator gives its recorded token account to the attacker; the taker's is frozen.
    const henry = await looseUser();
    const ivy = await looseUser();
    const { contract, offer } = await resolvedOffer(henry, [[ivy, 10n * UNIT]], "void");
    await w.mint.reown(henry.token, henry.key, mallory.key.publicKey);
    await w.mint.freeze(ivy.token);
    const handed = henry.token;
    const before = await ledger();
    const handedBefore = await w.mint.balance(handed);
    expectOk(await w.settle(w.positionOf(offer, ivy)));
    expect(await w.mint.balance(handed)).toBe(handedBefore); // the attacker's now: not paid
    expect((await w.claim(henry.key.publicKey))!.amount).toBe(8n * UNIT);
    expect((await w.claim(ivy.key.publicKey))!.amount).toBe(10n * UNIT);
    const after = await ledger();
    expect([after.vault, after.total]).toEqual([before.vault, before.total]);
    expect((await w.offer(offer)).status).toBe("Settled");
    expect((await w.contractAccount(contract)).status).toBe("Voided");
    // Both withdraw to accounts they hold.
    for (const u of [henry, ivy]) {
      const to = await w.mint.account(u.key.publicKey);
      looseAccounts.push(to);
      expectOk(await w.withdrawClaim(u.key, to));
    }
    expect((await ledger()).total).toBe(before.total);
  });

  it("claim hostage: a settler that pays a Claim's rent cannot later make withdraw_claim fail (rent_payer turned executable)", async () => {
    const [carol, alice, mallory] = await users(3);
    const { contract, offer, position } = await matched(carol, alice);
    await w.chain.advance(3_601n);
    expectOk(await w.resolve(contract, "sideB")); // alice (taker) wins
    expectOk(await w.close(mallory.key, offer));
    const aliceNew = await w.mint.closeAccount(alice.token, alice.key);
    const k = await w.chain.fundedKeypair(1_000_000_000n);
    const ix = await w.settleIx(position, { payer: k.publicKey });
    expectOk(await w.chain.send([ix], [k, mallory.key], mallory.key));
    const c = await w.claim(alice.key.publicKey);
    expect(c?.rentPayer.toBase58()).toBe(k.publicKey.toBase58());
    await drain(w.chain, k, mallory.key.publicKey);
    await deployProgramAt(w.chain, k, mallory.key);
    const before = await w.mint.balance(aliceNew);
    expectOk(await w.withdrawClaim(alice.key, aliceNew));
    expect((await w.mint.balance(aliceNew)) - before).toBe(c!.amount);
  });

  it("treasury frozen: winners are blocked only until the authority names a new treasury (set_treasury), which only it can, and only to a sound account", async () => {
    const [carol, alice, mallory] = await users(3);
    const { contract, offer, position } = await matched(carol, alice);
    await w.chain.advance(3_601n);
    expectOk(await w.resolve(contract, "sideB"));
    expectOk(await w.close(carol.key, offer));
    const old = w.treasury;
    await w.mint.freeze(old);
    const before = await w.mint.balance(alice.token);
    expect((await w.settle(position)).ok).toBe(false); // the fee cannot reach a frozen treasury
    const fresh = await w.mint.account(w.authority.publicKey);
    const set = (treasury: PublicKey, signer = w.authority) => w.client.setTreasury({ authority: signer.publicKey, treasury });
    expectError(await w.send([await set(fresh, mallory.key)], [mallory.key]), "Unauthorized");
    expectError(await w.send([await set(w.client.pda.vault()[0])], [w.authority]), "AccountMismatch");
    expect((await w.send([await set(old)], [w.authority])).ok).toBe(false); // frozen
    const foreign = await (await TestMint.create(w.chain)).account(w.authority.publicKey);
    expectError(await w.send([await set(foreign)], [w.authority]), "AccountMismatch");
    expectOk(await w.send([await set(fresh)], [w.authority]));
    w.treasury = fresh;
    expectOk(await w.settle(position));
    expect(await w.mint.balance(alice.token)).toBeGreaterThan(before);
    expect(await w.mint.balance(fresh)).toBeGreaterThan(0n);
    // Back to the world's treasury for the other tests.
    expectOk(await w.send([createThawAccountInstruction(old, w.mint.mint, w.mint.authority.publicKey)]));
    expectOk(await w.send([await set(old)], [w.authority]));
    w.treasury = old;
  });

  it("claim theft: another signer, or a destination the owner does not hold, cannot withdraw a claim", async () => {
    const [carol, alice, mallory] = await users(3);
    const { contract, offer, position } = await matched(carol, alice);
    expectOk(await w.resolve(contract, "void"));
    expectOk(await w.close(carol.key, offer));
    const aliceNew = await w.mint.closeAccount(alice.token, alice.key);
    expectOk(await w.settle(position));
    const c = (await w.claim(alice.key.publicKey))!;
    const claim = w.client.pda.claim(alice.key.publicKey)[0];
    expectError(
      await w.send(
        [await w.client.withdrawClaim({ owner: mallory.key.publicKey, destination: mallory.token, rentPayer: c.rentPayer, overrides: { claim } })],
        [mallory.key],
      ),
      "AccountMismatch",
    );
    expectError(
      await w.send([await w.client.withdrawClaim({ owner: alice.key.publicKey, destination: mallory.token, rentPayer: c.rentPayer })], [alice.key]),
      "NotTokenOwner",
    );
    expectError(
      await w.send([await w.client.withdrawClaim({ owner: alice.key.publicKey, destination: aliceNew, rentPayer: mallory.key.publicKey })], [alice.key]),
      "AccountMismatch",
    );
    const before = await w.mint.balance(aliceNew);
    expectOk(await w.withdrawClaim(alice.key, aliceNew));
    expect((await w.mint.balance(aliceNew)) - before).toBe(c.amount);
    expectError(await w.withdrawClaim(alice.key, aliceNew), "WrongAccountOwner");
  });

  it("every account of withdraw_claim is pinned, with the program's WrongMint / NotTokenOwner; another program's Claim is refused", async () => {
    const [carol, alice, mallory] = await users(3);
    const contract = await w.contract({ cutoffIn: 3_600n });
    const { r, offer } = await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT });
    expectOk(r);
    expectOk(await w.take(alice, offer, 5n * UNIT));
    const position = w.positionOf(offer, alice);
    expectOk(await w.resolve(contract, "void"));
    expectOk(await w.close(carol.key, offer));
    const aliceNew = await w.mint.closeAccount(alice.token, alice.key);
    expectOk(await w.settle(position));
    const c = (await w.claim(alice.key.publicKey))!;
    expect(c.amount).toBeGreaterThan(0n);
    const vault = w.client.pda.vault()[0];
    const vaultBefore = await w.mint.balance(vault);
    const wd = (
      o: {
        owner?: PublicKey;
        destination?: PublicKey;
        rentPayer?: PublicKey;
        overrides?: Partial<Record<"config" | "vault" | "claim" | "tokenProgram", PublicKey>>;
      } = {},
    ) =>
      w.client.withdrawClaim({
        owner: o.owner ?? alice.key.publicKey,
        destination: o.destination ?? aliceNew,
        rentPayer: o.rentPayer ?? c.rentPayer,
        overrides: o.overrides,
      });

    const unsigned = await wd();
    unsigned.keys[0].isSigner = false;
    expectError(await w.send([unsigned]), "MissingSignature");
    expectError(await w.send([await wd({ overrides: { tokenProgram: Keypair.generate().publicKey } })], [alice.key]), "WrongProgram");
    const fake = await forgedConfig(alice.key.publicKey, mallory.token);
    expectError(await w.send([await wd({ overrides: { config: fake, vault: mallory.token } })], [alice.key]), "AccountMismatch");
    expectError(await w.send([await wd({ overrides: { vault: mallory.token } })], [alice.key]), "AccountMismatch");
    expectError(await w.send([await wd({ rentPayer: mallory.key.publicKey })], [alice.key]), "AccountMismatch");
    const other = await TestMint.create(w.chain);
    expectError(await w.send([await wd({ destination: await other.account(alice.key.publicKey) })], [alice.key]), "WrongMint");
    expectError(await w.send([await wd({ destination: mallory.token })], [alice.key]), "NotTokenOwner");
    expectError(await w.send([await wd({ destination: vault })], [alice.key]), "NotTokenOwner");
    const ro = await wd();
    ro.keys[2].isWritable = false;
    expectError(await w.send([ro], [alice.key]), "AccountNotWritable");
    // A pools-owned Claim (same kit layout and discriminator) naming mallory, for the whole vault.
    const poolsClaim = await forgedClaim(w.chain, POOLS_PROGRAM_ID, mallory.key.publicKey, vaultBefore, mallory.key.publicKey);
    expectError(await w.send([await w.substitutedClaimIx(mallory, poolsClaim)], [mallory.key]), "WrongAccountOwner");
    // Other offers accounts in the claim's place.
    for (const acct of [position, contract, w.client.pda.config()[0]]) {
      expectError(await w.send([await w.substitutedClaimIx(mallory, acct)], [mallory.key]), "WrongAccountType");
    }
    expect(await w.mint.balance(vault)).toBe(vaultBefore);
    expect((await w.claim(alice.key.publicKey))!.amount).toBe(c.amount);
    const destBefore = await w.mint.balance(aliceNew);
    expectOk(await w.withdrawClaim(alice.key, aliceNew));
    expect((await w.mint.balance(aliceNew)) - destBefore).toBe(c.amount);
    expect(await w.mint.balance(vault)).toBe(vaultBefore - c.amount);
    expect(await w.claim(alice.key.publicKey)).toBeNull();
  });
});
