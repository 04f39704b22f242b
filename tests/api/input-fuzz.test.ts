/**
 * A seeded fuzz of the inputs a client controls, over real HTTP against the server as operators
 * run it (scripts/start.ts in a child process, so the RSS measured is the server's alone):
 * idempotency keys (any characters, lengths around 8 and 128, control characters, unicode, huge),
 * sports (case variants, padding, unknown, empty, repeated parameters), tokens (malformed, scheme
 * in any case, unknown, revoked, expired, read-only, very long, non-ASCII bytes through a raw
 * socket), the query parameters of browse, mine, shareable, fills and the embed endpoint, write
 * bodies to every POST route and GraphQL, and bodies up to 1 GB streamed from a generator
 * (chunked, a true Content-Length, a lying one) that the server must refuse early.
 *
 * Asserted: no 5xx at all; each answer's status is the one the documented rules give for that
 * request (400 malformed, 401 token, 403 blocked, 404 unknown, 409 state, 413 body, 429 rate with
 * Retry-After; 431 from node's HTTP layer for headers over 16 KiB); the server's RSS stays under
 * its start plus RSS_BOUND_MB; and nothing changed: the store's content checksum and the custody
 * tables (users, tokens but their last use, idempotency, write rate) are equal before and after
 * (every write in the mix is invalid or unauthorised; the one valid write runs before).
 *
 *   FUZZ_REQUESTS=10000 FUZZ_SEED=11 npx vitest run --project bankrun tests/api/input-fuzz.test.ts
 *
 * (defaults: 10,000 requests, seed 11; the figures print at the end; BENCHMARKS.md has a run.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PublicKey } from "@solana/web3.js";
import type { Kysely } from "kysely";
import { Rng } from "../../harness/random";
import { openStore } from "../../indexer/store/db";
import { storeChecksum } from "../../indexer/store/checksum";
import { SPORTS } from "../../service/read/sports";
import { until, printedBy, untilUp } from "../support/wait";
import { freePorts } from "../support/ports";

const ROOT = join(import.meta.dirname, "..", "..");
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? 11);
/** The server's RSS may grow at most this much over its RSS after setup. */
const RSS_BOUND_MB = 128;
const GB = 1024 ** 3;
const BASE = "/api/bets-usdc/offers";
const CONCURRENCY = 8;
/**
 * A token's burst: above what the fuzz sends with one Authorization header (10,000 requests spread
 * over 16 valid header spellings), so only the hammer test reaches it (refill: 1 a second).
 */
const TOKEN_BURST = 300;

let child: ChildProcess | null = null;
let port = 0;
const data = mkdtempSync(join(tmpdir(), "input-fuzz-"));
let rssPeak = 0;
let rssStart = 0;
let sampler: ReturnType<typeof setInterval> | null = null;

const rssMb = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child!.pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
};

interface Tokens {
  alice: string;
  bob: string;
  carol: string; // blocked
  reader: string; // bet:read only
  revoked: string;
  expired: string;
}
let tok: Tokens;
let contract = "";
let offer = "";
let url = "";

