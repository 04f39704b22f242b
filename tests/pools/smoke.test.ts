import { describe, expect, it } from "vitest";
import { PoolsWorld, UNIT } from "../../harness/pools-world";
import { expectOk } from "../support/expect";

describe("pools end to end", () => {
  it("create, pick, propose, dispute window, resolve, settle: 10 vs 30, the 30 side wins and pays 5% on its 10 of winnings", async () => {
    const w = await PoolsWorld.create();
    const c = await w.user();
    const a = await w.user();
    const b = await w.user();
    const { r, pool } = await w.createPool(c, { criteria: "Official weather service", coverUrl: "https://x.example/c.png" });
    expectOk(r);
    expectOk(await w.pick(a, pool, 0, 10n * UNIT));
    expectOk(await w.pick(b, pool, 1, 30n * UNIT));
    await w.chain.advance(3_601n);
    expectOk(await w.propose(c.key, pool, 1));
    expectOk(await w.vote(b, pool, 1));
    await w.chain.advance(86_400n);
    expectOk(await w.resolve(c.key, pool));
    expectOk(await w.settle(pool, a.key.publicKey));
    expectOk(await w.settle(pool, b.key.publicKey));
    const p = await w.pool(pool);
    expect(p.state).toBe("DISTRIBUTED");
    expect(await w.mint.balance(b.token)).toBe(1_000n * UNIT - 30n * UNIT + 39_500_000n);
    expect(await w.mint.balance(a.token)).toBe(990n * UNIT);
    expect(await w.mint.balance(w.treasury)).toBe(500_000n);
  });
  it("the harness runs a repeated identical call again instead of reporting it as a duplicate", async () => {
    // Same signer, same instruction, same blockhash: same signature, and the runtime would answer
    // "already processed". Engines move their blockhash on their own schedule (bankrun about every
    // 400 ms of wall time), so pin it here to make the collision certain; TestChain.send must then
    // ask the engine for a new one.
    const w = await PoolsWorld.create();
    const c = await w.user();
    const a = await w.user();
    const { pool } = await w.createPool(c, {});
    const engine = w.chain.engine;
    const [realHash, realRenew] = [engine.blockhash.bind(engine), engine.renewBlockhash.bind(engine)];
    let pinned = await realHash();
    let renewals = 0;
    engine.blockhash = async () => pinned;
    engine.renewBlockhash = async () => {
      renewals++;
      await realRenew();
      pinned = await realHash();
    };
    for (let i = 0; i < 3; i++) expectOk(await w.pick(a, pool, 0, UNIT));
    expect(renewals).toBe(2);
    const p = await w.pool(pool);
    expect(p.outcomes[0].totalOi).toBe(3n * UNIT);
    expect(p.outcomes[0].wagerCount).toBe(3);
    expect(p.participantCount).toBe(1);
  });
});
