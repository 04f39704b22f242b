/**
 * Duplicate and substituted accounts (programs/SECURITY.md, "duplicate mutable accounts"): a
 * fake vault, another contract or pool, a token account of another mint, the same account twice,
 * and payouts or refunds redirected to an account the rules did not record.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair } from "@solana/web3.js";
import { OffersClient } from "../../../idl/client/offers";

import { UNIT } from "../../../harness/offers-world";
import { expectError, expectOk } from "../../support/expect";
import { unsigned } from "../../support/bent-ix";
import {
  setUp,
  alice,
  bob,
  carol,
  closeIx,
  closeTokenAccount,
  createIx,
  looseUser,
  mallory,
  matched,
  offer,
  outcomeOf,
  refused,
  rejected,
  resolvedOffer,
  takeIx,
  users,
  w,
} from "./scene";

beforeAll(setUp);

describe("offers: duplicate and substituted accounts", () => {
  it("a fake vault (attacker's token account) on take and close", async () => {
    const fakeVault = await w.mint.account(mallory.key.publicKey);
    const o = await w.offer(offer);
    await rejected(takeIx(o.revision, { overrides: { vault: fakeVault } }), [bob.key], "AccountMismatch");
    await rejected(closeIx(o, { overrides: { vault: fakeVault } }), [alice.key], "AccountMismatch");
  });

  it("a refund redirected to the attacker's token account on close", async () => {
    const o = await w.offer(offer);
    await rejected(closeIx(o, { creatorToken: mallory.token }), [alice.key], "AccountMismatch");
  });

  it("a contract other than the offer's", async () => {
    const other = await w.contract();
    const o = await w.offer(offer);
    await rejected(takeIx(o.revision, { contract: other }), [bob.key], "AccountMismatch");
  });

  it("a token account of another mint as the creator's source", async () => {
    const { TestMint } = await import("../../../harness/token");
    const fake = await TestMint.create(w.chain);
    const fakeToken = await fake.account(alice.key.publicKey, 100n * UNIT);
    const ix = createIx(999_003n, { creator: { key: alice.key, token: fakeToken } });
    await rejected(ix, [alice.key], "WrongMint");
  });

  it("payouts cannot be redirected: wrong taker token or treasury on settle", async () => {
    const c = await w.contract({ cutoffIn: 100n });
    const { offer: o3 } = await w.createOffer(alice, c, { total: 10n * UNIT, target: 10n * UNIT });
    expectOk(await w.take(bob, o3, 10n * UNIT));
    await w.chain.advance(100n);
    expectOk(await w.resolve(c, "sideB"));
    const pos = w.positionOf(o3, bob);
    const before = await w.balances();
    const settle = { contract: c, offer: o3, position: pos, creatorToken: alice.token, takerToken: bob.token, treasury: w.treasury };
    const bad1 = await w.client.settlePosition({ ...settle, takerToken: mallory.token });
    expectError(await w.send([bad1]), "AccountMismatch");
    const bad2 = await w.client.settlePosition({ ...settle, treasury: mallory.token });
    expectError(await w.send([bad2]), "AccountMismatch");
    expect(await w.balances()).toEqual(before);
  });

  it("duplicate and substituted mutable accounts are refused", async () => {
    const vault = w.client.pda.vault()[0];
    const contract = await w.contract({ cutoffIn: 100n });
    const fee = (await w.config()).feeBps;
    // The vault as the creator's source or the taker's source.
    await refused(
      w.client.createOffer({
        payer: w.chain.payer.publicKey,
        creator: alice.key.publicKey,
        creatorToken: vault,
        contract,
        nonce: w.nextNonce(),
        side: "sideA",
        creatorTotal: 5n * UNIT,
        takerTarget: 5n * UNIT,
        minimumTake: UNIT,
        expectedFeeBps: fee,
      }),
      [alice.key],
      "NotTokenOwner",
    );
    const { offer } = await w.createOffer(alice, contract, { total: 10n * UNIT, target: 10n * UNIT });
    await refused(w.takeIx({ key: bob.key, token: vault }, offer, 2n * UNIT, { contract, expectedRevision: 1n }), [bob.key], "NotTokenOwner");
    expectOk(await w.take(bob, offer, 4n * UNIT));
    // The vault as the refund account, the offer as the position.
    const o = await w.offer(offer);
    await refused(
      w.client.closeOffer({ caller: alice.key.publicKey, contract, offer, creatorToken: vault, creator: alice.key.publicKey, expectedRevision: o.revision }),
      [alice.key],
      "AccountMismatch",
    );
    await refused(w.takeIx(bob, offer, 2n * UNIT, { contract, expectedRevision: o.revision, overrides: { position: offer } }), [bob.key], "WrongAccountType");
    await w.chain.advance(100n);
    expectOk(await w.resolve(contract, "void"));
    expectOk(await w.close(carol.key, offer));
    const position = w.positionOf(offer, bob);
    const settle = (x: Partial<Parameters<OffersClient["settlePosition"]>[0]> = {}) =>
      w.client.settlePosition({
        contract,
        offer,
        position,
        creatorToken: alice.token,
        takerToken: bob.token,
        treasury: w.treasury,
        creator: alice.key.publicKey,
        taker: bob.key.publicKey,
        ...x,
      });
    // One account for both payouts, the vault or the treasury as a payout account, the vault as treasury.
    await refused(settle({ takerToken: alice.token }), [], "AccountMismatch");
    await refused(settle({ creatorToken: bob.token }), [], "AccountMismatch");
    await refused(settle({ takerToken: vault }), [], "AccountMismatch");
    await refused(settle({ creatorToken: w.treasury }), [], "AccountMismatch");
    await refused(settle({ treasury: vault }), [], "AccountMismatch");
    await refused(settle({ overrides: { vault: w.treasury } }), [], "AccountMismatch");
    // The position as the offer.
    await refused(settle({ offer: position }), [], "WrongAccountType");
    expectOk(await w.send([await settle()]));

    // One claim account for both sides when both must be credited.
    const jack = await looseUser();
    const kim = await looseUser();
    const { offer: o2 } = await resolvedOffer(jack, [[kim, 10n * UNIT]], "void");
    await closeTokenAccount(jack);
    await closeTokenAccount(kim);
    const p2 = w.positionOf(o2, kim);
    const pos = await w.position(p2);
    const o2a = await w.offer(o2);
    const [jackClaim] = w.client.pda.claim(jack.key.publicKey);
    const s2 = (x: Partial<Parameters<OffersClient["settlePosition"]>[0]> = {}) =>
      w.client.settlePosition({
        contract: o2a.contract,
        offer: o2,
        position: p2,
        creatorToken: o2a.creatorToken,
        takerToken: pos.takerToken,
        treasury: w.treasury,
        creator: jack.key.publicKey,
        taker: kim.key.publicKey,
        ...x,
      });
    await refused(s2({ overrides: { takerClaim: jackClaim } }), [], "AccountMismatch");
    // Another user's claim in place of the creator's (it is not the PDA of the creator's seeds).
    await refused(s2({ overrides: { creatorClaim: w.client.pda.claim(mallory.key.publicKey)[0] } }), []);
    // A keypair the caller signs with, as the taker's claim: the payout would sit where its owner
    // never looks (attacker fuzzer's finding F1c).
    const hideout = Keypair.generate();
    await refused(s2({ overrides: { takerClaim: hideout.publicKey } }), [hideout], "AccountMismatch");
    expect(await w.chain.account(hideout.publicKey)).toBeNull();
    // The claim's rent payer must sign when a claim is created.
    const stranger = await w.chain.fundedKeypair();
    await refused(unsigned(await s2({ payer: stranger.publicKey }), stranger.publicKey), [], "MissingSignature");
    expect(await w.claim(jack.key.publicKey)).toBeNull();
    expect(await w.claim(kim.key.publicKey)).toBeNull();
    expectOk(await w.send([await s2()]));
    expect((await w.claim(jack.key.publicKey))!.amount).toBe(8n * UNIT);
    expect((await w.claim(kim.key.publicKey))!.amount).toBe(10n * UNIT);
  });

  it("payout redirection: settle with a substituted creator/taker token or treasury is refused; settle twice is refused", async () => {
    const [carol, alice, mallory] = await users(3);
    const { contract, offer, position } = await matched(carol, alice, 10n * UNIT);
    await w.chain.advance(3_601n);
    expectOk(await w.resolve(contract, "sideB"));
    const o = await w.offer(offer);
    const p = await w.position(position);
    expectError(await w.send([await w.settleIx(position, { takerToken: mallory.token })]), "AccountMismatch");
    expectError(await w.send([await w.settleIx(position, { creatorToken: mallory.token })]), "AccountMismatch");
    expectError(await w.send([await w.settleIx(position, { treasury: mallory.token })]), "AccountMismatch");
    // swapped claims: the creator's claim slot given the taker's claim address
    await w.mint.closeAccount(alice.token, alice.key);
    const swapped = await w.settleIx(position, { creator: p.taker, taker: o.creator });
    expect(outcomeOf(await w.send([swapped]))).not.toBe("ok");
    expectOk(await w.settle(position));
    expectError(await w.settle(position), "PositionAlreadySettled");
  });
});
