/**
 * Read admission over real HTTP (service/rate/admission.ts): one read at a time, its slot held by
 * the test while callers queue, each caller on a loopback address of its own. A caller with no
 * recent use is answered before a flooding caller's queued reads; a caller's queue over its bound
 * is refused 429 with Retry-After (GraphQL and REST); answers held in the caches never queue.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { request } from "node:http";
import { startLocalStack, type LocalStack } from "../../stack/local-stack";
import { serviceApp } from "../../stack/app";
import type { ReadAdmission } from "../../service/rate/admission";
import { makeUser, OFFERS_BASE } from "../support/stack";

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: Record<string, unknown>;
}

/** One request from `localAddress` (a caller of its own: callerKey keys on the address group), signed in with `token` if given. */
function send(url: string, localAddress: string, method: "GET" | "POST", path: string, body?: unknown, token?: string): Promise<Answer> {
  const u = new URL(url);
  const headers = { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) };
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method, localAddress, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"] as string | undefined, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** A GraphQL query whose answer is new each time (`n` is part of the response cache's key). */
const page = (url: string, from: string, n: number | string) =>
  send(url, from, "POST", "/graphql", { query: "{ offers(first: 5) { edges { node { address } } } }", variables: { n } });

describe("read admission, one read at a time", () => {
  let s: LocalStack;
  let admission!: ReadAdmission;
  const limits = { concurrency: 1, queuePerCaller: 3, queueTotal: 100, retryAfterSeconds: 2 };
  const waiting = (n: number) => vi.waitFor(() => expect(admission.stats().waiting).toBe(n), { timeout: 30_000, interval: 10 });
  let releaseSlot = () => {};
  /** Takes the one slot until the returned release is called (afterEach releases it too: a failed test leaves no slot taken). */
  const holdSlot = () => {
    const held = new Promise<void>((r) => (releaseSlot = r));
    const done = admission.run(() => held, "holder");
    return async () => {
      releaseSlot();
      await done;
    };
  };
  afterEach(() => releaseSlot());

  beforeAll(async () => {
    s = await startLocalStack({
      app: (parts) => {
        // Answers kept long enough that a cached one is still held when asked again.
        const built = serviceApp(parts, { graphiql: false, admission: limits, responseCacheTtlMs: 600_000, readCaches: { anonymousTtlMs: 600_000 } });
        admission = built.admission!;
        return built.app;
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("answers a caller with no recent use before the queued reads of one that floods", async () => {
    const flood = "127.0.0.2";
    const quiet = "127.0.0.3";
    // The flooding caller's recent use.
    for (const n of [1, 2]) expect((await page(s.url, flood, `warm-${n}`)).status).toBe(200);
    const release = holdSlot();
    const order: string[] = [];
    const ask = (from: string, label: string, n: string) =>
      page(s.url, from, n).then((a) => {
        expect(a.status).toBe(200);
        order.push(label);
      });
    const floods = [1, 2, 3].map((i) => ask(flood, `flood-${i}`, `flood-${i}`));
    await waiting(3);
    const quietOne = ask(quiet, "quiet", "quiet-1");
    await waiting(4);
    await release();
    await Promise.all([...floods, quietOne]);
    expect(order).toEqual(["quiet", "flood-1", "flood-2", "flood-3"]);
  });

  it("refuses a caller's read over its queue's bound with 429 and Retry-After, GraphQL and REST alike; others still queue", async () => {
    const flood = "127.0.0.4";
    const release = holdSlot();
    const queued = [1, 2, 3].map((i) => page(s.url, flood, `bound-${i}`));
    await waiting(3);
    const refused = await page(s.url, flood, "bound-4");
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe("2");
    const [error] = refused.body.errors as { message: string; extensions: Record<string, unknown> }[];
    expect(error.message).toMatch(/at most 3 reads of one caller wait at once; retry in 2 s/);
    expect(error.extensions).toEqual({ code: "TOO_MANY_REQUESTS", status: 429, retryAfter: 2 });
    const rest = await send(s.url, flood, "GET", `${OFFERS_BASE}/?view=browse&pageSize=7`);
    expect(rest.status).toBe(429);
    expect(rest.retryAfter).toBe("2");
    expect(rest.body).toEqual({ error: expect.stringMatching(/at most 3 reads of one caller wait/), code: "TOO_MANY_REQUESTS" });
    // Another caller still gets a place in the queue.
    const other = page(s.url, "127.0.0.5", "bound-other");
    await waiting(4);
    await release();
    for (const a of await Promise.all([...queued, other])) expect(a.status).toBe(200);
    expect(admission.stats()).toMatchObject({ running: 0, waiting: 0 });
  });

  it("waits once for a REST request's read: the reads it makes inside that one (a signed-in page's viewer blocks) run at once", async () => {
    const { token } = await makeUser(s);
    const caller = "127.0.0.7";
    const release = holdSlot();
    // A page no one asked for yet: its shared read, then the caller's viewer blocks, each wait for
    // a turn; the positions read inside the viewer blocks' must not wait behind the read it is in.
    const answer = send(s.url, caller, "GET", `${OFFERS_BASE}/?view=browse&pageSize=11`, undefined, token);
    await waiting(1);
    await release();
    // A read waiting behind the one it runs inside would never be answered: fail rather than hang.
    const stuck = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the request's inner read waited for its own turn")), 10_000).unref());
    const a = await Promise.race([answer, stuck]);
    expect(a.status).toBe(200);
    expect(a.body.offers).toEqual([]);
    expect(admission.stats()).toMatchObject({ running: 0, waiting: 0 });
  });

  it("answers what the caches hold without queueing, while the slot is taken and the caller's queue is full", async () => {
    const caller = "127.0.0.6";
    const cachedQuery = { query: "{ offers(first: 3) { edges { node { address } } } }" };
    const cachedPath = `${OFFERS_BASE}/?view=browse&pageSize=3`;
    expect((await send(s.url, caller, "POST", "/graphql", cachedQuery)).status).toBe(200);
    expect((await send(s.url, caller, "GET", cachedPath)).status).toBe(200);
    const release = holdSlot();
    const queued = [1, 2, 3].map((i) => page(s.url, caller, `cached-${i}`));
    await waiting(3);
    const gql = await send(s.url, caller, "POST", "/graphql", cachedQuery);
    expect(gql.status).toBe(200);
    expect(gql.body.data).toBeTruthy();
    const rest = await send(s.url, caller, "GET", cachedPath);
    expect(rest.status).toBe(200);
    expect(admission.stats().waiting).toBe(3);
    await release();
    for (const a of await Promise.all(queued)) expect(a.status).toBe(200);
  });
});
