/**
 * One offer read with the caches off (ReadService `anonymousTtlMs: 0`: a signed-in caller's
 * position comes in the offer's own statement, service/read/contracts.ts offerWithPosition)
 * answers exactly what the cached path answers (the shared offer plus the caller's positions read
 * on their own), on both stores, for every offer of random creates, takes, closes and settlements
 * on the real offers program, and every kind of caller: anonymous, each taker (holding a
 * position on the offer or not), each creator (whose view lists every position on the offer).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestChain } from "../../harness/chain";
import { OffersWorld } from "../../harness/offers-world";
import { runScenario } from "../../harness/indexer-scenario";
import { ReadService } from "../../service/read/read-service";
import { catalogue } from "./catalogue";
import { attachIndexer, type Attached } from "./attach";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

describe.each(ENGINES)("one offer read with the caches off, on %s", (engine) => {
  let target: StoreTarget;
  let chain: TestChain;
  let ix: Attached;
  let w: OffersWorld;
  let cached: ReadService;
  let uncached: ReadService;

  beforeAll(async () => {
    target = freshStore(engine, "one");
    chain = await TestChain.start();
    ix = await attachIndexer(chain, target.url);
    w = await OffersWorld.create({ chain });
    const now = async () => Number(await chain.now());
    cached = new ReadService({ db: ix.store.db, now, clockCacheMs: 0 });
    uncached = new ReadService({ db: ix.store.db, now, clockCacheMs: 0, anonymousTtlMs: 0 });
  });
  afterAll(async () => {
    cached?.close();
    uncached?.close();
    ix?.detach();
    await ix?.store.close();
    await target?.drop();
  });

  it("equals the cached read for every offer and every kind of caller", async () => {
    const r = await runScenario(w, { seed: 2111 + (engine === "sqlite" ? 0 : 1), actions: 80 });
    await ix.source.drain();
    await catalogue(ix.store.db, r.contracts, "One offer");
    const offers = await ix.store.db.selectFrom("offers").select(["address", "creator"]).execute();
    const positions = await ix.store.db.selectFrom("positions").select(["offer", "taker"]).execute();
    const callers = [null, ...new Set([...offers.map((o) => o.creator), ...positions.map((p) => p.taker)])];
    expect(positions.length).toBeGreaterThan(3);
    const seen = { taker: 0, creator: 0, none: 0, anonymous: 0 };
    for (const { address } of offers)
      for (const caller of callers) {
        const mine = await uncached.offer(address, caller);
        expect(mine, `${address} as ${caller}`).toEqual(await cached.offer(address, caller));
        if (caller === null) seen.anonymous++;
        else seen[mine!.viewer.role as keyof typeof seen]++;
        // A taker's position is the one the chain holds for them on this offer.
        if (mine!.viewer.role === "taker") expect(mine!.viewer.position).not.toBeNull();
      }
    // Every branch of the read was taken.
    expect(seen.taker).toBeGreaterThan(0);
    expect(seen.creator).toBeGreaterThan(0);
    expect(seen.none).toBeGreaterThan(0);
    // An address nobody created is null on both paths, for any caller.
    for (const caller of callers.slice(0, 3)) expect(await uncached.offer("11111111111111111111111111111111", caller)).toBeNull();
  });
});
