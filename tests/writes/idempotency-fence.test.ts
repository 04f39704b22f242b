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
import { UNIT, balance, contract, createBody, key, makeUser, stack } from "../support/stack";

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
    const reserved = await row(u.user.id, k);
    expect(reserved.state).toBe("reserved");
    await age(u.user.id, k);

    const won = await retry.create(p, body);
    const taken = await row(u.user.id, k);
    expect(taken).toMatchObject({ signature: won.signature, response_json: JSON.stringify(won) });
    expect(taken.owner).not.toBe(reserved.owner);
    held.open();
    expect(await first).toEqual(won);
    expect(await row(u.user.id, k)).toMatchObject({ owner: taken.owner, signature: won.signature, response_json: JSON.stringify(won) });
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
    expect(await row(taker.user.id, body.idempotencyKey)).toMatchObject({ signature: won.signature, response_json: JSON.stringify(won) });
    expect(await balance(s, taker.user.tokenAccount)).toBe(95n * UNIT);
  });

  it("a stale owner while the takeover still runs, or after the key was released and reserved anew: refused, 409, nothing sent", async () => {
    const u = await makeUser(s, 0n);
    const [a, b, c2] = [await service(), await service(), await service()];
    const sent: string[] = [];
    const stored = (signature: string) => ({ signature, txBase64: "", response: { signature }, offerAddress: null });
    /** A write through the real recorder: held at `g`, then records `outcome` and "sends" it, or is refused with it. */
    const write = (svc: WriteService, k: string, g: ReturnType<typeof gate>, outcome: string | ApiError) =>
      svc.idem.run(u.user.id, k, "create", "h", async (record) => {
        await g.pass();
        if (outcome instanceof ApiError) throw outcome;
        await record(stored(outcome));
        sent.push(outcome);
        return { signature: outcome };
      });
    const inProgress = { status: 409, message: expect.stringMatching(/in progress/) };

    // 1. Held until a takeover runs: its record is refused, the successor's row stays as it is.
    const k = key();
    const [ga, gb] = [gate(), gate()];
    const stale = write(a, k, ga, "sig-a");
    await ga.reached;
    const mine = await row(u.user.id, k);
    await age(u.user.id, k);
    const successor = write(b, k, gb, "sig-b");
    await gb.reached;
    ga.open();
    await expect(stale).rejects.toMatchObject(inProgress);
    expect(sent).toEqual([]);
    const theirs = await row(u.user.id, k);
    expect(theirs).toMatchObject({ state: "reserved", signature: null });
    expect(theirs.owner).not.toBe(mine.owner);
    gb.open();
    expect(await successor).toEqual({ signature: "sig-b" });
    expect(await row(u.user.id, k)).toMatchObject({ state: "submitted", signature: "sig-b", owner: theirs.owner });

    // 2. Refused by its own (stale) checks after a takeover: its release deletes nothing.
    const k2 = key();
    const [gc, gd] = [gate(), gate()];
    const refused = write(a, k2, gc, new ApiError(409, "the stale owner's checks refused it"));
    await gc.reached;
    await age(u.user.id, k2);
    const next = write(b, k2, gd, "sig-d");
    await gd.reached;
    gc.open();
    await expect(refused).rejects.toMatchObject(inProgress);
    expect(await row(u.user.id, k2)).toMatchObject({ state: "reserved", signature: null });
    gd.open();
    await next;

    // 3. The successor refused and released the key, and a third request reserved it anew: the
    // stale owner must not take the fresh row for its own (an attempt counter would start over).
    const k3 = key();
    const [ge, gf, gg] = [gate(), gate(), gate()];
    const old = write(a, k3, ge, "sig-e");
    await ge.reached;
    await age(u.user.id, k3);
    const released = write(b, k3, gf, new ApiError(409, "the successor was refused"));
    gf.open();
    await expect(released).rejects.toMatchObject({ status: 409, message: "the successor was refused" });
    const fresh = write(c2, k3, gg, "sig-g");
    await gg.reached;
    ge.open();
    await expect(old).rejects.toMatchObject(inProgress);
    expect(await row(u.user.id, k3)).toMatchObject({ state: "reserved", signature: null });
    gg.open();
    expect(await fresh).toEqual({ signature: "sig-g" });
    expect(sent).toEqual(["sig-b", "sig-d", "sig-g"]);
  });
});
