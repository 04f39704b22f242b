/**
 * GraphQL subscriptions on the local stack, over real HTTP (SSE, as yoga serves it) and a real
 * WebSocket (graphql-ws): every kind (an offer, offers matching filters, an offer's fills, the
 * caller's positions and settlements, a pool's aggregate, the indexed slot), fed by the indexer's
 * change feed as writes made through the API land; a subscriber that disconnects and reconnects,
 * a token revoked mid-subscription, tokens refused up front, armor's limits on subscription
 * documents.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { LocalStack } from "../../stack/local-stack";
import { upsertPoolCatalog } from "../../indexer";
import { PoolOps } from "../../service/chain/pools-ops";
import { liveOf } from "../../graphql/live-ws";
import type { LiveUpdates } from "../../service/read/live-updates";
import { liveStack, subscribeOver, type LiveStream, type Transport } from "./live-clients";
import { makeUser, contract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { gql, post } from "../support/http";
import { until } from "../support/wait";

const OFFER = `address revision status takerFilledMicros fillCount contract { address sport }
  viewer { role position { address takerAmountMicros status settledAt } settlement { settledPositionCount } }`;

let s: LocalStack;
let live: LiveUpdates;
let creator: TestUser, taker: TestUser;
const open: LiveStream[] = [];

beforeAll(async () => {
  // Streams whose client left are not kept for a resume here (tests/api/live-resume.test.ts): the figures of shared reads count only the open ones.
  s = await liveStack({ live: { authRecheckMs: 200, resumeWindowMs: 1 } });
  live = liveOf(s.app)!;
  [creator, taker] = [await makeUser(s), await makeUser(s)];
});
afterAll(async () => {
  for (const st of open) st.close();
  await s?.stop();
});

/** Subscribes and waits until the server holds the subscription (SSE: the response started; WebSocket: registered). */
async function sub(t: Transport, query: string, variables: Record<string, unknown> = {}, token?: string): Promise<LiveStream> {
  const before = live.stats().subscriptions;
  const st = await subscribeOver(t, s.url, query, variables, token);
  open.push(st);
  await until(async () => live.stats().subscriptions > before || st.done);
  return st;
}

async function newOffer(c?: PublicKey): Promise<string> {
  const r = await post(s, "/", createBody(c ?? (await contract(s))), creator.token);
  expect(r.status, r.text).toBe(200);
  await until(async () => (await gql(s, `{ offer(address: "${r.body.offerAddress}") { address } }`)).body.data?.offer);
  return r.body.offerAddress as string;
}

async function take(offer: string, revision: string, micros = 5n * UNIT, who = taker): Promise<void> {
  const r = await post(s, `/${offer}/take`, { takeAmountMicros: String(micros), expectedRevision: revision, idempotencyKey: key() }, who.token);
  expect(r.status, r.text).toBe(200);
}

const closeAll = async () => {
  for (const st of open.splice(0)) st.close();
  await until(async () => live.stats().subscriptions === 0);
};

it("SSE by GET as well: yoga's default transport for a plain URL", async () => {
  const ac = new AbortController();
  const r = await fetch(`${s.url}/graphql?query=${encodeURIComponent("subscription { indexedSlot }")}`, {
    headers: { accept: "text/event-stream" },
    signal: ac.signal,
  });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/event-stream");
  const reader = r.body!.getReader();
  let text = "";
  while (!text.includes("event: next")) text += new TextDecoder().decode((await reader.read()).value);
  expect(text).toMatch(/data: \{"data":\{"indexedSlot":"\d+"\}\}/);
  ac.abort();
  await until(async () => live.stats().subscriptions === 0);
});

