/**
 * Subscriptions over SSE, each event one chunk whose bytes are made once per answer.
 *
 * graphql-yoga's own SSE processor writes an event as two chunks and encodes both again for every
 * subscriber; through the web stream and hono's copy into the socket, that was half of what 2,000
 * subscribers of one offer cost per change. Here an event is `event: next\ndata: <json>\n\n` in
 * one chunk, and subscribers handed the same answer object (graphql/shared-subscription-events.ts)
 * are written the same bytes. The rest is yoga's format, which the SSE clients read: a comment
 * first (some browsers wait for the first bytes), one every PING_MS, `event: complete` at the end.
 * Only subscription streams use it; everything else is yoga's. Each event of a live subscription
 * carries its `id:` (the stream and its sequence number, graphql/live-event-ids.ts), which an
 * EventSource sends back as Last-Event-ID when it reconnects (a resume, docs/api-guide.md).
 */
import type { ExecutionResult, GraphQLError } from "graphql";
import { isAsyncIterable, type Plugin } from "graphql-yoga";
import { liveStreamOfRequest } from "./live-event-ids";

type ResultProcessor = Parameters<NonNullable<Plugin["onResultProcess"]>>[0]["resultProcessor"] & {};

/**
 * A comment every 12 s keeps proxies from closing an idle stream, and a write is what reveals a
 * client that went away (its subscription is then released). 300 ms under NODE_ENV=test, as yoga.
 */
const PING_MS = process.env.NODE_ENV === "test" ? 300 : 12_000;
const encoder = new TextEncoder();
const PING = encoder.encode(":\n\n");
const COMPLETE = encoder.encode("event: complete\ndata:\n\n");

type Answer = ExecutionResult & { stringify?: (r: ExecutionResult) => string };
const chunks = new WeakMap<object, Uint8Array>();

/** An error as the client sees it: without the extensions yoga keeps for itself (http status and headers, `unexpected`). */
function publicError(e: GraphQLError): unknown {
  const j = typeof e.toJSON === "function" ? e.toJSON() : e;
  const { http: _h, unexpected: _u, ...extensions } = (j.extensions ?? {}) as Record<string, unknown>;
  return { ...j, extensions: Object.keys(extensions).length ? extensions : undefined };
}

function json(r: Answer): string {
  if (!r.errors?.length && !r.extensions?.http) return (r.stringify ?? JSON.stringify)(r);
  const { http: _h, ...extensions } = (r.extensions ?? {}) as Record<string, unknown>;
  return JSON.stringify({ ...r, errors: r.errors?.map(publicError), extensions: Object.keys(extensions).length ? extensions : undefined });
}

function eventChunk(r: Answer): Uint8Array {
  let c = chunks.get(r);
  if (!c) chunks.set(r, (c = encoder.encode(`event: next\ndata: ${json(r)}\n\n`)));
  return c;
}

/** The event with its id line in front: the event's bytes are shared, the id is the subscriber's own. */
function withId(id: string | undefined, chunk: Uint8Array): Uint8Array {
  if (id === undefined) return chunk;
  const head = encoder.encode(`id: ${id}\n`);
  const out = new Uint8Array(head.length + chunk.length);
  out.set(head);
  out.set(chunk, head.length);
  return out;
}

const processSubscription =
  (request: Request): ResultProcessor =>
  (result, fetchAPI) => {
    const events = (result as AsyncIterable<Answer>)[Symbol.asyncIterator]();
    let ping: NodeJS.Timeout | undefined;
    const body = new fetchAPI.ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(PING);
        ping = setInterval(() => {
          // null: errored (the client went away); 0: backpressure, skip this ping.
          if (c.desiredSize === null) clearInterval(ping);
          else if (c.desiredSize > 0) c.enqueue(PING);
        }, PING_MS);
      },
      async pull(c) {
        try {
          const r = await events.next();
          if (r.value != null) c.enqueue(withId(liveStreamOfRequest(request)?.lastEventId, eventChunk(r.value)));
          if (r.done) {
            clearInterval(ping);
            c.enqueue(COMPLETE);
            c.close();
          }
        } catch (e) {
          clearInterval(ping);
          c.error(e);
        }
      },
      async cancel(e) {
        clearInterval(ping);
        await events.return?.(e);
      },
    });
    return new fetchAPI.Response(body, {
      status: 200,
      headers: { "content-type": "text/event-stream", connection: "keep-alive", "cache-control": "no-cache", "content-encoding": "none" },
    });
  };

/** After yoga's own processors: takes over the streams a client asked to receive as SSE. */
export function useSseEvents(): Plugin {
  return {
    onResultProcess({ request, result, setResultProcessor }) {
      if (isAsyncIterable(result) && request.headers.get("accept")?.includes("text/event-stream"))
        setResultProcessor(processSubscription(request), "text/event-stream");
    },
  };
}
