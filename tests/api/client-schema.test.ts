/**
 * What a GraphQL client builds on, over real HTTP and WebSocket: every mutation, its arguments and
 * input fields are described in the schema; a mutation's receipt carries the Offer node (id and
 * all) so a normalising cache can update from it; the pool is named by `identifier` in the query
 * and the subscription alike, the subscription's former `slug` still working, deprecated.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildClientSchema, getIntrospectionQuery, getNamedType, isInputObjectType, type IntrospectionQuery } from "graphql";
import { encodeGlobalID } from "@pothos/plugin-relay";
import type { LocalStack } from "../../stack/local-stack";
import { upsertPoolCatalog } from "../../indexer";
import { PoolOps } from "../../service/chain/pools-ops";
import { liveStack, subscribeOver, type Transport } from "./live-clients";
import { getJson, gql, post } from "../support/http";
import { until } from "../support/wait";
import { contract, createBody, key, makeUser, UNIT, type TestUser } from "../support/stack";

let s: LocalStack;
let creator: TestUser, taker: TestUser;

beforeAll(async () => {
  s = await liveStack();
  [creator, taker] = [await makeUser(s), await makeUser(s)];
});
afterAll(async () => {
  await s?.stop();
});

describe("the schema describes every mutation", () => {
  it("has a description on each mutation, each argument and each field of their inputs", async () => {
    const schema = buildClientSchema((await gql(s, getIntrospectionQuery())).body.data as IntrospectionQuery);
    const undescribed: string[] = [];
    const mutations = Object.values(schema.getMutationType()!.getFields());
    expect(mutations.map((m) => m.name).sort()).toEqual([
      "closeAllOffers",
      "closeOffer",
      "createOffer",
      "createWebhook",
      "deleteWebhook",
      "replayWebhookDelivery",
      "rotateWebhookSecret",
      "takeBest",
      "takeOffer",
      "updateWebhook",
    ]);
    for (const m of mutations) {
      if (!m.description) undescribed.push(m.name);
      for (const a of m.args) {
        if (!a.description) undescribed.push(`${m.name}(${a.name})`);
        const input = getNamedType(a.type);
        if (isInputObjectType(input)) for (const f of Object.values(input.getFields())) if (!f.description) undescribed.push(`${input.name}.${f.name}`);
      }
    }
    expect(undescribed).toEqual([]);
  });
});

describe("a mutation's receipt carries the offer", () => {
  it("takeOffer and closeOffer answer the Offer node with its global id and the caller's viewer", async () => {
    const c = await contract(s);
    const created = await post(s, "/", createBody(c), creator.token);
    const offer = created.body.offerAddress as string;
    await until(async () => (await getJson(s, `/api/bets-usdc/offers/${offer}`)).status === 200);

    const took = await gql(
      s,
      `mutation($o: Address!, $i: TakeOfferInput!) { takeOffer(offerAddress: $o, input: $i) { status offerAddress offer { __typename id address takerTargetMicros viewer { canClose } } } }`,
      { o: offer, i: { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() } },
      taker.token,
    );
    expect(took.body.errors).toBeUndefined();
    expect(took.body.data.takeOffer).toEqual({
      status: "pending",
      offerAddress: offer,
      offer: { __typename: "Offer", id: encodeGlobalID("Offer", offer), address: offer, takerTargetMicros: String(10n * UNIT), viewer: { canClose: false } },
    });
    await until(async () => (await getJson(s, `/api/bets-usdc/offers/${offer}`)).body.revision === "2");

    const closed = await gql(
      s,
      `mutation($o: Address!, $i: CloseOfferInput!) { closeOffer(offerAddress: $o, input: $i) { offer { id revision viewer { role canClose } } } }`,
      { o: offer, i: { expectedRevision: "2", idempotencyKey: key() } },
      creator.token,
    );
    expect(closed.body.errors).toBeUndefined();
    // As indexed when the mutation answers: the take is, the close not yet (or already) applied.
    expect(closed.body.data.closeOffer.offer).toMatchObject({ id: encodeGlobalID("Offer", offer), viewer: { role: "creator" } });
    expect(["2", "3"]).toContain(closed.body.data.closeOffer.offer.revision);
  });

  it("createOffer answers the receipt, the offer field being there to ask for", async () => {
    const c = await contract(s);
    const r = await gql(
      s,
      `mutation($i: CreateOfferInput!) { createOffer(input: $i) { status offerAddress offer { id address } } }`,
      { i: { ...createBody(c), idempotencyKey: key() } },
      creator.token,
    );
    expect(r.body.errors).toBeUndefined();
    const { status, offerAddress, offer } = r.body.data.createOffer;
    expect(status).toBe("pending");
    // null until indexed, then the new offer itself: never another one.
    if (offer !== null) expect(offer).toEqual({ id: encodeGlobalID("Offer", offerAddress), address: offerAddress });
  });
});

describe("the pool argument: identifier", () => {
  let pool: string;
  beforeAll(async () => {
    const ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
    const now = await s.chain.gateway.now();
    pool = (await ops.create(creator.name, { question: "Who wins?", labels: ["Red", "Blue"], closesAt: now + 600n })).toBase58();
    await upsertPoolCatalog(s.db, { pool, slug: "named" });
    await until(async () => (await getJson(s, "/api/embed/v1/polls/named")).status === 200);
  });

  it("the query and the subscription both take identifier; slug is deprecated on the subscription", async () => {
    const schema = buildClientSchema((await gql(s, getIntrospectionQuery({ inputValueDeprecation: true }))).body.data as IntrospectionQuery);
    const queryArgs = schema.getQueryType()!.getFields().poll.args;
    const subArgs = schema.getSubscriptionType()!.getFields().pool.args;
    expect(queryArgs.map((a) => a.name)).toEqual(["identifier"]);
    // `after` is every subscription's resume argument (issue 26).
    expect(subArgs.map((a) => [a.name, a.deprecationReason ?? null])).toEqual([
      ["after", null],
      ["identifier", null],
      ["slug", expect.stringContaining("identifier")],
    ]);
  });

  for (const t of ["sse", "ws"] as Transport[]) {
    it(`${t}: pool(identifier:) by slug or address, pool(slug:) as before, both or neither refused`, async () => {
      for (const [query, variables] of [
        [`subscription($i: String!) { pool(identifier: $i) { address } }`, { i: "named" }],
        [`subscription($i: String!) { pool(identifier: $i) { address } }`, { i: pool }],
        [`subscription($s: String!) { pool(slug: $s) { address } }`, { s: "named" }],
      ] as const) {
        const st = await subscribeOver(t, s.url, query, variables);
        expect((await st.next()).data.pool.address).toBe(pool);
        st.close();
      }
      for (const query of [`subscription { pool(identifier: "named", slug: "named") { address } }`, `subscription { pool { address } }`]) {
        const st = await subscribeOver(t, s.url, query);
        expect((await st.ended())[0].errors?.[0].extensions?.code).toBe("BAD_REQUEST");
        st.close();
      }
    });
  }
});
