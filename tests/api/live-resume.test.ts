/**
 * Resumable live streams over a real server: an SSE client that drops and reconnects with
 * Last-Event-ID, and a graphql-ws client that resubscribes with `after`, receive every event they
 * missed; beyond the kept window (or with a stream the server no longer holds) the first event is
 * the REREAD error, and the stream goes on live.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../stack/local-stack";
import { liveOf } from "../../graphql/live-ws";
import type { LiveUpdates } from "../../service/read/live-updates";
import { liveStack, sseSubscribe, wsClient, wsSubscribe, type LiveStream } from "./live-clients";
import { makeUser, contract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { gql, post } from "../support/http";
import { until } from "../support/wait";

/** Values one stream keeps: a client that misses more than this is told to re-read. */
const KEPT = 4;
let s: LocalStack;
let live: LiveUpdates;
let creator: TestUser, taker: TestUser;

beforeAll(async () => {
  // Kept streams outlive the file: the tests count them (stats().detached), and one of an earlier
  // test expiring in the middle of a later one (60 s by default, reached on a slow machine) would
  // make that count skip the value a test waits for.
  s = await liveStack({ live: { queueLimit: KEPT, resumeWindowMs: 30 * 60_000 } });
  live = liveOf(s.app)!;
  [creator, taker] = [await makeUser(s), await makeUser(s)];
});
afterAll(async () => s?.stop());

const FILLS = `subscription($a: Address!, $after: String) { offerFills(address: $a, after: $after) { revision takeMicros } }`;

/** A new offer, indexed, and a function taking 1 unit of it (each take is one more revision, and one fill). */
async function newOffer(): Promise<{ address: string; take: () => Promise<string> }> {
  const r = await post(s, "/", createBody(await contract(s)), creator.token);
  expect(r.status, r.text).toBe(200);
  const address = r.body.offerAddress as string;
  await until(async () => (await gql(s, `{ offer(address: "${address}") { address } }`)).body.data?.offer);
  let revision = 1;
  const take = async () => {
    const t = await post(s, `/${address}/take`, { takeAmountMicros: String(UNIT), expectedRevision: String(revision), idempotencyKey: key() }, taker.token);
    expect(t.status, t.text).toBe(200);
    revision++;
    const want = String(revision);
    await until(async () => (await gql(s, `{ offer(address: "${address}") { revision } }`)).body.data.offer.revision === want);
    return want;
  };
  return { address, take };
}

/** Drops the client and waits until the server keeps its stream for a resume (SSE: noticed at the next ping). */
async function drop(st: LiveStream, detachedBefore: number): Promise<void> {
  st.close();
  await until(async () => live.stats().detached === detachedBefore + 1);
}

const seqOf = (id: string | undefined) => Number(id!.split(".")[1]);

