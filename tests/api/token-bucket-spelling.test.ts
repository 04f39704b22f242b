/**
 * The per-token request limit follows the token as authentication reads it: `BeARer  pat_…` (the
 * scheme in any case, any spaces) authenticates as `Bearer pat_…` does, so it must draw from the
 * same bucket, over HTTP (REST and GraphQL) and over WebSocket alike. Issue 21, finding 2.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../stack/local-stack";
import { liveStack, wsSubscribe } from "./live-clients";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { makeUser, OFFERS_BASE } from "../support/stack";

let s: LocalStack;
// Three requests at once per token, refilled one per 10 s; addresses unlimited in effect.
beforeAll(async () => {
  s = await liveStack({ requestLimits: { ipBurst: 10_000, ipPerMinute: 600_000, tokenBurst: 3, tokenPerMinute: 6 } });
});
afterAll(async () => s?.stop());

const get = (authorization: string) => fetch(`${s.url}${OFFERS_BASE}/contracts`, { headers: { authorization } });
const query = (authorization: string) =>
  fetch(`${s.url}/graphql`, {
    method: "POST",
    headers: { authorization, "content-type": "application/json" },
    body: JSON.stringify({ query: "{ indexedSlot }" }),
  });

describe("per-token request limit and the token's spelling", () => {
  it("every spelling of one token draws from one bucket, on REST, GraphQL and WebSocket", async () => {
    const { token } = await makeUser(s, 0n);
    const spellings = [`Bearer ${token}`, `bearer  ${token}`, `BeARer ${token}`, `BEARER   ${token} `];
    // Each spelling authenticates.
    expect((await get(spellings[0])).status).toBe(200);
    expect((await query(spellings[1])).status).toBe(200);
    expect((await get(spellings[2])).status).toBe(200);
    // The bucket of three is empty, whichever spelling asks next.
    for (const a of spellings) {
      const r = await get(a);
      expect(r.status, a).toBe(429);
      expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
      expect((await query(a)).status, a).toBe(429);
    }
    // Over WebSocket the token goes in connection_init: a respelled one is the same bucket too.
    const client = createClient({
      url: `${s.url.replace(/^http/, "ws")}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: spellings[3] },
      retryAttempts: 0,
    });
    const [r] = await wsSubscribe(client, "subscription { indexedSlot }").ended();
    expect(r.errors?.[0].extensions?.code).toBe("TOO_MANY_REQUESTS");
    await client.dispose();
    // Another token is another bucket.
    const other = await makeUser(s, 0n);
    expect((await get(`bEaReR ${other.token}`)).status).toBe(200);
  });
});
