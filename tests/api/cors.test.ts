/**
 * The CORS allow-list of the offers API and /graphql (AppDeps.corsOrigins, CORS_ORIGINS) over real
 * HTTP against the real stack: preflights and requests from a listed origin get the headers a
 * browser frontend needs (Authorization for signed-in reads, Idempotency-Key for writes, their
 * errors readable), another origin gets none, the embed endpoint never gets any, and a server
 * without the option (the default) sends none.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { createApp, listen } from "../../graphql/server";
import { parseCorsOrigins } from "../../graphql/cors";
import { apiStack, type ApiStack, contract as makeContract, createBody, makeUser, UNIT, type TestUser } from "../support/stack";
import { until } from "../support/wait";
import { launchBrowser } from "./browser";

const BASE = "/api/bets-usdc/offers";
const APP = "https://app.example";
const OTHER = "https://evil.example";
let s: ApiStack;
let withCors: Awaited<ReturnType<typeof listen>>;
let user: TestUser;
/** Two other origins serving an empty page, as a frontend's host would: the first is listed. */
let frontend: { server: Server; origin: string }[];
let browser: Browser;

async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_q, r) => r.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>frontend</title>"));
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  s = await apiStack(); // its own server: the default, no option
  frontend = [await pageServer(), await pageServer()];
  withCors = await listen(createApp({ read: s.read, custody: s.custody, writes: s.writes, corsOrigins: [APP, "http://localhost:5173", frontend[0].origin] }));
  user = await makeUser(s);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  for (const f of frontend ?? []) f.server.close();
  await withCors?.close();
  await s?.stop();
});

const preflight = (url: string, path: string, origin: string, method = "POST", headers = "authorization, content-type, idempotency-key") =>
  fetch(`${url}${path}`, { method: "OPTIONS", headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers } });

/** Every Access-Control-* header of an answer. */
const corsHeaders = (r: Response) => Object.fromEntries([...r.headers].filter(([k]) => k.startsWith("access-control-")));

