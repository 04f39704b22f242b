/**
 * Pools finish by themselves: the settlement worker, with nothing but the chain's clock moving
 * (and participants' votes), resolves a proposal once its dispute window is over, escalates a
 * disputed proposal and a pool whose creator never proposed, cancels an escalation the authority
 * left for 7 days, retires a closed pool without picks, and pays out every participant until
 * DISTRIBUTED or REFUNDED, to the micro-unit, once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { LocalStack } from "../../stack/local-stack";
import { PoolOps } from "../../service/chain/pools-ops";
import { SettlementWorker } from "../../service/worker/worker";
import { UNIT, balance, makeUser, stack, type TestUser } from "../support/stack";
import { ENGINES, freshStore, type StoreTarget } from "../indexer/stores";

const HOUR = 3_600n;
const DAY = 86_400n;

describe.each(ENGINES)("settlement worker: pools (%s store)", (engine) => {
  let s: LocalStack;
  let ops: PoolOps;
  let target: StoreTarget;
  beforeAll(async () => {
    target = freshStore(engine, "wpools");
    s = await stack({ storeUrl: target.url });
    ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
  });
  afterAll(async () => {
    await s?.stop();
    await target?.drop();
  });

  const state = async (pool: PublicKey) => (await ops.read(pool)).state;
  const stored = async (pool: PublicKey) =>
    (await s.db.selectFrom("pools").select(["state"]).where("address", "=", pool.toBase58()).executeTakeFirstOrThrow()).state;

  it("drives every pool to DISTRIBUTED or REFUNDED with only time passing", async () => {
    const START = 1_000n * UNIT;
    const [creator, alice, bob, carol] = (await Promise.all([0, 1, 2, 3].map(() => makeUser(s, START)))) as TestUser[];
    const now = await s.chain.gateway.now();
    const q = (n: string) => ({ question: `Worker pool ${n}?`, labels: ["Yes", "No"], closesAt: now + 60n });
    const proposed = await ops.create(creator.name, q("proposed"));
    const disputed = await ops.create(creator.name, q("disputed"));
    const silent = await ops.create(creator.name, q("silent"));
    const empty = await ops.create(creator.name, q("empty"));
    const withdrawn = await ops.create(creator.name, q("withdrawn"));
    const stakes: [PublicKey, TestUser, number, bigint][] = [
      [proposed, alice, 0, 40n * UNIT + 1n],
      [proposed, bob, 1, 10n * UNIT],
      [proposed, carol, 0, 7n * UNIT + 3n],
      [disputed, alice, 0, 5n * UNIT],
      [disputed, bob, 1, 6n * UNIT],
      [silent, carol, 1, 9n * UNIT],
      [silent, bob, 0, 2n * UNIT],
      [withdrawn, alice, 1, 3n * UNIT],
    ];
    for (const [pool, u, outcome, amount] of stakes) await ops.pick(u.name, pool, outcome, amount);
    // The creator withdraws one pool while picks are open: CANCELED, its stakes still locked.
    await ops.cancel(creator.name, withdrawn);
    expect(await state(withdrawn)).toBe("CANCELED");

    await s.chain.gateway.advance(61n);
    await ops.propose(creator.name, proposed, 0);
    await ops.propose(creator.name, disputed, 0);
    await ops.vote(bob.name, disputed, 1); // a dispute

    // Picks closed: the empty pool is retired, the withdrawn one refunded; the rest must wait.
    const r1 = await s.worker.drain();
    expect(r1).toMatchObject({ poolsCanceled: 1, participantsRefunded: 1, poolsResolved: 0, participantsSettled: 0, failed: 0 });
    expect(await state(empty)).toBe("REFUNDED");
    expect(await state(withdrawn)).toBe("REFUNDED");
    expect(await state(proposed)).toBe("RESOLVING");

    // The dispute window ends: the undisputed proposal resolves and pays out; the disputed one escalates.
    await s.chain.gateway.advance(DAY);
    const r2 = await s.worker.drain();
    expect(r2).toMatchObject({ poolsResolved: 2, participantsSettled: 3, failed: 0 });
    expect(await state(proposed)).toBe("DISTRIBUTED");
    expect((await ops.read(disputed)).escalated).toBe(true);
    expect(await state(silent)).toBe("OPEN");

    // 72 h after closing, the creator can no longer propose: the silent pool escalates.
    await s.chain.gateway.advance(2n * DAY);
    expect((await s.worker.drain()).poolsResolved).toBe(1);
    expect((await ops.read(silent)).escalated).toBe(true);

    // The authority decides nothing for 7 days: both escalations are canceled and refunded.
    await s.chain.gateway.advance(7n * DAY + HOUR);
    const r4 = await s.worker.drain();
    expect(r4).toMatchObject({ poolsCanceled: 2, participantsRefunded: 4, failed: 0 });
    for (const p of [disputed, silent]) expect(await state(p)).toBe("REFUNDED");

    // Balances: winners of `proposed` share its pot minus the fee on winnings; every other stake came back.
    const p = await ops.read(proposed);
    const pot = 57n * UNIT + 4n;
    const winning = 47n * UNIT + 4n;
    const paid = (stake: bigint) => {
      const gross = (stake * pot) / winning;
      return gross - ((gross - stake) * BigInt(p.feeBps)) / 10_000n;
    };
    expect(p.paidOut + p.feesPaid).toBe(pot);
    expect(await balance(s, alice.user.tokenAccount)).toBe(START - (40n * UNIT + 1n) + paid(40n * UNIT + 1n));
    expect(await balance(s, carol.user.tokenAccount)).toBe(START - (7n * UNIT + 3n) + paid(7n * UNIT + 3n));
    expect(await balance(s, bob.user.tokenAccount)).toBe(START - 10n * UNIT);
    expect(await balance(s, s.chain.pools.pda.vault()[0])).toBe(0n);

    // The store followed; a fresh worker ("restart") finds nothing to do.
    for (const [pool, want] of [
      [proposed, "DISTRIBUTED"],
      [disputed, "REFUNDED"],
      [silent, "REFUNDED"],
      [empty, "REFUNDED"],
      [withdrawn, "REFUNDED"],
    ] as const)
      expect(await stored(pool)).toBe(want);
    const again = await new SettlementWorker({ ...s.worker.deps }).drain();
    expect(again.poolsResolved + again.poolsCanceled + again.participantsSettled + again.participantsRefunded).toBe(0);
  });
});