async function admin<T = unknown>(cmd: Record<string, unknown>): Promise<T> {
  const a = JSON.parse(readFileSync(join(data, "admin.json"), "utf8")) as { adminUrl: string; adminToken: string };
  const r = await fetch(`${a.adminUrl}/admin`, {
    method: "POST",
    headers: { authorization: `Bearer ${a.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(cmd),
  });
  const b = (await r.json()) as { result?: unknown; error?: string };
  if (r.status !== 200) throw new Error(`${cmd.op}: ${b.error}`);
  return b.result as T;
}

/** What must not change: the store's content and the custody tables (minus tokens' last use). */
async function snapshot(): Promise<string> {
  const store = await openStore(join(data, "store.sqlite"));
  try {
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const h = createHash("sha256").update(await storeChecksum(store.db, "content"));
    for (const table of ["users", "access_tokens", "idempotency", "write_rate", "service_key"]) {
      const rows = (await db.selectFrom(table).selectAll().execute()).map((r) => {
        delete r.last_used_at;
        return JSON.stringify(Object.entries(r).sort());
      });
      h.update(`${table}:${rows.length}\n${rows.sort().join("\n")}\n`);
    }
    return h.digest("hex");
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  [port] = await freePorts(2);
  url = `http://127.0.0.1:${port}`;
  // The address limit is off (every request comes from 127.0.0.1); the token limit is on, high
  // enough that only the hammer below (one header, 2 x TOKEN_BURST times at once) reaches it.
  child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "scripts/start.ts",
      ...["--port", String(port), "--admin-port", String(port + 1), "--data", data, "--no-seed"],
      ...["--ip-burst", "0", "--token-burst", String(TOKEN_BURST), "--token-per-minute", "60"],
    ],
    { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "error" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const printed = printedBy(child);
  await untilUp(child, printed, "Local stack up");

  for (const name of ["alice", "bob", "carol", "reader"]) await admin({ op: "create-user", name });
  await admin({ op: "fund", user: "alice", micros: "100000000" });
  await admin({ op: "fund", user: "bob", micros: "100000000" });
  const issue = async (user: string, extra: Record<string, unknown> = {}) =>
    (await admin({ op: "issue-token", user, ...extra })) as { token: string; id: string };
  const revoked = await issue("bob");
  await admin({ op: "revoke-token", tokenId: revoked.id });
  const expired = await issue("bob", { ttlSeconds: 1 });
  tok = {
    alice: (await issue("alice")).token,
    bob: (await issue("bob")).token,
    carol: (await issue("carol")).token,
    reader: (await issue("reader", { scopes: ["bet:read"] })).token,
    revoked: revoked.token,
    expired: expired.token,
  };
  await admin({ op: "block", user: "carol" });
  contract = (
    await admin<{ address: string }>({
      op: "create-contract",
      title: "Fuzz Cup final",
      event: "Final",
      sport: "football",
      competition: "Fuzz Cup",
      sideALabel: "Reds",
      sideBLabel: "Blues",
      cutoffIn: 30 * 86_400,
      deadlineAfter: 86_400,
    })
  ).address;
  await until(async () => ((await (await fetch(`${url}${BASE}/contracts`)).json()) as { contracts: unknown[] }).contracts.length === 1 || null, 60_000);
  // The one valid write, before the snapshot: an open offer for the takes and closes to refuse.
  const created = await fetch(`${url}${BASE}/`, {
    method: "POST",
    headers: { authorization: `Bearer ${tok.alice}`, "content-type": "application/json" },
    body: JSON.stringify({
      contractAddress: contract,
      creatorOutcome: "sideA",
      creatorTotalMicros: "8000000",
      takerTargetMicros: "10000000",
      minimumTakeMicros: "1000000",
      expectedFeeBps: 1000,
      idempotencyKey: "fuzz-setup-offer",
    }),
  });
  expect(created.status).toBe(200);
  offer = ((await created.json()) as { offerAddress: string }).offerAddress;
  await until(async () => (((await (await fetch(`${url}${BASE}/${offer}`)).json()) as { revision?: string }).revision === "1" ? true : null), 60_000);
  await new Promise((r) => setTimeout(r, 1_200)); // the 1 s token is expired by now
  rssStart = rssMb();
  rssPeak = rssStart;
  sampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, rssMb());
    } catch {
      // the child is gone: the checks below say why
    }
  }, 25);
}, 240_000);

afterAll(() => {
  if (sampler) clearInterval(sampler);
  child?.kill("SIGKILL");
  rmSync(data, { recursive: true, force: true });
});

// ---------------------------------------------------------------- the model of the documented rules

type Expect = { statuses: number[]; why: string; check?: (status: number, body: string, headers: Headers | null) => void };
interface Req {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Sent byte for byte over a raw socket (headers fetch would refuse). */
  rawHeaderBytes?: Buffer;
  expect: Expect;
}
/** A request before its token's headers are added. */
type Spec = Omit<Req, "headers" | "rawHeaderBytes"> & { extraHeaders?: Record<string, string> };
type Make = (q: Spec) => Req;
type Expecting = (s: number[], why: string, c?: Expect["check"]) => Expect;

const SPORT_VARIANTS = (r: Rng): string => {
  const s = r.pick(SPORTS);
  return r.pick([s, s.toUpperCase(), s[0].toUpperCase() + s.slice(1), ` ${s} `, s.replace(/./, (c) => c.toUpperCase())]);
};
const BAD_SPORTS = ["soccer", "Fútbol", "football!", "foot ball", "ice_hockey", "🏈", "football\u0000", "x".repeat(300), "%FF", "null", "other2"];

function sportParam(r: Rng): { v: string; ok: boolean } {
  const k = r.int(0, 9);
  if (k < 5) return { v: SPORT_VARIANTS(r), ok: true };
  if (k === 5) return { v: "", ok: true };
  const v = r.pick(BAD_SPORTS);
  return { v, ok: false };
}

const randomText = (r: Rng, n: number, alphabet: string[]) => Array.from({ length: n }, () => r.pick(alphabet)).join("");
const ASCII = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~ !\"#$%&'()*+,/:;<=>?@[\\]^`{|}"];
const WIDE = ["é", "ß", "中", "文", "😀", "🏳️‍🌈", "\u200b", "\u202e", "Ω", "ñ", "\ufeff", "\ud83d", "\udc00"];
const CONTROL = ["\u0000", "\u0001", "\t", "\n", "\r", "\u001f", "\u007f", "\u0085"];

