/**
 * The portfolio's worked example of docs/api-guide.md ("Portfolio"), step by step through the real
 * HTTP API on the local stack: each figure of the guide is asserted here, over REST and GraphQL.
 */
import { describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { UNIT, contract, createBody, key, type TestUser, writeSuite } from "../support/stack";
import { get, gql, post } from "../support/http";
import { eventually } from "../support/wait";

const M = (n: number) => String(BigInt(n) * UNIT);

describe("portfolio: the guide's worked example", () => {
  const w = writeSuite({ alice: 1_000n * UNIT, bob: 1_000n * UNIT, carol: 1_000n * UNIT, dan: 1_000n * UNIT, erin: 1_000n * UNIT, frank: 1_000n * UNIT });

  const create = async (u: TestUser, k: PublicKey, side: string, total: number, target: number) => {
    const r = await post(w.s, "/", createBody(k, { creatorOutcome: side, creatorTotalMicros: M(total), takerTargetMicros: M(target) }), u.token);
    expect(r.status, r.text).toBe(200);
    return r.body.offerAddress as string;
  };
  const take = async (u: TestUser, offer: string, amount: number) => {
    const row = await eventually(() => w.s.db.selectFrom("offers").selectAll().where("address", "=", offer).executeTakeFirstOrThrow());
    const r = await post(w.s, `/${offer}/take`, { takeAmountMicros: M(amount), expectedRevision: String(row.revision), idempotencyKey: key() }, u.token);
    expect(r.status, r.text).toBe(200);
  };

  it("every figure of the guide, over REST and GraphQL", async () => {
    const { alice, bob, carol, dan, erin, frank } = w;
    const k1 = await contract(w.s, 3_600n);
    const k2 = await contract(w.s, 60n);
    const k3 = await contract(w.s, 60n);
    // K1: Alice backs sideA 100 against 150; Bob takes 60 (40 of Alice's matched). Alice takes 20 of Carol's sideB 50 against 50.
    await take(bob, await create(alice, k1, "sideA", 100, 150), 60);
    await take(alice, await create(carol, k1, "sideB", 50, 50), 20);
    // K2: Alice backs sideB 30 against 30, Dan takes all; Alice takes all of Frank's sideB 10 against 10 (Alice on sideA).
    await take(dan, await create(alice, k2, "sideB", 30, 30), 30);
    await take(alice, await create(frank, k2, "sideB", 10, 10), 10);
    // K3: Alice takes all of Erin's sideA 10 against 10 (Alice on sideB).
    await take(alice, await create(erin, k3, "sideA", 10, 10), 10);

    // K2 and K3 pass their cutoff; K2 resolves sideB and is settled, K3 resolves sideB and is not settled yet.
    await w.s.chain.gateway.advance(61n);
    await w.s.admin.resolveContract(k2, "sideB");
    expect((await w.s.worker.drain()).settled).toBe(2);
    await w.s.admin.resolveContract(k3, "sideB");

    const expected = {
      wallet: alice.user.wallet.toBase58(),
      from: null,
      to: null,
      totals: {
        stakeAtRiskMicros: M(60),
        unmatchedLockedMicros: M(60),
        pendingPayoutsMicros: M(19),
        claimsWaitingMicros: "0",
        realisedPnlMicros: M(17),
        feesPaidMicros: M(3),
        won: 1,
        lost: 1,
        refunded: 0,
      },
      contracts: [
        {
          contract: k3.toBase58(),
          status: "Resolved",
          result: "sideB",
          matchedStakeMicros: M(10),
          unmatchedMicros: "0",
          openOfferCount: 0,
          openPositionCount: 1,
          outcomes: [
            { result: "sideA", returnMicros: "0", netMicros: `-${M(10)}` },
            { result: "sideB", returnMicros: M(19), netMicros: M(9) },
            { result: "void", returnMicros: M(10), netMicros: "0" },
          ],
        },
        {
          contract: k1.toBase58(),
          status: "Open",
          result: "none",
          matchedStakeMicros: M(60),
          unmatchedMicros: M(60),
          openOfferCount: 1,
          openPositionCount: 2,
          outcomes: [
            { result: "sideA", returnMicros: M(132), netMicros: M(72) },
            { result: "sideB", returnMicros: "0", netMicros: `-${M(60)}` },
            { result: "void", returnMicros: M(60), netMicros: "0" },
          ],
        },
      ],
    };
    const rest = await eventually(async () => {
      const r = await get(w.s, "/portfolio", alice.token);
      expect(r.status, r.text).toBe(200);
      expect(r.body).toMatchObject(expected);
      return r;
    }, 10_000);
    expect(rest.body.contracts).toHaveLength(2);

    const g = await gql(
      w.s,
      `{ portfolio { wallet totals { stakeAtRiskMicros unmatchedLockedMicros pendingPayoutsMicros claimsWaitingMicros realisedPnlMicros feesPaidMicros won lost refunded }
         contracts { contract status result matchedStakeMicros unmatchedMicros openOfferCount openPositionCount outcomes { result returnMicros netMicros } } } }`,
      {},
      alice.token,
    );
    expect(g.body.errors).toBeUndefined();
    expect(g.body.data.portfolio).toMatchObject({ wallet: expected.wallet, totals: expected.totals, contracts: expected.contracts });

    // A range that ends before the settlement leaves the realised figures out, not the exposure.
    const early = await get(w.s, "/portfolio?to=2000-01-01T00:00:00Z", alice.token);
    expect(early.status, early.text).toBe(200);
    expect(early.body.totals).toMatchObject({
      realisedPnlMicros: "0",
      feesPaidMicros: "0",
      won: 0,
      lost: 0,
      stakeAtRiskMicros: M(60),
      pendingPayoutsMicros: M(19),
    });

    // Needs a token; bad ranges are 400.
    expect((await get(w.s, "/portfolio")).status).toBe(401);
    expect((await get(w.s, "/portfolio?from=yesterday", alice.token)).status).toBe(400);
    expect((await get(w.s, "/portfolio?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z", alice.token)).status).toBe(400);
    // Bob sees his own side of K1: 60 at risk, a win on sideB returns 60 + 40 - 4.
    const b = await get(w.s, "/portfolio", bob.token);
    expect(b.body.totals).toMatchObject({ stakeAtRiskMicros: M(60), unmatchedLockedMicros: "0" });
    expect(b.body.contracts[0].outcomes[1]).toEqual({ result: "sideB", returnMicros: M(96), netMicros: M(36) });
  });
});
