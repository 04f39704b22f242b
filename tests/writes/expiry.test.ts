/**
 * Offer expiry through the service (issue #26 item 4): the create write's `expiresAt` (precise
 * 400s), the read shape (REST and GraphQL), an expired offer left out of the book and the
 * bestOdds list and not takeable (viewer, take write), and the worker closing it with the creator
 * refunded exactly the unmatched stake; the offer's Solana Action disabled. The compiled program in bankrun (WRITES_ENGINE=litesvm:
 * LiteSVM), the real indexer, store, HTTP server and worker.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { apiStack, balance, contract, createBody, key, makeUser, UNIT, type ApiStack, type TestUser } from "../support/stack";
import { getJson, gql, post } from "../support/http";
import { eventually, until } from "../support/wait";

const BASE = "/api/bets-usdc/offers";
const iso = (unix: bigint) => new Date(Number(unix) * 1000).toISOString();

let s: ApiStack;
let creator: TestUser, taker: TestUser;
let k: PublicKey;
let now: bigint, cutoff: bigint;

beforeAll(async () => {
  s = await apiStack({ engine: (process.env.WRITES_ENGINE as "bankrun" | "litesvm" | undefined) ?? "bankrun" });
  [creator, taker] = [await makeUser(s), await makeUser(s)];
  k = await contract(s, 3_600n);
  now = await s.chain.gateway.now();
  cutoff = now + 3_600n;
});
afterAll(async () => {
  await s?.stop();
});

const offerRead = (address: string, token?: string) => getJson(s, `${BASE}/${address}`, { token });

async function created(expiresAt: string | undefined): Promise<string> {
  const r = await post(s, "/", createBody(k, expiresAt === undefined ? {} : { expiresAt }), creator.token);
  expect(r.status, r.text).toBe(200);
  const address = r.body.offerAddress as string;
  await until(async () => (await offerRead(address)).status === 200);
  return address;
}

describe("offer expiry through the service", () => {
  it("create: expiresAt after the cutoff, not in the future, not a whole second or malformed is a precise 400; nothing is sent", async () => {
    const cases: [unknown, RegExp][] = [
      [iso(cutoff + 1n), new RegExp(`^expiresAt ${iso(cutoff + 1n)} is after the contract's cutoff ${iso(cutoff)}; it must be no later than the cutoff$`)],
      [iso(now), /^expiresAt .* is not in the future \(chain time .*\); it must be after now$/],
      [iso(now - 60n), /is not in the future/],
      ["2030-01-01T00:00:00.500Z", /^expiresAt must be a whole second$/],
      ["tomorrow", /^expiresAt must be an ISO 8601 date-time with a zone/],
      [1_900_000_000, /^expiresAt must be an ISO 8601 date-time with a zone/],
    ];
    const before = await balance(s, creator.user.tokenAccount);
    for (const [expiresAt, message] of cases) {
      const r = await post(s, "/", createBody(k, { expiresAt }), creator.token);
      expect(r.status, `${expiresAt}: ${r.text}`).toBe(400);
      expect(r.body.error).toMatch(message);
    }
    expect(await balance(s, creator.user.tokenAccount)).toBe(before);
    // GraphQL: the same rule, the same words.
    const g = await gql(
      s,
      `mutation($input: CreateOfferInput!) { createOffer(input: $input) { signature } }`,
      { input: { ...createBody(k), expiresAt: iso(cutoff + 1n) } },
      creator.token,
    );
    expect(g.body.errors?.[0]?.message).toMatch(/is after the contract's cutoff/);
  });

  it("reads show expiresAt; once it passes the offer is not takeable (viewer, take write 409), left out of the book and bestOdds, and the worker closes it refunding exactly the unmatched stake", async () => {
    const expiresAt = now + 600n;
    const expiring = await created(iso(expiresAt));
    const lasting = await created(undefined);
    const r = await offerRead(expiring, taker.token);
    expect(r.body).toMatchObject({ expiresAt: iso(expiresAt), viewer: { canTake: true, takeRefusal: null } });
    expect((await offerRead(lasting)).body.expiresAt).toBeNull();
    const g = await gql(s, `query($a: Address!) { offer(address: $a) { expiresAt } }`, { a: expiring });
    expect(g.body.data?.offer).toEqual({ expiresAt: iso(expiresAt) });

    // A take one second before the expiry goes through.
    await s.chain.gateway.advance(expiresAt - 1n - (await s.chain.gateway.now()));
    const t = await post(s, `/${expiring}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
    expect(t.status, t.text).toBe(200);
    await until(async () => (await offerRead(expiring)).body.revision === "2");

    const bookOffers = async () => {
      const b = await getJson(s, `${BASE}/contracts/${k.toBase58()}/book`);
      expect(b.status, JSON.stringify(b.body)).toBe(200);
      return (b.body.sides as { side: string; levels: { offers: string[] }[] }[]).flatMap((x) => x.levels.flatMap((l) => l.offers));
    };
    const bestOdds = async () => {
      const b = await getJson(s, `${BASE}?sort=bestOdds&view=browse&pageSize=50`);
      return (b.body.offers as { address: string }[]).map((o) => o.address);
    };
    expect(await bookOffers()).toEqual(expect.arrayContaining([expiring, lasting]));
    expect(await bestOdds()).toEqual(expect.arrayContaining([expiring, lasting]));

    // At the expiry second.
    await s.chain.gateway.advance(1n);
    const after = await offerRead(expiring, taker.token);
    expect(after.body).toMatchObject({ status: "Open", viewer: { canTake: false, takeRefusal: "offerExpired" } });
    // The Solana Action of the offer shows it disabled, with the reason.
    const action = await getJson(s, `/api/actions/offers/${expiring}`);
    expect(action.body).toMatchObject({ disabled: true, error: { message: expect.stringMatching(/^This offer has expired/) } });
    expect(action.body.links).toBeUndefined();
    const refused = await post(s, `/${expiring}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "2", idempotencyKey: key() }, taker.token);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe(`the offer expired at ${iso(expiresAt)}: it takes no more takes`);
    // Shared reads follow the chain's clock within their cache's lifetime (as at the cutoff).
    await eventually(async () => {
      const books = await bookOffers();
      expect(books).toContain(lasting);
      expect(books).not.toContain(expiring);
    });
    await eventually(async () => {
      const listed = await bestOdds();
      expect(listed).toContain(lasting);
      expect(listed).not.toContain(expiring);
    });

    // The worker closes it (not the offer without expiry: its contract is still before its cutoff).
    const before = await balance(s, creator.user.tokenAccount);
    await s.worker.runOnce();
    await until(async () => (await offerRead(expiring)).body.status === "Closed");
    // 8 against 10, 5 taken: 4 matched, 4 unmatched.
    expect(await balance(s, creator.user.tokenAccount)).toBe(before + 4n * UNIT);
    expect((await offerRead(lasting)).body.status).toBe("Open");
  });
});
