/**
 * Arbitrary CPI targets (programs/SECURITY.md): the token and system programs are checked by
 * address before any call.
 */
import { beforeAll, describe, it } from "vitest";
import { Keypair, PublicKey } from "@solana/web3.js";
import { UNIT } from "../../../harness/offers-world";
import { expectOk } from "../../support/expect";
import { setUp, alice, bob, carol, closeTokenAccount, looseUser, offer, refused, rejected, resolvedOffer, takeIx, w } from "./scene";

beforeAll(setUp);

describe("offers: arbitrary CPI", () => {
  it("a fake token program", async () => {
    const o = await w.offer(offer);
    const ix = takeIx(o.revision, { overrides: { tokenProgram: new PublicKey("11111111111111111111111111111111") } });
    await rejected(ix, [bob.key], "WrongProgram");
  });

  it("arbitrary CPI targets are refused", async () => {
    const fakeProgram = Keypair.generate().publicKey;
    const contract = await w.contract({ cutoffIn: 100n });
    const fee = (await w.config()).feeBps;
    const nonce = w.nextNonce();
    const create = (x: { tokenProgram?: PublicKey; systemProgram?: PublicKey }) =>
      w.createOfferIx(alice, contract, { nonce, total: 5n * UNIT, target: 5n * UNIT, feeBps: fee, overrides: x });
    await refused(create({ tokenProgram: fakeProgram }), [alice.key], "WrongProgram");
    await refused(create({ systemProgram: fakeProgram }), [alice.key], "WrongProgram");
    const { offer } = await w.createOffer(alice, contract, { total: 5n * UNIT, target: 5n * UNIT });
    const take = (x: { tokenProgram?: PublicKey; systemProgram?: PublicKey }) =>
      w.takeIx(bob, offer, 2n * UNIT, { contract, expectedRevision: 1n, overrides: x });
    await refused(take({ tokenProgram: fakeProgram }), [bob.key], "WrongProgram");
    await refused(take({ systemProgram: fakeProgram }), [bob.key], "WrongProgram");
    expectOk(await w.take(bob, offer, 2n * UNIT));
    await refused(
      w.client.closeOffer({
        caller: alice.key.publicKey,
        contract,
        offer,
        creatorToken: alice.token,
        creator: alice.key.publicKey,
        expectedRevision: 2n,
        overrides: { tokenProgram: fakeProgram },
      }),
      [alice.key],
      "WrongProgram",
    );
    // The system program is called only to create a claim: refused when that is needed.
    const lou = await looseUser();
    const { offer: o2 } = await resolvedOffer(lou, [[carol, 10n * UNIT]], "void");
    await closeTokenAccount(lou);
    const o2a = await w.offer(o2);
    const p2 = w.positionOf(o2, carol);
    const settle = (x: { tokenProgram?: PublicKey; systemProgram?: PublicKey }) =>
      w.client.settlePosition({
        contract: o2a.contract,
        offer: o2,
        position: p2,
        creatorToken: o2a.creatorToken,
        takerToken: carol.token,
        treasury: w.treasury,
        creator: lou.key.publicKey,
        taker: carol.key.publicKey,
        overrides: x,
      });
    await refused(settle({ tokenProgram: fakeProgram }), [], "WrongProgram");
    await refused(settle({ systemProgram: fakeProgram }), [], "WrongProgram");
    expectOk(await w.send([await settle({})]));
    const claim = (await w.claim(lou.key.publicKey))!;
    await refused(
      w.client.withdrawClaim({ owner: lou.key.publicKey, destination: lou.token, rentPayer: claim.rentPayer, overrides: { tokenProgram: fakeProgram } }),
      [lou.key],
      "WrongProgram",
    );
    expectOk(await w.withdrawClaim(lou.key, lou.token));
  });
});
