/**
 * Unexpected errors are logged once each, with the id of the request they happened in, over real
 * HTTP on a store that fails every query: a REST read (503), a GraphQL resolver's 503, an error
 * GraphQL masks inside a resolver (node) and one it masks outside execution (the response cache's
 * check of the store). The request id is passed down explicitly (no async context), so each path
 * has to hand it on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeGlobalID } from "@pothos/plugin-relay";
import { openStore } from "../../indexer";
import { createApp, listen, OFFERS_BASE } from "../../graphql/server";
import { ReadService } from "../../service/read/read-service";

type Server = Awaited<ReturnType<typeof listen>>;

/** An app over a closed store; `responseCacheTtlMs` 0 lets queries reach the resolvers. */
async function failing(responseCacheTtlMs: number) {
  const store = await openStore(":memory:");
  const logged: { error: unknown; requestId: string | undefined }[] = [];
  const app = createApp({
    read: new ReadService({ db: store.db, now: () => 0 }),
    custody: null,
    graphiql: false,
    responseCacheTtlMs,
    log: (error, requestId) => logged.push({ error, requestId }),
  });
  const srv = await listen(app);
  await store.close(); // every query now fails
  return { srv, logged };
}

async function graphql(srv: Server, id: string, query: string) {
  const r = await fetch(`${srv.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": id },
    body: JSON.stringify({ query }),
  });
  const body = (await r.json()) as { errors?: { message: string; extensions: { code: string } }[] };
  return body.errors?.map((e) => e.extensions.code);
}

describe("unexpected errors on a store that cannot be read", () => {
  let resolvers: Awaited<ReturnType<typeof failing>>;
  let cached: Awaited<ReturnType<typeof failing>>;
  beforeAll(async () => {
    resolvers = await failing(0);
    cached = await failing(60_000);
  });
  afterAll(async () => {
    await resolvers?.srv.close();
    await cached?.srv.close();
  });

  /** The errors logged for request `id`: exactly one, the store's. */
  const loggedOnce = (logged: { error: unknown; requestId: string | undefined }[], id: string) => {
    const mine = logged.filter((l) => l.requestId === id);
    expect(mine.map((l) => String(l.error))).toEqual([expect.stringMatching(/destroyed/)]);
  };

  it("REST: 503 without detail, the error logged once with the request id", async () => {
    const r = await fetch(`${resolvers.srv.url}${OFFERS_BASE}/contracts`, { headers: { "x-request-id": "rest-err-1" } });
    expect(r.status).toBe(503);
    expect(await r.json()).toEqual({ error: "temporarily unavailable; retry with backoff", code: "SERVICE_UNAVAILABLE" });
    loggedOnce(resolvers.logged, "rest-err-1");
  });

  it("GraphQL: a resolver's 503 and an error masked in a resolver, each logged once with its request id", async () => {
    expect(await graphql(resolvers.srv, "gql-err-503", "{ contracts { address } }")).toEqual(["SERVICE_UNAVAILABLE"]);
    loggedOnce(resolvers.logged, "gql-err-503");
    const node = encodeGlobalID("Offer", "11111111111111111111111111111111");
    expect(await graphql(resolvers.srv, "gql-err-masked", `{ node(id: "${node}") { id } }`)).toEqual(["INTERNAL_SERVER_ERROR"]);
    loggedOnce(resolvers.logged, "gql-err-masked");
    // Nothing logged without a request id: every error was tied to its request.
    expect(resolvers.logged.filter((l) => l.requestId === undefined)).toEqual([]);
  });

  it("GraphQL: an error masked outside execution (the response cache's store check) is logged once with the request id", async () => {
    expect(await graphql(cached.srv, "gql-err-outside", "{ contracts { address } }")).toEqual(["INTERNAL_SERVER_ERROR"]);
    loggedOnce(cached.logged, "gql-err-outside");
    expect(cached.logged.length).toBe(1);
  });
});
