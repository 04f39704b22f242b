/**
 * GET /api/embed/v1/polls/<identifier> over real HTTP against the pools program in bankrun and
 * the indexer: the spec's aggregate, shares summing to 10000, distinct participants, LOCKED at
 * request time with a moved clock, every other state as the pool moves (RESOLVING through
 * proposal, dispute and escalation), cache header and server-side cache, no CORS allowance, and
 * one 404 for unknown, private, deleted, flagged and malformed identifiers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { upsertPoolCatalog } from "../../indexer";
import { PoolOps } from "../../service/chain/pools-ops";
import { apiStack, type ApiStack, makeUser, UNIT, type TestUser } from "../support/stack";
import { getJson, gql } from "../support/http";
import { until } from "../support/wait";
import { openStore } from "../../indexer";
import { ReadService } from "../../service/read/read-service";
import { createApp, listen } from "../../graphql/server";

const EMBED = "/api/embed/v1/polls";
let s: ApiStack;
let ops: PoolOps;
let users: TestUser[];
let pool: PublicKey;

beforeAll(async () => {
  // Long enough that a pick made between two reads falls inside it even on a loaded machine.
  s = await apiStack({ embedTtlMs: 4_000 });
  users = [await makeUser(s), await makeUser(s), await makeUser(s)];
  ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
  const now = await s.chain.gateway.now();
  pool = await ops.create(users[0].name, {
    question: "Who wins?",
    labels: ["Red", "Blue", "Green"],
    closesAt: now + 600n,
    criteria: "Official result",
    coverUrl: "https://img.example/c.png",
  });
  await ops.pick(users[0].name, pool, 0, 10n * UNIT);
  await ops.pick(users[1].name, pool, 1, 10n * UNIT);
  await ops.pick(users[1].name, pool, 2, 10n * UNIT); // same person again: still 2 participants
  await upsertPoolCatalog(s.db, { pool: pool.toBase58(), slug: "who-wins" });
});
afterAll(async () => s?.stop());

describe("pool aggregate", () => {
  it("returns the spec's payload by slug and by address, with the cache header", async () => {
    const r = await until(async () => {
      const x = await getJson(s, `${EMBED}/who-wins`);
      return x.status === 200 ? x : null;
    });
    expect(r.headers.get("cache-control")).toBe("public, max-age=5, s-maxage=15, stale-while-revalidate=30");
    expect(r.body.error).toBeNull();
    const d = r.body.data;
    expect(d).toMatchObject({
      schemaVersion: 1,
      id: pool.toBase58(),
      slug: "who-wins",
      question: "Who wins?",
      version: 4,
      state: "OPEN",
      totalOiMicros: "30000000",
      participantCount: 2,
      resolutionAt: null,
      resolutionCriteria: "Official result",
      coverImageUrl: "https://img.example/c.png",
      canonicalUrl: "https://offers.example/polls/who-wins",
    });
    // 1/3 each: 3333 + 3333 + 3334 by largest remainder (ties to the lower index first).
    expect(d.outcomes.map((o: { shareBps: number }) => o.shareBps)).toEqual([3334, 3333, 3333]);
    expect(d.outcomes.map((o: { label: string; wagerCount: number; isResolved: boolean }) => [o.label, o.wagerCount, o.isResolved])).toEqual([
      ["Red", 1, false],
      ["Blue", 1, false],
      ["Green", 1, false],
    ]);
    expect(d.revision).toMatch(/^[0-9a-f]{32}$/);
    const byAddress = await getJson(s, `${EMBED}/${pool.toBase58()}`);
    expect(byAddress.body.data).toEqual(d);
    expect(JSON.stringify(r.body)).not.toContain(users[0].user.wallet.toBase58()); // never participants
  });

  it("serves repeated calls from cache, then refreshes once a pick is indexed; equal content gives an equal revision", async () => {
    const first = (await getJson(s, `${EMBED}/who-wins`)).body.data;
    expect((await getJson(s, `${EMBED}/who-wins`)).body.data.revision).toBe(first.revision);
    // The stack's change feed drops a pool's cached aggregate when the indexer applies a change to
    // it (ReadService hears the feed), so the pick shows as soon as it is indexed, not after the TTL.
    await ops.pick(users[2].name, pool, 0, 20n * UNIT);
    const fresh = await until(async () => {
      const x = (await getJson(s, `${EMBED}/who-wins`)).body.data;
      return x.totalOiMicros === "50000000" ? x : null;
    });
    expect(fresh.participantCount).toBe(3);
    expect(fresh.revision).not.toBe(first.revision);
    expect(fresh.outcomes.reduce((a: number, o: { shareBps: number }) => a + o.shareBps, 0)).toBe(10_000);
  });

  it("derives LOCKED at request time once closesAt has passed", async () => {
    const before = (await getJson(s, `${EMBED}/who-wins`)).body.data;
    await s.chain.gateway.advance(601n);
    const after = (await getJson(s, `${EMBED}/who-wins`)).body.data;
    expect(after.state).toBe("LOCKED");
    expect({ ...after, state: "OPEN", revision: "" }).toEqual({ ...before, revision: "" });
    const g = await gql(s, `{ poll(identifier: "who-wins") { state totalOiMicros outcomes { shareBps } } }`);
    expect(g.body.data.poll.state).toBe("LOCKED");
  });

  it("shows RESOLVING while an outcome is proposed, disputed or escalated, then RESOLVED and DISTRIBUTED; CANCELED then REFUNDED", async () => {
    const now = await s.chain.gateway.now();
    const decided = await ops.create(users[0].name, { question: "Decided by the authority?", closesAt: now + 100n });
    const canceled = await ops.create(users[0].name, { question: "Canceled?", closesAt: now + 100n });
    await ops.pick(users[1].name, decided, 0, 10n * UNIT);
    await ops.pick(users[2].name, decided, 1, 10n * UNIT);
    await ops.pick(users[1].name, canceled, 0, 3n * UNIT);
    await upsertPoolCatalog(s.db, { pool: decided.toBase58(), slug: "decided" });
    await upsertPoolCatalog(s.db, { pool: canceled.toBase58(), slug: "canceled" });
    const stateOf = (slug: string, state: string) =>
      until(async () => {
        const d = (await getJson(s, `${EMBED}/${slug}`)).body.data;
        return d?.state === state ? d : null;
      });
    await stateOf("decided", "OPEN");
    await ops.cancel(users[0].name, canceled);
    await stateOf("canceled", "CANCELED");
    await ops.payOut(canceled, [users[1].name], "refund");
    await stateOf("canceled", "REFUNDED");
    await s.chain.gateway.advance(100n);
    await stateOf("decided", "LOCKED");
    await ops.propose(users[0].name, decided, 0);
    const proposed = await stateOf("decided", "RESOLVING");
    expect(proposed.outcomes.map((o: { isResolved: boolean }) => o.isResolved)).toEqual([false, false]); // a proposal is not a result
    await ops.vote(users[2].name, decided, 1); // a dispute
    await s.chain.gateway.advance(86_400n);
    await ops.resolve(decided); // escalated: still RESOLVING
    expect((await ops.read(decided)).escalated).toBe(true);
    const escalated = await stateOf("decided", "RESOLVING");
    expect(escalated.outcomes.map((o: { isResolved: boolean }) => o.isResolved)).toEqual([false, false]);
    await ops.authorityResolve(decided, 0);
    const resolved = await stateOf("decided", "RESOLVED");
    expect(resolved.outcomes.map((o: { isResolved: boolean }) => o.isResolved)).toEqual([true, false]);
    await ops.payOut(decided, [users[1].name, users[2].name], "settle");
    const done = await stateOf("decided", "DISTRIBUTED");
    expect([done.totalOiMicros, done.participantCount]).toEqual(["20000000", 2]);
    expect(JSON.stringify(done)).not.toContain(users[1].user.wallet.toBase58()); // never participants
  });

  it("answers the same 404 for unknown, private, deleted, flagged and malformed identifiers", async () => {
    const now = await s.chain.gateway.now();
    const hidden: [string, Parameters<typeof upsertPoolCatalog>[1]][] = [];
    for (const [slug, flags] of [
      ["private-one", { isPublic: false }],
      ["deleted-one", { deleted: true }],
      ["flagged-one", { flagged: true }],
    ] as const) {
      const p = await ops.create(users[0].name, { question: `Hidden ${slug}?`, closesAt: now + 600n });
      hidden.push([slug, { pool: p.toBase58(), slug, ...flags }]);
    }
    for (const [, row] of hidden) await upsertPoolCatalog(s.db, row);
    for (const id of [
      "private-one",
      "deleted-one",
      "flagged-one",
      hidden[0][1].pool,
      "no-such-pool",
      "11111111111111111111111111111111",
      "bad%20id",
      "x".repeat(200),
    ]) {
      const r = await getJson(s, `${EMBED}/${id}`);
      expect([id, r.status, r.body]).toEqual([id, 404, { error: "Poll not found", code: "NOT_FOUND" }]);
    }
    const g = await gql(s, `{ poll(identifier: "private-one") { id } }`);
    expect(g.body.errors[0].extensions.code).toBe("NOT_FOUND");
  });

  it("gives browsers of other origins no CORS allowance", async () => {
    const r = await getJson(s, `${EMBED}/who-wins`, { headers: { origin: "https://elsewhere.example" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    const pre = await getJson(s, `${EMBED}/who-wins`, {
      method: "OPTIONS",
      headers: { origin: "https://elsewhere.example", "access-control-request-method": "GET" },
    });
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(pre.headers.get("access-control-allow-methods")).toBeNull();
  });

  it('answers 500 {error: "Internal server error"} without detail when the store fails', async () => {
    const store = await openStore(":memory:");
    const read = new ReadService({ db: store.db, now: () => 0 });
    const srv = await listen(createApp({ read, custody: null, graphiql: false }));
    await store.close(); // every query now fails
    const r = await getJson(srv, `${EMBED}/who-wins`);
    await srv.close();
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ error: "Internal server error", code: "INTERNAL_SERVER_ERROR" });
    expect(r.headers.get("cache-control")).toBe("no-store");
  });
});
