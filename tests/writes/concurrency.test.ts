/**
 * Idempotency and races over real HTTP: 100 concurrent creates with one key give one offer; 50
 * concurrent takes at one revision give one success and 409s; replays, restart survival, two
 * service instances on one database, a lost transaction resent without a duplicate; compliance
 * blocks (403 on create and take, close still works).
 */
import { describe, expect, it } from "vitest";
import type { Kysely } from "kysely";
import { Custody } from "../../service/custody/custody";
import { WriteService } from "../../service/writes/write-service";
import { UNIT, balance, createBody, key, makeUser, type TestUser, writeSuite } from "../support/stack";
import { post } from "../support/http";

describe("idempotency and races", () => {
  const w = writeSuite({ alice: 1_000n * UNIT }, { contract: true });

  const offersOf = async (u: TestUser) => w.s.db.selectFrom("offers").select(["address"]).where("creator", "=", u.user.wallet.toBase58()).execute();

  it("100 concurrent creates with one idempotency key give one offer", async () => {
    const u = await makeUser(w.s, 100n * UNIT);
    const body = createBody(w.c, { idempotencyKey: key() });
    const rs = await Promise.all(Array.from({ length: 100 }, () => post(w.s, "/", body, u.token)));
    expect(rs.map((r) => r.status)).toEqual(Array(100).fill(200));
    expect(new Set(rs.map((r) => r.body.signature)).size).toBe(1);
    expect(new Set(rs.map((r) => r.body.offerAddress)).size).toBe(1);
    expect(await offersOf(u)).toHaveLength(1);
    expect(await balance(w.s, u.user.tokenAccount)).toBe(92n * UNIT);
    // A later replay returns the original result; nothing new.
    const again = await post(w.s, "/", body, u.token);
    expect(again.body).toEqual(rs[0].body);
    expect(await offersOf(u)).toHaveLength(1);
  });

  it("two service instances on one database (two processes) submit once; keys survive a restart", async () => {
    const u = await makeUser(w.s, 100n * UNIT);
    const other = new WriteService({
      custody: await Custody.open(w.s.db as Kysely<unknown>, w.s.custody.key),
      gateway: w.s.chain.gateway,
      payer: w.s.chain.service,
    });
    const principal = await other.authorize(`Bearer ${u.token}`);
    const body = createBody(w.c, { idempotencyKey: key() });
    const settled = await Promise.allSettled([
      ...Array.from({ length: 20 }, () => post(w.s, "/", body, u.token)),
      ...Array.from({ length: 20 }, () => other.create(principal, body)),
    ]);
    const sigs = new Set<string>();
    for (const r of settled) {
      if (r.status === "fulfilled") {
        const v = r.value as unknown as { status?: number; body?: { signature: string }; signature?: string };
        if ("status" in v && typeof v.status === "number") {
          expect([200, 409]).toContain(v.status);
          if (v.status === 200) sigs.add(v.body!.signature);
        } else sigs.add(v.signature!);
      } else {
        expect((r.reason as { status: number }).status).toBe(409);
      }
    }
    expect(sigs.size).toBe(1);
    expect(await offersOf(u)).toHaveLength(1);
    // "Restart": a fresh service over the same database answers the replay from the table.
    const restarted = new WriteService({
      custody: await Custody.open(w.s.db as Kysely<unknown>, w.s.custody.key),
      gateway: w.s.chain.gateway,
      payer: w.s.chain.service,
    });
    const replay = await restarted.create(await restarted.authorize(`Bearer ${u.token}`), body);
    expect(replay.signature).toBe([...sigs][0]);
    expect(await offersOf(u)).toHaveLength(1);
  });

  it("50 concurrent takes at one revision: exactly one success, 409 for the rest", async () => {
    const o = await post(w.s, "/", createBody(w.c, { creatorTotalMicros: String(100n * UNIT), takerTargetMicros: String(100n * UNIT) }), w.alice.token);
    const offer = o.body.offerAddress as string;
    const takers = await Promise.all(Array.from({ length: 50 }, () => makeUser(w.s, 20n * UNIT)));
    const rs = await Promise.all(
      takers.map((t) => post(w.s, `/${offer}/take`, { takeAmountMicros: String(10n * UNIT), expectedRevision: "1", idempotencyKey: key() }, t.token)),
    );
    const ok = rs.filter((r) => r.status === 200);
    if (rs.some((r) => r.status !== 200 && r.status !== 409))
      console.log(
        rs
          .filter((r) => r.status !== 200 && r.status !== 409)
          .map((r) => r.status + " " + r.text)
          .slice(0, 5),
      );
    const conflicts = rs.filter((r) => r.status === 409);
    expect(ok).toHaveLength(1);
    expect(conflicts).toHaveLength(49);
    for (const r of conflicts) expect(r.body.error).toMatch(/changed|revision/);
    const row = await w.s.db.selectFrom("offers").selectAll().where("address", "=", offer).executeTakeFirstOrThrow();
    expect(row.revision).toBe(2);
    expect(row.taker_filled_micros).toBe(String(10n * UNIT));
    const paid = await Promise.all(takers.map((t) => balance(w.s, t.user.tokenAccount)));
    expect(paid.filter((b) => b === 10n * UNIT)).toHaveLength(1);
    expect(paid.filter((b) => b === 20n * UNIT)).toHaveLength(49);
  });

  it("a transaction that never lands is resent under the same key without a duplicate", async () => {
    const u = await makeUser(w.s, 100n * UNIT);
    const body = createBody(w.c, { idempotencyKey: key() });
    w.s.chain.gateway.dropNext(1);
    const first = await post(w.s, "/", body, u.token);
    expect(first.status).toBe(200);
    expect(await w.s.chain.gateway.getAccount(await import("@solana/web3.js").then((m) => new m.PublicKey(first.body.offerAddress as string)))).toBeNull();
    expect(await offersOf(u)).toHaveLength(0);
    const again = await post(w.s, "/", body, u.token);
    expect(again.status, again.text).toBe(200);
    expect(again.body.offerAddress).toBe(first.body.offerAddress);
    expect(await offersOf(u)).toHaveLength(1);
    const third = await post(w.s, "/", body, u.token);
    expect(third.body).toEqual(again.body);
    expect(await offersOf(u)).toHaveLength(1);
    expect(await balance(w.s, u.user.tokenAccount)).toBe(92n * UNIT);

    // A lost take: resent; the revision guard makes a duplicate impossible.
    const t = await makeUser(w.s, 100n * UNIT);
    const takeBody = { takeAmountMicros: String(2n * UNIT), expectedRevision: "1", idempotencyKey: key() };
    w.s.chain.gateway.dropNext(1);
    const lost = await post(w.s, `/${first.body.offerAddress}/take`, takeBody, t.token);
    expect(lost.status).toBe(200);
    expect(await balance(w.s, t.user.tokenAccount)).toBe(100n * UNIT);
    const resent = await post(w.s, `/${first.body.offerAddress}/take`, takeBody, t.token);
    expect(resent.status, resent.text).toBe(200);
    expect(await post(w.s, `/${first.body.offerAddress}/take`, takeBody, t.token)).toMatchObject({ status: 200 });
    expect(await balance(w.s, t.user.tokenAccount)).toBe(98n * UNIT);
  });

  it("compliance block: 403 on create and take (caller or creator blocked); close still works", async () => {
    const blocked = await makeUser(w.s, 100n * UNIT);
    const bob = await makeUser(w.s, 100n * UNIT);
    const own = await post(w.s, "/", createBody(w.c), blocked.token);
    const other = await post(w.s, "/", createBody(w.c), w.alice.token);
    await w.s.custody.setBlocked(blocked.user.id, true, "compliance review");
    // Tokens resolve the user per request: the block applies at once.
    const create = await post(w.s, "/", createBody(w.c), blocked.token);
    expect(create.status).toBe(403);
    expect(create.body).toEqual({ error: "your account is blocked from wagering", code: "FORBIDDEN" });
    const take = await post(
      w.s,
      `/${other.body.offerAddress}/take`,
      { takeAmountMicros: String(2n * UNIT), expectedRevision: "1", idempotencyKey: key() },
      blocked.token,
    );
    expect(take.status).toBe(403);
    const takeFromBlocked = await post(
      w.s,
      `/${own.body.offerAddress}/take`,
      { takeAmountMicros: String(2n * UNIT), expectedRevision: "1", idempotencyKey: key() },
      bob.token,
    );
    expect(takeFromBlocked.status).toBe(403);
    expect(takeFromBlocked.body.error).toMatch(/creator is blocked/);
    const before = await balance(w.s, blocked.user.tokenAccount);
    const close = await post(w.s, `/${own.body.offerAddress}/close`, { expectedRevision: "1", idempotencyKey: key() }, blocked.token);
    expect(close.status, close.text).toBe(200);
    expect(close.body.refundMicros).toBe(String(8n * UNIT));
    expect(await balance(w.s, blocked.user.tokenAccount)).toBe(before + 8n * UNIT);
    const row = await w.s.db
      .selectFrom("offers")
      .selectAll()
      .where("address", "=", own.body.offerAddress as string)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("Closed");
    expect(row.closed_at).not.toBeNull();
    await w.s.custody.setBlocked(blocked.user.id, false);
    expect((await post(w.s, "/", createBody(w.c), blocked.token)).status).toBe(200);
  });
});
