/**
 * The pools rules (idl/client/pools-rules.ts) are the ones the read API shows: a pool's shares
 * and state in the indexer's aggregate equal `shareBps` and `poolState` applied to the Pool
 * account read from the chain, on a pot whose floors leave a bps over (15:10:5 floors to 9999).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PoolOps } from "../../service/chain/pools-ops";
import { ReadService } from "../../service/read/read-service";
import { startLocalStack, type LocalStack } from "../../stack/local-stack";
import { upsertPoolCatalog } from "../../indexer";
import { poolState, shareBps } from "../../idl/client/pools-rules";
import { makeUser, UNIT } from "../support/stack";

let s: LocalStack;
afterAll(async () => s?.stop());
beforeAll(async () => {
  s = await startLocalStack();
});

describe("pool shares and state: the chain through the rules = the indexer's aggregate", () => {
  it("largest remainder and LOCKED, the same numbers on both sides", async () => {
    const ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
    const [a, b] = [await makeUser(s), await makeUser(s)];
    const now = await s.chain.gateway.now();
    const pool = await ops.create(a.name, { question: "Which?", labels: ["X", "Y", "Z"], closesAt: now + 100n });
    await ops.pick(a.name, pool, 0, 15n * UNIT);
    await ops.pick(b.name, pool, 1, 10n * UNIT);
    await ops.pick(b.name, pool, 2, 5n * UNIT);
    await upsertPoolCatalog(s.db, { pool: pool.toBase58(), slug: "which" });
    const read = new ReadService({ db: s.db, now: async () => Number(await s.chain.gateway.now()), embedTtlMs: 0, clockCacheMs: 0 });
    const compare = async () => {
      const chain = await ops.read(pool);
      const agg = (await read.poolAggregate("which"))!;
      expect(agg.outcomes.map((o) => o.shareBps)).toEqual(shareBps(chain.outcomes.map((o) => o.totalOi)));
      expect(agg.state).toBe(poolState(chain.state, chain.closesAt, await s.chain.gateway.now()));
      return agg;
    };
    const open = await compare();
    expect([open.state, open.outcomes.map((o) => o.shareBps)]).toEqual(["OPEN", [5000, 3333, 1667]]);
    await s.chain.gateway.advance(100n);
    expect((await compare()).state).toBe("LOCKED");
  });
});
