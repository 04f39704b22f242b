/**
 * The book subscription (issue 23) on the local stack, over real HTTP (SSE) and a real WebSocket:
 * the current book first, then a new book after a new offer, a take, a close and the contract's
 * cutoff passing on the bankrun clock (no write announces it); never a push for a change that
 * leaves the book as it was (another contract's offers); the same book the query answers; one
 * store read of the book per change however many subscribers follow it; a bad argument refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { LocalStack } from "../../stack/local-stack";
import { liveOf } from "../../graphql/live-ws";
import type { LiveUpdates } from "../../service/read/live-updates";
import { liveStack, subscribeOver, type LiveStream, type Result, type Transport } from "./live-clients";
import { makeUser, contract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { gql, post } from "../support/http";
import { until } from "../support/wait";

const BOOK = `contract revision matchedVolumeMicros sides { side best { numerator denominator } availableMicros offerCount levels { availableMicros offerCount offers } }`;
const SUB = `subscription($c: Address!) { book(contractAddress: $c, depth: 5) { ${BOOK} } }`;

let s: LocalStack;
let live: LiveUpdates;
let creator: TestUser, taker: TestUser;
const open: LiveStream[] = [];

beforeAll(async () => {
  s = await liveStack();
  live = liveOf(s.app)!;
  [creator, taker] = [await makeUser(s), await makeUser(s)];
});
afterAll(async () => {
  for (const st of open) st.close();
  await s?.stop();
});

async function sub(t: Transport, variables: Record<string, unknown>, query = SUB, token?: string): Promise<LiveStream> {
  const before = live.stats().subscriptions;
  const st = await subscribeOver(t, s.url, query, variables, token);
  open.push(st);
  await until(async () => live.stats().subscriptions > before || st.done);
  return st;
}

async function newOffer(c: PublicKey): Promise<string> {
  const r = await post(s, "/", createBody(c), creator.token);
  expect(r.status, r.text).toBe(200);
  await until(async () => (await gql(s, `{ offer(address: "${r.body.offerAddress}") { address } }`)).body.data?.offer);
  return r.body.offerAddress as string;
}

const offers = (b: Result["data"]["book"]) => (b.sides as { offerCount: number }[]).reduce((n, x) => n + x.offerCount, 0);

/** The book as the query answers it now (anonymous, depth 5). */
async function queried(c: PublicKey) {
  const r = await gql(s, `query($c: Address!) { contract(address: $c) { book(depth: 5) { ${BOOK} } } }`, { c: c.toBase58() });
  return r.body.data.contract.book;
}

const closeAll = async () => {
  for (const st of open.splice(0)) st.close();
  await until(async () => live.stats().subscriptions === 0);
};

describe.each(["sse", "ws"] as Transport[])("book over %s", (t) => {
  it("now, then a new book after a new offer, a take and a close; nothing for another contract's change", async () => {
    const [c, other] = [await contract(s), await contract(s)];
    const first = await newOffer(c);
    const st = await sub(t, { c: c.toBase58() });
    const b0 = (await st.next()).data.book;
    expect(b0).toEqual(await queried(c));
    expect(offers(b0)).toBe(1);

    // Another contract's new offer: its book subscriber is pushed, this one is not (the next event is the take's).
    const so = await sub(t, { c: other.toBase58() });
    expect(offers((await so.next()).data.book)).toBe(0);
    await newOffer(other);
    expect(offers((await so.next()).data.book)).toBe(1);

    const second = await newOffer(c);
    const b1 = (await st.next()).data.book;
    expect(offers(b1)).toBe(2);
    expect(b1.revision).not.toBe(b0.revision);
    expect(b1).toEqual(await queried(c));

    const tk = await post(s, `/${first}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
    expect(tk.status, tk.text).toBe(200);
    const b2 = (await st.next()).data.book;
    expect(b2.matchedVolumeMicros).toBe(String(5n * UNIT));
    expect(b2.revision).not.toBe(b1.revision);
    expect(b2).toEqual(await queried(c));

    const cl = await post(s, `/${second}/close`, { expectedRevision: "1", idempotencyKey: key() }, creator.token);
    expect(cl.status, cl.text).toBe(200);
    const b3 = (await st.next()).data.book;
    expect(offers(b3)).toBe(1);
    expect(b3.sides.flatMap((x: { levels: { offers: string[] }[] }) => x.levels.flatMap((l) => l.offers))).toEqual([first]);
    expect(b3).toEqual(await queried(c));
    expect(st.pending).toBe(0);
    expect(so.pending).toBe(0);
    await closeAll();
  });

  it("a new, empty book once the cutoff passes on the chain's clock", async () => {
    const c = await contract(s, 600n);
    await newOffer(c);
    const st = await sub(t, { c: c.toBase58() });
    const before = (await st.next()).data.book;
    expect(offers(before)).toBe(1);
    await s.chain.gateway.advance(601n);
    const after = (await st.next()).data.book;
    expect(offers(after)).toBe(0);
    expect(after.sides.every((x: { best: unknown; levels: unknown[] }) => x.best === null && x.levels.length === 0)).toBe(true);
    expect(after.revision).not.toBe(before.revision);
    expect(after).toEqual(await queried(c));
    await closeAll();
  });
});

it("many subscribers of one book: one store read of the book per change, one execution", async () => {
  const c = await contract(s);
  const o = await newOffer(c);
  const subs = await Promise.all(Array.from({ length: 8 }, (_, i) => sub(i % 2 ? "ws" : "sse", { c: c.toBase58() })));
  const revs = await Promise.all(subs.map(async (x) => (await x.next()).data.book.revision));
  expect(new Set(revs).size).toBe(1);
  const [reads, executions] = [live.stats().reads, live.stats().executions];
  const tk = await post(s, `/${o}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
  expect(tk.status, tk.text).toBe(200);
  const after = await Promise.all(subs.map(async (x) => (await x.next()).data.book));
  expect(new Set(after.map((b) => b.revision)).size).toBe(1);
  expect(after[0].revision).not.toBe(revs[0]);
  // At most the changed offers' contracts and the book: two reads for eight subscribers.
  expect(live.stats().reads - reads).toBeLessThanOrEqual(2);
  expect(live.stats().executions - executions).toBe(1);
  await closeAll();
});

it("a signed-in caller's book leaves out the caller's own offers; bad arguments are refused", async () => {
  const c = await contract(s);
  await newOffer(c);
  const mine = await sub("ws", { c: c.toBase58() }, SUB, creator.token);
  expect(offers((await mine.next()).data.book)).toBe(0);
  const unknown = await subscribeOver("sse", s.url, SUB, { c: "11111111111111111111111111111111" });
  open.push(unknown);
  expect((await unknown.ended())[0].errors?.[0].extensions?.code).toBe("NOT_FOUND");
  const deep = await subscribeOver("sse", s.url, `subscription($c: Address!) { book(contractAddress: $c, depth: 101) { revision } }`, { c: c.toBase58() });
  open.push(deep);
  expect(deep.status === 400 || (await deep.ended())[0]?.errors?.[0].extensions?.code === "BAD_REQUEST").toBe(true);
  await closeAll();
});
