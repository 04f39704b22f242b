/**
 * The GraphQL mutations over real HTTP: the same service as REST (a key used on REST replays on
 * GraphQL), errors with `extensions.code` / `extensions.status` matching the REST statuses.
 */
import { describe, expect, it } from "vitest";
import { UNIT, balance, createBody, key, writeSuite } from "../support/stack";
import { type Json, gql, post } from "../support/http";

const RECEIPT = "signature status offerAddress positionAddress takeAmountMicros creatorMatchedMicros refundMicros expectedRevision";
const CREATE = `mutation($input: CreateOfferInput!) { createOffer(input: $input) { ${RECEIPT} } }`;
const TAKE = `mutation($offer: Address!, $input: TakeOfferInput!) { takeOffer(offerAddress: $offer, input: $input) { ${RECEIPT} } }`;
const CLOSE = `mutation($offer: Address!, $input: CloseOfferInput!) { closeOffer(offerAddress: $offer, input: $input) { ${RECEIPT} } }`;

describe("GraphQL write mutations", () => {
  const w = writeSuite({ alice: 100n * UNIT, bob: 100n * UNIT }, { contract: true });

  it("create, take and close through mutations", async () => {
    const created = await gql(w.s, CREATE, { input: createBody(w.c) }, w.alice.token);
    expect(created.body.errors).toBeUndefined();
    const offer = created.body.data!.createOffer!.offerAddress;
    expect(created.body.data!.createOffer).toMatchObject({ status: "pending" });
    const took = await gql(w.s, TAKE, { offer, input: { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() } }, w.bob.token);
    expect(took.body.errors).toBeUndefined();
    expect(took.body.data!.takeOffer).toMatchObject({ status: "pending", creatorMatchedMicros: "4000000", takeAmountMicros: "5000000" });
    const closed = await gql(w.s, CLOSE, { offer, input: { expectedRevision: "2", idempotencyKey: key() } }, w.alice.token);
    expect(closed.body.errors).toBeUndefined();
    expect(closed.body.data!.closeOffer).toMatchObject({ status: "pending", refundMicros: "4000000" });
    expect(await balance(w.s, w.alice.user.tokenAccount)).toBe(96n * UNIT);
    const row = await w.s.db.selectFrom("offers").selectAll().where("address", "=", offer).executeTakeFirstOrThrow();
    expect(row.status).toBe("Closed");
  });

  it("one service: a key used on REST replays on GraphQL with the same receipt", async () => {
    const body = createBody(w.c);
    const rest = await post(w.s, "/", body, w.alice.token);
    const g = await gql(w.s, CREATE, { input: body }, w.alice.token);
    expect(g.body.data!.createOffer!.signature).toBe(rest.body.signature);
    expect(g.body.data!.createOffer!.offerAddress).toBe(rest.body.offerAddress);
    const other = await gql(w.s, CREATE, { input: { ...body, creatorTotalMicros: String(9n * UNIT) } }, w.alice.token);
    expect(other.body.errors![0].extensions).toEqual({ code: "BAD_REQUEST", status: 400 });
    expect(other.body.errors![0].message).toMatch(/already used with a different request/);
  });

  it("refuses a malformed amount while coercing the variables, before the write service", async () => {
    const r = await gql(w.s, CREATE, { input: createBody(w.c, { creatorTotalMicros: "1e6" }) }, w.alice.token);
    expect(r.body.data).toBeUndefined();
    expect(r.body.errors![0].message).toMatch(/Variable "\$input" got invalid value "1e6" at "input.creatorTotalMicros"; .*decimal digits/);
  });

  it("errors carry the REST status as extensions.code", async () => {
    const cases: [Json, string, RegExp][] = [
      [await gql(w.s, CREATE, { input: createBody(w.c) }, null), "UNAUTHENTICATED", /missing/],
      [await gql(w.s, CREATE, { input: createBody(w.c, { expectedFeeBps: 5 }) }, w.alice.token), "CONFLICT", /expectedFeeBps/],
      [
        await gql(w.s, TAKE, { offer: w.c.toBase58(), input: { takeAmountMicros: "1000000", expectedRevision: "1", idempotencyKey: key() } }, w.bob.token),
        "NOT_FOUND",
        /unknown offer/,
      ],
    ];
    const o = await gql(w.s, CREATE, { input: createBody(w.c) }, w.alice.token);
    cases.push([
      await gql(w.s, CLOSE, { offer: o.body.data!.createOffer!.offerAddress, input: { expectedRevision: "1", idempotencyKey: key() } }, w.bob.token),
      "CONFLICT",
      /only the creator/,
    ]);
    for (const [r, code, msg] of cases) {
      expect(r.body.errors, JSON.stringify(r)).toHaveLength(1);
      expect(r.body.errors![0].extensions.code).toBe(code);
      expect(r.body.errors![0].message).toMatch(msg);
    }
  });
});