/** A key and whether the spec's rule (8 to 128 characters, any characters) admits it. */
function idemKey(r: Rng): { key: unknown; ok: boolean } {
  const n = r.pick([0, 1, 7, 8, 9, 64, 127, 128, 129, 200, 10_000]);
  const alphabet = r.pick([ASCII, WIDE, CONTROL, [...ASCII, ...WIDE, ...CONTROL]]);
  if (r.chance(0.04)) return { key: r.pick([null, 12345678, ["a"], {}, true]), ok: false };
  // Huge: past the 64 KiB body limit (413 before any route reads it).
  if (r.chance(0.02)) return { key: "😀".repeat(r.pick([17_000, 40_000])), ok: false };
  const key = randomText(r, n, alphabet);
  // Characters are code points: an astral emoji is one, a lone surrogate is one.
  const len = [...key].length;
  return { key, ok: len >= 8 && len <= 128 };
}

type TokenKind = "none" | "alice" | "bob" | "carol" | "reader" | "revoked" | "expired" | "unknown" | "malformed" | "long" | "huge";
interface Auth {
  header?: string;
  raw?: Buffer;
  /** The raw bytes hold a control character: node's parser refuses the request (400) before the app. */
  rawCtl?: boolean;
  kind: TokenKind;
  /** The token is a valid one (any scheme case). */
  valid: boolean;
  /** Over node's 16 KiB header limit: 431 from the HTTP layer before the app. */
  tooLong?: boolean;
}

function auth(r: Rng): Auth {
  const scheme = r.pick(["Bearer", "bearer", "BEARER", "bEaReR"]);
  const k = r.int(0, 19);
  if (k < 3) return { kind: "none", valid: false };
  if (k < 10) {
    const kind = r.pick(["alice", "bob", "carol", "reader"] as const);
    return { header: `${scheme} ${tok[kind]}`, kind, valid: true };
  }
  if (k < 12) {
    const kind = r.pick(["revoked", "expired"] as const);
    return { header: `${scheme} ${tok[kind]}`, kind, valid: false };
  }
  if (k < 14)
    return {
      header: `${scheme} pat_${randomText(r, 43, [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"])}`,
      kind: "unknown",
      valid: false,
    };
  if (k < 17) {
    const v = r.pick([
      "Bearer",
      "Basic dXNlcjpwYXNz",
      tok.alice,
      `Token ${tok.alice}`,
      `Bearer ${tok.alice}x`,
      `Bearer ${tok.alice.slice(0, -1)}`,
      `Bearer pat_`,
      `Bearer ${tok.alice} ${tok.bob}`,
      `Bearer\t${"é".repeat(3)}`,
      `Bearer ${tok.alice.toUpperCase()}`,
    ]);
    return { header: v, kind: "malformed", valid: false };
  }
  if (k < 18) {
    const tooLong = r.chance(0.5);
    return {
      header: `${scheme} pat_${"A".repeat(tooLong ? r.pick([20_000, 70_000]) : r.pick([500, 4_000, 12_000]))}`,
      kind: tooLong ? "huge" : "long",
      valid: false,
      tooLong,
    };
  }
  // Bytes fetch would not send: UTF-8 and control characters inside the header value.
  const junk = r.pick([Buffer.from("é中😀", "utf8"), Buffer.from([0xff, 0xfe]), Buffer.from([0x01]), Buffer.from([0x7f]), Buffer.from("\u0000")]);
  const rawCtl = junk.some((b) => b < 0x20 || b === 0x7f);
  return { raw: Buffer.concat([Buffer.from(`${scheme} pat_`), junk, Buffer.from(tok.alice.slice(4))]), rawCtl, kind: "malformed", valid: false };
}

/** The status a request with this token gets when the route checks tokens first. */
function tokenStatus(a: Auth, needsWrite: boolean): number | null {
  if (a.tooLong) return 431;
  if (a.kind === "none") return null;
  if (!a.valid) return 401;
  if (needsWrite && a.kind === "reader") return 401;
  return null;
}

