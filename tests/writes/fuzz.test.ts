/**
 * Fuzz: >= 10,000 malformed or hostile write requests over real HTTP (FUZZ_REQUESTS, FUZZ_SEED):
 * random and mutated bodies, content types, tokens, amounts, addresses and idempotency keys.
 * Callers are strangers with no balance, tokens that are invalid/expired/revoked/unscoped, or a
 * blocked user, so no request can legitimately change state. Asserts: no 5xx; every answer is
 * `{error: string}` with a 4xx; no stack trace, SQL, file path or key material in any answer; no
 * change to balances, offers, positions or idempotency records.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair } from "@solana/web3.js";
import { UNIT, balance, createBody, key, writeSuite } from "../support/stack";
import { post } from "../support/http";
import { API_ERROR_CODES } from "../../service/api-error";

const N = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? 7);

function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

function safeEncode(v: string): string {
  try {
    return encodeURIComponent(v) || "x";
  } catch {
    return "%ZZ";
  }
}

const LEAK =
  /\bat [\w.<>]+ \(|node_modules|\.ts:\d+|\.js:\d+|\bSELECT\b|\bINSERT\b|\bUPDATE\b|sqlite|kysely|\bpg\b|postgres|SQLITE_|TypeError|ReferenceError|SyntaxError|stack|secret|sealed|pat_[A-Za-z0-9_-]{10}|Program log|custom program error/i;

describe("fuzz: hostile write requests", () => {
  const w = writeSuite({ alice: 1_000n * UNIT, stranger: 0n, blocked: 100n * UNIT }, { contract: true });
  let offers: string[];
  let tokens: string[];

  beforeAll(async () => {
    await w.s.custody.setBlocked(w.blocked.user.id, true, "fuzz");
    offers = [];
    for (let i = 0; i < 3; i++) {
      const r = await post(w.s, "/", createBody(w.c), w.alice.token);
      offers.push(r.body.offerAddress as string);
    }
    const expired = await w.s.custody.issueToken(w.stranger.user.id, { ttlSeconds: 0 });
    const revoked = await w.s.custody.issueToken(w.stranger.user.id);
    await w.s.custody.revokeToken(revoked.id);
    const unscoped = await w.s.custody.issueToken(w.stranger.user.id, { scopes: [] });
    tokens = [w.stranger.token, w.stranger.token, w.stranger.token, w.blocked.token, expired.token, revoked.token, unscoped.token];
  });

  async function snapshot() {
    const bal = await Promise.all([w.alice, w.stranger, w.blocked].map((u) => balance(w.s, u.user.tokenAccount)));
    const o = await w.s.db.selectFrom("offers").select(["address", "revision", "status", "taker_filled_micros"]).orderBy("address").execute();
    const p = await w.s.db.selectFrom("positions").select(["address"]).execute();
    const idem = await w.s.custody.db.selectFrom("idempotency").select(["user_id", "idem_key", "state", "signature"]).orderBy("idem_key").execute();
    const vault = await balance(w.s, w.s.chain.client.pda.vault()[0]);
    return JSON.stringify({ bal: bal.map(String), o, p, idem, vault: String(vault) });
  }

  it(`${N} requests: no 5xx, no state change, no leaked detail`, async () => {
    const rand = rng(SEED);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)];
    const int = (n: number) => Math.floor(rand() * n);
    const junkStrings = [
      "",
      " ",
      "0",
      "-1",
      "1e6",
      "1.5",
      "01",
      " 1",
      "1 ",
      "+1",
      "0x1f",
      "NaN",
      "Infinity",
      "null",
      "true",
      "１２３",
      "٣",
      "18446744073709551616",
      "99999999999999999999999",
      "9".repeat(500),
      "' OR 1=1 --",
      '"; DROP TABLE users; --',
      "${7*7}",
      "{{7*7}}",
      "<script>alert(1)</script>",
      "../../etc/passwd",
      "\u0000",
      "\ud800",
      "a".repeat(20_000),
      "__proto__",
      "constructor",
      "sideA ",
      "SIDEA",
      "sideB\u0000",
      "1000000",
      "5000000",
    ];
    const junkValues = (): unknown =>
      pick<() => unknown>([
        () => pick(junkStrings),
        () => int(2 ** 31) - 2 ** 30,
        () => rand() * 1e20,
        () => null,
        () => true,
        () => [],
        () => ({}),
        () => [pick(junkStrings)],
        () => ({ $gt: "" }),
        () => 2 ** 64,
        () => -0,
        () => Number.MAX_SAFE_INTEGER + 2,
        () => String(int(1e9)),
      ])();
    const randomAddress = () =>
      pick<() => string>([
        () => pick(offers),
        () => Keypair.generate().publicKey.toBase58(),
        () => w.c.toBase58(),
        () => w.s.chain.client.pda.config()[0].toBase58(),
        () => w.stranger.user.tokenAccount.toBase58(),
        () => w.s.chain.service.publicKey.toBase58(),
        () => safeEncode(pick(junkStrings).slice(0, 60)),
        () => "1".repeat(int(60) + 1),
        () => "0OIl".repeat(11),
        () => "%00",
        () => "..%2f..%2fadmin",
      ])();
    const badKey = () =>
      pick<unknown>([
        "",
        "short",
        "x".repeat(129),
        "k\u0000eeeeeeeee",
        "ключ-ключ-ключ",
        "key with spaces",
        12345678,
        null,
        ["k".repeat(10)],
        "\t\t\t\t\t\t\t\t\t",
      ]);

    type Req = { path: string; body: unknown; token: string | null; headers: Record<string, string> };
    function make(): Req {
      const op = int(3);
      const offer = randomAddress();
      let body: Record<string, unknown>;
      if (op === 0) body = createBody(w.c, { idempotencyKey: key() });
      else if (op === 1) body = { takeAmountMicros: String(UNIT * BigInt(1 + int(20))), expectedRevision: "1", idempotencyKey: key() };
      else body = { expectedRevision: String(int(3)), idempotencyKey: key() };
      // 0..3 mutations (the callers cannot change state even with a valid body)
      for (let m = int(4); m > 0; m--) {
        const fields = Object.keys(body);
        switch (int(9)) {
          case 0:
            body[pick(fields)] = junkValues();
            break;
          case 1:
            delete body[pick(fields)];
            break;
          case 2:
            body[pick(["extra", "__proto__", "constructor", "prototype", "isAdmin", "creator", "payer"])] = junkValues();
            break;
          case 3:
            body.idempotencyKey = badKey();
            break;
          case 4:
            if ("creatorTotalMicros" in body) body.creatorTotalMicros = pick(["0", "1", "999999999999", "500000001", String(2n ** 64n), "-5000000"]);
            else body.takeAmountMicros = pick(["0", "1", "999999999999999", String(2n ** 64n - 1n)]);
            break;
          case 5:
            body.expectedRevision = pick(["0", "999", "-1", 1, "1.0", "1e0", ""]);
            break;
          case 6:
            body.contractAddress = randomAddress();
            break;
          case 7:
            body.expectedFeeBps = pick([999, 1001, -1, 10_001, 1000.5, "1000", null]);
            break;
          default:
            break;
        }
      }
      const rawBody = pick<() => unknown>([
        () => body,
        () => body,
        () => body,
        () => body,
        () => JSON.stringify(body).slice(0, int(40)),
        () => pick(junkStrings),
        () => "[".repeat(5000),
        () => JSON.stringify([body]),
        () => "null",
        () => `{"a":${"[".repeat(2000)}`,
        () => Buffer.from([0xff, 0xfe, 0x7b, 0x7d]).toString("latin1"),
      ])();
      const tr = rand();
      const token =
        tr < 0.5
          ? w.stranger.token
          : tr < 0.6
            ? w.blocked.token
            : pick<() => string | null>([
                () => pick(tokens),
                () => null,
                () => "pat_" + "A".repeat(43),
                () => "pat_" + Buffer.from(key()).toString("base64url").padEnd(43, "x").slice(0, 43),
                () => pick(junkStrings).slice(0, 100),
                () => w.alice.token.slice(0, -1) + (w.alice.token.endsWith("A") ? "B" : "A"),
              ])();
      const headers: Record<string, string> = {};
      const h = int(10);
      if (h === 0)
        headers["content-type"] = pick(["text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "multipart/form-data", ""]);
      if (h === 1 && token)
        headers.authorization = pick([
          `bearer ${token}`,
          `Bearer  ${token}`,
          `Bearer ${token} extra`,
          `Token ${token}`,
          "Bearer",
          `Bearer ${token}\u0000`.replace("\u0000", ""),
        ]);
      if (h === 2) headers["x-forwarded-for"] = "127.0.0.1";
      const path = op === 0 ? pick(["/", "/", "", `/?x=${int(9)}`]) : `/${offer}/${op === 1 ? "take" : "close"}`;
      return { path, body: rawBody, token, headers };
    }

    const before = await snapshot();
    const statuses = new Map<number, number>();
    const leaks: string[] = [];
    const fives: string[] = [];
    let sent = 0;
    let unsendable = 0;
    const worker = async () => {
      while (sent < N) {
        const q = make();
        let r;
        try {
          r = await post(w.s, q.path, q.body, q.token, q.headers);
        } catch {
          unsendable++; // the HTTP client itself refuses the header value; not a request
          continue;
        }
        sent++;
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status >= 500) fives.push(`${r.status} ${q.path} ${r.text.slice(0, 200)}`);
        const err = typeof r.body.error === "string" ? r.body.error : null;
        const shapeOk =
          r.status >= 400 &&
          r.status < 500 &&
          err !== null &&
          Object.keys(r.body).join() === "error,code" &&
          r.body.code === API_ERROR_CODES[r.status as keyof typeof API_ERROR_CODES] &&
          err.length < 400;
        // Unknown field names are echoed back (quoted); they are the caller's own input.
        const scanned = (err ?? r.text).replace(/unknown field\(s\): .*; allowed:/, "unknown field(w.s): <echo>; allowed:");
        if (!shapeOk || LEAK.test(scanned) || scanned.includes(w.s.custody.key.digest("probe").toString("hex").slice(0, 8)))
          leaks.push(`${r.status} ${q.path} ${r.text.slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const after = await snapshot();
    console.log(`fuzz: ${sent} requests (${unsendable} refused by the client), statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    expect(fives).toEqual([]);
    expect(leaks.slice(0, 10)).toEqual([]);
    expect(after).toBe(before);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(N);
  });

  it("2,000 hostile GraphQL mutations: no 5xx, known error codes, no leaks, no state change", async () => {
    const rand = rng(SEED + 1);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)];
    const junk: unknown[] = [
      "",
      "1e6",
      "-1",
      "01",
      " 1",
      "18446744073709551616",
      "' OR 1=1 --",
      null,
      5,
      1.5,
      true,
      [],
      {},
      "x".repeat(5000),
      "sideC",
      "\u0000",
    ];
    const ops = [
      "mutation($input: CreateOfferInput!) { createOffer(input: $input) { signature status offerAddress } }",
      "mutation($offer: Address!, $input: TakeOfferInput!) { takeOffer(offerAddress: $offer, input: $input) { signature } }",
      "mutation($offer: Address!, $input: CloseOfferInput!) { closeOffer(offerAddress: $offer, input: $input) { signature } }",
      "mutation { createOffer(input: {}) { signature } }",
      "mutation { __typename }",
      "{ __schema { types { name } } }",
      "mutation($input: CreateOfferInput!) { a: createOffer(input: $input) { signature } b: createOffer(input: $input) { signature } }",
    ];
    const before = await snapshot();
    const codes = new Map<string, number>();
    const bad: string[] = [];
    for (let i = 0; i < 2_000; i++) {
      const input: Record<string, unknown> = pick([
        createBody(w.c, { idempotencyKey: key() }),
        { takeAmountMicros: "2000000", expectedRevision: "1", idempotencyKey: key() },
        { expectedRevision: "1", idempotencyKey: key() },
      ]);
      for (let m = Math.floor(rand() * 3); m > 0; m--) input[pick(Object.keys(input).concat(["extra"]))] = pick(junk);
      const token = rand() < 0.7 ? w.stranger.token : pick([w.blocked.token, null, "pat_" + "B".repeat(43), ...tokens]);
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (token) headers.authorization = `Bearer ${token}`;
      const raw =
        rand() < 0.05
          ? pick(["{", "[]", "null", '{"query": 5}', '{"query":"mutation {"}'])
          : JSON.stringify({ query: pick(ops), variables: { input, offer: pick([...offers, "bad", w.c.toBase58()]) } });
      const r = await fetch(`${w.s.url}/graphql`, { method: "POST", headers, body: raw });
      const text = await r.text();
      if (r.status >= 500) bad.push(`${r.status} ${text.slice(0, 200)}`);
      let j: { errors?: { message: string; extensions?: { code?: string } }[] } = {};
      try {
        j = JSON.parse(text);
      } catch {
        bad.push(`not JSON: ${text.slice(0, 100)}`);
      }
      for (const e of j.errors ?? []) {
        const code = e.extensions?.code ?? "none";
        codes.set(code, (codes.get(code) ?? 0) + 1);
        if (code === "INTERNAL_SERVER_ERROR" || LEAK.test(e.message.replace(/unknown field\(s\): .*; allowed:/, "")))
          bad.push(`${code} ${e.message.slice(0, 200)}`);
      }
    }
    console.log(`graphql fuzz: 2000 requests, error codes ${JSON.stringify(Object.fromEntries(codes))}`);
    expect(bad.slice(0, 10)).toEqual([]);
    expect(await snapshot()).toBe(before);
  });
});
