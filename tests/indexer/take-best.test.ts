/**
 * A take_best's fills and positions are indexed as take_offer's are: one fill row per offer
 * taken (its OfferTaken event), positions created and increased, every stored and derived row
 * equal to the chain's accounts. SQLite and PostgreSQL.
 */
import { afterAll, describe, expect, it } from "vitest";
import { TestChain } from "../../harness/chain";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { expectOk } from "../support/expect";
import { attachIndexer } from "./attach";
import { compareWithChain } from "./compare";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

describe.each(ENGINES)("indexer: take_best on %s", (engine) => {
  const targets: StoreTarget[] = [];
  afterAll(async () => {
    for (const t of targets) await t.drop();
  });

  it("stores one fill per offer taken and the positions, as the chain has them", async () => {
    const target = freshStore(engine, "tb");
    targets.push(target);
    const chain = await TestChain.start();
    const ix = await attachIndexer(chain, target.url);
    const w = await OffersWorld.create({ chain });
    const [alice, bob, carol, taker] = [await w.user(), await w.user(), await w.user(), await w.user()];
    const contract = await w.contract({ cutoffIn: 10_000n });
    const offers = [];
    for (const [creator, total] of [
      [alice, 30n],
      [bob, 10n],
      [carol, 5n],
    ] as const) {
      const { r, offer } = await w.createOffer(creator, contract, { total: total * UNIT, target: 10n * UNIT });
      expectOk(r);
      offers.push(offer);
    }
    // A position that exists before the sweep (increased by it) and two it creates; the last
    // offer's odds (1.5:1) are below the 2:1 limit and it is passed over.
    expectOk(await w.take(taker, offers[1], 2n * UNIT));
    const sweep = await w.takeBest(taker, contract, offers, 15n * UNIT, { worstOdds: { numerator: 2n, denominator: 1n } });
    expectOk(sweep);
    await ix.source.drain();

    const fills = await ix.store.db.selectFrom("fills").selectAll().where("signature", "=", sweep.signature!).orderBy("offer").execute();
    expect(fills.map((f) => [f.offer, f.take_micros]).sort()).toEqual(
      [
        [offers[0].toBase58(), String(10n * UNIT)],
        [offers[1].toBase58(), String(5n * UNIT)],
      ].sort(),
    );
    const positions = [offers[0], offers[1]].map((o) => w.positionOf(o, taker));
    await compareWithChain(w, ix.store, { contracts: [contract], offers, positions, txs: 0 });
    const rows = await ix.store.db.selectFrom("positions").selectAll().where("taker", "=", taker.key.publicKey.toBase58()).execute();
    expect(rows.map((p) => p.taker_micros).sort()).toEqual([String(10n * UNIT), String(7n * UNIT)].sort());
    ix.detach();
    await ix.store.close();
  });
});