function query(r: Rng, names: string[], extra: Record<string, () => { v: string; ok: boolean }> = {}): { qs: string; ok: boolean } {
  const parts: string[] = [];
  const first = new Map<string, boolean>();
  const gens: Record<string, () => { v: string; ok: boolean }> = {
    sport: () => sportParam(r),
    page: () => {
      const v = r.pick(["1", "2", "0", "-1", "1.5", "1000000000", "1000000001", "abc", "", "01", "999999999"]);
      return { v, ok: v === "" || (/^[1-9][0-9]{0,8}$/.test(v) && Number(v) <= 1e9) };
    },
    pageSize: () => {
      const v = r.pick(["1", "20", "50", "51", "0", "", "x", "5"]);
      return { v, ok: v === "" || (/^[1-9][0-9]{0,8}$/.test(v) && Number(v) <= 50) };
    },
    query: () => {
      const v = r.chance(0.1) ? "q".repeat(201) : randomText(r, r.int(0, 30), [...ASCII, ...WIDE.slice(0, 10)]);
      return { v, ok: v.length <= 200 };
    },
    status: () => {
      const v = r.pick(["Open", "Filled", "Closed", "Settled", "open", "SETTLED", "", "x"]);
      return { v, ok: ["Open", "Filled", "Closed", "Settled", ""].includes(v) };
    },
    view: () => {
      const v = r.pick(["browse", "results", "Browse", "", "all"]);
      return { v, ok: ["browse", "results", ""].includes(v) };
    },
    junk: () => ({ v: randomText(r, 5, ASCII), ok: true }),
    ...extra,
  };
  const count = r.int(0, 4);
  for (let i = 0; i < count; i++) {
    const name = r.pick([...names, "junk"]);
    const { v, ok } = gens[name]();
    // Raw "%FF"-style values go as written; anything else percent-encoded (lone surrogates replaced).
    const enc = v === "%FF" ? v : encodeURIComponent(wellFormed(v));
    const decodedOk = v === "%FF" ? false : ok;
    const actuallyOk = name === "sport" || name === "query" ? checkDecoded(name, wellFormed(v), decodedOk) : decodedOk;
    parts.push(`${name}=${enc}`);
    // A parameter of the route's schema given twice is refused ("given more than once"); junk is not in it.
    if (!first.has(name)) first.set(name, actuallyOk);
    else if (name !== "junk") first.set(name, false);
  }
  return { qs: parts.length ? `?${parts.join("&")}` : "", ok: [...first.values()].every(Boolean) };
}

/** Lone surrogates as U+FFFD, as percent-encoding sends them. */
const wellFormed = (v: string) => v.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

/** Re-checks a value the way it arrives (lone surrogates become U+FFFD). */
function checkDecoded(name: string, v: string, ok: boolean): boolean {
  if (name === "sport") return v === "" || (SPORTS as readonly string[]).includes(v.trim().toLowerCase());
  if (name === "query") return v.length <= 200;
  return ok;
}

const randomAddress = (r: Rng) => new PublicKey(Uint8Array.from({ length: 32 }, () => r.int(0, 255))).toBase58();

function json(obj: unknown): string {
  return JSON.stringify(obj);
}

/** One fuzzed request and what the documented rules say it gets. */
function nextRequest(r: Rng): Req {
  const a = auth(r);
  const headers: Record<string, string> = {};
  if (a.header !== undefined) headers.authorization = a.header;
  const withAuth: Make = ({ extraHeaders, ...req }) => ({ ...req, headers: { ...headers, ...extraHeaders }, rawHeaderBytes: a.raw });
  const e: Expecting = (statuses, why, check) => ({ statuses, why, check });
  const route = r.int(0, 99);
  const tokFirst = (needsWrite: boolean) => tokenStatus(a, needsWrite);
  // Raw header bytes: node's parser refuses control characters (400); other bytes reach the app as an unknown token.
  const x = (st: number): number[] => (a.rawCtl ? [400] : [st]);

  if (route < 12) {
    const q = query(r, ["sport", "page", "pageSize", "query", "status", "view"]);
    const t = tokFirst(false);
    // The token is checked before the parameters (one rule with GraphQL: a bad token is 401 whatever else is wrong).
    const st = a.tooLong ? 431 : (t ?? (q.ok ? 200 : 400));
    return withAuth({ method: "GET", path: `${BASE}/${q.qs}`, expect: e(x(st), `browse ${q.qs} ${a.kind}`) });
  }
  if (route < 20) {
    const q = query(r, ["sport", "page", "pageSize", "query", "status", "view", "role"], {
      role: () => {
        const v = r.pick(["creator", "taker", "", "Creator", "both"]);
        return { v, ok: ["creator", "taker", ""].includes(v) };
      },
    });
    const t = tokFirst(false);
    // No token passes the token check; the parameters are validated before the route asks for a viewer.
    const st = a.tooLong ? 431 : (t ?? (!q.ok ? 400 : a.kind === "none" ? 401 : 200));
    return withAuth({ method: "GET", path: `${BASE}/mine${q.qs}`, expect: e(x(st), `mine ${q.qs} ${a.kind}`) });
  }
  if (route < 28) {
    const q = query(r, ["sport", "page", "pageSize", "query", "status", "view"]);
    // Shareable is public: a token is not looked at.
    return withAuth({
      method: "GET",
      path: `${BASE}/shareable${q.qs}`,
      expect: e(x(a.tooLong ? 431 : q.ok ? 200 : 400), `shareable ${q.qs}`),
    });
  }
  if (route < 32) {
    const t = tokFirst(false);
    return withAuth({ method: "GET", path: `${BASE}/contracts`, expect: e(x(a.tooLong ? 431 : (t ?? 200)), `contracts ${a.kind}`) });
  }
  if (route < 38) {
    const which = r.int(0, 2);
    const addr = which === 0 ? offer : which === 1 ? randomAddress(r) : r.pick(["0OIl", "x", "1".repeat(60), "%E4%B8%AD", "1111111111111111111111111111111O"]);
    const malformed = which === 2;
    const t = tokFirst(false);
    const st = a.tooLong ? 431 : (t ?? (malformed ? 400 : which === 0 ? 200 : 404));
    return withAuth({ method: "GET", path: `${BASE}/${addr}`, expect: e(x(st), `offer ${which} ${a.kind}`) });
  }
  if (route < 42) {
    const q = query(r, ["page", "pageSize"]);
    const addr = r.chance(0.5) ? offer : r.chance(0.5) ? randomAddress(r) : "not-an-address";
    const st = a.tooLong ? 431 : (tokenStatus(a, false) ?? (addr === "not-an-address" || !q.ok ? 400 : addr === offer ? 200 : 404));
    return withAuth({ method: "GET", path: `${BASE}/${addr}/fills${q.qs}`, expect: e(x(st), `fills ${q.qs}`) });
  }
  if (route < 50) {
    const id = r.pick([
      () => "",
      () => randomAddress(r),
      () => `${randomText(r, r.int(1, 40), ASCII.slice(0, 62))}`,
      () => `a/b`,
      () => encodeURIComponent(randomText(r, 5, WIDE.slice(0, 10))),
      () => `x${"y".repeat(2000)}`,
      () => `${randomAddress(r)}?sport=${encodeURIComponent(SPORT_VARIANTS(r))}&x=1&x=2`,
    ])();
    const path = `/api/embed/v1/polls/${id}`;
    return withAuth({
      method: "GET",
      path,
      expect: e(x(a.tooLong ? 431 : 404), `embed ${id.slice(0, 40)}`, (status, body, h) => {
        if (status !== 404) return;
        expect(JSON.parse(body)).toEqual({ error: "Poll not found", code: "NOT_FOUND" });
        expect(h?.get("cache-control")).toMatch(/max-age=5/);
      }),
    });
  }
  if (route < 80) return writeRequest(r, a, withAuth, e);
  return graphqlRequest(r, a, withAuth, e);
}

