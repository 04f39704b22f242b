/**
 * docs/openapi.json is the committed contract of the REST API: it must equal the document the
 * routes' zod schemas generate, be served at OPENAPI_PATH, and describe every REST route the
 * server answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createApp, EMBED_BASE, listen, OFFERS_BASE, OPENAPI_PATH } from "../../graphql/server";
import type { WriteService } from "../../service/writes/write-service";

const root = join(import.meta.dirname, "..", "..");
const committed = () => readFileSync(join(root, "docs", "openapi.json"), "utf8");
type Doc = { openapi: string; paths: Record<string, Record<string, { security?: object[]; responses: Record<string, unknown> }>> };

// Routes that read no service: the document, and parameters refused before any handler runs.
const app = createApp({
  read: null as never,
  custody: null,
  writes: {} as WriteService,
  graphiql: false,
  actions: { gateway: null as never, blockchainId: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" },
});
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  server = await listen(app);
});
afterAll(async () => server?.close());

describe("docs/openapi.json", () => {
  it("equals the document the routes generate (run npm run openapi after changing them)", () => {
    expect(() => execFileSync(process.execPath, ["--import", "tsx", "scripts/print-openapi.ts", "--check"], { cwd: root, stdio: "pipe" })).not.toThrow();
  });

  it("is served at OPENAPI_PATH as JSON, byte for byte", async () => {
    const r = await fetch(`${server.url}${OPENAPI_PATH}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await r.text()).toBe(committed());
  });

  it("documents every REST route the server answers, writes with bearer auth", () => {
    const doc = JSON.parse(committed()) as Doc;
    expect(doc.openapi).toBe("3.1.0");
    const served = new Set(
      app.routes
        .filter(
          (r) =>
            r.method !== "ALL" &&
            (r.path.startsWith(OFFERS_BASE) || r.path.startsWith(`${EMBED_BASE}/`) || r.path.startsWith("/api/actions/") || r.path === "/actions.json"),
        )
        .filter((r) => r.path !== OPENAPI_PATH && !r.path.endsWith("/polls") && !r.path.endsWith("/*"))
        .map((r) => `${r.method} ${r.path.replace(/\/$/, "").replace(/:(\w+)/g, "{$1}")}`),
    );
    const documented = new Set(Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)));
    expect([...documented].sort()).toEqual([...served].sort());
    // 11; the contract history and quote (issues 23, 24); portfolio, close-all and the dead-man switch
    // (6, issue 26); wallet positions, /actions.json, the eight action routes and the contract action
    // (issue 25); take-best (issue 24); webhooks (8, issue 26).
    expect(served.size).toBe(11 + 2 + 6 + 1 + 10 + 1 + 8);
    for (const p of ["", "/{address}/take", "/{address}/close"]) {
      const op = doc.paths[`${OFFERS_BASE}${p}`].post;
      expect(op.security).toEqual([{ bearer: [] }]);
      expect(Object.keys(op.responses)).toEqual(["200", "400", "401", "403", "404", "409", "413", "429", "503"]);
    }
  });

  it("refuses what the schemas refuse with the project's error shape", async () => {
    const bad = await fetch(`${server.url}${OFFERS_BASE}/not-an-address`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "offer address must be a base58 address of 32 bytes", code: "BAD_REQUEST" });
    const page = await fetch(`${server.url}${OFFERS_BASE}/shareable?pageSize=51`);
    expect(page.status).toBe(400);
    expect(await page.json()).toEqual({ error: 'pageSize must be an integer from 1 to 50; got "51"', code: "BAD_REQUEST" });
    // A NUL reached PostgreSQL and came back 503; it is refused like any other bad value.
    const nul = await fetch(`${server.url}${OFFERS_BASE}/shareable?query=a%00b`);
    expect(nul.status).toBe(400);
    expect(await nul.json()).toEqual({ error: "query must be at most 200 characters, without control characters", code: "BAD_REQUEST" });
    // A repeated parameter is named as such, not quoted as one odd value ("Settled,").
    const twice = await fetch(`${server.url}${OFFERS_BASE}/?status=Settled&status=`);
    expect(twice.status).toBe(400);
    expect(await twice.json()).toEqual({ error: "status given more than once; give it once", code: "BAD_REQUEST" });
  });
});
