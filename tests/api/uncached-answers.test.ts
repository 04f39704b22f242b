/**
 * The REST reads answer the same bytes with every read cache off as with the caches on: the
 * cache-off service hands out new objects, which the routes send as a string without their
 * per-object memo (graphql/rest/read-routes.ts jsonOnce), and the cached one sends its kept
 * objects' memoised bytes. Two apps on one store over real HTTP, anonymous and signed in, with a
 * position on the offer and without.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../stack/local-stack";
import { serviceApp } from "../../stack/app";
import { listen } from "../../graphql/server";
import { Observability } from "../../service/observability/observability";
import { makeUser, contract as makeContract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { getJson, post } from "../support/http";
import { until } from "../support/wait";

const BASE = "/api/bets-usdc/offers";

describe("REST answers with every read cache off", () => {
  let s: LocalStack;
  let uncached: { url: string; close(): Promise<void> };
  let keepsAnswers: [boolean, boolean];
  let creator: TestUser, taker: TestUser, other: TestUser;
  let offer: string;

  beforeAll(async () => {
    let off!: ReturnType<typeof serviceApp>;
    s = await startLocalStack({
      app: (parts) => {
        const on = serviceApp(parts, { publicUrl: "https://offers.example", graphiql: false, readCaches: { settingsTtlMs: 0, clockCacheMs: 0 } });
        // Its own metrics registry: the two apps would otherwise register the same gauges twice.
        off = serviceApp(
          { ...parts, obs: new Observability() },
          { publicUrl: "https://offers.example", graphiql: false, responseCacheTtlMs: 0, readCaches: { settingsTtlMs: 0, clockCacheMs: 0, anonymousTtlMs: 0 } },
        );
        keepsAnswers = [on.read.keepsAnswers, off.read.keepsAnswers];
        return on.app;
      },
    });
    uncached = await listen(off.app);
    [creator, taker, other] = [await makeUser(s), await makeUser(s), await makeUser(s)];
    const c = await makeContract(s);
    const created = await post(s, "/", createBody(c, { creatorTotalMicros: String(8n * UNIT), takerTargetMicros: String(10n * UNIT) }), creator.token);
    expect(created.status).toBe(200);
    offer = created.body.offerAddress as string;
    await s.chain.gateway.waitFor(created.body.signature);
    const current = await getJson(s, `${BASE}/${offer}`);
    const taken = await post(
      s,
      `/${offer}/take`,
      { takeAmountMicros: String(2n * UNIT), expectedRevision: current.body.revision, idempotencyKey: key() },
      taker.token,
    );
    expect(taken.status).toBe(200);
    await s.chain.gateway.waitFor(taken.body.signature);
    // The indexer has applied the take when the offer shows it.
    await until(async () => (await getJson(uncached, `${BASE}/${offer}`)).body.positionCount === 1);
  });
  afterAll(async () => {
    await uncached?.close();
    await s?.stop();
  });

  it("the cache-off service says it keeps no answer; the cached one that it does", () => {
    expect(keepsAnswers).toEqual([true, false]);
  });

  it.each([
    ["one offer", () => `${BASE}/${offer}`],
    ["the browse page", () => `${BASE}/?pageSize=20`],
    ["mine", () => `${BASE}/mine`],
  ])("%s: the same status, content type and bytes for every caller", async (_name, path) => {
    const callers = [undefined, taker.token, creator.token, other.token];
    let compared = 0;
    for (const token of callers) {
      const [a, b] = [await getJson(s, path(), { token }), await getJson(uncached, path(), { token })];
      expect(b.status).toBe(a.status);
      expect(b.headers.get("content-type")).toBe(a.headers.get("content-type"));
      if (a.status !== 200) continue; // mine without a token: 401 on both
      expect(b.headers.get("content-type")).toMatch(/^application\/json/);
      expect(b.text).toBe(a.text);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(3);
  });

  it("a position held shows the same through both", async () => {
    const [a, b] = [await getJson(s, `${BASE}/${offer}`, { token: taker.token }), await getJson(uncached, `${BASE}/${offer}`, { token: taker.token })];
    expect(a.body.viewer.role).toBe("taker");
    expect(b.body.viewer.position).toEqual(a.body.viewer.position);
    expect(b.body.viewer.position).not.toBeNull();
  });
});
