/**
 * What a creator and a taker see once a contract settles, over REST and GraphQL: the contract's
 * result, the creator's settlement summary, returnMicros as the amount actually received (0 on a
 * loss), /mine by role; and a take or close of a finished offer whose accounts were reclaimed is
 * a 409 with a message (not the 404 "unknown offer address").
 *
 * One offer per contract (stake 8 against 10, one take of 5 matched with 4, fee 1000 bps): the
 * creator's side wins on the first, loses on the second, the third is voided.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PublicKey } from "@solana/web3.js";
import { apiStack, type ApiStack, makeUser, contract as makeContract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { getJson, gql, post } from "../support/http";
import { until } from "../support/wait";

const BASE = "/api/bets-usdc/offers";
let s: ApiStack;
let creator: TestUser, taker: TestUser;
const offers: Record<"win" | "loss" | "void", string> = { win: "", loss: "", void: "" };
const contracts: Record<"win" | "loss" | "void", PublicKey> = {} as never;
const U = (units: string) => String(BigInt(Math.round(Number(units) * 10)) * (UNIT / 10n));

const OFFER_Q = `query($a: Address!) { offer(address: $a) { status contract { result }
  viewer { role returnMicros position { status payoutMicros feeMicros }
    settlement { settledPositionCount paidOutMicros feeMicros refundedMicros receivedMicros
      outcomes { status positionCount creatorPayoutMicros takerPayoutMicros feeMicros } } } } }`;

beforeAll(async () => {
  s = await apiStack();
  [creator, taker] = [await makeUser(s), await makeUser(s)];
  for (const k of ["win", "loss", "void"] as const) {
    contracts[k] = await makeContract(s, 600n, 3_600n);
    const r = await post(s, "/", createBody(contracts[k]), creator.token);
    expect(r.status, r.text).toBe(200);
    offers[k] = r.body.offerAddress as string;
    await until(async () => (await getJson(s, `${BASE}/${offers[k]}`)).status === 200);
    const t = await post(s, `/${offers[k]}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
    expect(t.status, t.text).toBe(200);
    await until(async () => (await getJson(s, `${BASE}/${offers[k]}`)).body.revision === "2");
  }
});
afterAll(async () => s?.stop());

describe("before settlement", () => {
  it("has no result on the contract and returns what each side would receive on a win", async () => {
    const c = await getJson(s, `${BASE}/${offers.win}`, { token: creator.token });
    expect(c.body.contract.result).toBeNull();
    expect(c.body.viewer).toMatchObject({ role: "creator", returnMicros: U("8.5") });
    expect(c.body.viewer.settlement).toMatchObject({ settledPositionCount: 0, paidOutMicros: "0", refundedMicros: "0", receivedMicros: "0" });
    const t = await getJson(s, `${BASE}/${offers.loss}`, { token: taker.token });
    expect(t.body.viewer).toMatchObject({ role: "taker", returnMicros: U("8.6"), settlement: null });
    const g = await gql(s, OFFER_Q, { a: offers.void });
    expect(g.body.data.offer.contract.result).toBeNull();
  });
});

describe("after a win, a loss and a void", () => {
  beforeAll(async () => {
    await s.chain.gateway.advance(601n);
    await s.admin.resolveContract(contracts.win, "sideA");
    await s.admin.resolveContract(contracts.loss, "sideB");
    await s.admin.resolveContract(contracts.void, "void");
    await s.worker.drain();
    for (const o of Object.values(offers)) await until(async () => (await getJson(s, `${BASE}/${o}`)).body.status === "Settled");
  });

  // [case, result, creator return, taker return, taker position status, taker payout, fee, creator summary]
  const cases = [
    ["win", "sideA", "8.5", "0", "SettledCreatorWin", "0", "0.5", { paidOut: "8.5", fee: "0.5", refunded: "4", received: "12.5", outcome: 0 }],
    ["loss", "sideB", "0", "8.6", "SettledTakerWin", "8.6", "0.4", { paidOut: "0", fee: "0", refunded: "4", received: "4", outcome: 1 }],
    ["void", "void", "4", "5", "Refunded", "5", "0", { paidOut: "0", fee: "0", refunded: "8", received: "8", outcome: 2 }],
  ] as const;

  it.each(cases)("%s: the creator's and the taker's view over REST", async (k, result, cRet, tRet, status, tPay, fee, sum) => {
    const c = await getJson(s, `${BASE}/${offers[k]}`, { token: creator.token });
    expect(c.body.status).toBe("Settled");
    expect(c.body.contract.result).toBe(result);
    expect(c.body.viewer.returnMicros).toBe(U(cRet));
    expect(c.body.viewer.settlement).toMatchObject({
      settledPositionCount: 1,
      paidOutMicros: U(sum.paidOut),
      feeMicros: U(sum.fee),
      refundedMicros: U(sum.refunded),
      receivedMicros: U(sum.received),
    });
    const outcomes = c.body.viewer.settlement.outcomes;
    expect(outcomes.map((o: { status: string }) => o.status)).toEqual(["SettledCreatorWin", "SettledTakerWin", "Refunded"]);
    expect(outcomes.map((o: { positionCount: number }) => o.positionCount)).toEqual([0, 1, 2].map((i) => (i === sum.outcome ? 1 : 0)));
    expect(outcomes[sum.outcome]).toMatchObject({ takerPayoutMicros: U(tPay), feeMicros: U(fee) });

    const t = await getJson(s, `${BASE}/${offers[k]}`, { token: taker.token });
    expect(t.body.contract.result).toBe(result);
    expect(t.body.viewer).toMatchObject({ role: "taker", returnMicros: U(tRet), settlement: null, canTake: false });
    expect(t.body.viewer.position).toMatchObject({ status, payoutMicros: U(tPay), feeMicros: U(fee) }); // the position's fee, paid by its winner

    const anon = await getJson(s, `${BASE}/${offers[k]}`);
    expect(anon.body.viewer).toMatchObject({ role: "none", returnMicros: null, settlement: null });
  });

  it.each(cases)("%s: the same views over GraphQL", async (k, result, cRet, tRet, status, tPay, _fee, sum) => {
    const c = (await gql(s, OFFER_Q, { a: offers[k] }, creator.token)).body.data.offer;
    expect(c.contract.result).toBe(result);
    expect(c.viewer).toMatchObject({ role: "creator", returnMicros: U(cRet), position: null });
    expect(c.viewer.settlement).toMatchObject({ settledPositionCount: 1, paidOutMicros: U(sum.paidOut), receivedMicros: U(sum.received) });
    expect(c.viewer.settlement.outcomes[sum.outcome].positionCount).toBe(1);
    const t = (await gql(s, OFFER_Q, { a: offers[k] }, taker.token)).body.data.offer;
    expect(t.viewer).toMatchObject({ role: "taker", returnMicros: U(tRet), settlement: null, position: { status, payoutMicros: U(tPay) } });
  });

  it("lists each role's outcomes with /mine?role= and mine(role:)", async () => {
    const mineC = await getJson(s, `${BASE}/mine?role=creator&view=results`, { token: creator.token });
    expect(mineC.status).toBe(200);
    expect(mineC.body.offers.map((o: { address: string }) => o.address).sort()).toEqual(Object.values(offers).sort());
    expect(mineC.body.offers.map((o: { viewer: { settlement: { receivedMicros: string } } }) => o.viewer.settlement.receivedMicros).sort()).toEqual(
      [U("12.5"), U("4"), U("8")].sort(),
    );
    expect((await getJson(s, `${BASE}/mine?role=taker`, { token: creator.token })).body.offers).toHaveLength(0);
    const mineT = await getJson(s, `${BASE}/mine?role=taker`, { token: taker.token });
    expect(mineT.body.offers.map((o: { viewer: { returnMicros: string } }) => o.viewer.returnMicros).sort()).toEqual([U("0"), U("8.6"), U("5")].sort());
    expect(await getJson(s, `${BASE}/mine?role=owner`, { token: taker.token })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining("creator, taker") },
    });
    const g = await gql(s, `{ mine(role: taker) { totalCount edges { node { contract { result } viewer { role returnMicros } } } } }`, {}, taker.token);
    expect(g.body.data.mine.totalCount).toBe(3);
    expect(g.body.data.mine.edges.every((e: { node: { viewer: { role: string } } }) => e.node.viewer.role === "taker")).toBe(true);
  });

  it("answers a take or a close of a finished, reclaimed offer with 409 and a message", async () => {
    expect(await s.chain.gateway.getAccount(new PublicKey(offers.win))).toBeNull(); // the worker reclaimed it
    const take = await post(s, `/${offers.win}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "3", idempotencyKey: key() }, taker.token);
    expect(take.status, take.text).toBe(409);
    expect(take.body.error).toBe("the offer is Settled and finished: it can no longer be taken");
    const close = await post(s, `/${offers.win}/close`, { expectedRevision: "3", idempotencyKey: key() }, creator.token);
    expect(close.status, close.text).toBe(409);
    expect(close.body.error).toBe("the offer is Settled and finished: it can no longer be closed");
    const g = await gql(
      s,
      `mutation($o: Address!, $i: CloseOfferInput!) { closeOffer(offerAddress: $o, input: $i) { status } }`,
      { o: offers.loss, i: { expectedRevision: "3", idempotencyKey: key() } },
      creator.token,
    );
    expect(g.body.errors[0]).toMatchObject({
      message: "the offer is Settled and finished: it can no longer be closed",
      extensions: { code: "CONFLICT", status: 409 },
    });
  });
});