describe("resuming an SSE stream with Last-Event-ID", () => {
  it("a client that drops and reconnects receives every fill it missed, in order, then goes on live", async () => {
    const o = await newOffer();
    const st = await sseSubscribe(s.url, FILLS, { a: o.address });
    await until(async () => live.stats().subscriptions === 1);
    await o.take();
    const first = await st.next();
    expect(first.data.offerFills.revision).toBe("2");
    expect(first.id).toMatch(/^[A-Za-z0-9_-]{22}\.1$/);
    await drop(st, live.stats().detached);
    expect(live.stats().subscriptions).toBe(0);
    const missed = [await o.take(), await o.take(), await o.take()];
    const again = await sseSubscribe(s.url, FILLS, { a: o.address }, undefined, first.id);
    const got = [await again.next(), await again.next(), await again.next()];
    expect(got.map((r) => r.data.offerFills.revision)).toEqual(missed);
    expect(got.every((r) => r.errors === undefined)).toBe(true);
    // The same stream: ids go on from the one the client saw last.
    expect(got.map((r) => seqOf(r.id))).toEqual([2, 3, 4]);
    expect(got.every((r) => r.id!.split(".")[0] === first.id!.split(".")[0])).toBe(true);
    expect(live.stats()).toMatchObject({ subscriptions: 1, detached: 0 });
    const later = await o.take();
    const next = await again.next();
    expect(next.data.offerFills.revision).toBe(later);
    expect(seqOf(next.id)).toBe(5);
    // A resume from an earlier id replays from there (the client decides what it saw).
    await drop(again, 0);
    const replay = await sseSubscribe(s.url, FILLS, { a: o.address }, undefined, got[1].id);
    expect((await replay.next()).data.offerFills.revision).toBe(missed[2]);
    expect((await replay.next()).data.offerFills.revision).toBe(later);
    replay.close();
  });

  it("beyond the kept window the first event is REREAD, then the stream goes on live", async () => {
    const o = await newOffer();
    const st = await sseSubscribe(s.url, FILLS, { a: o.address });
    await until(async () => live.stats().subscriptions === 1);
    await o.take();
    const first = await st.next();
    await drop(st, live.stats().detached);
    for (let i = 0; i <= KEPT; i++) await o.take();
    const again = await sseSubscribe(s.url, FILLS, { a: o.address }, undefined, first.id);
    const signal = await again.next();
    expect(signal.errors?.[0].extensions?.code).toBe("REREAD");
    expect(signal.data).toBeNull();
    // A new stream: its own id, counted from 1.
    expect(signal.id!.split(".")[0]).not.toBe(first.id!.split(".")[0]);
    expect(seqOf(signal.id)).toBe(1);
    const later = await o.take();
    const next = await again.next();
    expect(next.data.offerFills.revision).toBe(later);
    expect(seqOf(next.id)).toBe(2);
    again.close();
  });

  it("an id the server does not hold is REREAD; one it never wrote is BAD_REQUEST; another's stream is not resumed", async () => {
    const o = await newOffer();
    const unknown = await sseSubscribe(s.url, FILLS, { a: o.address }, undefined, `${"A".repeat(22)}.3`);
    expect((await unknown.next()).errors?.[0].extensions?.code).toBe("REREAD");
    unknown.close();
    const bad = await sseSubscribe(s.url, FILLS, { a: o.address }, undefined, "not-an-id");
    const [r] = await bad.ended();
    expect(r.errors?.[0].extensions?.code).toBe("BAD_REQUEST");
    expect(bad.status).toBe(400);
    // A stream resumed with another topic's arguments, or by another caller, is not handed over.
    const mine = await sseSubscribe(s.url, FILLS, { a: o.address }, taker.token);
    await until(async () => live.stats().subscriptions === 1);
    await o.take();
    const seen = await mine.next();
    await drop(mine, live.stats().detached);
    const other = await newOffer();
    const wrongTopic = await sseSubscribe(s.url, FILLS, { a: other.address }, taker.token, seen.id);
    expect((await wrongTopic.next()).errors?.[0].extensions?.code).toBe("REREAD");
    wrongTopic.close();
    const anonymous = await sseSubscribe(s.url, FILLS, { a: o.address }, undefined, seen.id);
    expect((await anonymous.next()).errors?.[0].extensions?.code).toBe("REREAD");
    anonymous.close();
  });
});

describe("a client back before the server noticed it left", () => {
  it("takes its stream over: the old connection completes, the new one goes on with the same numbering", async () => {
    const o = await newOffer();
    // The clients the tests before closed are all noticed (kept for a resume) first.
    await until(async () => live.stats().subscriptions === 0);
    const kept = live.stats().detached;
    const old = await sseSubscribe(s.url, FILLS, { a: o.address });
    await until(async () => live.stats().subscriptions === 1);
    await o.take();
    const first = await old.next();
    const again = await sseSubscribe(s.url, FILLS, { a: o.address }, undefined, first.id);
    expect(await old.ended()).toEqual([]);
    // Handed over, not kept: the old consumer's end detaches nothing.
    expect(live.stats()).toMatchObject({ subscriptions: 1, detached: kept });
    const later = await o.take();
    const next = await again.next();
    expect(next.data.offerFills.revision).toBe(later);
    expect(next.id).toBe(`${first.id!.split(".")[0]}.2`);
    again.close();
  });
});

describe("resuming over graphql-ws with `after`", () => {
  it("each event carries extensions.eventId; a new connection passing the last one as after gets what it missed", async () => {
    const o = await newOffer();
    // The SSE stream the test before closed is noticed (kept) first, so the count below moves by this one alone.
    await until(async () => live.stats().subscriptions === 0);
    const client = wsClient(s.url);
    const st = wsSubscribe(client, FILLS, { a: o.address });
    await until(async () => live.stats().subscriptions === 1);
    await o.take();
    const first = await st.next();
    const eventId = first.extensions?.eventId as string;
    expect(eventId).toMatch(/^[A-Za-z0-9_-]{22}\.1$/);
    const detached = live.stats().detached;
    await client.dispose();
    await until(async () => live.stats().detached === detached + 1);
    const missed = [await o.take(), await o.take()];
    const client2 = wsClient(s.url);
    const again = wsSubscribe(client2, FILLS, { a: o.address, after: eventId });
    const got = [await again.next(), await again.next()];
    expect(got.map((r) => r.data.offerFills.revision)).toEqual(missed);
    expect(got.map((r) => seqOf(r.extensions?.eventId as string))).toEqual([2, 3]);
    await client2.dispose();
  });
});
