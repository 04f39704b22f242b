/** HTTP requests of the suites against a running stack: REST (whole path, or under the offers base) and GraphQL. */
import { OFFERS_BASE } from "../../stack/local-stack";

export interface Res {
  status: number;
  headers: Headers;
  // Response bodies are read field by field in assertions; their shapes are what the tests check.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** The raw body, for failure messages and scans of non-JSON answers. */
  text: string;
  /** Wall time of the request, for the figures some suites print (never asserted). */
  ms: number;
}
/** The response of `getJson` and `gql` (the same shape). */
export type Json = Res;

/** One request: the body is parsed as JSON when it is JSON, kept as text otherwise. */
async function request(url: string, init: { method?: string; token?: string | null; headers?: Record<string, string>; body?: string }): Promise<Res> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const t0 = performance.now();
  const r = await fetch(url, { method: init.method ?? "GET", headers, body: init.body });
  const text = await r.text();
  const ms = performance.now() - t0;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: r.status, headers: r.headers, body, text, ms };
}

/** Any request to `path` (from the server's root), JSON or not. */
export function getJson(s: { url: string }, path: string, opts: { token?: string; headers?: Record<string, string>; method?: string } = {}): Promise<Json> {
  return request(`${s.url}${path}`, opts);
}

/** A GraphQL operation over POST /graphql. */
export function gql(s: { url: string }, query: string, variables: Record<string, unknown> = {}, token?: string | null): Promise<Json> {
  return request(`${s.url}/graphql`, { method: "POST", token, headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables }) });
}

/** POST under the offers REST base; a string body is sent as is (malformed-JSON tests). */
export function post(s: { url: string }, path: string, body: unknown, token?: string | null, headers: Record<string, string> = {}): Promise<Res> {
  return request(`${s.url}${OFFERS_BASE}${path}`, {
    method: "POST",
    token,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** GET under the offers REST base. */
export function get(s: { url: string }, path: string, token?: string | null): Promise<Res> {
  return request(`${s.url}${OFFERS_BASE}${path}`, { token });
}
