/**
 * The read API over real HTTP against the server, the indexer and the offers program in bankrun:
 * every GET of the spec, parameter rules, error statuses and bodies, viewer fields for a
 * stranger, a creator and a taker, and the same data over GraphQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { apiStack, type ApiStack, makeUser, contract as makeContract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { getJson, gql, post } from "../support/http";
import { until } from "../support/wait";

const BASE = "/api/bets-usdc/offers";
let s: ApiStack;
let creator: TestUser, taker: TestUser, stranger: TestUser;
let contract: PublicKey;
let offer: string;

beforeAll(async () => {
  s = await apiStack();
  [creator, taker, stranger] = [await makeUser(s), await makeUser(s), await makeUser(s)];
  contract = await makeContract(s);
  const r = await post(s, "/", createBody(contract, { creatorTotalMicros: String(8n * UNIT), takerTargetMicros: String(10n * UNIT) }), creator.token);
  expect(r.status).toBe(200);
  offer = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${BASE}/${offer}`)).status === 200);
  const t = await post(s, `/${offer}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
  expect(t.status).toBe(200);
  await until(async () => (await getJson(s, `${BASE}/${offer}`)).body.revision === "2");
});
afterAll(async () => s?.stop());

describe("GET /contracts", () => {
  it("lists open contracts with catalog metadata, fee, switch and limits as strings", async () => {
    const r = await getJson(s, `${BASE}/contracts`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      feeBps: 1000,
      offersEnabled: true,
      limits: {
        minimumCreatorMicros: "1000000",
        minimumTakeMicros: "1000000",
        maximumWagerMicros: "500000000",
        warningRatioNumerator: "5",
        warningRatioDenominator: "1",
        minimumOddsNumerator: "1",
        minimumOddsDenominator: "10",
        maximumOddsNumerator: "10",
        maximumOddsDenominator: "1",
      },
    });
    const c = r.body.contracts.find((x: { address: string }) => x.address === contract.toBase58());
    expect(c).toMatchObject({
      title: "Will the home side win?",
      sport: "football",
      status: "Open",
      outcomes: [
        { side: "sideA", label: "Home" },
        { side: "sideB", label: "Away" },
      ],
      visuals: [{ src: "https://example.com/a.png", alt: "crest" }],
    });
    expect(c.templateId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("drops a contract once its cutoff has passed", async () => {
    const late = await makeContract(s, 30n);
    await until(async () => (await getJson(s, `${BASE}/contracts`)).body.contracts.some((c: { address: string }) => c.address === late.toBase58()));
    await s.chain.gateway.advance(31n);
    const r = await getJson(s, `${BASE}/contracts`);
    expect(r.body.contracts.some((c: { address: string }) => c.address === late.toBase58())).toBe(false);
  });
});

describe("GET /<offer_address>", () => {
  it("returns every field of the spec's Offer for a stranger", async () => {
    const r = await getJson(s, `${BASE}/${offer}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      address: offer,
      creatorOutcome: "sideA",
      creatorSideLabel: "Home",
      takerSideLabel: "Away",
      creatorTotalMicros: "8000000",
      creatorAllocatedMicros: "4000000",
      takerTargetMicros: "10000000",
      takerFilledMicros: "5000000",
      remainingTakerMicros: "5000000",
      minimumTakeMicros: "1000000",
      feeBps: 1000,
      termsGuardrail: { status: "normal" },
      status: "Open",
      fillCount: 1,
      positionCount: 1,
      settledPositionCount: 0,
      revision: "2",
      closedAt: null,
      creator: { displayName: expect.any(String), profileImageUrl: expect.any(String) },
      viewer: { role: "none", canTake: true, canClose: false, returnMicros: null, position: null },
    });
    expect(r.body.contract.address).toBe(contract.toBase58());
    expect(new Date(r.body.createdAt).toISOString()).toBe(r.body.createdAt);
  });

  it("shows the creator role and what the creator gets back if their side wins", async () => {
    const r = await getJson(s, `${BASE}/${offer}`, { token: creator.token });
    // 4 matched + 5 taken - floor(1000 * 5 / 10000) units of fee
    expect(r.body.viewer).toMatchObject({
      role: "creator",
      canTake: false,
      takeRefusal: "ownOffer",
      canClose: true,
      returnMicros: String(9n * UNIT - 500_000n),
      position: null,
      settlement: { settledPositionCount: 0, receivedMicros: "0" },
    });
  });

  it("shows a taker their position and return (5 + 4 - 0.4)", async () => {
    const r = await getJson(s, `${BASE}/${offer}`, { token: taker.token });
    expect(r.body.viewer).toMatchObject({ role: "taker", canTake: true, canClose: false, returnMicros: String(9n * UNIT - 400_000n) });
    expect(r.body.viewer.position).toMatchObject({
      takerAmountMicros: "5000000",
      creatorMatchedMicros: "4000000",
      status: "Open",
      fillCount: 1,
      settledAt: null,
      payoutMicros: null,
    });
  });

  it("answers 400 for a malformed address, 404 for an unknown one, 401 for a bad token", async () => {
    expect(await getJson(s, `${BASE}/not-an-address`)).toMatchObject({ status: 400, body: { error: expect.stringContaining("base58") } });
    expect(await getJson(s, `${BASE}/11111111111111111111111111111111`)).toMatchObject({ status: 404, body: { error: "offer not found" } });
    expect(await getJson(s, `${BASE}/${offer}`, { token: "pat_nope" })).toMatchObject({ status: 401, body: { error: expect.any(String) } });
  });
});

describe("GET / (browse)", () => {
  it("paginates with page and pageSize and reports the total", async () => {
    for (let i = 0; i < 4; i++) expect((await post(s, "/", createBody(contract), stranger.token)).status).toBe(200);
    const all = await until(async () => {
      const r = await getJson(s, `${BASE}/?pageSize=50`);
      return r.body.pagination.total >= 5 ? r : null;
    });
    const total = all.body.pagination.total;
    const p1 = await getJson(s, `${BASE}/?page=1&pageSize=2`);
    const p2 = await getJson(s, `${BASE}/?page=2&pageSize=2`);
    expect(p1.body.offers).toHaveLength(2);
    expect(p1.body.pagination).toEqual({ page: 1, pageSize: 2, total, hasNextPage: true });
    expect(p2.body.offers[0].address).not.toBe(p1.body.offers[0].address);
    expect((await getJson(s, `${BASE}/`)).body.pagination.pageSize).toBe(20);
  });

  it.each([
    ["page=0", "page must be an integer from 1"],
    ["page=abc", "page must be an integer from 1"],
    ["pageSize=0", "pageSize must be an integer from 1 to 50"],
    ["pageSize=51", "pageSize must be an integer from 1 to 50"],
    ["pageSize=1.5", "pageSize must be an integer from 1 to 50"],
    ["status=open", "status must be one of Open, Filled, Closed, Settled"],
    ["view=all", "view must be one of browse, results"],
  ])("rejects %s with 400", async (q, msg) => {
    const r = await getJson(s, `${BASE}/?${q}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toContain(msg);
  });

  it("filters by sport, text query, status and view", async () => {
    expect((await getJson(s, `${BASE}/?sport=football`)).body.offers.length).toBeGreaterThan(0);
    expect((await getJson(s, `${BASE}/?sport=curling`)).status).toBe(400);
    expect((await getJson(s, `${BASE}/?query=HOME%20SIDE`)).body.offers.length).toBeGreaterThan(0);
    expect((await getJson(s, `${BASE}/?query=zebra`)).body.offers).toHaveLength(0);
    const open = await getJson(s, `${BASE}/?view=browse&pageSize=50`);
    expect(open.body.offers.every((o: { status: string }) => o.status === "Open")).toBe(true);
    expect((await getJson(s, `${BASE}/?status=Settled`)).body.offers).toHaveLength(0);
  });
});

describe("fills, mine, shareable", () => {
  it("lists the fills of an offer", async () => {
    const r = await getJson(s, `${BASE}/${offer}/fills`);
    expect(r.status).toBe(200);
    expect(r.body.fills).toHaveLength(1);
    expect(r.body.fills[0]).toMatchObject({
      offer,
      revision: "2",
      taker: taker.user.wallet.toBase58(),
      takeMicros: "5000000",
      creatorMatchedMicros: "4000000",
    });
    expect((await getJson(s, `${BASE}/11111111111111111111111111111111/fills`)).status).toBe(404);
  });

  it("lists the caller's created and taken offers, and needs a token", async () => {
    expect(await getJson(s, `${BASE}/mine`)).toMatchObject({ status: 401, body: { error: expect.stringContaining("token") } });
    const mineTaker = await getJson(s, `${BASE}/mine`, { token: taker.token });
    expect(mineTaker.body.offers.map((o: { address: string }) => o.address)).toEqual([offer]);
    const mineCreator = await getJson(s, `${BASE}/mine`, { token: creator.token });
    expect(mineCreator.body.offers[0].viewer.role).toBe("creator");
  });

  it("formats open offers for sharing with a text line and a link", async () => {
    const r = await getJson(s, `${BASE}/shareable?pageSize=50`);
    const sh = r.body.offers.find((o: { address: string }) => o.address === offer);
    expect(sh.url).toBe(`https://offers.example/offers/${offer}`);
    expect(sh.text).toContain('backs "Home"');
    expect(sh.text).toContain("5 USDC left");
    expect(sh.text).toContain(sh.url);
  });
});

describe("GraphQL", () => {
  it("serves the same offer and viewer, with cursors", async () => {
    const q = `query($a: Address!) { offer(address: $a) { address revision remainingTakerMicros viewer { role returnMicros position { takerAmountMicros } } contract { title } } _meta { indexedSlot } }`;
    const r = await gql(s, q, { a: offer }, taker.token);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.offer).toEqual({
      address: offer,
      revision: "2",
      remainingTakerMicros: "5000000",
      viewer: { role: "taker", returnMicros: "8600000", position: { takerAmountMicros: "5000000" } },
      contract: { title: "Will the home side win?" },
    });
    expect(Number(r.body.data._meta.indexedSlot)).toBeGreaterThan(0);
    const p1 = await gql(s, `{ offers(first: 2) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { address } } } }`);
    const p2 = await gql(s, `query($c: Cursor) { offers(first: 2, after: $c) { edges { node { address } } } }`, { c: p1.body.data.offers.pageInfo.endCursor });
    expect(p1.body.data.offers.pageInfo.hasNextPage).toBe(true);
    expect(p2.body.data.offers.edges[0].node.address).not.toBe(p1.body.data.offers.edges[1].node.address);
  });

  it("returns errors with extensions.code matching the REST statuses", async () => {
    const notFound = await gql(s, `{ offer(address: "11111111111111111111111111111111") { address } }`);
    expect(notFound.body.errors[0].extensions.code).toBe("NOT_FOUND");
    // Malformed arguments fail at validation (scalars and enums; see graphql-schema.test.ts).
    const bad = await gql(s, `{ offer(address: "xyz") { address } }`);
    expect(bad.body.errors[0].extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
    const page = await gql(s, `{ offers(first: 51) { totalCount } }`);
    expect(page.body.errors[0].extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
    const mine = await gql(s, `{ mine { totalCount } }`);
    expect(mine.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
  });

  it("admits the deepest legitimate query and refuses alias floods and oversized queries", async () => {
    const deepest = `{ shareable { edges { node { offer { viewer { position { address } } contract { outcomes { label } } } } } } }`;
    expect((await gql(s, deepest)).body.errors).toBeUndefined();
    const aliases = `{ ${Array.from({ length: 11 }, (_, i) => `a${i}: _meta { indexedSlot }`).join(" ")} }`;
    const r = await gql(s, aliases);
    expect(r.body.errors?.[0]?.message).toMatch(/alias/i);
    const huge = `{ ${Array.from({ length: 1500 }, () => "_meta { indexedSlot }").join(" ")} }`;
    expect((await gql(s, huge)).body.errors?.length).toBeGreaterThan(0);
  });
});
