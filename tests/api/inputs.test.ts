/**
 * Inputs and identity over real HTTP (REST and GraphQL): contracts without catalog data are
 * never listed; the `sport` filter's documented names, in any case; idempotency keys of any
 * characters; the Bearer scheme in any case; one rule for an invalid token on REST and GraphQL;
 * a read-only token; `viewer.canTake` with its limit; statuses a spec client will not misread; and
 * the embed endpoint's one 404 for every path under /polls/.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { randomUUID } from "node:crypto";
import { apiStack, type ApiStack, makeUser, contract as makeContract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { getJson, gql, post } from "../support/http";
import { until } from "../support/wait";
import { sendAndConfirm } from "../../service/chain/submitter";
import { SPORTS } from "../../service/read/sports";

const BASE = "/api/bets-usdc/offers";
let s: ApiStack;
let alice: TestUser, bob: TestUser, carol: TestUser;
let contract: PublicKey;

beforeAll(async () => {
  s = await apiStack();
  [alice, bob, carol] = [await makeUser(s), await makeUser(s), await makeUser(s)];
  contract = await makeContract(s);
});
afterAll(async () => s?.stop());

async function offerOf(token: string, o: Record<string, unknown> = {}): Promise<string> {
  const r = await post(s, "/", createBody(contract, o), token);
  expect(r.status, r.text).toBe(200);
  const address = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${BASE}/${address}`)).status === 200);
  return address;
}

describe("catalog", () => {
  it("never lists a contract (nor its offers) without catalog data; startsAt is always a string", async () => {
    const now = await s.chain.gateway.now();
    const [templateId, eventId] = [randomUUID(), randomUUID()];
    const ix = await s.admin.client.createContract({
      authority: s.chain.service.publicKey,
      payer: s.chain.service.publicKey,
      templateId,
      eventId,
      cutoffAt: now + 3_600n,
      resolutionDeadline: now + 7_200n,
    });
    await sendAndConfirm(s.chain.gateway, [ix], [s.chain.service]);
    const bare = s.admin.client.pda.contract(templateId, eventId)[0].toBase58();
    await until(async () => s.db.selectFrom("contracts").select("address").where("address", "=", bare).executeTakeFirst());
    const created = await post(s, "/", createBody(s.admin.client.pda.contract(templateId, eventId)[0]), alice.token);
    expect(created.status, created.text).toBe(200);
    await until(async () =>
      s.db
        .selectFrom("offers")
        .select("address")
        .where("address", "=", created.body.offerAddress as string)
        .executeTakeFirst(),
    );

    const r = await getJson(s, `${BASE}/contracts`);
    expect(r.body.contracts.length).toBeGreaterThan(0);
    expect(r.body.contracts.map((c: { address: string }) => c.address)).not.toContain(bare);
    for (const c of r.body.contracts) expect(typeof c.startsAt).toBe("string");
    const browse = await getJson(s, `${BASE}/?pageSize=50`);
    expect(browse.body.offers.map((o: { contract: { address: string } }) => o.contract.address)).not.toContain(bare);
    expect((await getJson(s, `${BASE}/mine?pageSize=50`, { token: alice.token })).body.offers.map((o: { address: string }) => o.address)).not.toContain(
      created.body.offerAddress,
    );
    const g = await gql(s, "{ contracts { address startsAt } }");
    expect(g.body.data.contracts.map((c: { address: string }) => c.address)).not.toContain(bare);
    const type = await gql(s, '{ __type(name: "Contract") { fields { name type { kind } } } }');
    expect(type.body.data.__type.fields.find((f: { name: string }) => f.name === "startsAt").type.kind).toBe("NON_NULL");
  });
});

describe("sport", () => {
  it("matches the documented names in any case; an unknown sport is 400 naming the allowed values", async () => {
    await offerOf(alice.token);
    expect(SPORTS).toContain("football");
    for (const v of ["football", "FOOTBALL", "Football"]) expect((await getJson(s, `${BASE}/?sport=${v}`)).body.offers.length).toBeGreaterThan(0);
    expect((await getJson(s, `${BASE}/?sport=tennis`)).body.offers).toHaveLength(0);
    const bad = await getJson(s, `${BASE}/?sport=curling`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain(SPORTS.join(", "));
    expect((await gql(s, '{ offers(sport: "FootBall") { totalCount } }')).body.data.offers.totalCount).toBeGreaterThan(0);
    expect((await gql(s, '{ offers(sport: "curling") { totalCount } }')).body.errors[0].extensions).toMatchObject({ code: "BAD_REQUEST", status: 400 });
    await expect(s.admin.createContract({ ...contractInput(await s.chain.gateway.now()), sport: "curling" })).rejects.toThrow(/sport must be one of/);
  });
});

function contractInput(now: bigint) {
  return {
    title: "t",
    event: "e",
    sport: "football",
    competition: "c",
    startsAt: Number(now + 100n),
    cutoffAt: now + 100n,
    resolutionDeadline: now + 1_000n,
    sideALabel: "A",
    sideBLabel: "B",
  };
}

describe("idempotencyKey", () => {
  it("takes any characters within 8 to 128 characters, and a replay returns the same receipt", async () => {
    for (const k of ["clé d’idempotence ✓", "ключ идемпотентности", "a\u0000b\u0001c d\te\n", "🎲".repeat(128), "\ud800 lone surrogate"]) {
      const body = createBody(contract, { idempotencyKey: k });
      const first = await post(s, "/", body, alice.token);
      expect(first.status, `${JSON.stringify(k)}: ${first.text}`).toBe(200);
      const again = await post(s, "/", body, alice.token);
      expect(again.body, JSON.stringify(k)).toEqual(first.body);
    }
    for (const k of ["éééééé7", "🎲".repeat(7), "x".repeat(129), "🎲".repeat(129)]) {
      const r = await post(s, "/", createBody(contract, { idempotencyKey: k }), alice.token);
      expect(r.status, k).toBe(400);
      expect(r.body.error).toMatch(/idempotencyKey must be 8 to 128 characters/);
    }
  });
});

describe("tokens", () => {
  it("accepts the Bearer scheme in any case on reads and writes", async () => {
    for (const scheme of ["bearer", "BEARER", "Bearer"]) {
      const r = await getJson(s, `${BASE}/mine`, { headers: { authorization: `${scheme} ${alice.token}` } });
      expect(r.status, scheme).toBe(200);
      const w = await post(s, "/", createBody(contract), null, { authorization: `${scheme} ${alice.token}` });
      expect(w.status, `${scheme}: ${w.text}`).toBe(200);
    }
    const g = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `bearer ${alice.token}` },
      body: JSON.stringify({ query: "{ mine { totalCount } }" }),
    });
    expect(((await g.json()) as { data: { mine: { totalCount: number } } }).data.mine.totalCount).toBeGreaterThan(0);
  });

  it("answers an invalid token with 401 / UNAUTHENTICATED on every REST read and GraphQL query; no token is anonymous", async () => {
    for (const bad of ["pat_nope", `pat_${"A".repeat(43)}`, "Basic abc"]) {
      const header = bad.startsWith("Basic") ? bad : `Bearer ${bad}`;
      expect((await getJson(s, `${BASE}/contracts`, { headers: { authorization: header } })).status).toBe(401);
      for (const query of ["{ contracts { address } }", "{ settings { feeBps } }", "{ offers { totalCount } }"]) {
        const r = await fetch(`${s.url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: header },
          body: JSON.stringify({ query }),
        });
        const body = (await r.json()) as { data?: unknown; errors: { extensions: { code: string } }[] };
        expect(r.status, `${header} ${query}`).toBe(401);
        expect(body.data).toBeUndefined();
        expect(body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
      }
    }
    const anon = await gql(s, "{ contracts { address } }");
    expect(anon.status).toBe(200);
    expect(anon.body.data.contracts.length).toBeGreaterThan(0);
  });

  it("a bet:read token signs reads in; writes with it get 401 (REST) and UNAUTHENTICATED (GraphQL)", async () => {
    const { token } = await s.custody.issueToken(carol.user.id, { scopes: ["bet:read"] });
    expect((await getJson(s, `${BASE}/mine`, { token })).status).toBe(200);
    const w = await post(s, "/", createBody(contract), token);
    expect(w).toMatchObject({ status: 401, body: { error: "token lacks the bet:write scope" } });
    const g = await gql(s, "mutation($i: CreateOfferInput!) { createOffer(input: $i) { status } }", { i: createBody(contract) }, token);
    expect(g.body.errors[0].extensions).toMatchObject({ code: "UNAUTHENTICATED", status: 401 });
  });
});

describe("viewer.canTake", () => {
  const viewerQ = "query($a: Address!) { offer(address: $a) { viewer { canTake maxTakeMicros takeLimit takeRefusal } } }";

  it("is false for a blocked caller, for anyone on a blocked creator's offer, and at the maximum wager; says which limit applies", async () => {
    // 500 units (maximumWagerMicros) against 1000: a taker can hold at most 500 of the 1000.
    const big = await offerOf(alice.token, { creatorTotalMicros: String(500n * UNIT), takerTargetMicros: String(1_000n * UNIT) });
    const view = async (token?: string) => (await getJson(s, `${BASE}/${big}`, { token })).body.viewer;
    expect(await view(bob.token)).toMatchObject({ canTake: true, maxTakeMicros: String(500n * UNIT), takeLimit: "maximumWager", takeRefusal: null });
    expect(await view(alice.token)).toMatchObject({ canTake: false, maxTakeMicros: "0", takeRefusal: "ownOffer" });

    const t = await post(s, `/${big}/take`, { takeAmountMicros: String(300n * UNIT), expectedRevision: "1", idempotencyKey: key() }, bob.token);
    expect(t.status, t.text).toBe(200);
    await until(async () => (await getJson(s, `${BASE}/${big}`)).body.revision === "2");
    expect(await view(bob.token)).toMatchObject({ canTake: true, maxTakeMicros: String(200n * UNIT), takeLimit: "maximumWager" });
    const t2 = await post(s, `/${big}/take`, { takeAmountMicros: String(200n * UNIT), expectedRevision: "2", idempotencyKey: key() }, bob.token);
    expect(t2.status, t2.text).toBe(200);
    await until(async () => (await getJson(s, `${BASE}/${big}`)).body.revision === "3");
    expect(await view(bob.token)).toMatchObject({ canTake: false, maxTakeMicros: "0", takeRefusal: "maximumWager" });
    expect((await gql(s, viewerQ, { a: big }, bob.token)).body.data.offer.viewer).toMatchObject({ canTake: false, takeRefusal: "maximumWager" });
    // and the write agrees: any take is refused
    const refused = await post(s, `/${big}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "3", idempotencyKey: key() }, bob.token);
    expect(refused.status).toBe(400);
    expect(await view(carol.token)).toMatchObject({ canTake: true, maxTakeMicros: String(500n * UNIT), takeLimit: "remaining" });

    await s.custody.setBlocked(carol.user.id, true, "review");
    expect(await view(carol.token)).toMatchObject({ canTake: false, maxTakeMicros: "0", takeRefusal: "callerBlocked" });
    await s.custody.setBlocked(carol.user.id, false);

    await s.custody.setBlocked(alice.user.id, true, "review");
    try {
      expect(await view(carol.token)).toMatchObject({ canTake: false, maxTakeMicros: "0", takeRefusal: "creatorBlocked" });
      // Anonymous answers are shared for up to 1 s (docs/service-guide.md).
      await until(async () => (await view()).takeRefusal === "creatorBlocked", 3_000);
      await until(async () => (await gql(s, viewerQ, { a: big })).body.data.offer.viewer.takeRefusal === "creatorBlocked", 3_000);
    } finally {
      await s.custody.setBlocked(alice.user.id, false);
    }
  });
});

describe("statuses", () => {
  it("a stranger closing before the cutoff gets 409 with the cutoff, not the compliance 403", async () => {
    const o = await offerOf(alice.token);
    const r = await post(s, `/${o}/close`, { expectedRevision: "1", idempotencyKey: key() }, bob.token);
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/^only the creator may close this offer before the contract's cutoff at \d{4}-\d\d-\d\dT/);
  });
});

describe("embed 404", () => {
  it("answers every path under /polls/ that is not an eligible pool with exactly the endpoint's 404", async () => {
    const ref = await getJson(s, "/api/embed/v1/polls/no-such-pool");
    expect(ref.status).toBe(404);
    for (const path of ["/api/embed/v1/polls/", "/api/embed/v1/polls", "/api/embed/v1/polls/a/b", "/api/embed/v1/polls/a/b/c", "/api/embed/v1/polls//"]) {
      const r = await fetch(`${s.url}${path}`);
      expect(r.status, path).toBe(404);
      expect(await r.text(), path).toBe('{"error":"Poll not found","code":"NOT_FOUND"}');
      for (const h of ["cache-control", "content-type", "access-control-allow-origin"]) expect(r.headers.get(h), `${path} ${h}`).toBe(ref.headers.get(h));
    }
  });
});
