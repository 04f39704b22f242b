/**
 * Custody and idempotency on both store engines (a SQLite file and a PostgreSQL schema): 100
 * concurrent creates with one key, a restart (a fresh service over the same database) replaying
 * the key, a key reused with another body, and the worked example's payout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Kysely } from "kysely";
import type { PublicKey } from "@solana/web3.js";
import type { LocalStack } from "../../stack/local-stack";
import { Custody } from "../../service/custody/custody";
import { WriteService } from "../../service/writes/write-service";
import { ENGINES, freshStore, type StoreTarget } from "../indexer/stores";
import { UNIT, balance, contract, createBody, key, makeUser, stack } from "../support/stack";
import { post } from "../support/http";

describe.each(ENGINES)("writes on %s", (engine) => {
  let target: StoreTarget;
  let s: LocalStack;
  let c: PublicKey;

  beforeAll(async () => {
    target = freshStore(engine, "writes");
    s = await stack({ storeUrl: target.url });
    c = await contract(s);
  });
  afterAll(async () => {
    await s?.stop();
    await target?.drop();
  });

  it("one offer from 100 concurrent creates; the key survives a restart; another body is 400", async () => {
    const u = await makeUser(s, 100n * UNIT);
    const body = createBody(c, { idempotencyKey: key() });
    const rs = await Promise.all(Array.from({ length: 100 }, () => post(s, "/", body, u.token)));
    expect(new Set(rs.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(rs.map((r) => r.body.signature)).size).toBe(1);
    const offers = await s.db.selectFrom("offers").select("address").where("creator", "=", u.user.wallet.toBase58()).execute();
    expect(offers).toHaveLength(1);
    const restarted = new WriteService({
      custody: await Custody.open(s.db as Kysely<unknown>, s.custody.key),
      gateway: s.chain.gateway,
      payer: s.chain.service,
    });
    const p = await restarted.authorize(`Bearer ${u.token}`);
    expect((await restarted.create(p, body)).signature).toBe(rs[0].body.signature);
    await expect(restarted.create(p, { ...body, creatorTotalMicros: String(9n * UNIT) })).rejects.toMatchObject({ status: 400 });
    expect(await balance(s, u.user.tokenAccount)).toBe(92n * UNIT);
  });

  it("two service instances (two processes) on one database submit once", async () => {
    const u = await makeUser(s, 100n * UNIT);
    const mk = async () =>
      new WriteService({ custody: await Custody.open(s.db as Kysely<unknown>, s.custody.key), gateway: s.chain.gateway, payer: s.chain.service });
    const [a, b] = [await mk(), await mk()];
    const body = createBody(c, { idempotencyKey: key() });
    const p = await a.authorize(`Bearer ${u.token}`);
    const rs = await Promise.allSettled([...Array.from({ length: 10 }, () => a.create(p, body)), ...Array.from({ length: 10 }, () => b.create(p, body))]);
    const sigs = new Set(rs.filter((r) => r.status === "fulfilled").map((r) => (r as PromiseFulfilledResult<{ signature: string }>).value.signature));
    for (const r of rs) if (r.status === "rejected") expect((r.reason as { status: number }).status).toBe(409);
    expect(sigs.size).toBe(1);
    expect(await s.db.selectFrom("offers").select("address").where("creator", "=", u.user.wallet.toBase58()).execute()).toHaveLength(1);
  });

  it("worked example pays 8.6 units to the winning taker", async () => {
    const creator = await makeUser(s, 100n * UNIT);
    const taker = await makeUser(s, 100n * UNIT);
    const k2 = await contract(s, 100n);
    const o = await post(s, "/", createBody(k2), creator.token);
    const t = await post(s, `/${o.body.offerAddress}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
    expect(t.status, t.text).toBe(200);
    await s.chain.gateway.advance(101n);
    await s.admin.resolveContract(k2, "sideB");
    await s.worker.drain();
    expect(await balance(s, taker.user.tokenAccount)).toBe(95n * UNIT + 8_600_000n);
    expect(await balance(s, creator.user.tokenAccount)).toBe(96n * UNIT);
  });
});
