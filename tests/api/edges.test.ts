/**
 * The service's edges over real HTTP: a request body is limited before it is read (413 with a
 * clear error, memory bounded even for a 200 MB streamed body on an anonymous GraphQL POST), and
 * every 503 carries `Retry-After` (REST) or `extensions.retryAfter` (GraphQL).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiStack, type ApiStack, OFFERS_BASE, contract, createBody, makeUser, type TestUser } from "../support/stack";
import { gql, post } from "../support/http";
import { MAX_BODY_BYTES } from "../../graphql/server";

let s: ApiStack;
let alice: TestUser;
beforeAll(async () => {
  s = await apiStack();
  alice = await makeUser(s);
});
afterAll(async () => s?.stop());

/** `total` bytes of a JSON-looking body, streamed in 64 KiB chunks (never held whole). */
function streamed(total: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(65_536).fill(0x20);
  let sent = 0;
  return new ReadableStream({
    pull(ctl) {
      if (sent === 0) ctl.enqueue(new TextEncoder().encode('{"query":"'));
      if (sent >= total) return ctl.close();
      ctl.enqueue(chunk);
      sent += chunk.length;
    },
  });
}

describe("request body limit", () => {
  it("answers 413 to a 200 MB streamed anonymous GraphQL body, with memory bounded", async () => {
    const rss = () => process.memoryUsage().rss;
    global.gc?.();
    const before = rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);
    const r = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: streamed(200 * 1024 * 1024),
      duplex: "half",
    } as RequestInit);
    const body = (await r.json()) as { error: string };
    clearInterval(sampler);
    console.log(`200 MB streamed body: ${r.status}, rss ${(before / 2 ** 20).toFixed(0)} MB -> peak ${(peak / 2 ** 20).toFixed(0)} MB`);
    expect(r.status).toBe(413);
    expect(body.error).toBe(`request body too large: at most ${MAX_BODY_BYTES} bytes`);
    // The old code read all 200 MB into a string first (hundreds of MB more).
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("refuses a declared length over the limit unread, on every route; a body within it passes", async () => {
    const big = "x".repeat(MAX_BODY_BYTES + 1);
    for (const path of ["/graphql", `${OFFERS_BASE}/`, `${OFFERS_BASE}/11111111111111111111111111111111/take`, "/no-such-route"]) {
      const r = await fetch(`${s.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: big });
      expect([path, r.status]).toEqual([path, 413]);
    }
    const ok = await gql(s, `{ settings { feeBps } }`);
    expect(ok.status).toBe(200);
  });
});

describe("Retry-After on every 503", () => {
  it("REST and GraphQL say when to come back when offers are switched off", async () => {
    const k = await contract(s);
    await s.admin.setOffersEnabled(false);
    try {
      const r = await post(s, "/", createBody(k), alice.token);
      expect(r.status).toBe(503);
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      const g = await gql(s, `mutation($i: CreateOfferInput!) { createOffer(input: $i) { offerAddress } }`, { i: createBody(k) }, alice.token);
      expect(g.body.errors?.[0]?.extensions).toMatchObject({ code: "SERVICE_UNAVAILABLE", status: 503 });
      expect(g.body.errors[0].extensions.retryAfter).toBeGreaterThan(0);
    } finally {
      await s.admin.setOffersEnabled(true);
    }
  });
});
