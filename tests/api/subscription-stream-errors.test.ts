/**
 * A subscription's event stream that throws after it started is logged once, with the id of the
 * request it served; its client gets the events sent before, then the masked error as the last
 * event. The app's live streams end with a value, never by throwing, so the failing stream is a
 * schema of this test's own, served over HTTP by yoga with the app's masking and error log
 * (graphql/error-log.ts), read over SSE by the live suites' client (./live-clients.ts).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createGraphQLError, createSchema, createYoga } from "graphql-yoga";
import { maskError, useUnexpectedErrorLog } from "../../graphql/error-log";
import { sseSubscribe } from "./live-clients";

const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** yoga on node:http, each request given the id `req-<n>` (n from 1), as the app's request ids reach yoga. */
async function serve(fail: () => Error) {
  const logged: { error: unknown; requestId: string | undefined }[] = [];
  // yoga's createSchema: the graphql-js copy yoga itself runs (a schema of another copy is refused).
  const schema = createSchema({
    typeDefs: "type Query { ok: String } type Subscription { ticks: String }",
    resolvers: {
      Subscription: {
        ticks: {
          subscribe: async function* () {
            yield { ticks: "first" };
            throw fail();
          },
        },
      },
    },
  });
  const yoga = createYoga<{ requestId?: string }>({
    schema,
    maskedErrors: { maskError },
    plugins: [useUnexpectedErrorLog((error, requestId) => logged.push({ error, requestId }))],
    logging: false,
  });
  let requests = 0;
  const server = createServer((req, res) => void yoga(req, res, { requestId: `req-${++requests}` }));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { logged, subscribe: () => sseSubscribe(url, "subscription { ticks }") };
}

describe("a subscription stream that throws after it started", () => {
  it("is logged once with its request id; the client gets the events before it, then the masked error", async () => {
    const boom = new Error("the event source broke");
    const s = await serve(() => boom);
    const stream = await s.subscribe();
    expect(stream.status).toBe(200);
    expect(await stream.ended()).toEqual([
      { data: { ticks: "first" } },
      { errors: [{ message: "Unexpected error.", extensions: { code: "INTERNAL_SERVER_ERROR", status: 500 } }] },
    ]);
    expect(stream.failure).toBeNull(); // ended by the stream's `complete` event
    expect(s.logged).toEqual([{ error: boom, requestId: "req-1" }]);
  });

  it("a coded GraphQL error (one the API means) reaches the client and is not logged as unexpected", async () => {
    const s = await serve(() =>
      createGraphQLError("live updates are shutting down on this server; reconnect", { extensions: { code: "SERVICE_UNAVAILABLE" } }),
    );
    const events = await (await s.subscribe()).ended();
    expect(events[1].errors?.[0]).toMatchObject({
      message: "live updates are shutting down on this server; reconnect",
      extensions: { code: "SERVICE_UNAVAILABLE" },
    });
    expect(s.logged).toEqual([]);
  });
});
