/**
 * Request limits over real HTTP: per client address and per bearer token, 429 with Retry-After,
 * refilled with time, probes never limited; two servers on one store (two service processes)
 * share the buckets, on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Kysely } from "kysely";
import { startLocalStack, type LocalStack } from "../../stack/local-stack";
import { createApp, listen } from "../../graphql/server";
import { ReadService } from "../../service/read/read-service";
import { RequestLimiter, type RequestLimits } from "../../service/rate/request-limiter";
import { OFFERS_BASE, makeUser } from "../support/stack";
import { getJson } from "../support/http";
import { ENGINES, freshStore, type StoreTarget } from "../indexer/stores";

describe.each(ENGINES)("request limits (%s store)", (engine) => {
  let s: LocalStack;
  let target: StoreTarget;
  let second: Awaited<ReturnType<typeof listen>>;
  let nowMs = 1_800_000_000_000;
  const limits: RequestLimits = { ipBurst: 3, ipPerMinute: 60, tokenBurst: 1_000, tokenPerMinute: 60_000 };
  const clock = () => nowMs;
  const appOn = (db: Kysely<unknown>, parts: Parameters<NonNullable<Parameters<typeof startLocalStack>[0]>["app"] & object>[0]) =>
    createApp({
      read: new ReadService({ db: parts.db, now: async () => Number(await parts.chain.gateway.now()), settingsTtlMs: 0 }),
      custody: parts.custody,
      writes: parts.writes,
      graphiql: false,
      requestLimiter: new RequestLimiter(db, limits, clock),
    });

  beforeAll(async () => {
    target = freshStore(engine, "rate");
    s = await startLocalStack({ storeUrl: target.url, app: (parts) => appOn(parts.db as Kysely<unknown>, parts) });
    // A second service process on the same store: its own limiter object, the same buckets.
    second = await listen(appOn(s.db as Kysely<unknown>, s));
  });
  afterAll(async () => {
    await second?.close();
    await s?.stop();
    await target?.drop();
  });

  const contracts = (url: string, token?: string) => getJson({ url }, `${OFFERS_BASE}/contracts`, { token });

  it("limits each client address across both servers, with Retry-After, and refills with time; probes are never limited", async () => {
    for (const url of [s.url, second.url, s.url]) expect((await contracts(url)).status).toBe(200);
    const refused = await contracts(second.url);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.body.error).toMatch(/too many requests from this address; retry in 1 s/);
    for (let i = 0; i < 10; i++) expect((await getJson(s, "/healthz")).status).toBe(200);
    nowMs += 1_000; // one request refilled
    expect((await contracts(s.url)).status).toBe(200);
    expect((await contracts(s.url)).status).toBe(429);
  });

  it("limits each bearer token, whoever sends it; another token has its own bucket", async () => {
    nowMs += 3_600_000;
    Object.assign(limits, { ipBurst: 1_000, ipPerMinute: 60_000, tokenBurst: 2, tokenPerMinute: 6 });
    const [a, b] = [(await makeUser(s, 0n)).token, (await makeUser(s, 0n)).token];
    expect((await contracts(s.url, a)).status).toBe(200);
    expect((await contracts(second.url, a)).status).toBe(200);
    const refused = await contracts(s.url, a);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("10");
    expect(refused.body.error).toMatch(/this token/);
    expect((await contracts(s.url, b)).status).toBe(200);
    expect((await contracts(s.url)).status).toBe(200); // anonymous: the address only
  });
});
