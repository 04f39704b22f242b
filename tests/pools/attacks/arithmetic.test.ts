/**
 * Arithmetic (programs/SECURITY.md; release builds have overflow checks off): amounts at the top of
 * u64 neither wrap nor overflow.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PoolsWorld } from "../../../harness/pools-world";
import { decodePool } from "../../../idl/client/pools";
import { expectOk } from "../../support/expect";
import { setUp, expectError } from "./scene";

beforeAll(setUp);

describe("pools: arithmetic", () => {
  it("arithmetic: stakes summing to u64::MAX settle exactly (128-bit products), and a pot cannot pay out more than it holds", async () => {
    const x = await PoolsWorld.create({ feeBps: 500 });
    const creator = await x.user(0n);
    const half = 2n ** 63n;
    const [a, b] = [await x.user(half), await x.user(half - 1n)];
    const { pool } = await x.createPool(creator, { closesIn: 100n });
    expectOk(await x.pick(a, pool, 0, half));
    expectOk(await x.pick(b, pool, 1, half - 1n));
    const total = 2n ** 64n - 1n;
    expect((await x.pool(pool)).totalOi).toBe(total);
    await x.chain.advance(100n);
    expectOk(await x.propose(creator.key, pool, 0));
    await x.chain.advance(86_400n);
    expectOk(await x.resolve(creator.key, pool));
    expectOk(await x.settle(pool, a.key.publicKey));
    expectOk(await x.settle(pool, b.key.publicKey));
    const gross = (half * total) / half;
    const fee = ((gross - half) * 500n) / 10_000n;
    const end = await x.balances();
    expect([end.users[0], end.users[1], end.users[2], end.vault, end.treasury]).toEqual([0n, gross - fee, 0n, 0n, fee]);
    expect(decodePool((await x.chain.account(pool))!.data)).toMatchObject({ state: "DISTRIBUTED", paidOut: gross - fee, feesPaid: fee });
    expect(end.total).toBe(total);
    expectError(await x.settle(pool, a.key.publicKey), "AlreadyDistributed");
  });
});
