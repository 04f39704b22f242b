/**
 * The bounds of live updates on the local stack: subscriptions per WebSocket connection and per
 * process (refused with TOO_MANY_REQUESTS / SERVICE_UNAVAILABLE, room again once one completes), a
 * consumer that stops reading (its queue stays bounded, coalesced to the latest state, which it
 * gets when it reads again), and a closing server completing every stream.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { LocalStack } from "../../stack/local-stack";
import { liveOf } from "../../graphql/live-ws";
import { LiveUpdates } from "../../service/read/live-updates";
import { liveTopics } from "../../service/read/live-topics";
import { ReadService } from "../../service/read/read-service";
import type { ChangeSet } from "../../indexer";
import { LocalChangeFeed } from "../../indexer";
import { liveStack, subscribeOver, wsClient, wsSubscribe, type LiveStream } from "./live-clients";
import { freshStore, type StoreTarget } from "../indexer/stores";
import { makeUser, contract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { gql, post } from "../support/http";
import { until } from "../support/wait";

let s: LocalStack;
let live: LiveUpdates;
let creator: TestUser, taker: TestUser;

const change = (o: Partial<ChangeSet>): ChangeSet => ({
  slot: 1,
  offers: [],
  positions: [],
  fills: [],
  wallets: [],
  pools: [],
  contracts: [],
  config: false,
  ...o,
});

beforeAll(async () => {
  s = await liveStack({ live: { maxPerConnection: 3, maxPerProcess: 5, queueLimit: 2 } });
  live = liveOf(s.app)!;
  [creator, taker] = [await makeUser(s), await makeUser(s)];
});
afterAll(async () => s?.stop());

async function newOffer(): Promise<string> {
  const r = await post(s, "/", createBody(await contract(s)), creator.token);
  expect(r.status, r.text).toBe(200);
  await until(async () => (await gql(s, `{ offer(address: "${r.body.offerAddress}") { address } }`)).body.data?.offer);
  return r.body.offerAddress as string;
}

describe("subscription limits", () => {
  it("a WebSocket connection holds at most maxPerConnection subscriptions; completing one makes room", async () => {
    const client = wsClient(s.url);
    const streams = [0, 1, 2].map(() => wsSubscribe(client, "subscription { indexedSlot }"));
    for (const st of streams) await st.next();
    const fourth = wsSubscribe(client, "subscription { indexedSlot }");
    const [r] = await fourth.ended();
    expect(r.errors?.[0].extensions?.code).toBe("TOO_MANY_REQUESTS");
    expect(live.stats().subscriptions).toBe(3);
    streams[0].close();
    await until(async () => live.stats().subscriptions === 2);
    const again = wsSubscribe(client, "subscription { indexedSlot }");
    expect((await again.next()).data.indexedSlot).toMatch(/^\d+$/);
    await client.dispose();
    await until(async () => live.stats().subscriptions === 0);
  });

  it("the process holds at most maxPerProcess subscriptions, whatever the connections", async () => {
    const held: LiveStream[] = [];
    for (let i = 0; i < 5; i++) {
      held.push(await subscribeOver(i % 2 ? "ws" : "sse", s.url, "subscription { indexedSlot }"));
      await held[i].next();
    }
    expect(await (await fetch(`${s.url}/metrics`)).text()).toMatch(/^offers_live_subscriptions 5$/m);
    const sse = await subscribeOver("sse", s.url, "subscription { indexedSlot }");
    const [r] = await sse.ended();
    expect(r.errors?.[0].extensions?.code).toBe("SERVICE_UNAVAILABLE");
    expect(sse.status).toBe(503);
    const ws = await subscribeOver("ws", s.url, "subscription { indexedSlot }");
    expect((await ws.ended())[0].errors?.[0].extensions?.code).toBe("SERVICE_UNAVAILABLE");
    ws.close();
    for (const st of held) st.close();
    await until(async () => live.stats().subscriptions === 0);
  });
});

describe("WebSocket rules of the HTTP API", () => {
  it("only subscriptions over WebSocket: a query or a mutation is refused, to be sent over HTTP", async () => {
    const client = wsClient(s.url);
    for (const q of ["{ _meta { indexedSlot } }", "mutation { __typename }"]) {
      const [r] = await wsSubscribe(client, q).ended();
      expect(r.errors?.[0].extensions?.code).toBe("BAD_REQUEST");
    }
    await client.dispose();
  });

  it("each subscribe message takes from the token's request bucket, the one HTTP requests take from", async () => {
    const limitedStack = await liveStack({ requestLimits: { ipBurst: 0, ipPerMinute: 0, tokenBurst: 3, tokenPerMinute: 1 } });
    try {
      const u = await makeUser(limitedStack);
      const client = wsClient(limitedStack.url, u.token);
      const ok = [0, 1].map(() => wsSubscribe(client, "subscription { indexedSlot }"));
      for (const st of ok) await st.next();
      const sse = await subscribeOver("sse", limitedStack.url, "subscription { indexedSlot }", {}, u.token);
      await sse.next();
      const [r] = await wsSubscribe(client, "subscription { indexedSlot }").ended();
      expect(r.errors?.[0].extensions).toMatchObject({ code: "TOO_MANY_REQUESTS", retryAfter: expect.any(Number) });
      const refused = await subscribeOver("sse", limitedStack.url, "subscription { indexedSlot }", {}, u.token);
      await refused.ended();
      expect(refused.status).toBe(429);
      sse.close();
      await client.dispose();
    } finally {
      await limitedStack.stop();
    }
  });
});

describe("a consumer that stops reading", () => {
  it("over WebSocket: the server keeps only the latest state for it, which it gets when it reads again", async () => {
    const o = await newOffer();
    const socket = new WebSocket(`${s.url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
    const messages: { type: string; payload?: { data?: { offer?: { revision: string } } } }[] = [];
    socket.on("message", (m) => messages.push(JSON.parse(String(m))));
    await new Promise((r) => socket.once("open", r));
    socket.send(JSON.stringify({ type: "connection_init", payload: {} }));
    await until(async () => messages.some((m) => m.type === "connection_ack"));
    socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: `subscription { offer(address: "${o}") { revision } }` } }));
    await until(async () => messages.some((m) => m.type === "next"));
    // Stop reading: the kernel buffers fill, then nothing more leaves the server for this socket.
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const before = messages.length;
    const r = await post(s, `/${o}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
    expect(r.status, r.text).toBe(200);
    for (let i = 0; i < 300; i++) {
      s.changes!.publish(change({ offers: [o] }));
      await new Promise((res) => setTimeout(res, 1));
      expect(live.stats().maxQueued).toBeLessThanOrEqual(1);
    }
    (socket as unknown as { _socket: { resume(): void } })._socket.resume();
    await until(async () => messages.at(-1)?.payload?.data?.offer?.revision === "2");
    expect(messages.length - before).toBeLessThanOrEqual(301);
    socket.close();
    await until(async () => live.stats().subscriptions === 0);
  });

  it("a list subscription keeps at most queueLimit values, the oldest dropped; a state one only the latest", async () => {
    const o = await newOffer();
    for (const [rev, amount] of [
      ["1", 2n],
      ["2", 2n],
      ["3", 2n],
    ] as const) {
      const r = await post(s, `/${o}/take`, { takeAmountMicros: String(amount * UNIT), expectedRevision: rev, idempotencyKey: key() }, taker.token);
      expect(r.status, r.text).toBe(200);
    }
    await until(async () => (await gql(s, `{ offer(address: "${o}") { revision } }`)).body.data.offer.revision === "4");
    // A hub on its own feed, whose consumers never pull: what it holds is what a stalled transport would leave it.
    const feed = new LocalChangeFeed();
    const read = new ReadService({ db: s.db, now: async () => Number(await s.chain.gateway.now()) });
    const hub = new LiveUpdates({ read, feed, custody: null, limits: { queueLimit: 2 } });
    const fills = hub.subscribe(liveTopics.offerFills(o), { connection: {}, authorization: null });
    const state = hub.subscribe(liveTopics.offer(o, null), { connection: {}, authorization: null });
    const fillsOf = (revision: number) => ({ offer: o, taker: taker.user.wallet.toBase58(), revision });
    await until(async () => hub.stats().queued === 1);
    for (const rev of [2, 3, 4]) {
      feed.publish(change({ offers: [o], fills: [fillsOf(rev)] }));
      await until(async () => hub.stats().queued + hub.stats().dropped === rev);
    }
    expect(hub.stats()).toMatchObject({ subscriptions: 2, queued: 3, maxQueued: 2, dropped: 1 });
    expect(((await fills.next()).value as { revision: string }).revision).toBe("3");
    expect(((await fills.next()).value as { revision: string }).revision).toBe("4");
    expect(((await state.next()).value as { revision: string }).revision).toBe("4");
    await hub.close();
    expect(await state.next()).toEqual({ value: undefined, done: true });
    expect(hub.stats().subscriptions).toBe(0);
  });
});

describe("a closing server", () => {
  it("completes every open subscription, SSE and WebSocket, so it can close", async () => {
    const other = await liveStack();
    const sse = await subscribeOver("sse", other.url, "subscription { indexedSlot }");
    const ws = await subscribeOver("ws", other.url, "subscription { indexedSlot }");
    await sse.next();
    await ws.next();
    await other.stop();
    await sse.ended();
    await ws.ended();
    expect(liveOf(other.app)!.stats().subscriptions).toBe(0);
  });
});

describe("on PostgreSQL", () => {
  let pg: LocalStack;
  let target: StoreTarget;
  beforeAll(async () => {
    target = freshStore("postgres", "live");
    pg = await liveStack({ storeUrl: target.url });
  });
  afterAll(async () => {
    await pg?.stop();
    await target?.drop();
  });

  it("the same reads feed offer, offers, offerFills and myPositions", async () => {
    const [c, tk] = [await makeUser(pg), await makeUser(pg)];
    const offers = await subscribeOver("sse", pg.url, `subscription { offers(sport: "football") { address revision } }`);
    const mine = await subscribeOver("ws", pg.url, `subscription { myPositions { address viewer { role } } }`, {}, tk.token);
    const r = await post(pg, "/", createBody(await contract(pg)), c.token);
    expect(r.status, r.text).toBe(200);
    const o = r.body.offerAddress as string;
    expect((await offers.next()).data.offers).toEqual({ address: o, revision: "1" });
    const one = await subscribeOver("ws", pg.url, `subscription($a: Address!) { offer(address: $a) { revision } }`, { a: o });
    const fills = await subscribeOver("sse", pg.url, `subscription($a: Address!) { offerFills(address: $a) { revision takeMicros } }`, { a: o });
    expect((await one.next()).data.offer.revision).toBe("1");
    const lv = liveOf(pg.app)!;
    await until(async () => lv.stats().subscriptions === 4);
    const t = await post(pg, `/${o}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, tk.token);
    expect(t.status, t.text).toBe(200);
    expect((await one.next()).data.offer.revision).toBe("2");
    expect((await fills.next()).data.offerFills).toEqual({ revision: "2", takeMicros: String(5n * UNIT) });
    expect((await offers.next()).data.offers).toEqual({ address: o, revision: "2" });
    expect((await mine.next()).data.myPositions).toEqual({ address: o, viewer: { role: "taker" } });
    for (const st of [offers, mine, one, fills]) st.close();
    await until(async () => lv.stats().subscriptions === 0);
  });
});