describe("with CORS_ORIGINS", () => {
  it("answers preflights from a listed origin for reads, writes and GraphQL, allowing Authorization and Idempotency-Key", async () => {
    for (const [path, method] of [
      [`${BASE}/`, "POST"],
      [`${BASE}/mine`, "GET"],
      [`${BASE}/11111111111111111111111111111111/take`, "POST"],
      ["/graphql", "POST"],
    ]) {
      const r = await preflight(withCors.url, path, APP, method);
      expect([path, r.status]).toEqual([path, 204]);
      const h = corsHeaders(r);
      expect(h["access-control-allow-origin"]).toBe(APP);
      expect(h["access-control-allow-methods"]!.split(",")).toEqual(expect.arrayContaining(["GET", "POST"]));
      expect(h["access-control-allow-headers"]!.toLowerCase().split(",")).toEqual(expect.arrayContaining(["authorization", "content-type", "idempotency-key"]));
      expect(h["access-control-max-age"]).toBe("600");
      expect(h["access-control-allow-credentials"]).toBeUndefined(); // tokens go in Authorization, not cookies
      expect(r.headers.get("vary")).toMatch(/Origin/);
    }
    // The second listed origin too.
    expect((await preflight(withCors.url, `${BASE}/`, "http://localhost:5173")).headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
  });

  it("marks answers to a listed origin as readable: anonymous and signed-in reads, a write, GraphQL, and errors", async () => {
    const get = (path: string, token?: string) =>
      fetch(`${withCors.url}${path}`, { headers: { origin: APP, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    const browse = await get(`${BASE}/`);
    expect(browse.status).toBe(200);
    expect(browse.headers.get("access-control-allow-origin")).toBe(APP);
    expect(browse.headers.get("access-control-expose-headers")!.toLowerCase().split(",")).toEqual(expect.arrayContaining(["retry-after", "x-request-id"]));
    expect(browse.headers.get("vary")).toMatch(/Origin/);
    const mine = await get(`${BASE}/mine`, user.token);
    expect([mine.status, mine.headers.get("access-control-allow-origin")]).toEqual([200, APP]);
    const unauthorized = await get(`${BASE}/mine`, "pat_not-a-token");
    expect([unauthorized.status, unauthorized.headers.get("access-control-allow-origin")]).toEqual([401, APP]);
    const missing = await get(`${BASE}/11111111111111111111111111111111`);
    expect([missing.status, missing.headers.get("access-control-allow-origin")]).toEqual([404, APP]);

    const c = await makeContract(s);
    const create = await fetch(`${withCors.url}${BASE}/`, {
      method: "POST",
      headers: { origin: APP, authorization: `Bearer ${user.token}`, "content-type": "application/json" },
      body: JSON.stringify(createBody(c, { creatorTotalMicros: String(8n * UNIT), takerTargetMicros: String(10n * UNIT) })),
    });
    expect([create.status, create.headers.get("access-control-allow-origin")]).toEqual([200, APP]);
    const { offerAddress } = (await create.json()) as { offerAddress: string };
    await until(async () => (await get(`${BASE}/${offerAddress}`)).status === 200);

    for (const token of [undefined, user.token]) {
      const g = await fetch(`${withCors.url}/graphql`, {
        method: "POST",
        headers: { origin: APP, "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query: "{ settings { feeBps } }" }),
      });
      expect([g.status, g.headers.get("access-control-allow-origin")]).toEqual([200, APP]);
      expect(await g.json()).toEqual({ data: { settings: { feeBps: 1000 } } });
    }
  });

  it("sends no CORS header at all to an origin that is not listed", async () => {
    const pre = await preflight(withCors.url, `${BASE}/`, OTHER);
    expect(pre.status).not.toBe(204);
    expect(corsHeaders(pre)).toEqual({});
    for (const r of [
      await fetch(`${withCors.url}${BASE}/`, { headers: { origin: OTHER } }),
      await fetch(`${withCors.url}${BASE}/`, { headers: { origin: `${APP}.evil.example` } }),
      await fetch(`${withCors.url}${BASE}/`, { headers: { origin: "null" } }),
      await fetch(`${withCors.url}/graphql`, {
        method: "POST",
        headers: { origin: OTHER, "content-type": "application/json" },
        body: '{"query":"{ settings { feeBps } }"}',
      }),
    ]) {
      expect(r.status).toBe(200); // answered (a server may call), but a browser on that origin cannot read it
      expect(corsHeaders(r)).toEqual({});
      expect(r.headers.get("vary")).toMatch(/Origin/);
    }
  });

  it("never allows the embed endpoint, as the spec says, nor the share pages", async () => {
    for (const path of ["/api/embed/v1/polls/anything", "/offers/11111111111111111111111111111111", "/polls/anything"]) {
      const r = await fetch(`${withCors.url}${path}`, { headers: { origin: APP } });
      expect([path, r.status]).toEqual([path, 404]);
      expect(corsHeaders(r)).toEqual({});
      const pre = await preflight(withCors.url, path, APP, "GET", "");
      expect(corsHeaders(pre)).toEqual({});
    }
  });
});

describe("in a browser", () => {
  it("lets a page on a listed origin make signed-in reads; a page on another origin cannot read anything", async () => {
    const call = async (origin: string) => {
      const page = await browser.newPage();
      await page.goto(`${origin}/`);
      const out = await page.evaluate(
        async ([api, token]) => {
          try {
            const r = await fetch(`${api}/api/bets-usdc/offers/mine`, { headers: { authorization: `Bearer ${token}` } });
            return { status: r.status, body: (await r.json()) as { offers: unknown[] }, requestIdReadable: r.headers.has("x-request-id") };
          } catch (e) {
            return { error: String(e) };
          }
        },
        [withCors.url, user.token] as const,
      );
      await page.close();
      return out;
    };
    const allowed = await call(frontend[0].origin); // a preflight (Authorization), then the read
    expect(allowed).toMatchObject({ status: 200, requestIdReadable: true });
    expect(Array.isArray((allowed as { body: { offers: unknown[] } }).body.offers)).toBe(true);
    expect(await call(frontend[1].origin)).toEqual({ error: expect.stringMatching(/Failed to fetch/) });
  });
});

describe("without the option (the default)", () => {
  it("sends no CORS header to any origin", async () => {
    expect(corsHeaders(await preflight(s.url, `${BASE}/`, APP))).toEqual({});
    expect(corsHeaders(await preflight(s.url, "/graphql", APP))).toEqual({});
    expect(corsHeaders(await fetch(`${s.url}${BASE}/`, { headers: { origin: APP } }))).toEqual({});
    const g = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { origin: APP, "content-type": "application/json" },
      body: '{"query":"{ settings { feeBps } }"}',
    });
    expect(corsHeaders(g)).toEqual({});
  });
});

describe("CORS_ORIGINS", () => {
  it("takes comma-separated origins and refuses anything that is not a bare origin", () => {
    expect(parseCorsOrigins(undefined)).toEqual([]);
    expect(parseCorsOrigins("")).toEqual([]);
    expect(parseCorsOrigins(" https://app.example , http://localhost:5173 ")).toEqual(["https://app.example", "http://localhost:5173"]);
    for (const bad of ["*", "https://app.example/", "https://app.example/path", "app.example", "ftp://app.example", "https://APP.example"])
      expect(() => parseCorsOrigins(bad), bad).toThrow(/CORS_ORIGINS/);
  });
});
