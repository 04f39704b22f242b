import { describe, expect, it, beforeAll } from "vitest";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import { parseOffersEvents } from "../../idl/client/offers";

describe("the spec's worked example: stake 8 vs 10, take 5 -> 4 matched", () => {
  let w: OffersWorld;
  let creator: User, taker: User;
  beforeAll(async () => {
    w = await OffersWorld.create();
    creator = await w.user(100n * UNIT);
    taker = await w.user(100n * UNIT);
  });

  it("matches 4 units of creator stake to a take of 5 and pays the taker 5 + 4 - 0.4 on a taker win", async () => {
    const contract = await w.contract();
    const before = await w.balances();
    const { r, offer } = await w.createOffer(creator, contract, { side: "sideA", total: 8n * UNIT, target: 10n * UNIT });
    expect(r.error).toBeNull();
    expect(await w.mint.balance(creator.token)).toBe(92n * UNIT);

    const t = await w.take(taker, offer, 5n * UNIT);
    expect(t.error).toBeNull();
    const o = await w.offer(offer);
    expect(o.creatorAllocated).toBe(4n * UNIT);
    expect(o.takerFilled).toBe(5n * UNIT);
    expect(o.revision).toBe(2n);
    expect(o.status).toBe("Open");
    const [ev] = parseOffersEvents(t.logs);
    expect(ev.name).toBe("offerTaken");
    expect(ev.data.creatorMatched).toBe(4n * UNIT);
    expect(ev.data.revision).toBe(2n);

    await w.chain.advance(3_601n);
    expect((await w.close(taker.key, offer)).error).toBeNull(); // anyone after the cutoff
    expect(await w.mint.balance(creator.token)).toBe(96n * UNIT); // 4 unmatched units back

    expect((await w.resolve(contract, "sideB")).error).toBeNull();
    const s = await w.settle(w.positionOf(offer, taker));
    expect(s.error).toBeNull();
    expect(await w.mint.balance(taker.token)).toBe(95n * UNIT + 9n * UNIT - 400_000n);
    expect(await w.mint.balance(w.treasury)).toBe(400_000n);
    expect((await w.offer(offer)).status).toBe("Settled");
    const p = await w.position(w.positionOf(offer, taker));
    expect(p.status).toBe("SettledTakerWin");
    expect((await w.balances()).total).toBe(before.total);
  });
});