describe.each(["sse", "ws"] as const)("over %s", (t) => {
  it("offer: the current state first, then a take made through the API", async () => {
    const o = await newOffer();
    const st = await sub(t, `subscription($a: Address!) { offer(address: $a) { ${OFFER} } }`, { a: o }, taker.token);
    const first = (await st.next()).data.offer;
    expect(first).toMatchObject({ address: o, revision: "1", takerFilledMicros: "0", viewer: { role: "none", position: null } });
    await take(o, "1");
    const after = (await st.next()).data.offer;
    expect(after).toMatchObject({ address: o, revision: "2", takerFilledMicros: String(5n * UNIT), fillCount: 1, viewer: { role: "taker" } });
    expect(after.viewer.position.takerAmountMicros).toBe(String(5n * UNIT));
    await closeAll();
  });

  it("offer: subscribers share each change's read and execution by viewer; each viewer still gets its own viewer block", async () => {
    const o = await newOffer();
    const q = `subscription($a: Address!) { offer(address: $a) { ${OFFER} } }`;
    const anon = [];
    for (let i = 0; i < 4; i++) anon.push(await sub(t, q, { a: o }));
    const [asTaker, asTakerAgain, asCreator] = [
      await sub(t, q, { a: o }, taker.token),
      await sub(t, q, { a: o }, taker.token),
      await sub(t, q, { a: o }, creator.token),
    ];
    const everyone = [...anon, asTaker, asTakerAgain, asCreator];
    for (const st of everyone) expect((await st.next()).data.offer.revision).toBe("1");
    const before = live.stats();
    await take(o, "1");
    const [a0, ...aRest] = await Promise.all(anon.map(async (st) => (await st.next()).data.offer));
    const [tv, tv2, cv] = [(await asTaker.next()).data.offer, (await asTakerAgain.next()).data.offer, (await asCreator.next()).data.offer];
    const after = live.stats();
    // One read and one execution for the anonymous subscribers, one each for the taker's token (two subscribers) and the creator's.
    expect(after.reads - before.reads).toBe(3);
    expect(after.executions - before.executions).toBe(3);
    expect(after.sharedExecutions - before.sharedExecutions).toBe(everyone.length - 3);
    expect(a0).toMatchObject({ revision: "2", fillCount: 1, viewer: { role: "none", position: null, settlement: null } });
    for (const a of aRest) expect(a).toEqual(a0);
    expect(tv).toMatchObject({ revision: "2", viewer: { role: "taker", position: { takerAmountMicros: String(5n * UNIT) }, settlement: null } });
    expect(tv2).toEqual(tv);
    expect(cv).toMatchObject({ revision: "2", viewer: { role: "creator", position: null } });
    expect(cv.viewer.settlement).not.toBeNull();
    await closeAll();
  });

  it("offer: an unknown offer is NOT_FOUND, a malformed address refused at validation, as in the query", async () => {
    const unknown = await sub(t, `subscription { offer(address: "11111111111111111111111111111112") { address } }`);
    const [e] = await unknown.ended();
    expect(e.errors?.[0].extensions?.code).toBe("NOT_FOUND");
    const bad = await subscribeOver(t, s.url, `subscription { offer(address: "nope") { address } }`);
    open.push(bad);
    const [b] = await bad.ended();
    expect(b.errors?.[0].extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
    // Over SSE yoga streams a validation error as the stream's one event (status 200).
    if (t === "sse") expect([unknown.status, bad.status]).toEqual([200, 200]);
    await closeAll();
  });

  it("offers: offers created or changed that match the filters, and only those", async () => {
    const football = await sub(t, `subscription { offers(sport: "football", view: browse) { ${OFFER} } }`);
    const tennis = await sub(t, `subscription { offers(sport: "tennis") { address } }`);
    const o = await newOffer();
    const created = (await football.until((r) => r.data.offers.address === o)).data.offers;
    expect(created).toMatchObject({ status: "Open", revision: "1", contract: { sport: "football" } });
    await take(o, "1");
    expect((await football.until((r) => r.data.offers.address === o)).data.offers.revision).toBe("2");
    // Filled: no longer in the browse view, so not sent.
    await take(o, "2", 5n * UNIT);
    await newOffer();
    const next = (await football.next()).data.offers;
    expect(next.address).not.toBe(o);
    expect(tennis.pending).toBe(0);
    const bad = await subscribeOver(t, s.url, `subscription { offers(sport: "curling") { address } }`);
    open.push(bad);
    expect((await bad.ended())[0].errors?.[0].extensions?.code).toBe("BAD_REQUEST");
    await closeAll();
  });

  it("offerFills: each new fill of the offer", async () => {
    const o = await newOffer();
    const other = await newOffer();
    const st = await sub(t, `subscription($a: Address!) { offerFills(address: $a) { offer revision taker takeMicros creatorMatchedMicros } }`, { a: o });
    await take(other, "1");
    await take(o, "1", 2n * UNIT);
    await take(o, "2", 3n * UNIT);
    const f1 = (await st.next()).data.offerFills;
    const f2 = (await st.next()).data.offerFills;
    expect(f1).toMatchObject({ offer: o, revision: "2", taker: taker.user.wallet.toBase58(), takeMicros: String(2n * UNIT) });
    expect(f2).toMatchObject({ offer: o, revision: "3", takeMicros: String(3n * UNIT) });
    await closeAll();
  });

  it("myPositions: the caller's offers as they change, with the caller's view; a token is needed", async () => {
    const bystander = await makeUser(s);
    const mineT = await sub(t, `subscription { myPositions { ${OFFER} } }`, {}, taker.token);
    const mineC = await sub(t, `subscription { myPositions { ${OFFER} } }`, {}, creator.token);
    const mineB = await sub(t, `subscription { myPositions { address } }`, {}, bystander.token);
    const o = await newOffer();
    expect((await mineC.until((r) => r.data.myPositions.address === o)).data.myPositions.viewer.role).toBe("creator");
    await take(o, "1");
    const tv = (await mineT.until((r) => r.data.myPositions.address === o)).data.myPositions;
    expect(tv).toMatchObject({ revision: "2", viewer: { role: "taker", position: { takerAmountMicros: String(5n * UNIT), status: "Open" } } });
    expect((await mineC.until((r) => r.data.myPositions.revision === "2")).data.myPositions.viewer.role).toBe("creator");
    expect(mineB.pending).toBe(0);
    const anon = await subscribeOver(t, s.url, `subscription { myPositions { address } }`);
    open.push(anon);
    expect((await anon.ended())[0].errors?.[0].extensions?.code).toBe("UNAUTHENTICATED");
    await closeAll();
  });

  it("mySettlements: the caller's settled position and the creator's settled offer", async () => {
    const c = await contract(s, 600n, 3_600n);
    const o = await newOffer(c);
    await take(o, "1");
    const st = await sub(t, `subscription { mySettlements { ${OFFER} } }`, {}, taker.token);
    const sc = await sub(t, `subscription { mySettlements { ${OFFER} } }`, {}, creator.token);
    await s.chain.gateway.advance(601n);
    await s.admin.resolveContract(c, "sideB");
    await s.worker.drain();
    const tv = (await st.until((r) => r.data.mySettlements.address === o)).data.mySettlements;
    expect(tv.viewer).toMatchObject({ role: "taker", position: { status: "SettledTakerWin" } });
    expect(tv.viewer.position.settledAt).not.toBeNull();
    const cv = (await sc.until((r) => r.data.mySettlements.address === o)).data.mySettlements;
    expect(cv.viewer).toMatchObject({ role: "creator", settlement: { settledPositionCount: 1 } });
    await closeAll();
  });

  it("pool: the embed's aggregate now and after a pick", async () => {
    const ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
    const now = await s.chain.gateway.now();
    const pool = await ops.create(creator.name, { question: `Who wins over ${t}?`, labels: ["Red", "Blue"], closesAt: now + 600n });
    await ops.pick(creator.name, pool, 0, 10n * UNIT);
    await upsertPoolCatalog(s.db, { pool: pool.toBase58(), slug: `live-${t}` });
    const st = await sub(
      t,
      `subscription($s: String!) { pool(slug: $s) { address slug state totalOiMicros participantCount outcomes { outcomeIndex totalOiMicros } } }`,
      {
        s: `live-${t}`,
      },
    );
    expect((await st.next()).data.pool).toMatchObject({ address: pool.toBase58(), slug: `live-${t}`, totalOiMicros: String(10n * UNIT), participantCount: 1 });
    await ops.pick(taker.name, pool, 1, 4n * UNIT);
    const after = (await st.next()).data.pool;
    expect(after).toMatchObject({ totalOiMicros: String(14n * UNIT), participantCount: 2 });
    expect(after.outcomes[1].totalOiMicros).toBe(String(4n * UNIT));
    const unknown = await subscribeOver(t, s.url, `subscription { pool(slug: "no-such-pool") { id } }`);
    open.push(unknown);
    expect((await unknown.ended())[0].errors?.[0].extensions?.code).toBe("NOT_FOUND");
    await closeAll();
  });

  it("indexedSlot: now, then after every applied write", async () => {
    const st = await sub(t, `subscription { indexedSlot }`);
    const meta = (await gql(s, `{ _meta { indexedSlot } }`)).body.data._meta.indexedSlot;
    expect((await st.next()).data.indexedSlot).toBe(meta);
    await newOffer();
    const next = (await st.next()).data.indexedSlot;
    expect(BigInt(next)).toBeGreaterThanOrEqual(BigInt(meta));
    expect(next).toBe((await gql(s, `{ _meta { indexedSlot } }`)).body.data._meta.indexedSlot);
    await closeAll();
  });

  it("a subscriber that disconnects is dropped at once, and on reconnecting gets the current state again", async () => {
    const o = await newOffer();
    const q = `subscription($a: Address!) { offer(address: $a) { revision takerFilledMicros } }`;
    const first = await sub(t, q, { a: o });
    expect((await first.next()).data.offer.revision).toBe("1");
    first.close();
    await until(async () => live.stats().subscriptions === 0);
    await take(o, "1");
    const again = await sub(t, q, { a: o });
    expect((await again.next()).data.offer).toEqual({ revision: "2", takerFilledMicros: String(5n * UNIT) });
    await closeAll();
  });

  it("a subscription whose token is revoked ends with UNAUTHENTICATED (within authRecheckMs)", async () => {
    const { id, token } = await s.custody.issueToken(taker.user.id, { scopes: ["bet:read"], ttlSeconds: 600 });
    const st = await sub(t, `subscription { myPositions { address } }`, {}, token);
    const anon = await sub(t, `subscription { indexedSlot }`);
    await anon.next();
    expect(await s.custody.revokeToken(id)).toBe(true);
    const t0 = Date.now();
    const [last] = await st.ended(5_000);
    expect(last.errors?.[0].extensions?.code).toBe("UNAUTHENTICATED");
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(anon.done).toBe(false);
    await closeAll();
  });

  it("a token that is unknown, malformed or revoked is refused before anything runs", async () => {
    for (const bad of ["pat_" + "x".repeat(43), "garbage"]) {
      const st = await subscribeOver(t, s.url, `subscription { indexedSlot }`, {}, bad);
      open.push(st);
      await st.ended();
      if (t === "sse") expect(st.failure?.status).toBe(401);
      else expect(st.failure?.code).toBe(4401);
    }
    expect(live.stats().subscriptions).toBe(0);
  });

  it("graphql-armor's limits apply to subscription documents", async () => {
    const aliases = Array.from({ length: 12 }, (_, i) => `a${i}: address`).join(" ");
    const st = await subscribeOver(t, s.url, `subscription { offers { ${aliases} } }`);
    open.push(st);
    const [r] = await st.ended();
    expect(r.errors?.[0].message).toMatch(/alias/i);
    expect(live.stats().subscriptions).toBe(0);
  });
});
