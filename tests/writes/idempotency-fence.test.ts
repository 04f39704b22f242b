/**
 * Fencing of idempotency rows (issue 21, item 8), on both store engines: a request that merely
 * STALLS past the 60 s takeover of its `reserved` row (alive, not dead) while a retry takes the key
 * over. Two write services on one store stand for two processes; the original is held at a gate
 * (before its checks, or signed and about to be recorded), the row's age is pushed past the
 * takeover in the store, the retry runs, then the original resumes. The stale owner must not
 * overwrite, delete or send: it answers the retry's result, the key keeps answering it, and the
 * chain moved the stake once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Kysely } from "kysely";
import type { PublicKey } from "@solana/web3.js";
import type { LocalStack } from "../../stack/local-stack";
import { ApiError } from "../../service/api-error";
import { Custody } from "../../service/custody/custody";
import type { Recorder } from "../../service/writes/idempotency";
import { WriteService } from "../../service/writes/write-service";
import { ENGINES, freshStore, type StoreTarget } from "../indexer/stores";
import { UNIT, balance, contract, createBody, key, makeUser, stack } from "./helpers";

/** Where the original request stalls: before its checks run, or signed and about to be recorded. */
type StallAt = "checks" | "record";

/** A one-shot gate: `reached` resolves when a request stops at it, `open` lets it go on. */
function gate() {
  let reach!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const opened = new Promise<void>((r) => (open = r));
  return { reached, open, pass: async () => (reach(), opened) };
}

/** Holds `svc`'s next write at `at` until the returned gate is opened (the real recorder and store run as they are). */
function stall(svc: WriteService, at: StallAt) {
  const g = gate();
  const run = svc.idem.run.bind(svc.idem);
  svc.idem.run = ((userId, k, op, hash, exec) =>
    run(userId, k, op, hash, async (record: Recorder) => {
      if (at === "checks") return g.pass().then(() => exec(record));
      return exec(async (r) => {
        if (r !== "sent") await g.pass();
        return record(r);
      });
    })) as typeof svc.idem.run;
  return g;
}

describe.each(ENGINES)("idempotency fence on %s", (engine) => {
  let target: StoreTarget;
  let s: LocalStack;
  let c: PublicKey;

  beforeAll(async () => {
    target = freshStore(engine, "fence");
    s = await stack({ storeUrl: target.url });
    c = await contract(s);
  });
  afterAll(async () => {
    await s?.stop();
    await target?.drop();
  });

  /** Another service process on the same store. */
  const service = async () =>
    new WriteService({ custody: await Custody.open(s.db as Kysely<unknown>, s.custody.key), gateway: s.chain.gateway, payer: s.chain.service });
  const row = (userId: string, k: string) =>
    s.custody.db.selectFrom("idempotency").selectAll().where("user_id", "=", userId).where("idem_key", "=", k).executeTakeFirstOrThrow();
  /** Pushes the row's age past the 60 s takeover, as if the original had stalled that long. */
  const age = async (userId: string, k: string) => {
    const r = await row(userId, k);
    await s.custody.db
      .updateTable("idempotency")
      .set({ updated_at: Number(r.updated_at) - 61 })
      .where("user_id", "=", userId)
      .where("idem_key", "=", k)
      .execute();
  };

  it.each<StallAt>(["checks", "record"])("a create stalled at its %s past the takeover: the retry's answer stands, one offer", async (at) => {
    const u = await makeUser(s, 100n * UNIT);
    const [original, retry, later] = [await service(), await service(), await service()];
    const p = await original.authorize(`Bearer ${u.token}`);
    const body = createBody(c, { idempotencyKey: key() });
    const k = body.idempotencyKey as string;
    const held = stall(original, at);
    const first = original.create(p, body);
    await held.reached;
    expect(await row(u.user.id, k)).toMatchObject({ state: "reserved", attempt: 1 });
    await age(u.user.id, k);

    const won = await retry.create(p, body);
    expect(await row(u.user.id, k)).toMatchObject({ attempt: 2, signature: won.signature });
    held.open();
    expect(await first).toEqual(won);
    expect(await row(u.user.id, k)).toMatchObject({ attempt: 2, signature: won.signature, response_json: JSON.stringify(won) });
    expect(await later.create(p, body)).toEqual(won);
    expect(await balance(s, u.user.tokenAccount)).toBe(92n * UNIT);
    expect(await s.db.selectFrom("offers").select("address").where("creator", "=", u.user.wallet.toBase58()).execute()).toEqual([
      { address: won.offerAddress },
    ]);
  });

  it("a take signed, then stalled past the takeover, is not sent: the stake moves once", async () => {
    const [creator, taker] = [await makeUser(s, 100n * UNIT), await makeUser(s, 100n * UNIT)];
    const [original, retry, later] = [await service(), await service(), await service()];
    const offer = await original.create(await original.authorize(`Bearer ${creator.token}`), createBody(c, { idempotencyKey: key() }));
    const p = await original.authorize(`Bearer ${taker.token}`);
    const body = { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() };
    const held = stall(original, "record");
    const first = original.take(p, offer.offerAddress, body);
    await held.reached;
    await age(taker.user.id, body.idempotencyKey);

    const won = await retry.take(p, offer.offerAddress, body);
    held.open();
    expect(await first).toEqual(won);
    expect(await later.take(p, offer.offerAddress, body)).toEqual(won);
    expect(await row(taker.user.id, body.idempotencyKey)).toMatchObject({ attempt: 2, signature: won.signature });
    expect(await balance(s, taker.user.tokenAccount)).toBe(95n * UNIT);
  });

  it("a stale owner while the takeover still runs: its record and its release are refused, it answers 409 and sends nothing", async () => {
    const u = await makeUser(s, 0n);
    const [a, b] = [await service(), await service()];
    const k = key();
    const sent: string[] = [];
    const stored = (signature: string) => ({ signature, txBase64: "", response: { signature }, offerAddress: null });
    /** A write through the real recorder: held at `g`, then records `signature` and "sends" it, or is refused. */
    const write = (svc: WriteService, g: ReturnType<typeof gate>, signature: string | Error) =>
      svc.idem.run(u.user.id, k, "create", "h", async (record) => {
        await g.pass();
        if (signature instanceof Error) throw signature;
        await record(stored(signature));
        sent.push(signature);
        return { signature };
      });

    const [ga, gb] = [gate(), gate()];
    const stale = write(a, ga, "sig-a");
    await ga.reached;
    await age(u.user.id, k);
    const successor = write(b, gb, "sig-b");
    await gb.reached;
    ga.open();
    await expect(stale).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/in progress/) });
    expect(sent).toEqual([]);
    expect(await row(u.user.id, k)).toMatchObject({ state: "reserved", attempt: 2, signature: null });

    // The same with the stale owner refused by its checks: its release deletes nothing.
    const k2 = key();
    const [gc, gd] = [gate(), gate()];
    const refused = a.idem.run(u.user.id, k2, "create", "h", async () => {
      await gc.pass();
      throw new ApiError(409, "the stale owner's checks refused it");
    });
    await gc.reached;
    await age(u.user.id, k2);
    const next = b.idem.run(u.user.id, k2, "create", "h", async () => (await gd.pass(), { signature: "never" }));
    await gd.reached;
    gc.open();
    await expect(refused).rejects.toThrow(/in progress/);
    expect(await row(u.user.id, k2)).toMatchObject({ state: "reserved", attempt: 2 });
    gb.open();
    gd.open();
    expect(await successor).toEqual({ signature: "sig-b" });
    expect(sent).toEqual(["sig-b"]);
    await next;
  });
});
