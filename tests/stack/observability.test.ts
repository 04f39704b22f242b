/**
 * Observability of the local stack over real HTTP: request ids (echoed and in the access log,
 * read from a pino destination stream the test passes in), request metrics by route pattern and
 * status, transactions counted and logged with the request id (REST and GraphQL) and signature, an unexpected error
 * logged with the request id, worker and indexer
 * metrics, the lag gauge, and readiness (200 healthy; 503 with Retry-After and the failing
 * check when the indexer falls behind or the store is gone, SQLite closed or PostgreSQL schema
 * dropped) while /healthz stays live.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { dropPostgresSchema } from "../../indexer/store/db";
import { PG_BASE } from "../indexer/stores";
import { OFFERS_BASE, contract, createBody, makeUser, stack } from "../support/stack";
import { post } from "../support/http";
import type { LocalStack } from "../../stack/local-stack";
import { SettlementWorker } from "../../service/worker/worker";
import { OFFERS_ERRORS } from "../../idl/client/offers";
import { ServiceMetrics } from "../../service/observability/metrics";

const OFFERS_ERROR_NAMES = new Set([...OFFERS_ERRORS.values()].map((e) => e.name));

/** Log lines written by the stack's pino logger. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n")) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, destination };
}

/** One sample of the Prometheus text exposition: the value of `name` whose labels include `labels`, or null. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return null;
}

async function metrics(s: LocalStack): Promise<string> {
  const r = await fetch(`${s.url}/metrics`);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.text();
}

async function readyz(s: LocalStack) {
  const r = await fetch(`${s.url}/readyz`);
  return {
    status: r.status,
    retryAfter: r.headers.get("retry-after"),
    body: (await r.json()) as { ready: boolean; failing: string[]; checks: Record<string, Record<string, unknown>> },
  };
}

describe("observability of the local stack (SQLite)", () => {
  let s: LocalStack;
  const log = capture();

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "obs-"));
    s = await stack({ storeUrl: join(dir, "store.sqlite"), observability: { level: "info", destination: log.destination, maxLagSlots: 20 } });
  });
  afterAll(async () => {
    await s?.stop().catch(() => undefined);
  });

  it("echoes an incoming X-Request-Id, makes one otherwise, and logs it with the request's route and status", async () => {
    const r = await fetch(`${s.url}${OFFERS_BASE}/contracts`, { headers: { "x-request-id": "obs-test-1" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-request-id")).toBe("obs-test-1");
    const line = log.lines.find((l) => l.requestId === "obs-test-1" && l.msg === "request");
    expect(line).toMatchObject({ level: 30, method: "GET", route: `${OFFERS_BASE}/contracts`, path: `${OFFERS_BASE}/contracts`, status: 200 });
    expect(typeof line!.durationMs).toBe("number");

    const fresh = await fetch(`${s.url}${OFFERS_BASE}/contracts`, { headers: { "x-request-id": "has spaces; not an id" } });
    const id = fresh.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(log.lines.some((l) => l.requestId === id && l.status === 200)).toBe(true);
    // Generated ids differ per request.
    const other = await fetch(`${s.url}/healthz`);
    expect(other.headers.get("x-request-id")).not.toBe(id);
  });

  it("counts requests and their latency by route pattern and status, never by raw URL", async () => {
    const before = await metrics(s);
    const labels = { method: "GET", route: `${OFFERS_BASE}/:address`, status: "404" };
    const count0 = sample(before, "http_requests_total", labels) ?? 0;
    const hist0 = sample(before, "http_request_duration_seconds_count", labels) ?? 0;
    const missing = [randomBytes(8).toString("hex"), randomBytes(8).toString("hex")];
    for (const m of missing) expect((await fetch(`${s.url}${OFFERS_BASE}/${m}`)).status).toBeGreaterThanOrEqual(400);
    const gql = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ _meta { indexedSlot } }" }),
    });
    expect(gql.status).toBe(200);
    // GraphQL answers with a Response of its own: the id is echoed there too.
    expect(gql.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const after = await metrics(s);
    // The offer route answers 400 for a malformed address or 404: whichever, the pattern is the label.
    const moved = (st: string) =>
      (sample(after, "http_requests_total", { ...labels, status: st }) ?? 0) -
      (st === "404" ? count0 : (sample(before, "http_requests_total", { ...labels, status: st }) ?? 0));
    expect(moved("404") + moved("400")).toBe(2);
    const histMoved = (st: string) =>
      (sample(after, "http_request_duration_seconds_count", { ...labels, status: st }) ?? 0) -
      (st === "404" ? hist0 : (sample(before, "http_request_duration_seconds_count", { ...labels, status: st }) ?? 0));
    expect(histMoved("404") + histMoved("400")).toBe(2);
    expect(sample(after, "http_request_duration_seconds_bucket", { route: `${OFFERS_BASE}/:address`, le: "+Inf" })).not.toBeNull();
    expect(sample(after, "http_requests_total", { method: "POST", route: "/graphql", status: "200" })).toBeGreaterThanOrEqual(1);
    for (const m of missing) expect(after).not.toContain(m);
  });

  it("counts each request once in the counter and the histogram, however many scrapes run at once", async () => {
    // The counter is the histogram's count, filled when scraped (service/observability/metrics.ts).
    const m = new ServiceMetrics();
    for (let i = 0; i < 3; i++) m.httpRequest("GET", "/a", 200, 0.001);
    m.httpRequest("POST", "/b", 503, 0.2);
    const scrapes = await Promise.all([m.registry.metrics(), m.registry.metrics(), m.registry.metrics()]);
    for (const text of scrapes) {
      expect(sample(text, "http_requests_total", { method: "GET", route: "/a", status: "200", ok: "true" })).toBe(3);
      expect(sample(text, "http_request_duration_seconds_count", { method: "GET", route: "/a", status: "200" })).toBe(3);
      expect(sample(text, "http_requests_total", { method: "POST", route: "/b", status: "503", ok: "false" })).toBe(1);
      expect(text).toContain("# TYPE http_requests_total counter");
    }
  });

  it("counts and logs each transaction the writes and the worker send, with the request id, signature and failure reason", async () => {
    const alice = await makeUser(s);
    const k = await contract(s, 600n);
    const created = await post(s, "/", createBody(k, { idempotencyKey: "obs-create-1" }), alice.token, { "x-request-id": "obs-write-1" });
    expect(created.status).toBe(200);
    const signature = created.body.signature as string;
    expect(log.lines.find((l) => l.msg === "transaction sent" && l.signature === signature)).toMatchObject({
      requestId: "obs-write-1",
      path: "writes",
      level: 30,
    });
    const poisoned = await post(s, "/", createBody(k, { idempotencyKey: "obs-create-2" }), alice.token);
    expect(poisoned.status).toBe(200);
    let m = await metrics(s);
    expect(sample(m, "offers_tx_sent_total", { path: "writes" })).toBe(2);

    // Past the cutoff the worker closes both offers; the second one's transaction also carries an
    // instruction the program refuses (voiding a contract before its resolution deadline).
    await s.chain.gateway.advance(601n);
    const refused = await s.worker.deps.client.voidExpiredContract({ contract: k });
    const worker = new SettlementWorker({ ...s.worker.deps, prepare: (item, ixs) => (item.address === poisoned.body.offerAddress ? [...ixs, refused] : ixs) });
    const report = await worker.runOnce();
    expect(report).toMatchObject({ closed: 1, failed: 1 });
    const [failure] = await worker.failures.list();
    expect(OFFERS_ERROR_NAMES.has(failure.lastReason)).toBe(true);
    m = await metrics(s);
    expect(sample(m, "offers_tx_sent_total", { path: "worker" })).toBe(1);
    expect(sample(m, "offers_tx_confirmed_total", { path: "worker" })).toBe(1);
    expect(sample(m, "offers_tx_failed_total", { path: "worker", reason: failure.lastReason })).toBe(1);
    expect(sample(m, "offers_worker_items_total", { outcome: "closed" })).toBe(1);
    expect(sample(m, "offers_worker_items_total", { outcome: "failed" })).toBe(1);
    expect(sample(m, "offers_worker_passes_total")).toBe(1);
    expect(sample(m, "offers_worker_pass_duration_seconds_count")).toBe(1);
    expect(sample(m, "offers_worker_deferred_items")).toBe(1);
    const workerTx = log.lines.find((l) => l.msg === "transaction sent" && l.path === "worker");
    expect(workerTx?.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(workerTx?.requestId).toBeUndefined();
    expect(log.lines.find((l) => l.msg === "transaction failed")).toMatchObject({ path: "worker", reason: failure.lastReason, level: 40 });
    // The indexer applied both creations and the close.
    expect(sample(m, "offers_indexer_batches_total")).toBeGreaterThanOrEqual(3);
    expect(sample(m, "offers_indexer_rows_total", { kind: "accounts" })).toBeGreaterThanOrEqual(3);
    expect(sample(m, "offers_indexer_rows_total", { kind: "events" })).toBeGreaterThanOrEqual(1);
  });

  it("logs a GraphQL mutation's transaction with the request id of the request that made it", async () => {
    const bob = await makeUser(s);
    const k = await contract(s, 600n);
    const r = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${bob.token}`, "x-request-id": "obs-write-gql-1" },
      body: JSON.stringify({
        query: "mutation($input: CreateOfferInput!) { createOffer(input: $input) { signature } }",
        variables: { input: createBody(k, { idempotencyKey: "obs-create-gql-1" }) },
      }),
    });
    const body = (await r.json()) as { data?: { createOffer: { signature: string } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    const signature = body.data!.createOffer.signature;
    expect(log.lines.find((l) => l.msg === "transaction sent" && l.signature === signature)).toMatchObject({ requestId: "obs-write-gql-1", path: "writes" });
  });

  it("is ready while the indexer keeps up; lag above the threshold answers 503 naming the indexer", async () => {
    const ok = await readyz(s);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ready: true, failing: [], checks: { store: { ok: true }, chain: { ok: true }, indexer: { ok: true, lagSlots: 0 } } });
    const head = Number(await s.chain.gateway.getSlot());
    let m = await metrics(s);
    expect(sample(m, "offers_indexer_lag_slots")).toBe(0);
    expect(sample(m, "offers_chain_head_slot")).toBe(head);

    // The indexer stops receiving; the chain moves 25 slots on (threshold 20).
    await s.source.stop();
    for (let i = 0; i < 25; i++) await s.chain.gateway.advance(1n);
    const behind = await readyz(s);
    expect(behind.status).toBe(503);
    expect(behind.retryAfter).toBe("5");
    expect(behind.body.failing).toEqual(["indexer"]);
    expect(behind.body.checks.indexer).toMatchObject({ ok: false, lagSlots: 25, maxLagSlots: 20 });
    m = await metrics(s);
    expect(sample(m, "offers_indexer_lag_slots")).toBe(25);
    expect(sample(m, "offers_chain_head_slot")).toBe(head + 25);
  });

  it("answers 503 naming the store once the store is closed, while /healthz stays live", async () => {
    await s.store.close();
    const r = await readyz(s);
    expect(r.status).toBe(503);
    expect(r.retryAfter).toBe("5");
    expect(r.body.failing).toContain("store");
    expect(r.body.checks.store).toEqual({ ok: false, error: "the store did not answer" });
    const live = await fetch(`${s.url}/healthz`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ ok: true, indexedSlot: null });
    // A read the store cannot answer: 503 without detail, the error logged once with the request id.
    const failed = await fetch(`${s.url}${OFFERS_BASE}/${"1".repeat(32)}/fills`, { headers: { "x-request-id": "obs-error-1" } });
    expect(failed.status).toBe(503);
    const errors = log.lines.filter((l) => l.msg === "unexpected error" && l.requestId === "obs-error-1");
    expect(errors).toEqual([expect.objectContaining({ level: 50, err: expect.objectContaining({ message: expect.stringMatching(/destroyed/) }) })]);
  });
});

describe("readiness on PostgreSQL", () => {
  let s: LocalStack;
  const url = `${PG_BASE}?schema=obs_${randomBytes(5).toString("hex")}`;

  beforeAll(async () => {
    s = await stack({ storeUrl: url });
  });
  afterAll(async () => {
    await s?.stop().catch(() => undefined);
    await dropPostgresSchema(url).catch(() => undefined);
  });

  it("answers 200, then 503 naming the store once its schema is dropped", async () => {
    expect((await readyz(s)).status).toBe(200);
    await dropPostgresSchema(url);
    const r = await readyz(s);
    expect(r.status).toBe(503);
    expect(r.body.failing).toEqual(["store"]);
    expect(r.body.checks.chain).toMatchObject({ ok: true });
  });
});
