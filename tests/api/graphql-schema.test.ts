/**
 * The GraphQL schema as a client's cache sees it, over real HTTP against the local stack: bad
 * arguments fail at validation (enums and scalars) with GraphQL's standard error, every Node
 * type round-trips through node(id:) and nodes(ids:), and the response cache shares anonymous
 * answers, keeps viewers apart, follows indexed writes and never keeps errors or mutations.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keypair, type PublicKey } from "@solana/web3.js";
import { upsertPoolCatalog } from "../../indexer";
import { PoolOps } from "../../service/chain/pools-ops";
import { apiStack, type ApiStack, makeUser, contract as makeContract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { getJson, gql, post } from "../support/http";
import { until } from "../support/wait";

const BASE = "/api/bets-usdc/offers";
let s: ApiStack;
let creator: TestUser, taker: TestUser, stranger: TestUser;
let contract: PublicKey;
let offer: string;
let pool: PublicKey;
/** Announced by hand here: the test plays the indexer's part of telling the API what changed. */

async function createOffer(by: TestUser): Promise<string> {
  const r = await post(s, "/", createBody(contract, { creatorTotalMicros: String(8n * UNIT), takerTargetMicros: String(10n * UNIT) }), by.token);
  expect(r.status).toBe(200);
  const address = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${BASE}/${address}`)).status === 200);
  return address;
}

async function take(by: TestUser, address: string, revision: string) {
  const t = await post(s, `/${address}/take`, { takeAmountMicros: String(2n * UNIT), expectedRevision: revision, idempotencyKey: key() }, by.token);
  expect(t.status).toBe(200);
  await until(async () => (await getJson(s, `${BASE}/${address}`)).body.revision === String(Number(revision) + 1));
}

beforeAll(async () => {
  // A long cache life: every change a test sees below comes from an indexed write, not from expiry.
  s = await apiStack({ responseCacheTtlMs: 60_000 });
  [creator, taker, stranger] = [await makeUser(s), await makeUser(s), await makeUser(s)];
  contract = await makeContract(s);
  offer = await createOffer(creator);
  await take(taker, offer, "1");
  const ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
  pool = await ops.create(creator.name, { question: "Who wins?", labels: ["A", "B"], closesAt: (await s.chain.gateway.now()) + 86_400n });
  await upsertPoolCatalog(s.db, { pool: pool.toBase58(), slug: "gql-node-pool" });
}, 120_000);
afterAll(async () => s?.stop());

describe("validation", () => {
  const validationError = (
    r: { status: number; body: { data?: unknown; errors?: { message: string; locations?: unknown; extensions?: { code?: string } }[] } },
    msg: RegExp,
  ) => {
    expect(r.body.data, JSON.stringify(r.body)).toBeUndefined();
    expect(r.body.errors).toHaveLength(1);
    expect(r.body.errors![0].message).toMatch(msg);
    expect(r.body.errors![0].locations).toBeDefined();
    // GraphQL over HTTP with `Accept: application/json`: 200 and the error list, no data.
    expect(r.status).toBe(200);
    expect(r.body.errors![0].extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
  };

  it.each([
    ["first: 0", `{ offers(first: 0) { totalCount } }`, /Expected value of type "PageSize", found 0; first\/last must be an integer from 1 to 50/],
    ["first: 51", `{ offers(first: 51) { totalCount } }`, /"PageSize", found 51/],
    ["last: 0 on fills", `{ fills(offerAddress: "11111111111111111111111111111111", last: 0) { totalCount } }`, /"PageSize", found 0/],
    ['address: ""', `{ offer(address: "") { address } }`, /"Address!", found ""; address must be a base58 address of 32 bytes/],
    ["bad base58", `{ offer(address: "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl") { address } }`, /"Address!", found "0OIl/],
    ["a 31-byte address", `{ offer(address: "1111111111111111111111111111111") { address } }`, /"Address!"/],
    ["a number for an address", `{ offer(address: 5) { address } }`, /"Address!", found 5/],
    ['status: "open"', `{ offers(status: "open") { totalCount } }`, /Enum "OfferStatus" cannot represent non-enum value: "open"/],
    ["status: open", `{ offers(status: open) { totalCount } }`, /Value "open" does not exist in "OfferStatus" enum/],
    ["view: Browse", `{ offers(view: Browse) { totalCount } }`, /"OfferView"/],
    ["role: admin", `{ mine(role: admin) { totalCount } }`, /"MineRole"/],
    ["a cursor not from this API", `{ offers(after: "bm9wZQ") { totalCount } }`, /"Cursor", found "bm9wZQ"; not a cursor returned by this API/],
    [
      "a negative amount",
      `mutation { takeOffer(offerAddress: "11111111111111111111111111111111", input: { takeAmountMicros: "-5", expectedRevision: "1", idempotencyKey: "kkkkkkkk" }) { signature } }`,
      /"Amount!", found "-5"/,
    ],
    [
      "an amount over 2^64-1",
      `mutation { takeOffer(offerAddress: "11111111111111111111111111111111", input: { takeAmountMicros: "18446744073709551616", expectedRevision: "1", idempotencyKey: "kkkkkkkk" }) { signature } }`,
      /must be at most 18446744073709551615/,
    ],
    [
      "an amount with leading junk",
      `mutation { takeOffer(offerAddress: "11111111111111111111111111111111", input: { takeAmountMicros: " 1", expectedRevision: "1", idempotencyKey: "kkkkkkkk" }) { signature } }`,
      /"Amount!", found " 1"/,
    ],
    [
      "a side that is no side",
      `mutation { createOffer(input: { contractAddress: "11111111111111111111111111111111", creatorOutcome: sideC, creatorTotalMicros: "1", takerTargetMicros: "1", minimumTakeMicros: "1", expectedFeeBps: 0, idempotencyKey: "kkkkkkkk" }) { signature } }`,
      /"Side"/,
    ],
  ])("refuses %s at validation with the standard error", async (_name, query, msg) => {
    validationError(await gql(s, query, {}, stranger.token), msg);
  });

  it("refuses bad variables while coercing them, before any resolver runs", async () => {
    const r = await gql(s, `query($n: PageSize, $a: Address!) { offers(first: $n) { totalCount } offer(address: $a) { address } }`, { n: 0, a: offer });
    expect(r.body.data).toBeUndefined();
    expect(r.body.errors[0].message).toMatch(/Variable "\$n" got invalid value 0; .*first\/last must be an integer from 1 to 50/);
    expect(r.body.errors[0].locations).toBeDefined();
    expect(r.body.errors[0].extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
    const amount = await gql(
      s,
      `mutation($o: Address!, $i: TakeOfferInput!) { takeOffer(offerAddress: $o, input: $i) { signature } }`,
      { o: offer, i: { takeAmountMicros: "01", expectedRevision: "2", idempotencyKey: key() } },
      stranger.token,
    );
    expect(amount.body.errors[0].message).toMatch(/Variable "\$i" got invalid value "01" at "i.takeAmountMicros"/);
    expect(amount.body.errors[0].extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
    // Nothing was written: the offer is where it was.
    expect((await getJson(s, `${BASE}/${offer}`)).body.revision).toBe("2");
  });

  it("answers the values the spec spells, as enums and scalars", async () => {
    const r = await gql(
      s,
      `query($a: Address!) { offer(address: $a) { status creatorOutcome createdAt creatorTotalMicros termsGuardrail { status } viewer { role takeLimit } contract { status } } }`,
      { a: offer },
      taker.token,
    );
    expect(r.body.data.offer).toMatchObject({
      status: "Open",
      creatorOutcome: "sideA",
      creatorTotalMicros: "8000000",
      termsGuardrail: { status: "normal" },
      viewer: { role: "taker" },
      contract: { status: "Open" },
    });
    expect(new Date(r.body.data.offer.createdAt).toISOString()).toBe(r.body.data.offer.createdAt);
    const filtered = await gql(s, `{ offers(status: Open, view: browse, first: 50) { edges { node { address } } } }`);
    expect(filtered.body.data.offers.edges.map((e: { node: { address: string } }) => e.node.address)).toContain(offer);
  });
});

describe("Node ids", () => {
  it("round-trips every node type through node(id:) and nodes(ids:)", async () => {
    const q = `query($a: Address!, $p: String!) {
      offer(address: $a) { id address contract { id address } viewer { position { id address } } }
      fills(offerAddress: $a) { edges { node { id offer revision } } }
      shareable(first: 50) { edges { node { id address } } }
      poll(identifier: $p) { id address }
    }`;
    const r = await gql(s, q, { a: offer, p: "gql-node-pool" }, taker.token);
    expect(r.body.errors).toBeUndefined();
    const d = r.body.data;
    const share = d.shareable.edges.find((e: { node: { address: string } }) => e.node.address === offer).node;
    const fill = d.fills.edges[0].node;
    const expected: [string, string, Record<string, string>][] = [
      [d.offer.id, "Offer", { address: offer }],
      [d.offer.contract.id, "Contract", { address: contract.toBase58() }],
      [d.offer.viewer.position.id, "ViewerPosition", { address: d.offer.viewer.position.address }],
      [fill.id, "Fill", { offer, revision: fill.revision }],
      [share.id, "ShareableOffer", { address: offer }],
      [d.poll.id, "PoolAggregate", { address: pool.toBase58() }],
    ];
    expect(new Set(expected.map((e) => e[0])).size).toBe(expected.length);
    const fragments = `__typename
      ... on Offer { address } ... on Contract { address } ... on ViewerPosition { address }
      ... on Fill { offer revision } ... on ShareableOffer { address } ... on PoolAggregate { address }`;
    for (const [id, typename, fields] of expected) {
      const n = await gql(s, `query($id: ID!) { node(id: $id) { id ${fragments} } }`, { id }, taker.token);
      expect(n.body.errors, typename).toBeUndefined();
      expect(n.body.data.node).toEqual({ id, __typename: typename, ...fields });
    }
    const all = await gql(s, `query($ids: [ID!]!) { nodes(ids: $ids) { id __typename } }`, { ids: expected.map((e) => e[0]) }, taker.token);
    expect(all.body.data.nodes).toEqual(expected.map(([id, __typename]) => ({ id, __typename })));
  });

  it("shows a position to its taker only, null for an id of nothing, BAD_REQUEST for an id of no node", async () => {
    const pos = (await gql(s, `query($a: Address!) { offer(address: $a) { viewer { position { id } } } }`, { a: offer }, taker.token)).body.data.offer.viewer
      .position.id;
    const q = `query($id: ID!) { node(id: $id) { id } }`;
    expect((await gql(s, q, { id: pos }, stranger.token)).body.data.node).toBeNull();
    expect((await gql(s, q, { id: pos })).body.data.node).toBeNull();
    const none = Buffer.from("Offer:11111111111111111111111111111111").toString("base64");
    expect((await gql(s, q, { id: none })).body.data.node).toBeNull();
    for (const id of ["garbage!", Buffer.from("Settings:1").toString("base64"), Buffer.from("Nope:1").toString("base64"), ""]) {
      const r = await gql(s, q, { id });
      expect(r.body.errors?.[0], id).toMatchObject({ message: "not an id returned by this API", extensions: { code: "BAD_REQUEST", status: 400 } });
    }
  });
});

describe("response cache", () => {
  const OFFERS = `{ offers(first: 50) { edges { node { address creator { displayName } } } } }`;
  const nameOf = (r: { body: { data: { offers: { edges: { node: { address: string; creator: { displayName: string } } }[] } } } }, a: string) =>
    r.body.data.offers.edges.find((e) => e.node.address === a)?.node.creator.displayName;

  it("shares an anonymous answer until the next indexed write", async () => {
    const first = await gql(s, OFFERS);
    expect(first.headers.get("etag")).toBeTruthy();
    const before = nameOf(first, offer);
    // Changed under the cache without an indexed write: the shared answer stays.
    await s.db.updateTable("profiles").set({ display_name: "Renamed" }).where("wallet", "=", creator.user.wallet.toBase58()).execute();
    const again = await gql(s, OFFERS);
    expect(nameOf(again, offer)).toBe(before);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    // A conditional request with the ETag is answered 304 while the answer is current.
    const cond = await fetch(`${s.url}/graphql?query=${encodeURIComponent(OFFERS)}`, { headers: { "if-none-match": first.headers.get("etag")! } });
    expect(cond.status).toBe(304);
    // An indexed write (a new offer) drops it: the new offer and the new name show.
    const added = await createOffer(creator);
    const after = await until(async () => {
      const r = await gql(s, OFFERS);
      return nameOf(r, added) ? r : null;
    });
    expect(nameOf(after, offer)).toBe("Renamed");
  });

  it("drops an answer at once when a change feed announces a write", async () => {
    const Q = `query($a: Address!) { offer(address: $a) { creator { displayName } } }`;
    const before = (await gql(s, Q, { a: offer }, stranger.token)).body.data.offer.creator.displayName;
    await s.db.updateTable("profiles").set({ display_name: "Announced" }).where("wallet", "=", creator.user.wallet.toBase58()).execute();
    expect((await gql(s, Q, { a: offer }, stranger.token)).body.data.offer.creator.displayName).toBe(before);
    void s.changes.publish({ slot: 0, offers: [offer], positions: [], fills: [], wallets: [], pools: [], contracts: [], config: false });
    expect((await gql(s, Q, { a: offer }, stranger.token)).body.data.offer.creator.displayName).toBe("Announced");
  });

  it("keeps each viewer's answer to that viewer when identical queries arrive together", async () => {
    const Q = `query($a: Address!) { offer(address: $a) { viewer { role position { address } } } }`;
    // A new write first, so no answer is cached and each caller's identical queries miss together
    // (they share one execution per caller: shareMisses in graphql/response-cache.ts).
    await createOffer(creator);
    const callers = [creator.token, taker.token, stranger.token, undefined];
    const answers = await Promise.all(callers.flatMap((t) => Array.from({ length: 6 }, () => gql(s, Q, { a: offer }, t).then((r) => ({ t, r })))));
    for (const { t, r } of answers) {
      expect(r.body.errors).toBeUndefined();
      const v = r.body.data.offer.viewer;
      if (t === creator.token) expect(v).toEqual({ role: "creator", position: null });
      else if (t === taker.token) expect(v.role).toBe("taker");
      else expect(v).toEqual({ role: "none", position: null });
    }
  });

  it("keeps each viewer's answer to that viewer", async () => {
    const Q = `query($a: Address!) { offer(address: $a) { viewer { role position { address } } } }`;
    const roles = async () => [
      (await gql(s, Q, { a: offer }, creator.token)).body.data.offer.viewer,
      (await gql(s, Q, { a: offer }, taker.token)).body.data.offer.viewer,
      (await gql(s, Q, { a: offer }, stranger.token)).body.data.offer.viewer,
      (await gql(s, Q, { a: offer })).body.data.offer.viewer,
    ];
    for (let i = 0; i < 2; i++) {
      const [c, t, x, anon] = await roles();
      expect(c).toEqual({ role: "creator", position: null });
      expect(t.role).toBe("taker");
      expect(t.position.address).toBeTruthy();
      expect(x).toEqual({ role: "none", position: null });
      expect(anon).toEqual({ role: "none", position: null });
    }
  });

  it("shows a viewer's own new position after the indexed write", async () => {
    const Q = `query($a: Address!) { offer(address: $a) { revision viewer { role position { takerAmountMicros } } } }`;
    const cached = await gql(s, Q, { a: offer }, stranger.token);
    expect(cached.body.data.offer.viewer).toEqual({ role: "none", position: null });
    await take(stranger, offer, cached.body.data.offer.revision);
    const seen = await until(async () => (await gql(s, Q, { a: offer }, stranger.token)).body.data.offer.viewer.position);
    expect(seen).toEqual({ takerAmountMicros: "2000000" });
  });

  it("never keeps an error: an offer that appears without a write is found at once", async () => {
    const row = await s.db.selectFrom("offers").selectAll().where("address", "=", offer).executeTakeFirstOrThrow();
    const ghost = Keypair.generate().publicKey.toBase58();
    const Q = `query($a: Address!) { offer(address: $a) { address } }`;
    const missing = await gql(s, Q, { a: ghost }, stranger.token);
    expect(missing.body.errors[0].extensions.code).toBe("NOT_FOUND");
    expect(missing.headers.get("etag")).toBeNull();
    await s.db
      .insertInto("offers")
      .values({ ...row, address: ghost })
      .execute();
    expect((await gql(s, Q, { a: ghost }, stranger.token)).body.data.offer.address).toBe(ghost);
  });

  it("never keeps a mutation's answer", async () => {
    const M = `mutation($i: CreateOfferInput!) { createOffer(input: $i) { offerAddress } }`;
    const vars = { i: createBody(contract, { creatorTotalMicros: String(2n * UNIT), takerTargetMicros: String(2n * UNIT), idempotencyKey: key() }) };
    const a = await gql(s, M, vars, creator.token);
    expect(a.body.errors).toBeUndefined();
    expect(a.headers.get("etag")).toBeNull();
    // The same mutation again reaches the write service (its idempotency replay answers it).
    const b = await gql(s, M, vars, creator.token);
    expect(b.body.data.createOffer.offerAddress).toBe(a.body.data.createOffer.offerAddress);
    expect(b.headers.get("etag")).toBeNull();
  });
});
