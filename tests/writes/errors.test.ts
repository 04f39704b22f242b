/**
 * Every error status of the write endpoints with its `{error}` body, over real HTTP against the
 * local stack; and a check that no refused request moved any token.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair } from "@solana/web3.js";
import { Hono } from "hono";
import { OFFERS_BASE, UNIT, balance, contract, createBody, key, writeSuite } from "../support/stack";
import { post, type Res } from "../support/http";
import { WriteService } from "../../service/writes/write-service";
import { writeRoutes } from "../../graphql/rest/write-routes";
import { RpcGateway } from "../../service/chain/rpc-gateway";
import { listen } from "../../graphql/server";
import { API_ERROR_CODES } from "../../service/api-error";

function expectError(r: Res, status: number, message: RegExp) {
  expect(r.status, r.text).toBe(status);
  expect(Object.keys(r.body)).toEqual(["error", "code"]);
  expect(r.body.code).toBe(API_ERROR_CODES[status as keyof typeof API_ERROR_CODES]);
  expect(r.body.error).toMatch(message);
}

describe("write errors", () => {
  const w = writeSuite({ alice: 1_000n * UNIT, bob: 1_000n * UNIT, poor: 3n * UNIT }, { contract: true });
  let offer: string;

  beforeAll(async () => {
    const r = await post(w.s, "/", createBody(w.c, { minimumTakeMicros: String(2n * UNIT) }), w.alice.token);
    expect(r.status, r.text).toBe(200);
    offer = r.body.offerAddress as string;
  });

  it("401: missing, malformed, unknown, revoked, expired token, or no bet:write", async () => {
    const body = createBody(w.c);
    expectError(await post(w.s, "/", body, null), 401, /missing or malformed/);
    expectError(await post(w.s, "/", body, null, { authorization: "Basic abc" }), 401, /missing or malformed/);
    expectError(await post(w.s, "/", body, "pat_" + "A".repeat(43)), 401, /invalid, revoked or expired/);
    expectError(await post(w.s, "/", body, "not-a-token"), 401, /invalid, revoked or expired/);
    const revoked = await w.s.custody.issueToken(w.alice.user.id);
    await w.s.custody.revokeToken(revoked.id);
    expectError(await post(w.s, "/", body, revoked.token), 401, /invalid, revoked or expired/);
    const expired = await w.s.custody.issueToken(w.alice.user.id, { ttlSeconds: 0 });
    expectError(await post(w.s, "/", body, expired.token), 401, /invalid, revoked or expired/);
    const noScope = await w.s.custody.issueToken(w.alice.user.id, { scopes: [] });
    expectError(await post(w.s, "/", body, noScope.token), 401, /bet:write/);
    expectError(
      await post(w.s, `/${offer}/take`, { takeAmountMicros: "2000000", expectedRevision: "1", idempotencyKey: key() }, noScope.token),
      401,
      /bet:write/,
    );
    expectError(await post(w.s, `/${offer}/close`, { expectedRevision: "1", idempotencyKey: key() }, null), 401, /missing/);
  });

  it("400: malformed addresses, amounts, fields, keys and bodies", async () => {
    const t = w.alice.token;
    expectError(await post(w.s, "/", createBody(w.c, { contractAddress: "not-an-address" }), t), 400, /contractAddress must be a base58 address/);
    expectError(await post(w.s, "/", createBody(w.c, { contractAddress: "1".repeat(45) }), t), 400, /contractAddress/);
    for (const v of ["1e6", "-1", " 1", "01", "1.0", "", "0x10", "１"]) {
      expectError(await post(w.s, "/", createBody(w.c, { creatorTotalMicros: v }), t), 400, /creatorTotalMicros must be a string of decimal digits/);
    }
    expectError(await post(w.s, "/", createBody(w.c, { creatorTotalMicros: 8000000 }), t), 400, /creatorTotalMicros must be a string/);
    expectError(await post(w.s, "/", createBody(w.c, { takerTargetMicros: "18446744073709551616" }), t), 400, /at most 18446744073709551615/);
    expectError(
      await post(w.s, "/", createBody(w.c, { minimumTakeMicros: String(11n * UNIT) }), t),
      400,
      /minimumTakeMicros must not exceed takerTargetMicros/,
    );
    expectError(await post(w.s, "/", createBody(w.c, { minimumTakeMicros: "999999" }), t), 400, /minimumTakeMicros must be at least 1000000/);
    expectError(
      await post(w.s, "/", createBody(w.c, { creatorTotalMicros: String(UNIT), takerTargetMicros: String(11n * UNIT) }), t),
      400,
      /odds out of range/,
    );
    expectError(
      await post(w.s, "/", createBody(w.c, { creatorTotalMicros: String(101n * UNIT), takerTargetMicros: String(10n * UNIT) }), t),
      400,
      /odds out of range/,
    );
    expectError(
      await post(w.s, "/", createBody(w.c, { creatorTotalMicros: "999999", takerTargetMicros: "999999", minimumTakeMicros: "999999" }), t),
      400,
      /at least minimumCreatorMicros 1000000/,
    );
    expectError(
      await post(w.s, "/", createBody(w.c, { creatorTotalMicros: String(501n * UNIT), takerTargetMicros: String(501n * UNIT) }), t),
      400,
      /at most maximumWagerMicros 500000000/,
    );
    expectError(await post(w.s, "/", createBody(w.c, { creatorOutcome: "sideC" }), t), 400, /creatorOutcome/);
    expectError(await post(w.s, "/", createBody(w.c, { expectedFeeBps: "1000" }), t), 400, /expectedFeeBps must be an integer/);
    expectError(await post(w.s, "/", createBody(w.c, { idempotencyKey: "short" }), t), 400, /idempotencyKey must be 8 to 128 characters; got 5/);
    expectError(await post(w.s, "/", createBody(w.c, { idempotencyKey: 12345678 }), t), 400, /idempotencyKey must be a string/);
    expectError(await post(w.s, "/", createBody(w.c, { idempotencyKey: "x".repeat(129) }), t), 400, /idempotencyKey/);
    expectError(await post(w.s, "/", createBody(w.c, { extra: 1 }), t), 400, /unknown field/);
    const { idempotencyKey: _k, ...missing } = createBody(w.c);
    expectError(await post(w.s, "/", missing, t), 400, /missing field\(s\): idempotencyKey/);
    expectError(await post(w.s, "/", "{not json", t), 400, /valid JSON/);
    expectError(await post(w.s, "/", "[]", t), 400, /JSON object/);
    expectError(await post(w.s, "/", createBody(w.c), t, { "content-type": "text/plain" }), 400, /Content-Type/);
    expectError(
      await post(w.s, "/not-an-address/take", { takeAmountMicros: "2000000", expectedRevision: "1", idempotencyKey: key() }, t),
      400,
      /offer address must be a base58/,
    );
  });

  it("400: insufficient balance says needed and available", async () => {
    expectError(
      await post(w.s, "/", createBody(w.c, { creatorTotalMicros: String(8n * UNIT) }), w.poor.token),
      400,
      /insufficient balance: needed 8000000 micros, available 3000000 micros/,
    );
    expectError(
      await post(w.s, `/${offer}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, w.poor.token),
      400,
      /needed 5000000 micros, available 3000000 micros/,
    );
  });

  it("400: idempotency key reused with another body; self-take; take below minimum; position cap", async () => {
    const k = key();
    const first = await post(w.s, "/", createBody(w.c, { idempotencyKey: k }), w.bob.token);
    expect(first.status, first.text).toBe(200);
    expectError(
      await post(w.s, "/", createBody(w.c, { idempotencyKey: k, creatorTotalMicros: String(9n * UNIT) }), w.bob.token),
      400,
      /already used with a different request/,
    );
    expectError(
      await post(w.s, `/${first.body.offerAddress}/take`, { takeAmountMicros: "2000000", expectedRevision: "1", idempotencyKey: k }, w.bob.token),
      400,
      /already used with a different request/,
    );
    expectError(
      await post(w.s, `/${offer}/take`, { takeAmountMicros: "2000000", expectedRevision: "1", idempotencyKey: key() }, w.alice.token),
      400,
      /your own offer/,
    );
    expectError(
      await post(w.s, `/${offer}/take`, { takeAmountMicros: "1999999", expectedRevision: "1", idempotencyKey: key() }, w.bob.token),
      400,
      /at least the offer's minimumTakeMicros 2000000/,
    );
    // Position cap: an offer with a 500-unit target; bob takes 500, then any more would exceed it.
    const big = await post(w.s, "/", createBody(w.c, { creatorTotalMicros: String(500n * UNIT), takerTargetMicros: String(600n * UNIT) }), w.alice.token);
    expect(big.status, big.text).toBe(200);
    expectError(
      await post(w.s, `/${big.body.offerAddress}/take`, { takeAmountMicros: String(501n * UNIT), expectedRevision: "1", idempotencyKey: key() }, w.bob.token),
      400,
      /above maximumWagerMicros 500000000/,
    );
  });

  it("404: unknown offer and unknown contract", async () => {
    const nowhere = Keypair.generate().publicKey.toBase58();
    expectError(
      await post(w.s, `/${nowhere}/take`, { takeAmountMicros: "2000000", expectedRevision: "1", idempotencyKey: key() }, w.bob.token),
      404,
      /unknown offer address/,
    );
    expectError(await post(w.s, `/${nowhere}/close`, { expectedRevision: "1", idempotencyKey: key() }, w.bob.token), 404, /unknown offer address/);
    expectError(
      await post(w.s, `/${w.c.toBase58()}/take`, { takeAmountMicros: "2000000", expectedRevision: "1", idempotencyKey: key() }, w.bob.token),
      404,
      /unknown offer address/,
    );
    expectError(await post(w.s, "/", createBody(Keypair.generate().publicKey), w.bob.token), 404, /unknown contract address/);
  });

  it("409: fee differs, revision differs, amount no longer available, offer closed, cutoff passed", async () => {
    expectError(await post(w.s, "/", createBody(w.c, { expectedFeeBps: 999 }), w.bob.token), 409, /expectedFeeBps 999 differs from the current feeBps 1000/);
    const o = await post(w.s, "/", createBody(w.c), w.alice.token);
    const addr = o.body.offerAddress as string;
    expectError(
      await post(w.s, `/${addr}/take`, { takeAmountMicros: "11000000", expectedRevision: "1", idempotencyKey: key() }, w.bob.token),
      409,
      /no longer available: remainingTakerMicros is 10000000/,
    );
    expect((await post(w.s, `/${addr}/take`, { takeAmountMicros: "3000000", expectedRevision: "1", idempotencyKey: key() }, w.bob.token)).status).toBe(200);
    expectError(
      await post(w.s, `/${addr}/take`, { takeAmountMicros: "3000000", expectedRevision: "1", idempotencyKey: key() }, w.bob.token),
      409,
      /expectedRevision 1, current revision 2/,
    );
    expectError(await post(w.s, `/${addr}/close`, { expectedRevision: "1", idempotencyKey: key() }, w.alice.token), 409, /current revision 2/);
    expect((await post(w.s, `/${addr}/close`, { expectedRevision: "2", idempotencyKey: key() }, w.alice.token)).status).toBe(200);
    expectError(
      await post(w.s, `/${addr}/take`, { takeAmountMicros: "3000000", expectedRevision: "3", idempotencyKey: key() }, w.bob.token),
      409,
      /the offer is Closed/,
    );
    const late = await contract(w.s, 10n);
    const lo = await post(w.s, "/", createBody(late), w.alice.token);
    await w.s.chain.gateway.advance(11n);
    expectError(await post(w.s, "/", createBody(late), w.alice.token), 409, /cutoff has passed/);
    expectError(
      await post(w.s, `/${lo.body.offerAddress}/take`, { takeAmountMicros: "3000000", expectedRevision: "1", idempotencyKey: key() }, w.bob.token),
      409,
      /cutoff has passed/,
    );
  });

  it("409 (not 403, which is compliance): a stranger closing before cutoff", async () => {
    const o = await post(w.s, "/", createBody(w.c), w.alice.token);
    expectError(
      await post(w.s, `/${o.body.offerAddress}/close`, { expectedRevision: "1", idempotencyKey: key() }, w.bob.token),
      409,
      /only the creator may close/,
    );
  });

  it("503: offers switched off refuses create and take; close still works", async () => {
    const o = await post(w.s, "/", createBody(w.c), w.alice.token);
    await w.s.admin.setOffersEnabled(false);
    try {
      expectError(await post(w.s, "/", createBody(w.c), w.alice.token), 503, /offers are switched off/);
      expectError(
        await post(w.s, `/${o.body.offerAddress}/take`, { takeAmountMicros: "3000000", expectedRevision: "1", idempotencyKey: key() }, w.bob.token),
        503,
        /switched off/,
      );
      expect((await post(w.s, `/${o.body.offerAddress}/close`, { expectedRevision: "1", idempotencyKey: key() }, w.alice.token)).status).toBe(200);
    } finally {
      await w.s.admin.setOffersEnabled(true);
    }
  });

  it("503: the chain unreachable (an RPC gateway to a closed port), with no detail leaked", async () => {
    const dead = new WriteService({ custody: w.s.custody, gateway: new RpcGateway("http://127.0.0.1:9"), payer: w.s.chain.service });
    const app = new Hono({ strict: false });
    app.route(OFFERS_BASE, writeRoutes(dead));
    const server = await listen(app);
    try {
      const r = await fetch(`${server.url}${OFFERS_BASE}/`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${w.alice.token}` },
        body: JSON.stringify(createBody(w.c)),
      });
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ error: "the chain is temporarily unreachable; retry with the same idempotencyKey", code: "SERVICE_UNAVAILABLE" });
      const t = await fetch(`${server.url}${OFFERS_BASE}/${offer}/take`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${w.bob.token}` },
        body: JSON.stringify({ takeAmountMicros: "2000000", expectedRevision: "1", idempotencyKey: key() }),
      });
      expect(t.status).toBe(503);
      expect(await t.json()).toEqual({ error: expect.any(String), code: "SERVICE_UNAVAILABLE" });
    } finally {
      await server.close();
    }
  });

  it("refused requests move no token", async () => {
    const before = [await balance(w.s, w.alice.user.tokenAccount), await balance(w.s, w.bob.user.tokenAccount), await balance(w.s, w.poor.user.tokenAccount)];
    await post(w.s, "/", createBody(w.c, { expectedFeeBps: 5 }), w.alice.token);
    await post(w.s, `/${offer}/take`, { takeAmountMicros: "1", expectedRevision: "1", idempotencyKey: key() }, w.bob.token);
    await post(w.s, "/", createBody(w.c), w.poor.token);
    const after = [await balance(w.s, w.alice.user.tokenAccount), await balance(w.s, w.bob.user.tokenAccount), await balance(w.s, w.poor.user.tokenAccount)];
    expect(after).toEqual(before);
  });
});
