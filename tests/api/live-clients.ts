/**
 * Subscription clients of the live-update suites, over real HTTP and a real WebSocket: SSE as a
 * browser's fetch reads it (graphql-sse "distinct connections" events: `next`, `complete`), and
 * WebSocket through graphql-ws's own client on `ws`. Both expose the same stream of results.
 */
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import type { ExecutionResult } from "graphql";
import { startLocalStack, type LocalStack, type LocalStackOptions } from "../../stack/local-stack";
import { serviceApp } from "../../stack/app";
import type { LiveLimits } from "../../service/read/live-updates";
import type { RequestLimits } from "../../service/rate/request-limiter";

export type Transport = "sse" | "ws";

// Results are read field by field in assertions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Result = ExecutionResult<any> & { errors?: { message: string; extensions?: Record<string, unknown> }[]; id?: string };

/** One subscription's events as they arrive; `next` waits for the next one, `ended` for the stream's end. */
export class LiveStream {
  private readonly items: Result[] = [];
  private waiters: (() => void)[] = [];
  done = false;
  /** SSE: the response's HTTP status. */
  status: number | null = null;
  /** Why the stream ended without completing (a WebSocket close code, an HTTP status). */
  failure: { code?: number; reason?: string; status?: number } | null = null;

  constructor(readonly close: () => void) {}

  push(r: Result): void {
    this.items.push(r);
    this.wake();
  }

  end(failure: LiveStream["failure"] = null): void {
    this.done = true;
    this.failure ??= failure;
    this.wake();
  }

  get pending(): number {
    return this.items.length;
  }

  async next(timeoutMs = 10_000): Promise<Result> {
    const end = Date.now() + timeoutMs;
    while (this.items.length === 0) {
      if (this.done) throw new Error(`stream ended without a next event (${JSON.stringify(this.failure)})`);
      if (!(await this.wait(end - Date.now()))) throw new Error("no event in time");
    }
    return this.items.shift()!;
  }

  /** Skips events until one satisfies `pred`. */
  async until(pred: (r: Result) => boolean, timeoutMs = 10_000): Promise<Result> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.next(Math.max(1, end - Date.now()));
      if (pred(r)) return r;
    }
  }

  /** Waits for the end; returns the events left unread. */
  async ended(timeoutMs = 10_000): Promise<Result[]> {
    const end = Date.now() + timeoutMs;
    while (!this.done) if (!(await this.wait(end - Date.now()))) throw new Error("stream did not end in time");
    return this.items.splice(0);
  }

  private wait(ms: number): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const w = () => {
        clearTimeout(t);
        resolve(true);
      };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        resolve(false);
      }, ms);
      this.waiters.push(w);
    });
  }

  private wake(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }
}

/**
 * SSE: POST /graphql with Accept: text/event-stream, the events parsed as they stream in (each
 * result with its SSE `id`); `lastEventId` is sent as Last-Event-ID, as an EventSource reconnecting.
 */
export async function sseSubscribe(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
  lastEventId?: string,
): Promise<LiveStream> {
  const ac = new AbortController();
  const stream = new LiveStream(() => ac.abort());
  const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
  const res = await fetch(`${url}/graphql`, { method: "POST", headers, body: JSON.stringify({ query, variables }), signal: ac.signal });
  stream.status = res.status;
  if (!res.headers.get("content-type")?.includes("text/event-stream")) {
    const text = await res.text();
    try {
      stream.push(JSON.parse(text) as Result);
    } catch {
      /* not JSON */
    }
    stream.end({ status: res.status, reason: text });
    return stream;
  }
  void (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let event = "message";
          let data = "";
          let id: string | undefined;
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) event = line.slice(6).trim();
            else if (line.startsWith("data:")) data += line.slice(5).trim();
            else if (line.startsWith("id:")) id = line.slice(3).trim();
          }
          if (event === "next") stream.push({ ...(JSON.parse(data) as Result), id });
          if (event === "complete") return stream.end();
        }
      }
      stream.end({ reason: "connection closed" });
    } catch {
      stream.end({ reason: "aborted" });
    }
  })();
  return stream;
}

/** A graphql-ws client on `ws`: one connection, any number of subscriptions; closed with `dispose`. */
export function wsClient(url: string, token?: string): Client & { closed: Promise<{ code: number; reason: string }> } {
  let closed!: (e: { code: number; reason: string }) => void;
  const client = createClient({
    url: `${url.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: false,
    // Failures are read from the close event (closed).
    onNonLazyError: () => {},
    on: { closed: (e) => closed(e as { code: number; reason: string }) },
  });
  return Object.assign(client, { closed: new Promise<{ code: number; reason: string }>((r) => (closed = r)) });
}

export function wsSubscribe(client: Client, query: string, variables: Record<string, unknown> = {}): LiveStream {
  let stop = () => {};
  const stream = new LiveStream(() => stop());
  stop = client.subscribe(
    { query, variables },
    {
      next: (r) => stream.push(r as Result),
      error: (e) => {
        const ev = e as { code?: number; reason?: string };
        if (Array.isArray(e)) stream.push({ errors: e } as Result);
        stream.end(Array.isArray(e) ? null : { code: ev.code, reason: ev.reason ?? String(e) });
      },
      complete: () => stream.end(),
    },
  );
  return stream;
}

/** The local stack with the change feed wired into the app (subscriptions on), limits as given. */
export async function liveStack(opts: LocalStackOptions & { live?: Partial<LiveLimits>; requestLimits?: RequestLimits } = {}): Promise<LocalStack> {
  return startLocalStack({
    ...opts,
    app: (parts) =>
      serviceApp(parts, { graphiql: false, live: opts.live, requestLimits: opts.requestLimits, readCaches: { settingsTtlMs: 0, clockCacheMs: 0 } }).app,
  });
}

/** One subscription over either transport (the WebSocket client is opened for it, closed with it). */
export async function subscribeOver(t: Transport, url: string, query: string, variables: Record<string, unknown> = {}, token?: string): Promise<LiveStream> {
  if (t === "sse") return sseSubscribe(url, query, variables, token);
  const client = wsClient(url, token);
  const stream = wsSubscribe(client, query, variables);
  const close = stream.close;
  Object.assign(stream, {
    close: () => {
      close();
      void client.dispose();
    },
  });
  void client.closed.then((e) => stream.end({ code: e.code, reason: e.reason }));
  return stream;
}
