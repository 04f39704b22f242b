/**
 * The real offers program in bankrun through many random lifecycles, indexed live through the
 * bankrun source; every stored and derived row is compared with the on-chain account read
 * directly. Runs on SQLite and on PostgreSQL.
 */
import { afterAll, describe, expect, it } from "vitest";
import { TestChain } from "../../harness/chain";
import { OffersWorld } from "../../harness/offers-world";
import { attachIndexer } from "./attach";
import { compareWithChain } from "./compare";
import { runScenario } from "../../harness/indexer-scenario";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

const ACTIONS = Number(process.env.INDEXER_ACTIONS ?? 400);

describe.each(ENGINES)("indexer lifecycles on %s", (engine) => {
  const targets: StoreTarget[] = [];
  afterAll(async () => {
    for (const t of targets) await t.drop();
  });

  it(`indexes ${ACTIONS} random actions and matches the chain row by row`, async () => {
    const target = freshStore(engine, "life");
    targets.push(target);
    const chain = await TestChain.start();
    const ix = await attachIndexer(chain, target.url);
    const w = await OffersWorld.create({ chain });
    const r = await runScenario(w, { seed: 7 + (engine === "sqlite" ? 0 : 1), actions: ACTIONS });
    await ix.source.drain();
    const counts = await compareWithChain(w, ix.store, r);
    expect(counts.offers).toBeGreaterThan(20);
    expect(counts.positions).toBeGreaterThan(20);
    const fills = await ix.store.db
      .selectFrom("fills")
      .select((e) => e.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    const settlements = await ix.store.db
      .selectFrom("settlements")
      .select((e) => e.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    expect(Number(fills.n)).toBeGreaterThan(20);
    expect(Number(settlements.n)).toBeGreaterThan(5);
    console.log(engine, counts, { fills: Number(fills.n), settlements: Number(settlements.n), stats: ix.writer.stats });
    ix.detach();
    await ix.store.close();
  });
});