const KEY_REFUSED = -1;
/**
 * A raw socket that wrote a body past the limit in one go may see the connection reset before the
 * 413: the server stops reading and closes at once (docs/service-guide.md, "Edges of every route").
 */
const RESET = 0;

function writeRequest(r: Rng, a: Auth, withAuth: Make, e: Expecting): Req {
  const op = r.pick(["create", "take", "close"] as const);
  const k = idemKey(r);
  const target = op === "create" ? "" : r.pick([offer, offer, randomAddress(r), "bad-address"]);
  const path = op === "create" ? `${BASE}/` : `${BASE}/${target}/${op}`;
  let body: Record<string, unknown>;
  // Each body is refused by a rule after the key: nothing is ever written.
  let after: number;
  let reason: string;
  if (op === "create") {
    const v = r.int(0, 2);
    body = {
      contractAddress: v === 0 ? randomAddress(r) : contract,
      creatorOutcome: "sideA",
      creatorTotalMicros: v === 2 ? "1" : "8000000",
      takerTargetMicros: "10000000",
      minimumTakeMicros: "1000000",
      expectedFeeBps: v === 1 ? 999 : 1000,
      idempotencyKey: k.key,
    };
    [after, reason] = v === 0 ? [404, "unknown contract"] : v === 1 ? [409, "fee changed"] : [400, "below minimum"];
  } else if (op === "take") {
    body = { takeAmountMicros: "5000000", expectedRevision: r.pick(["1", "7"]), idempotencyKey: k.key };
    after = 0;
    reason = "";
  } else {
    body = { expectedRevision: r.pick(["1", "7"]), idempotencyKey: k.key };
    after = 0;
    reason = "";
  }
  const extraHeaders: Record<string, string> = {
    "content-type": r.chance(0.93) ? "application/json" : r.pick(["text/plain", "application/json; charset=latin1", ""]),
  };
  let text = json(body);
  if (r.chance(0.04)) text = text.slice(0, r.int(0, text.length - 1)); // truncated JSON
  const bytes = Buffer.byteLength(text);
  const who = a.kind;
  const t = tokenStatus(a, true);
  let st: number;
  if (a.tooLong) st = 431;
  else if (bytes > 65_536)
    st = 413; // the body limit runs before any route
  else if (a.kind === "none") st = 401;
  else if (t !== null) st = t;
  else if (extraHeaders["content-type"] !== "application/json") st = 400;
  else if (bytes > 16_384) st = 400;
  else if (text !== json(body)) st = 400;
  else if (op !== "create" && target === "bad-address") st = 400;
  else if (!k.ok) st = KEY_REFUSED;
  else if (who === "carol" && op !== "close")
    st = 403; // a blocked user may still close
  else if (op === "create") st = after;
  else if (target !== offer) st = 404;
  else if (op === "take")
    st = who === "alice" ? 400 : body.expectedRevision === "7" ? 409 : 1; // bob with the right revision: see below
  else st = 409; // close: another's offer before its cutoff (bob), or a stale revision (alice)
  if (op === "close" && who === "alice" && body.expectedRevision === "1" && st === 409) st = 1;
  // The only two valid writes are avoided: a take of the open offer by bob, a close by alice, at revision 1.
  if (st === 1) {
    body.expectedRevision = "7";
    text = json(body);
    st = 409;
  }
  const keyRefused = st === KEY_REFUSED;
  if (keyRefused) st = 400;
  // A key within 8 to 128 characters is never what a 400 names; one outside is, when it decides.
  const keyCheck = (status: number, resp: string) => {
    if (status !== 400 || a.rawCtl) return;
    const err = (JSON.parse(resp) as { error: string }).error;
    if (keyRefused) expect(err).toMatch(/^idempotencyKey must be/);
    if (k.ok) expect(err).not.toMatch(/idempotencyKey/);
  };
  return withAuth({
    method: "POST",
    path,
    body: text,
    extraHeaders,
    expect: e(a.rawCtl ? [400, ...(bytes > 65_536 ? [RESET] : [])] : a.raw && st === 413 ? [413, RESET] : [st], `${op} ${who} key=${k.ok} ${reason}`, keyCheck),
  });
}

