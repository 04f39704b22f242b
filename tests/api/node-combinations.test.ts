/**
 * node(id:) and nodes(ids:) in one document, over real HTTP: any combination of the same and
 * different ids of every Node type answers every one of them. Asking node and nodes for the same
 * id used to answer `nodes: [null]` plus an unmasked `Abstract type "Node" must resolve to an
 * Object type at runtime` (issue 21, finding 3).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { upsertPoolCatalog } from "../../indexer";
import { PoolOps } from "../../service/chain/pools-ops";
import { apiStack, type ApiStack, makeUser, contract as makeContract, createBody, key, UNIT, OFFERS_BASE, type TestUser } from "../support/stack";
import { getJson, gql, post } from "../support/http";
import { until } from "../support/wait";

let s: ApiStack;
let taker: TestUser;
/** [global id, typename] of one node of each type. */
let nodes: [string, string][];

beforeAll(async () => {
  s = await apiStack();
  const creator = await makeUser(s);
  taker = await makeUser(s);
  const contract: PublicKey = await makeContract(s);
  const r = await post(s, "/", createBody(contract, { creatorTotalMicros: String(8n * UNIT), takerTargetMicros: String(10n * UNIT) }), creator.token);
  expect(r.status).toBe(200);
  const offer = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${OFFERS_BASE}/${offer}`)).status === 200);
  const t = await post(s, `/${offer}/take`, { takeAmountMicros: String(2n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
  expect(t.status).toBe(200);
  await until(async () => (await getJson(s, `${OFFERS_BASE}/${offer}`)).body.revision === "2");
  const ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
  const pool = await ops.create(creator.name, { question: "Who wins?", labels: ["A", "B"], closesAt: (await s.chain.gateway.now()) + 86_400n });
  await upsertPoolCatalog(s.db, { pool: pool.toBase58(), slug: "node-combinations" });
  const d = (
    await gql(
      s,
      `query($a: Address!) {
        offer(address: $a) { id contract { id } viewer { position { id } } }
        fills(offerAddress: $a) { edges { node { id } } }
        shareable(first: 50) { edges { node { id address } } }
        poll(identifier: "node-combinations") { id }
      }`,
      { a: offer },
      taker.token,
    )
  ).body.data;
  nodes = [
    [d.offer.id, "Offer"],
    [d.offer.contract.id, "Contract"],
    [d.offer.viewer.position.id, "ViewerPosition"],
    [d.fills.edges[0].node.id, "Fill"],
    [d.shareable.edges.find((e: { node: { address: string } }) => e.node.address === offer).node.id, "ShareableOffer"],
    [d.poll.id, "PoolAggregate"],
  ];
}, 120_000);
afterAll(async () => s?.stop());

const q = (doc: string, ids: string[]) => gql(s, `query($ids: [ID!]!, $id: ID!) { ${doc} }`, { ids, id: ids[0] }, taker.token);

describe("node and nodes in one document", () => {
  it("the same id through node and nodes, in either order, for every type", async () => {
    for (const [id, __typename] of nodes) {
      for (const doc of [
        "a: node(id: $id) { id __typename } b: nodes(ids: $ids) { id __typename }",
        "b: nodes(ids: $ids) { id __typename } a: node(id: $id) { id __typename }",
        "a: node(id: $id) { id __typename } b: nodes(ids: $ids) { id __typename } c: node(id: $id) { id __typename } d: nodes(ids: $ids) { id __typename }",
      ]) {
        const r = await q(doc, [id, id]);
        expect(r.body.errors, `${__typename}: ${doc}`).toBeUndefined();
        expect(r.body.data.a).toEqual({ id, __typename });
        expect(r.body.data.b).toEqual([
          { id, __typename },
          { id, __typename },
        ]);
        if (r.body.data.c) expect(r.body.data.c).toEqual({ id, __typename });
        if (r.body.data.d) expect(r.body.data.d).toEqual(r.body.data.b);
      }
    }
  });

  it("every type at once, node for each, nodes of them all twice over", async () => {
    const ids = nodes.map((n) => n[0]);
    const single = nodes.map(([id], i) => `n${i}: node(id: "${id}") { id __typename }`).join(" ");
    const r = await gql(
      s,
      `query($ids: [ID!]!) { all: nodes(ids: $ids) { id __typename } ${single} again: nodes(ids: $ids) { id __typename } }`,
      { ids: [...ids, ...[...ids].reverse()] },
      taker.token,
    );
    expect(r.body.errors).toBeUndefined();
    const expected = [...nodes, ...[...nodes].reverse()].map(([id, __typename]) => ({ id, __typename }));
    expect(r.body.data.all).toEqual(expected);
    expect(r.body.data.again).toEqual(expected);
    nodes.forEach(([id, __typename], i) => expect(r.body.data[`n${i}`]).toEqual({ id, __typename }));
  });
});
