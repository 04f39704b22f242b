/**
 * A subscription's event stream that throws after it started is logged once, with the id of the
 * request it served; its client gets the events sent before, then the masked error as the last
 * event. The app's live streams end with a value, never by throwing, so the failing stream is a
 * schema of this test's own, served by yoga with the app's masking and error log
 * (graphql/error-log.ts), over SSE.
 */
import { describe, expect, it } from "vitest";
import { createGraphQLError, createSchema, createYoga } from "graphql-yoga";
import { maskError, useUnexpectedErrorLog } from "../../graphql/error-log";

function serve(fail: () => Error) {
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
  /** The SSE events of `subscription { ticks }` for request `requestId`, each `data` parsed (null for `complete`'s). */
  const subscribe = async (requestId: string) => {
    const r = await yoga.fetch(
      new Request("http://x/graphql", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ query: "subscription { ticks }" }),
      }),
      { requestId },
    );
    expect(r.status).toBe(200);
    return (await r.text())
      .split("\n\n")
      .filter((e) => e.startsWith("event: "))
      .map((e) => {
        const [event, data] = e.split("\n");
        return { event: event.slice("event: ".length), data: data === "data:" ? null : JSON.parse(data.slice("data: ".length)) };
      });
  };
  return { logged, subscribe };
}

describe("a subscription stream that throws after it started", () => {
  it("is logged once with its request id; the client gets the events before it, then the masked error", async () => {
    const boom = new Error("the event source broke");
    const s = serve(() => boom);
    expect(await s.subscribe("sub-err-1")).toEqual([
      { event: "next", data: { data: { ticks: "first" } } },
      { event: "next", data: { errors: [{ message: "Unexpected error.", extensions: { code: "INTERNAL_SERVER_ERROR", status: 500 } }] } },
      { event: "complete", data: null },
    ]);
    expect(s.logged).toEqual([{ error: boom, requestId: "sub-err-1" }]);
  });

  it("a coded GraphQL error (one the API means) reaches the client and is not logged as unexpected", async () => {
    const s = serve(() => createGraphQLError("live updates are shutting down on this server; reconnect", { extensions: { code: "SERVICE_UNAVAILABLE" } }));
    const events = await s.subscribe("sub-err-2");
    expect(events[1].data.errors[0]).toMatchObject({
      message: "live updates are shutting down on this server; reconnect",
      extensions: { code: "SERVICE_UNAVAILABLE" },
    });
    expect(s.logged).toEqual([]);
  });
});