function graphqlRequest(r: Rng, a: Auth, withAuth: Make, e: Expecting): Req {
  const s = sportParam(r);
  const k = idemKey(r);
  const kind = r.int(0, 3);
  let doc: { query: string; variables?: Record<string, unknown> };
  if (kind === 0) doc = { query: "query($s: String) { offers(sport: $s, first: 5) { totalCount } }", variables: { s: s.v } };
  else if (kind === 1) doc = { query: "query($s: String) { shareable(sport: $s) { totalCount } }", variables: { s: s.v } };
  else if (kind === 2) doc = { query: "query($s: String) { mine(sport: $s) { totalCount } }", variables: { s: s.v } };
  else
    doc = {
      query:
        'mutation($a: String!, $k: String!) { takeOffer(offerAddress: $a, input: { takeAmountMicros: "5000000", expectedRevision: "7", idempotencyKey: $k }) { signature } }',
      variables: { a: r.chance(0.5) ? offer : randomAddress(r), k: typeof k.key === "string" ? k.key : "not-a-string" },
    };
  const t = tokenStatus(a, false);
  const big = Buffer.byteLength(json(doc)) > 65_536;
  const st = a.tooLong ? 431 : big ? 413 : (t ?? 200);
  const check = (status: number, body: string) => {
    if (status !== 200) return;
    const b = JSON.parse(body) as { errors?: { extensions?: { code?: string; status?: number } }[] };
    for (const err of b.errors ?? []) expect(err.extensions?.code).not.toBe("INTERNAL_SERVER_ERROR");
    if (kind <= 1) expect(!!b.errors).toBe(!s.ok);
  };
  return withAuth({
    method: r.chance(0.1) && kind < 3 ? "GET" : "POST",
    path: "/graphql",
    body: json(doc),
    extraHeaders: { "content-type": "application/json" },
    expect: e(a.rawCtl ? [400, ...(big ? [RESET] : [])] : a.raw && st === 413 ? [413, RESET] : [st], `graphql ${kind} sport=${s.ok} ${a.kind}`, check),
  });
}

// ---------------------------------------------------------------- sending

