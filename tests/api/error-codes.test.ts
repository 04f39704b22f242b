/**
 * Error codes over real HTTP: a representative failure of each kind answered by REST carries
 * `code` beside the spec's `error` text, and the same failure asked of GraphQL carries the same
 * code in `extensions.code` (one table: service/api-error.ts); the OpenAPI document lists them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Keypair } from "@solana/web3.js";
import type { PublicKey } from "@solana/web3.js";
import { API_ERROR_CODES } from "../../service/api-error";
import { apiStack, type ApiStack, contract, createBody, key, makeUser, UNIT, type TestUser } from "../support/stack";
import { getJson, gql, type Json, post } from "../support/http";
import { until } from "../support/wait";

const BASE = "/api/bets-usdc/offers";
const UNKNOWN = Keypair.generate().publicKey.toBase58();

let s: ApiStack;
let creator: TestUser, taker: TestUser, blocked: TestUser;
let c: PublicKey;
let offer: string;

beforeAll(async () => {
  s = await apiStack();
  [creator, taker, blocked] = [await makeUser(s), await makeUser(s), await makeUser(s)];
  await s.custody.setBlocked(blocked.user.id, true, "compliance review");
  c = await contract(s);
  const r = await post(s, "/", createBody(c), creator.token);
  expect(r.status).toBe(200);
  offer = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${BASE}/${offer}`)).status === 200);
});
afterAll(async () => {
  await s?.stop();
});

/** The REST answer's status, code and keys. */
const rest = (r: { status: number; body: Record<string, unknown> }) => ({ status: r.status, code: r.body.code, keys: Object.keys(r.body) });
/** The first GraphQL error's code and status. */
const graphql = (r: Json) => ({ code: r.body.errors?.[0]?.extensions?.code, status: r.body.errors?.[0]?.extensions?.status });

const TAKE = `mutation($o: Address!, $i: TakeOfferInput!) { takeOffer(offerAddress: $o, input: $i) { status } }`;
const CREATE = `mutation($i: CreateOfferInput!) { createOffer(input: $i) { status } }`;

describe("the same failure, the same code on REST and GraphQL", () => {
  const cases: [
    name: string,
    status: keyof typeof API_ERROR_CODES,
    restCall: () => Promise<{ status: number; body: Record<string, unknown> }>,
    gqlCall: () => Promise<Json>,
  ][] = [
    ["an unknown sport", 400, () => getJson(s, `${BASE}/?sport=curling`), () => gql(s, `{ offers(sport: "curling") { totalCount } }`)],
    ["a write without a token", 401, () => post(s, "/", createBody(c)), () => gql(s, CREATE, { i: { ...createBody(c), idempotencyKey: key() } })],
    [
      "a create by a blocked account",
      403,
      () => post(s, "/", createBody(c), blocked.token),
      () => gql(s, CREATE, { i: { ...createBody(c), idempotencyKey: key() } }, blocked.token),
    ],
    ["an unknown offer", 404, () => getJson(s, `${BASE}/${UNKNOWN}`), () => gql(s, `query($a: Address!) { offer(address: $a) { id } }`, { a: UNKNOWN })],
    [
      "an unknown webhook delivery",
      404,
      () => post(s, "/webhooks/deliveries/whd_none/replay", {}, creator.token),
      () => gql(s, `mutation { replayWebhookDelivery(id: "whd_none") { id } }`, {}, creator.token),
    ],
    ["an unknown pool", 404, () => getJson(s, "/api/embed/v1/polls/no-such-pool"), () => gql(s, `{ poll(identifier: "no-such-pool") { id } }`)],
    [
      "a take at a stale revision",
      409,
      () => post(s, `/${offer}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "7", idempotencyKey: key() }, taker.token),
      () => gql(s, TAKE, { o: offer, i: { takeAmountMicros: String(UNIT), expectedRevision: "7", idempotencyKey: key() } }, taker.token),
    ],
  ];
  for (const [name, status, restCall, gqlCall] of cases) {
    it(`${name}: ${status} ${API_ERROR_CODES[status]}`, async () => {
      const r = await restCall();
      expect(rest(r)).toEqual({ status, code: API_ERROR_CODES[status], keys: ["error", "code"] });
      expect(typeof r.body.error).toBe("string");
      expect(graphql(await gqlCall())).toEqual({ code: API_ERROR_CODES[status], status });
    });
  }
});

describe("errors only the HTTP layer answers", () => {
  it("a body over the size limit: 413 PAYLOAD_TOO_LARGE", async () => {
    const r = await post(s, "/", { ...createBody(c), pad: "x".repeat(70_000) }, creator.token);
    expect(rest(r)).toEqual({ status: 413, code: "PAYLOAD_TOO_LARGE", keys: ["error", "code"] });
  });

  it("a path that names nothing: 404 NOT_FOUND", async () => {
    const r = await getJson(s, "/no/such/path");
    expect(rest(r)).toEqual({ status: 404, code: "NOT_FOUND", keys: ["error", "code"] });
  });
});

describe("the OpenAPI document", () => {
  const doc = JSON.parse(readFileSync(join(resolve(import.meta.dirname, "..", ".."), "docs", "openapi.json"), "utf8"));

  it("gives the error body its code, one of the table's", () => {
    const error = doc.components.schemas.Error;
    expect(error.required).toEqual(["error", "code"]);
    expect(error.properties.code.enum).toEqual(Object.values(API_ERROR_CODES));
  });

  it("names the code of every error response", () => {
    const missing: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { description: string }> }>>))
      for (const [method, op] of Object.entries(ops))
        for (const [status, res] of Object.entries(op.responses))
          if (Number(status) >= 400 && !res.description.includes(`(code ${API_ERROR_CODES[Number(status) as keyof typeof API_ERROR_CODES]})`))
            missing.push(`${method} ${path} ${status}`);
    expect(missing).toEqual([]);
  });
});
