/**
 * Missing signers and authorities (programs/SECURITY.md, "missing signer"): every actor signs and is
 * the one the accounts record; only the Config's authority administers.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { LAUNCH_LIMITS } from "../../../idl/client/offers";
import { UNIT } from "../../../harness/offers-world";
import { expectError, expectOk } from "../../support/expect";
import { unsigned } from "../../support/bent-ix";
import { setUp, alice, bob, closeIx, contract, createIx, mallory, matched, offer, rejected, takeIx, users, w } from "./scene";

beforeAll(setUp);

describe("offers: signers and authorities", () => {
  it("a take signed by someone else than the owner of the paying token account moves nothing", async () => {
    // Mallory names Bob's token account as the source and signs as taker herself.
    const ix = takeIx((await w.offer(offer)).revision, { taker: { key: mallory.key, token: bob.token } });
    await rejected(ix, [mallory.key], "NotTokenOwner");
  });

  it("a take whose taker did not sign is refused by the program", async () => {
    const ix = await takeIx((await w.offer(offer)).revision);
    await rejected(unsigned(ix, bob.key.publicKey), [], "MissingSignature");
  });

  it("a create whose creator did not sign is refused", async () => {
    const ix = await createIx(999_001n);
    await rejected(unsigned(ix, alice.key.publicKey), [], "MissingSignature");
  });

  it("a stranger cannot close an offer before the cutoff, nor settle or resolve", async () => {
    const o = await w.offer(offer);
    await rejected(closeIx(o, { caller: mallory.key.publicKey }), [mallory.key], "CloseNotAllowed");
    await rejected(w.client.resolveContract({ authority: mallory.key.publicKey, contract, result: "sideB" }), [mallory.key], "Unauthorized");
    const upd = w.client.updateConfig({ authority: mallory.key.publicKey, feeBps: 0, offersEnabled: true, limits: LAUNCH_LIMITS });
    await rejected(upd, [mallory.key], "Unauthorized");
  });

  it("close-offer theft: a stranger cannot close before cutoff; after cutoff the refund goes to the creator, not the caller", async () => {
    const [carol, alice, mallory] = await users(3);
    const { offer } = await matched(carol, alice, 5n * UNIT, 100n);
    expectError(await w.close(mallory.key, offer), "CloseNotAllowed");
    await w.chain.advance(101n);
    const [c0, m0] = [await w.mint.balance(carol.token), await w.mint.balance(mallory.token)];
    expectOk(await w.close(mallory.key, offer));
    expect((await w.mint.balance(carol.token)) - c0).toBe(4n * UNIT);
    expect(await w.mint.balance(mallory.token)).toBe(m0);
    expectError(await w.close(mallory.key, offer), "OfferNotOpen");
  });
});