/** A request over a raw socket (header bytes as given); the answer's status and body. */
function rawSend(req: Req): Promise<{ status: number; body: string; headers: Headers }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    sock.setTimeout(30_000, () => sock.destroy(new Error("no answer in 30 s")));
    const chunks: Buffer[] = [];
    const body = req.body ? Buffer.from(req.body) : Buffer.alloc(0);
    const lines = [`${req.method} ${req.path} HTTP/1.1`, `host: 127.0.0.1:${port}`, "connection: close", `content-length: ${body.length}`];
    for (const [k, v] of Object.entries(req.headers)) if (k !== "authorization") lines.push(`${k}: ${v}`);
    sock.write(Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\nauthorization: "), req.rawHeaderBytes!, Buffer.from("\r\n\r\n"), body]));
    sock.on("data", (b) => chunks.push(b));
    sock.on("error", () => {}); // "close" follows
    sock.on("close", () => {
      if (!chunks.length) return resolve({ status: RESET, body: "", headers: new Headers() });
      const text = Buffer.concat(chunks).toString("utf8");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 100))}`));
      const head = text.slice(0, text.indexOf("\r\n\r\n")).split("\r\n").slice(1);
      const headers = new Headers(head.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()] as [string, string]));
      resolve({ status: Number(m[1]), body: text.slice(text.indexOf("\r\n\r\n") + 4), headers });
    });
  });
}

async function send(req: Req): Promise<{ status: number; body: string; headers: Headers | null }> {
  if (req.rawHeaderBytes) return rawSend(req);
  const graphGet = req.method === "GET" && req.path === "/graphql";
  const target = graphGet
    ? `${url}/graphql?${new URLSearchParams(Object.entries(JSON.parse(req.body!) as Record<string, unknown>).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]))}`
    : `${url}${req.path}`;
  const r = await fetch(target, {
    method: req.method,
    headers: req.headers,
    body: req.method === "POST" ? req.body : undefined,
    signal: AbortSignal.timeout(30_000),
  });
  return { status: r.status, body: await r.text(), headers: r.headers };
}

// ---------------------------------------------------------------- 1 GB bodies

interface Streamed {
  status: number;
  /** Body bytes the client had written when the answer's status line arrived. */
  sentAtAnswer: number;
  /** Body bytes written in all: less than the total when the server closed the connection. */
  sentTotal: number;
  closedEarly: boolean;
}

/**
 * `total` bytes of body from a generator, 64 KiB at a time with backpressure (never held whole):
 * `chunked`, a true `content-length`, or a lying one (`declare`). Keeps writing after the
 * answer until the total or until the server closes: what the server reads and discards counts.
 */
type Framing = { chunked: true } | { declare: number };

function streamBody(path: string, headers: Record<string, string>, total: number, framing: Framing): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let sent = 0;
    let sentAtAnswer = -1;
    let status = 0;
    let answer = "";
    let closed = false;
    let wake: () => void = () => {};
    const lines = [`POST ${path} HTTP/1.1`, `host: 127.0.0.1:${port}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    lines.push("chunked" in framing ? "transfer-encoding: chunked" : `content-length: ${framing.declare}`);
    sock.on("data", (b) => {
      answer += b.toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (m && sentAtAnswer < 0) {
        sentAtAnswer = sent;
        status = Number(m[1]);
      }
      wake();
    });
    sock.on("error", () => {}); // "close" follows
    sock.on("close", () => {
      closed = true;
      wake();
      resolve({ status, sentAtAnswer, sentTotal: sent, closedEarly: sent < total });
    });
    sock.on("drain", () => wake());
    const until = (done: () => boolean) => new Promise<void>((r) => (done() ? r() : (wake = () => done() && r())));
    const chunk = Buffer.alloc(65_536, 0x20);
    async function* body() {
      yield Buffer.from('{"query":"');
      while (sent < total) yield chunk;
    }
    (async () => {
      sock.write(lines.join("\r\n") + "\r\n\r\n");
      for await (const c of body()) {
        if (closed) return;
        const framed = "chunked" in framing ? Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from("\r\n")]) : c;
        sent += c.length;
        if (!sock.write(framed)) await until(() => closed || sock.writableLength === 0);
      }
      if (!closed && "chunked" in framing) sock.write("0\r\n\r\n");
      // The whole body went: give the server a moment to answer, then hang up.
      setTimeout(() => sock.destroy(), 5_000);
    })().catch(reject);
  });
}

// ---------------------------------------------------------------- the run

