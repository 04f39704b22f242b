/**
 * The pools program through the indexer: after every kind of pool transition, the stored pool
 * row and its outcome rows equal the Pool account read directly from the chain.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PublicKey } from "@solana/web3.js";
import { PoolOps } from "../../service/chain/pools-ops";
import { startLocalStack, type LocalStack } from "../../stack/local-stack";
import { makeUser, UNIT, type TestUser } from "../support/stack";
import { comparePoolWithChain } from "./compare";
import { poolsAccountRow } from "../../indexer/decode";
import { POOLS_IDL, decodeParticipant } from "../../idl/client/pools";

let s: LocalStack;
let ops: PoolOps;
let u: TestUser[];

beforeAll(async () => {
  s = await startLocalStack();
  u = [await makeUser(s), await makeUser(s), await makeUser(s)];
  ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
});
afterAll(async () => s?.stop());

async function expectRowsMatchChain(pool: PublicKey) {
  await comparePoolWithChain(s.db, pool, await ops.read(pool));
}

describe("pools rows", () => {
  it("follow the chain through picks, proposal, vote, resolution, distribution, dispute, escalation, cancel and refund", async () => {
    const now = await s.chain.gateway.now();
    const p1 = await ops.create(u[0].name, { question: "Decided?", closesAt: now + 100n });
    const p2 = await ops.create(u[1].name, { question: "Canceled?", labels: ["A", "B", "C"], closesAt: now + 100n });
    const p3 = await ops.create(u[2].name, { question: "Disputed?", closesAt: now + 100n });
    await expectRowsMatchChain(p1);
    await ops.pick(u[0].name, p1, 0, 30n * UNIT);
    await ops.pick(u[1].name, p1, 1, 10n * UNIT);
    await ops.pick(u[1].name, p1, 1, 5n * UNIT);
    await ops.pick(u[2].name, p2, 2, 7n * UNIT);
    await ops.pick(u[0].name, p3, 0, 4n * UNIT);
    await ops.pick(u[1].name, p3, 1, 6n * UNIT);
    await expectRowsMatchChain(p1);
    await expectRowsMatchChain(p2);
    await ops.cancel(u[1].name, p2); // the creator, while picks are open
    await s.chain.gateway.advance(101n);
    await ops.propose(u[0].name, p1, 0);
    await expectRowsMatchChain(p1);
    expect((await ops.read(p1)).state).toBe("RESOLVING");
    await ops.vote(u[0].name, p1, 0);
    await ops.propose(u[2].name, p3, 1);
    await ops.vote(u[0].name, p3, 0); // a dispute
    await s.chain.gateway.advance(86_400n);
    await ops.resolve(p1);
    await expectRowsMatchChain(p1);
    await ops.payOut(p1, [u[0].name, u[1].name], "settle");
    await expectRowsMatchChain(p1);
    expect((await ops.read(p1)).state).toBe("DISTRIBUTED");
    await ops.payOut(p2, [u[2].name], "refund");
    await expectRowsMatchChain(p2);
    expect((await ops.read(p2)).state).toBe("REFUNDED");
    await ops.resolve(p3); // disputed: escalated, still RESOLVING
    expect(await ops.read(p3)).toMatchObject({ state: "RESOLVING", escalated: true, winningOutcome: null });
    await expectRowsMatchChain(p3);
    await ops.authorityResolve(p3, 0);
    await expectRowsMatchChain(p3);
    await ops.payOut(p3, [u[0].name, u[1].name], "settle");
    await expectRowsMatchChain(p3);
    expect((await ops.read(p3)).state).toBe("DISTRIBUTED");
  });

  it("store participants for the settlement worker (settled flag and payout account as on chain), nothing of claims or the config", async () => {
    const rows = await s.db.selectFrom("pool_participants").selectAll().execute();
    expect(rows.length).toBe(5); // p1: two users, p2: one, p3: two
    for (const r of rows) {
      const a = await s.chain.gateway.getAccount(new PublicKey(r.address));
      const part = decodeParticipant(a!.data);
      expect(r).toMatchObject({ pool: part.pool.toBase58(), user: part.user.toBase58(), user_token: part.userToken.toBase58(), settled: part.settled ? 1 : 0 });
      expect(r.total_micros).toBe(part.total.toString());
    }
    for (const name of ["claim", "config"]) {
      const disc = POOLS_IDL.accounts.find((a) => a.name === name)!.discriminator;
      expect(poolsAccountRow(Buffer.concat([Buffer.from(disc), Buffer.alloc(400)])), name).toBeNull();
    }
    expect((await s.db.selectFrom("pools").select("address").execute()).length).toBeGreaterThan(0);
  });
});
