/**
 * A transaction the chain refuses after the service's pre-checks passed, over real HTTP against
 * the local stack: the request is checked and recorded, its transaction is lost
 * (`dropNext`), the caller's balance moves, and the replay resends the recorded transaction
 * without checking again, so the program itself refuses it. The answer names the amounts the
 * program logged when it refused (needed, available), not digits picked out of its hex log line.
 */
import { describe, expect, it } from "vitest";
import { UNIT, balance, createBody, key, makeUser, writeSuite } from "../support/stack";
import { post } from "../support/http";

describe("refused by the chain, not by the pre-check", () => {
  const w = writeSuite({ alice: 1_000n * UNIT }, { contract: true });

  const offer = async () => {
    const r = await post(w.s, "/", createBody(w.c), w.alice.token);
    expect(r.status, r.text).toBe(200);
    return r.body.offerAddress as string;
  };

  it("take: insufficient balance with the needed and available micro-units", async () => {
    const [a, b] = [await offer(), await offer()];
    const taker = await makeUser(w.s, 10n * UNIT);
    const lost = { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() };
    w.s.chain.gateway.dropNext(1);
    expect((await post(w.s, `/${a}/take`, lost, taker.token)).status).toBe(200);
    expect(await balance(w.s, taker.user.tokenAccount)).toBe(10n * UNIT);
    // The balance moves before the lost take is resent.
    const other = await post(w.s, `/${b}/take`, { takeAmountMicros: String(7n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
    expect(other.status, other.text).toBe(200);
    expect(await balance(w.s, taker.user.tokenAccount)).toBe(3n * UNIT);

    const replay = await post(w.s, `/${a}/take`, lost, taker.token);
    expect(replay.status, replay.text).toBe(400);
    expect(replay.body).toEqual({ error: "insufficient balance: needed 5000000 micros, available 3000000 micros", code: "BAD_REQUEST" });
    expect(await balance(w.s, taker.user.tokenAccount)).toBe(3n * UNIT);
  });

  it("create: insufficient balance with the needed and available micro-units", async () => {
    const creator = await makeUser(w.s, 10n * UNIT);
    const lost = createBody(w.c, { creatorTotalMicros: String(9n * UNIT), idempotencyKey: key() });
    w.s.chain.gateway.dropNext(1);
    expect((await post(w.s, "/", lost, creator.token)).status).toBe(200);
    const other = await post(w.s, "/", createBody(w.c, { creatorTotalMicros: String(8_765_432n), takerTargetMicros: String(10n * UNIT) }), creator.token);
    expect(other.status, other.text).toBe(200);
    expect(await balance(w.s, creator.user.tokenAccount)).toBe(1_234_568n);

    const replay = await post(w.s, "/", lost, creator.token);
    expect(replay.status, replay.text).toBe(400);
    expect(replay.body).toEqual({ error: "insufficient balance: needed 9000000 micros, available 1234568 micros", code: "BAD_REQUEST" });
    expect(await balance(w.s, creator.user.tokenAccount)).toBe(1_234_568n);
  });
});
