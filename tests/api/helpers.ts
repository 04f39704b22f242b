/** The full stack for read-API suites: local chain + indexer + custody + writes + the HTTP app. */
import { startLocalStack, type LocalStack, type LocalStackOptions } from "../../stack/local-stack";
import type { ReadService } from "../../service/read/read-service";
import { serviceApp } from "../../stack/app";

export interface ApiStack extends LocalStack {
  read: ReadService;
}

export async function apiStack(opts: LocalStackOptions & { settingsTtlMs?: number; embedTtlMs?: number; responseCacheTtlMs?: number } = {}): Promise<ApiStack> {
  let read!: ReadService;
  const s = await startLocalStack({
    ...opts,
    app: (parts) => {
      const built = serviceApp(parts, {
        publicUrl: "https://offers.example",
        graphiql: false,
        responseCacheTtlMs: opts.responseCacheTtlMs,
        readCaches: { settingsTtlMs: opts.settingsTtlMs ?? 0, embedTtlMs: opts.embedTtlMs, clockCacheMs: 0 },
      });
      read = built.read;
      return built.app;
    },
  });
  return Object.assign(s, { read });
}

export interface Json {
  status: number;
  headers: Headers;
  // Response bodies are read field by field in assertions; their shapes are what the tests check.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export async function getJson(
  s: { url: string },
  path: string,
  opts: { token?: string; headers?: Record<string, string>; method?: string } = {},
): Promise<Json> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const r = await fetch(`${s.url}${path}`, { method: opts.method ?? "GET", headers });
  const text = await r.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: r.status, headers: r.headers, body };
}

export async function gql(s: { url: string }, query: string, variables: Record<string, unknown> = {}, token?: string): Promise<Json> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(`${s.url}/graphql`, { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  return { status: r.status, headers: r.headers, body: await r.json() };
}

/** Polls until `fn` returns a truthy value (the spec's tracking: every few ms here, up to 10 s). */
export async function until<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
