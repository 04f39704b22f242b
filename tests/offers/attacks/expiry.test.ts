/**
 * Offer expiry (programs/SECURITY.md, "offer expiry"): a creator's `expires_at` is after now and
 * no later than the contract's cutoff; from that second (itself included, as for the cutoff)
 * take_offer refuses with OfferExpired, take_best passes the offer over, and anyone may close it,
 * the creator getting back exactly the unmatched stake. Runs on both engines.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { expectError, expectOk } from "../../support/expect";
import { unmatchedStake } from "../../../idl/client/offers-rules";
import { UNIT } from "../../../harness/offers-world";
import { setUp, I64_MAX, users, w } from "./scene";

// LiteSVM's clock starts at 0, where `expires_at = now` would read as "no expiry": start later.
beforeAll(async () => {
  await setUp();
  await w.chain.setTime(1_800_000_000n);
});

/** A contract with its cutoff 1 000 s ahead and the chain's time now. */
async function fresh() {
  const contract = await w.contract({ cutoffIn: 1_000n });
  const now = await w.chain.now();
  return { contract, now, cutoff: (await w.contractAccount(contract)).cutoffAt };
}

describe("offers: expiry", () => {
  it("create_offer refuses an expiry at or before now or after the cutoff (InvalidExpiry), and stores one up to the cutoff", async () => {
    const [creator] = await users(1);
    const { contract, now, cutoff } = await fresh();
    const terms = { total: 5n * UNIT, target: 5n * UNIT };
    for (const expiresAt of [now, now - 1n, -1n, cutoff + 1n, I64_MAX]) {
      const before = await w.balances();
      expectError((await w.createOffer(creator, contract, { ...terms, expiresAt })).r, "InvalidExpiry");
      expect(await w.balances()).toEqual(before);
    }
    const atCutoff = await w.createOffer(creator, contract, { ...terms, expiresAt: cutoff });
    expectOk(atCutoff.r);
    expect((await w.offer(atCutoff.offer)).expiresAt).toBe(cutoff);
    const soon = await w.createOffer(creator, contract, { ...terms, expiresAt: now + 1n });
    expectOk(soon.r);
    expect((await w.offer(soon.offer)).expiresAt).toBe(now + 1n);
    const none = await w.createOffer(creator, contract, terms);
    expectOk(none.r);
    expect((await w.offer(none.offer)).expiresAt).toBe(0n);
  });

  it("take_offer one second before expiresAt succeeds; at expiresAt it is refused (OfferExpired), nothing moved", async () => {
    const [creator, taker] = await users(2);
    const { contract, now } = await fresh();
    const expiresAt = now + 100n;
    const { offer } = await w.createOffer(creator, contract, { total: 50n * UNIT, target: 100n * UNIT, expiresAt });
    await w.chain.setTime(expiresAt - 1n);
    expectOk(await w.take(taker, offer, 10n * UNIT));
    await w.chain.setTime(expiresAt);
    const [before, offerBefore] = [await w.balances(), await w.offer(offer)];
    expectError(await w.take(taker, offer, 10n * UNIT), "OfferExpired");
    expect(await w.balances()).toEqual(before);
    expect(await w.offer(offer)).toEqual(offerBefore);
    // An offer without expiry on the same contract still takes takes until the cutoff.
    const { offer: open } = await w.createOffer(creator, contract, { total: 5n * UNIT, target: 5n * UNIT });
    expectOk(await w.take(taker, open, 5n * UNIT));
  });

  it("before expiresAt a stranger cannot close (CloseNotAllowed); from it a stranger closes and the creator gets exactly the unmatched stake", async () => {
    const [creator, taker, stranger] = await users(3);
    const { contract, now } = await fresh();
    const expiresAt = now + 100n;
    const { offer } = await w.createOffer(creator, contract, { total: 50n * UNIT, target: 100n * UNIT, expiresAt });
    expectOk(await w.take(taker, offer, 30n * UNIT));
    await w.chain.setTime(expiresAt - 1n);
    expectError(await w.close(stranger.key, offer), "CloseNotAllowed");
    await w.chain.setTime(expiresAt);
    const o = await w.offer(offer);
    const refund = unmatchedStake(o);
    expect(refund).toBe(50n * UNIT - (30n * UNIT * 50n) / 100n);
    const [creatorBefore, strangerBefore, vaultBefore] = [await w.balanceOf(creator.token), await w.balanceOf(stranger.token), (await w.balances()).vault];
    expectOk(await w.close(stranger.key, offer));
    expect(await w.balanceOf(creator.token)).toBe(creatorBefore + refund);
    expect(await w.balanceOf(stranger.token)).toBe(strangerBefore);
    expect((await w.balances()).vault).toBe(vaultBefore - refund);
    const closed = await w.offer(offer);
    expect(closed).toMatchObject({ status: "Closed", creatorRefunded: refund, revision: o.revision + 1n });
    // The taker's matched position stays: it settles with the contract.
    expect(closed.creatorAllocated).toBe(o.creatorAllocated);
    expectError(await w.close(stranger.key, offer), "OfferNotOpen");
  });

  it("take_best passes an expired offer over (not a failure) and takes the next; only expired offers: NothingTaken", async () => {
    const [creator, taker] = await users(2);
    const { contract, now } = await fresh();
    const { offer: expiring } = await w.createOffer(creator, contract, { total: 10n * UNIT, target: 10n * UNIT, expiresAt: now + 50n });
    const { offer: lasting } = await w.createOffer(creator, contract, { total: 10n * UNIT, target: 10n * UNIT });
    await w.chain.setTime(now + 50n);
    expectError(await w.takeBest(taker, contract, [expiring], 5n * UNIT), "NothingTaken");
    const [expiringBefore, takerBefore] = [await w.offer(expiring), await w.balanceOf(taker.token)];
    const r = await w.takeBest(taker, contract, [expiring, lasting], 5n * UNIT);
    expectOk(r);
    expect(await w.offer(expiring)).toEqual(expiringBefore);
    expect((await w.offer(lasting)).takerFilled).toBe(5n * UNIT);
    expect(await w.balanceOf(taker.token)).toBe(takerBefore - 5n * UNIT);
    expect(r.logs.some((l) => l.includes("take_best skips"))).toBe(true);
  });
});
