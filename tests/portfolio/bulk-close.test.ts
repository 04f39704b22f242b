/**
 * Bulk close over real HTTP (issue #26): 20 open offers on 3 contracts closed by one request, one
 * transaction each, every stake refunded; a replay answers the same signatures; scopes (contract,
 * event, sport) and the GraphQL mutation; partial failures reported per offer (the write bucket
 * running dry midway), then finished by a replay with the same key once it refills.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { LocalStack } from "../../stack/local-stack";
import { UNIT, balance, contract, createBody, key, makeUser, stack, type TestUser } from "../support/stack";
import { gql, post } from "../support/http";
import { eventually } from "../support/wait";

describe("bulk close", () => {
  let s: LocalStack;
  let offsetMs = 0;
  beforeAll(async () => {
    s = await stack({ walletLimits: { writeBurst: 25, writesPerHour: 60, maxOpenOffers: 25 }, walletClockMs: () => Date.now() + offsetMs });
  });
  afterAll(async () => s?.stop());

  const create = async (u: TestUser, k: PublicKey, total = 5n * UNIT) => {
    const r = await post(s, "/", createBody(k, { creatorTotalMicros: String(total), takerTargetMicros: String(total) }), u.token);
    expect(r.status, r.text).toBe(200);
    return r.body.offerAddress as string;
  };
  const indexedStatus = async (offers: string[]) =>
    (await s.db.selectFrom("offers").select(["address", "status"]).where("address", "in", offers).execute()).map((r) => r.status);

  it("closes 20 open offers on 3 contracts with one request; a replay answers the same signatures", async () => {
    const a = await makeUser(s, 1_000n * UNIT);
    const b = await makeUser(s, 1_000n * UNIT);
    const ks = [await contract(s), await contract(s), await contract(s)];
    const offers: string[] = [];
    for (let i = 0; i < 20; i++) offers.push(await create(a, ks[i % 3]));
    // Some are partly taken: only the unmatched part comes back.
    for (const o of offers.slice(0, 4)) {
      const row = await eventually(() => s.db.selectFrom("offers").selectAll().where("address", "=", o).executeTakeFirstOrThrow());
      const r = await post(s, `/${o}/take`, { takeAmountMicros: String(2n * UNIT), expectedRevision: String(row.revision), idempotencyKey: key() }, b.token);
      expect(r.status, r.text).toBe(200);
    }
    offsetMs += 3_600_000; // the write bucket refills
    const before = await balance(s, a.user.tokenAccount);
    const k = key();
    const r = await post(s, "/close-all", { scope: "all", idempotencyKey: k }, a.token);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ scope: "all", requested: 20, closed: 20, refused: 0, transactions: 20 });
    expect(new Set(r.body.results.map((x: { offerAddress: string }) => x.offerAddress))).toEqual(new Set(offers));
    const sigs = r.body.results.map((x: { signature: string }) => x.signature);
    expect(new Set(sigs).size).toBe(20);
    const refund = r.body.results.reduce((t: bigint, x: { refundMicros: string }) => t + BigInt(x.refundMicros), 0n);
    expect(refund).toBe(20n * 5n * UNIT - 4n * 2n * UNIT);
    expect(await balance(s, a.user.tokenAccount)).toBe(before + refund);
    await eventually(async () => expect(await indexedStatus(offers)).toEqual(Array(20).fill("Closed")), 10_000);

    const again = await post(s, "/close-all", { scope: "all", idempotencyKey: k }, a.token);
    expect(again.status, again.text).toBe(200);
    expect(again.body.results.map((x: { signature: string }) => x.signature)).toEqual(sigs);
    expect(await balance(s, a.user.tokenAccount)).toBe(before + refund);
    const other = await post(s, "/close-all", { scope: "contract", contract: ks[0].toBase58(), idempotencyKey: k }, a.token);
    expect(other.status, other.text).toBe(400);
    // Nothing left open: a new key closes nothing.
    const empty = await post(s, "/close-all", { scope: "all", idempotencyKey: key() }, a.token);
    expect(empty.body).toMatchObject({ requested: 0, closed: 0, results: [] });
  });

  it("scopes contract, event and sport, and the GraphQL mutation", async () => {
    const c = await makeUser(s, 1_000n * UNIT);
    const now = await s.chain.gateway.now();
    const derby = await s.admin.createContract({
      title: "Derby",
      event: "North vs South",
      sport: "football",
      competition: "Cup",
      startsAt: Number(now + 3_600n),
      cutoffAt: now + 3_600n,
      resolutionDeadline: now + 90_000n,
      sideALabel: "North",
      sideBLabel: "South",
      visuals: [],
    });
    const k1 = await contract(s);
    const k2 = await contract(s);
    const [o1, o2, o3, o4] = [await create(c, k1), await create(c, k1), await create(c, k2), await create(c, derby)];
    await eventually(async () => expect(await indexedStatus([o1, o2, o3, o4])).toHaveLength(4));

    const byEvent = await post(s, "/close-all", { scope: "event", event: "North vs South", idempotencyKey: key() }, c.token);
    expect(byEvent.body).toMatchObject({ requested: 1, closed: 1, results: [{ offerAddress: o4, status: "pending" }] });
    const g = await gql(
      s,
      `mutation($i: CloseAllOffersInput!) { closeAllOffers(input: $i) { scope requested closed refused transactions results { offerAddress status signature refundMicros } } }`,
      { i: { scope: "contract", contract: k1.toBase58(), idempotencyKey: key() } },
      c.token,
    );
    expect(g.body.errors, g.text).toBeUndefined();
    expect(g.body.data.closeAllOffers).toMatchObject({ scope: "contract", requested: 2, closed: 2, refused: 0, transactions: 2 });
    expect(new Set(g.body.data.closeAllOffers.results.map((x: { offerAddress: string }) => x.offerAddress))).toEqual(new Set([o1, o2]));
    await eventually(async () => expect(await indexedStatus([o1, o2, o4])).toEqual(["Closed", "Closed", "Closed"]), 10_000);
    const bySport = await post(s, "/close-all", { scope: "sport", sport: "football", idempotencyKey: key() }, c.token);
    expect(bySport.body).toMatchObject({ requested: 1, closed: 1, results: [{ offerAddress: o3 }] });

    // Bad input is 400 before anything is chosen; no token is 401.
    for (const bad of [
      { scope: "contract", idempotencyKey: key() },
      { scope: "all", contract: k1.toBase58(), idempotencyKey: key() },
      { scope: "planet", idempotencyKey: key() },
      { scope: "all", idempotencyKey: "short" },
    ]) {
      const r = await post(s, "/close-all", bad, c.token);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.code).toBe("BAD_REQUEST");
    }
    expect((await post(s, "/close-all", { scope: "all", idempotencyKey: key() })).status).toBe(401);
  });

  it("reports each refusal when the write bucket runs dry midway; a replay with the same key finishes", async () => {
    const e = await makeUser(s, 1_000n * UNIT);
    const k = await contract(s);
    const offers: string[] = [];
    for (let i = 0; i < 20; i++) offers.push(await create(e, k)); // 20 of the bucket's 25 writes
    await eventually(async () => expect(await indexedStatus(offers)).toHaveLength(20));
    const bulkKey = key();
    const first = await post(s, "/close-all", { scope: "all", idempotencyKey: bulkKey }, e.token);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ requested: 20, closed: 5, refused: 15, transactions: 5 });
    const refused = first.body.results.filter((x: { status: string }) => x.status === "refused");
    for (const x of refused) expect(x).toMatchObject({ httpStatus: 429, code: "TOO_MANY_REQUESTS", signature: null });
    expect(refused[0].error).toMatch(/write/i);

    offsetMs += 3_600_000;
    const second = await post(s, "/close-all", { scope: "all", idempotencyKey: bulkKey }, e.token);
    expect(second.body).toMatchObject({ requested: 20, closed: 20, refused: 0 });
    const firstSigs = first.body.results.filter((x: { status: string }) => x.status === "pending").map((x: { signature: string }) => x.signature);
    const secondSigs = second.body.results.map((x: { signature: string }) => x.signature);
    for (const sig of firstSigs) expect(secondSigs).toContain(sig);
    await eventually(async () => expect(await indexedStatus(offers)).toEqual(Array(20).fill("Closed")), 10_000);
  });
});