describe(`input fuzz over HTTP (${REQUESTS} requests, seed ${SEED})`, () => {
  const histogram = new Map<number, number>();
  const failures: string[] = [];
  const retried: string[] = [];
  let before = "";

  it("answers every fuzzed request with its documented 4xx or 200, never a 5xx", async () => {
    before = await snapshot();
    const r = new Rng(SEED);
    const reqs = Array.from({ length: REQUESTS }, () => nextRequest(r));
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < reqs.length) {
          const req = reqs[next++];
          let res: Awaited<ReturnType<typeof send>>;
          try {
            res = await send(req).catch((err: Error) => {
              // A pooled connection the server had just closed (after a 413 or 431 on it, or its
              // keep-alive timeout): a client resends on a fresh one. The server being gone fails the last test.
              retried.push(`${req.expect.why.slice(0, 60)}: ${String((err.cause as Error | undefined)?.message ?? err.message)}`);
              return send(req);
            });
          } catch (err) {
            failures.push(`${req.expect.why}: ${(err as Error).message} ${String((err as Error).cause ?? "")}`);
            continue;
          }
          histogram.set(res.status, (histogram.get(res.status) ?? 0) + 1);
          const allowed = res.status === 429 && req.headers.authorization ? true : req.expect.statuses.includes(res.status);
          if (res.status >= 500 || !allowed) {
            failures.push(
              `${req.method} ${req.path.slice(0, 120)} (${req.expect.why.slice(0, 120)}): ${res.status}, expected ${req.expect.statuses} ${res.body.slice(0, 200)}`,
            );
            continue;
          }
          if (res.status === 429) expect(res.headers?.get("retry-after")).toMatch(/^[1-9]\d*$/);
          try {
            req.expect.check?.(res.status, res.body, res.headers);
          } catch (err) {
            failures.push(`${req.method} ${req.path.slice(0, 120)} (${req.expect.why}): ${(err as Error).message.slice(0, 300)}`);
          }
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const hist = [...histogram.entries()].sort((x, y) => x[0] - y[0]).map(([k, v]) => `${k}:${v}`);
    console.log(
      `input fuzz: ${REQUESTS} requests (seed ${SEED}) in ${seconds.toFixed(1)} s; statuses ${hist.join(" ")}; server RSS ${rssStart.toFixed(0)} MB -> peak ${rssPeak.toFixed(0)} MB`,
    );
    if (retried.length) console.log(`resent once after a connection error: ${retried.length} (${retried.slice(0, 3).join("; ")})`);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(retried.length).toBeLessThan(REQUESTS / 100);
    expect([...histogram.keys()].filter((s) => s >= 500)).toEqual([]);
    // The mix reaches every documented class.
    for (const s of [200, 400, 401, 403, 404, 409, 413, 431]) expect([s, histogram.get(s) ?? 0]).not.toEqual([s, 0]);
  }, 600_000);

  it("limits one token past its burst: 429 with Retry-After, answered before the token is looked at", async () => {
    const header = `Bearer pat_hammer${"x".repeat(30)}`;
    const answers = await Promise.all(Array.from({ length: 2 * TOKEN_BURST }, () => fetch(`${url}${BASE}/contracts`, { headers: { authorization: header } })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThan(0);
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(TOKEN_BURST / 2);
    for (const a of limited) expect(a.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  });

  it("refuses 1 GB bodies early on every POST route and GraphQL, streamed, with memory bounded", async () => {
    const json = { "content-type": "application/json" };
    const bearer = { ...json, authorization: `Bearer ${tok.bob}` };
    const cases: { name: string; path: string; headers: Record<string, string>; framing: Framing; statuses: number[] }[] = [
      { name: "POST / chunked, signed in", path: `${BASE}/`, headers: bearer, framing: { chunked: true }, statuses: [413] },
      { name: "POST /:offer/take chunked, signed in", path: `${BASE}/${offer}/take`, headers: bearer, framing: { chunked: true }, statuses: [413] },
      { name: "POST /:offer/close, true 1 GB length", path: `${BASE}/${offer}/close`, headers: bearer, framing: { declare: GB }, statuses: [413] },
      // A length of 100 over a 1 GB stream: the rest is no HTTP request (node's parser: 400).
      { name: "POST /:offer/take, lying length 100", path: `${BASE}/${offer}/take`, headers: bearer, framing: { declare: 100 }, statuses: [400] },
      { name: "POST / chunked, anonymous", path: `${BASE}/`, headers: json, framing: { chunked: true }, statuses: [401, 413] },
      { name: "POST /graphql chunked, anonymous", path: "/graphql", headers: json, framing: { chunked: true }, statuses: [413] },
      { name: "POST /graphql chunked, signed in", path: "/graphql", headers: bearer, framing: { chunked: true }, statuses: [413] },
      { name: "POST /graphql, lying length 10 GB", path: "/graphql", headers: json, framing: { declare: 10 * GB }, statuses: [413] },
    ];
    const lines: string[] = [];
    const results: [string, Streamed][] = [];
    for (const c of cases) {
      const r = await streamBody(c.path, c.headers, GB, c.framing);
      results.push([c.name, r]);
      const answer = r.status ? `${r.status} after ${(r.sentAtAnswer / 1024).toFixed(0)} KiB` : "no answer (reset)";
      lines.push(`${c.name}: ${answer}; ${(r.sentTotal / 1024).toFixed(0)} KiB sent before the server closed`);
    }
    console.log(`1 GB bodies:\n  ${lines.join("\n  ")}`);
    for (const [name, r] of results) {
      const c = cases.find((x) => x.name === name)!;
      // A client still sending when the server closes may get the reset before the answer.
      // A signed-in case may meet its token's rate limit (the fuzz above spent it): 429 is refused early too.
      const allowed = r.status === 0 || c.statuses.includes(r.status) || (r.status === 429 && "authorization" in c.headers);
      expect([name, allowed]).toEqual([name, true]);
      // Refused early: the server hangs up after the limit plus what socket buffers hold, instead of reading the rest.
      expect([name, r.closedEarly, r.sentTotal < 16 * 1024 * 1024]).toEqual([name, true, true]);
    }
    console.log(`server RSS peak ${rssPeak.toFixed(0)} MB (start ${rssStart.toFixed(0)} MB)`);
  });

  it("kept the server's memory bounded and changed nothing", async () => {
    expect(child!.exitCode).toBeNull();
    expect(rssPeak - rssStart).toBeLessThan(RSS_BOUND_MB);
    expect(await snapshot()).toBe(before);
  });
});
