/**
 * The read caches are bounded by bytes and let go of what expired, with their figures on /metrics
 * (issue 21, finding 5: they used to keep expired entries until a count cap, 20,000 REST and
 * 10,000 GraphQL, and RSS grew and stayed). Over real HTTP: distinct GraphQL queries and REST
 * pages fill them; the GraphQL one never holds more than its ceiling; both are empty once their
 * entries expire, with nothing asked in between.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../stack/local-stack";
import { createApp } from "../../graphql/server";
import { ReadService } from "../../service/read/read-service";
import { gql, getJson } from "../support/http";
import { until } from "../support/wait";
import { OFFERS_BASE } from "../support/stack";

const CEILING = 20_000;
let s: LocalStack;
beforeAll(async () => {
  s = await startLocalStack({
    app: (parts) =>
      createApp({
        read: new ReadService({
          db: parts.db,
          now: async () => Number(await parts.chain.gateway.now()),
          anonymousTtlMs: 300,
          countTtlMs: 300,
          settingsTtlMs: 300,
          embedTtlMs: 300,
          clockCacheMs: 0,
          changes: parts.changes,
        }),
        custody: parts.custody,
        graphiql: false,
        changes: parts.changes,
        responseCacheTtlMs: 300,
        responseCacheMaxBytes: CEILING,
      }),
  });
});
afterAll(async () => s?.stop());

async function metric(name: string, cache: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const m = new RegExp(`^${name}\\{cache="${cache}"\\} (\\S+)$`, "m").exec(text);
  if (!m) throw new Error(`${name}{cache="${cache}"} not on /metrics`);
  return Number(m[1]);
}

describe("read caches", () => {
  it("hold at most their ceiling in bytes, sweep what expired, and report entries, bytes and hit ratio", async () => {
    for (let i = 0; i < 80; i++) {
      const r = await gql(s, `query($q: String) { offers(first: 50, query: $q) { edges { node { address } } } }`, { q: `distinct-${i}` });
      expect(r.body.errors).toBeUndefined();
      expect((await getJson(s, `${OFFERS_BASE}/?query=distinct-${i}`)).status).toBe(200);
      expect(await metric("offers_cache_bytes", "graphql")).toBeLessThanOrEqual(CEILING);
    }
    // The same query again while it lives: a hit.
    await gql(s, `query($q: String) { offers(first: 50, query: $q) { edges { node { address } } } }`, { q: "distinct-79" });
    expect(await metric("offers_cache_hit_ratio", "graphql")).toBeGreaterThan(0);
    expect(await metric("offers_cache_entries", "graphql")).toBeGreaterThan(0);
    expect(await metric("offers_cache_entries", "rest")).toBeGreaterThan(0);
    // Nothing asked meanwhile: expired entries go by themselves.
    await until(async () => (await metric("offers_cache_entries", "graphql")) === 0 && (await metric("offers_cache_entries", "rest")) === 0, 5_000);
    expect(await metric("offers_cache_bytes", "graphql")).toBe(0);
    expect(await metric("offers_cache_bytes", "rest")).toBe(0);
  });
});
