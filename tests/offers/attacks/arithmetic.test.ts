/**
 * Arithmetic (programs/SECURITY.md; release builds have overflow checks off): amounts at the top of
 * u64 neither wrap nor overflow.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { LAUNCH_LIMITS } from "../../../idl/client/offers";
import { OffersWorld, UNIT } from "../../../harness/offers-world";
import { expectError, expectOk } from "../../support/expect";
import { setUp, U64_MAX, users, w } from "./scene";

beforeAll(setUp);

describe("offers: arithmetic", () => {
  it("amounts near 2^64 neither wrap nor overflow (release builds have overflow checks off)", async () => {
    const max = (1n << 64n) - 1n;
    const w2 = await OffersWorld.create({ limits: { ...LAUNCH_LIMITS, maximumWagerMicros: max } });
    const creator = await w2.user(1n << 62n);
    const t1 = await w2.user(1n << 63n);
    const t2 = await w2.user(10n);
    const start = await w2.balances();
    const contract = await w2.contract({ cutoffIn: 100n });
    // A stake the balance cannot cover, at the extreme.
    expectError((await w2.createOffer(creator, contract, { total: max, target: max })).r, "InsufficientBalance");
    const { r, offer } = await w2.createOffer(creator, contract, { total: 1n << 62n, target: 1n << 63n });
    expectOk(r);
    expectError(await w2.take(t1, offer, max), "AmountExceedsRemaining");
    expectOk(await w2.take(t1, offer, (1n << 63n) - 3n));
    expectOk(await w2.take(t2, offer, 3n)); // the exact remainder, below the minimum take
    const p1 = await w2.position(w2.positionOf(offer, t1));
    const p2 = await w2.position(w2.positionOf(offer, t2));
    expect(p1.creatorMatched).toBe((((1n << 63n) - 3n) * (1n << 62n)) / (1n << 63n));
    expect(p1.creatorMatched + p2.creatorMatched).toBe(1n << 62n);
    await w2.chain.advance(100n);
    expectOk(await w2.resolve(contract, "sideA"));
    expectOk(await w2.settle(w2.positionOf(offer, t1)));
    expectOk(await w2.settle(w2.positionOf(offer, t2)));
    const end = await w2.balances();
    const fee1 = (1000n * ((1n << 63n) - 3n)) / 10_000n;
    const fee2 = (1000n * 3n) / 10_000n;
    expect(end.treasury).toBe(fee1 + fee2);
    expect(end.users[0]).toBe((1n << 62n) + (1n << 63n) - fee1 - fee2);
    expect([end.vault, end.total]).toEqual([0n, start.total]);
  });

  it("self-take and u64::MAX amounts: refused, no token moves", async () => {
    const [carol, alice] = await users(2);
    const contract = await w.contract();
    expectError((await w.createOffer(carol, contract, { total: U64_MAX, target: U64_MAX })).r, "StakeAboveMaximum");
    const { offer } = await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT });
    const vault = w.client.pda.vault()[0];
    const before = await w.mint.balance(vault);
    expectError(await w.take(carol, offer, UNIT), "SelfTake");
    expectError(await w.take(alice, offer, U64_MAX), "AmountExceedsRemaining");
    expect(await w.mint.balance(vault)).toBe(before);
  });
});
