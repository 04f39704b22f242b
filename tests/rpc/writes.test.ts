/**
 * The whole service against solana-test-validator: RpcGateway submits the custodial wallets'
 * transactions, the RPC source indexes them, and the same HTTP API as the local stack answers.
 * The spec's worked example (8 vs 10, take 5 -> creator matched 4, taker win pays 5 + 4 - 0.4)
 * goes through REST: create, take, a stale take refused, the creator's close, then after the
 * cutoff the resolution and the worker's settlement and rent reclaim, each on the real chain, with the API showing every
 * step as the RPC indexer sees it. Skipped without the validator binary.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestValidator, validatorBinary } from "../../harness/validator";
import type { ClusterStack } from "../../stack/cluster-stack";
import { validatorStack } from "./validator-stack";
import { UNIT, balance, contract, createBody, key, makeUser, type TestUser } from "../support/stack";
import { get, post } from "../support/http";
import { eventually } from "../support/wait";

const binary = validatorBinary();

describe.skipIf(!binary)("the service on solana-test-validator (RpcGateway + RPC indexer)", () => {
  let validator: TestValidator;
  let s: ClusterStack;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    ({ validator, s } = await validatorStack());
    alice = await makeUser(s, 100n * UNIT);
    bob = await makeUser(s, 100n * UNIT);
  }, 240_000);

  afterAll(async () => {
    await s?.stop();
    await validator?.stop();
  });

  it("the spec's worked example over REST on a real chain: create, take, a stale take refused, close, resolution, settlement, reclaim", async () => {
    // The cutoff leaves room for create, take and close (the close indexed 37 of 40 s before it at a
    // load average of 25): the suite waits for it afterwards.
    const c = await contract(s, 12n, 600n);
    const cutoffAt = (await s.chain.gateway.now()) + 12n;
    const created = await post(s, "/", createBody(c), alice.token);
    expect(created.status, created.text).toBe(200);
    expect(created.body.status).toBe("pending");
    const offer = created.body.offerAddress as string;
    // The API answers from the store, which the RPC source fills from the validator's notifications.
    const open = await eventually(async () => {
      const r = await get(s, `/${offer}`);
      expect(r.status).toBe(200);
      return r;
    });
    expect(open.body).toMatchObject({ status: "Open", creatorTotalMicros: "8000000", takerTargetMicros: "10000000", revision: "1" });
    expect(await balance(s, alice.user.tokenAccount)).toBe(92n * UNIT);

    const took = await post(s, `/${offer}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, bob.token);
    expect(took.status, took.text).toBe(200);
    expect(took.body).toMatchObject({ offerAddress: offer, takeAmountMicros: "5000000", creatorMatchedMicros: "4000000", expectedRevision: "1" });
    const view = await eventually(async () => {
      const r = await get(s, `/${offer}`, bob.token);
      expect(r.body).toMatchObject({
        revision: "2",
        takerFilledMicros: "5000000",
        creatorAllocatedMicros: "4000000",
        remainingTakerMicros: "5000000",
        fillCount: 1,
      });
      return r;
    });
    expect(view.body.viewer).toMatchObject({
      role: "taker",
      returnMicros: "8600000",
      position: { takerAmountMicros: "5000000", creatorMatchedMicros: "4000000", status: "Open" },
    });
    const fills = await get(s, `/${offer}/fills`);
    expect((fills.body.fills as Record<string, unknown>[]).length).toBe(1);
    expect(await balance(s, bob.user.tokenAccount)).toBe(95n * UNIT);

    // The revision moved: a take that still names revision 1 is refused and moves nothing.
    const stale = await post(s, `/${offer}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "1", idempotencyKey: key() }, bob.token);
    expect(stale.status, stale.text).toBe(409);
    expect(await balance(s, bob.user.tokenAccount)).toBe(95n * UNIT);

    // The creator closes the rest of the offer: the unmatched 4 come back.
    const closed = await post(s, `/${offer}/close`, { expectedRevision: "2", idempotencyKey: key() }, alice.token);
    expect(closed.status, closed.text).toBe(200);
    expect(closed.body).toMatchObject({ refundMicros: "4000000" });
    await eventually(async () => expect((await get(s, `/${offer}`)).body).toMatchObject({ status: "Closed", remainingTakerMicros: "0" }));
    expect(await balance(s, alice.user.tokenAccount)).toBe(96n * UNIT);

    // The validator's clock passes the cutoff (its margin printed, for whoever shortens it).
    console.log(`the close was indexed ${cutoffAt - (await s.chain.gateway.now())} s before the cutoff`);
    while ((await s.chain.gateway.now()) <= cutoffAt) await new Promise((r) => setTimeout(r, 1_000));

    // The taker's side wins: once the store has the resolution, the worker settles and reclaims rent.
    await s.admin.resolveContract(c, "sideB");
    await eventually(async () =>
      expect((await s.db.selectFrom("contracts").select("status").where("address", "=", c.toBase58()).executeTakeFirstOrThrow()).status).toBe("Resolved"),
    );
    const settled = { settled: 0, reclaimedPositions: 0, reclaimedOffers: 0 };
    await eventually(async () => {
      const r = await s.worker.drain();
      expect(r.errors).toEqual([]);
      for (const k of ["settled", "reclaimedPositions", "reclaimedOffers"] as const) settled[k] += r[k];
      expect(settled).toEqual({ settled: 1, reclaimedPositions: 1, reclaimedOffers: 1 });
    }, 60_000);
    expect(await balance(s, bob.user.tokenAccount)).toBe(95n * UNIT + 5n * UNIT + 4n * UNIT - 400_000n);
    expect(await balance(s, alice.user.tokenAccount)).toBe(96n * UNIT);
    expect(await balance(s, s.chain.treasury)).toBe(400_000n);
    // The settled history stays readable after the rent was reclaimed (the accounts are closed).
    await eventually(async () => {
      const r = await get(s, `/${offer}`, bob.token);
      expect(r.status, r.text).toBe(200);
      expect(r.body).toMatchObject({ status: "Settled", settledPositionCount: 1 });
      expect(r.body.viewer).toMatchObject({ position: { status: "SettledTakerWin", payoutMicros: "8600000", feeMicros: "400000" } });
      const row = await s.db.selectFrom("offers").select("deleted").where("address", "=", offer).executeTakeFirstOrThrow();
      expect(row.deleted).toBe(1);
    });
  }, 240_000);
});
