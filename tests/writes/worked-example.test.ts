/**
 * The spec's worked example through the API and the worker, over real HTTP against the local
 * stack (program in bankrun, indexer, store): stake 8 against a target of 10; a take of 5 is
 * matched with 4; the taker's side wins; the taker receives 5 + 4 - 0.4; the unmatched 4 is
 * refunded to the creator at cutoff; the fee 0.4 goes to the treasury.
 */
import { describe, expect, it } from "vitest";
import { UNIT, balance, contract, createBody, key, writeSuite } from "../support/stack";
import { get, post } from "../support/http";

describe("worked example: create -> take -> cutoff -> resolve -> payout", () => {
  const w = writeSuite({ creator: 100n * UNIT, taker: 100n * UNIT });

  it("pays exactly the settlement table", async () => {
    const c = await contract(w.s);
    const created = await post(w.s, "/", createBody(c), w.creator.token);
    expect(created.status, created.text).toBe(200);
    expect(created.body.status).toBe("pending");
    expect(typeof created.body.signature).toBe("string");
    const offer = created.body.offerAddress as string;
    const row = await w.s.db.selectFrom("offers").selectAll().where("address", "=", offer).executeTakeFirstOrThrow();
    expect(row.creator).toBe(w.creator.user.wallet.toBase58());
    expect(row.revision).toBe(1);
    expect(await balance(w.s, w.creator.user.tokenAccount)).toBe(92n * UNIT);

    const took = await post(w.s, `/${offer}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, w.taker.token);
    expect(took.status, took.text).toBe(200);
    expect(took.body).toMatchObject({
      status: "pending",
      offerAddress: offer,
      takeAmountMicros: "5000000",
      creatorMatchedMicros: "4000000",
      expectedRevision: "1",
    });
    const after = await w.s.db.selectFrom("offers").selectAll().where("address", "=", offer).executeTakeFirstOrThrow();
    expect(after.revision).toBe(2);
    expect(after.creator_allocated_micros).toBe("4000000");
    const pos = await w.s.db
      .selectFrom("positions")
      .selectAll()
      .where("address", "=", took.body.positionAddress as string)
      .executeTakeFirstOrThrow();
    expect(pos.taker).toBe(w.taker.user.wallet.toBase58());
    expect(await balance(w.s, w.taker.user.tokenAccount)).toBe(95n * UNIT);
    // Through GET, as a client tracks it: the taker's view says what a win returns (5 + 4 - 0.4).
    const takerView = await get(w.s, `/${offer}`, w.taker.token);
    expect(takerView.status).toBe(200);
    expect(takerView.body).toMatchObject({ revision: "2", takerFilledMicros: "5000000", creatorAllocatedMicros: "4000000", remainingTakerMicros: "5000000" });
    expect(takerView.body.viewer).toMatchObject({
      role: "taker",
      returnMicros: "8600000",
      position: { takerAmountMicros: "5000000", creatorMatchedMicros: "4000000", status: "Open" },
    });

    // Cutoff passes: the worker closes the offer and refunds the unmatched 4.
    await w.s.chain.gateway.advance(3_601n);
    const r1 = await w.s.worker.drain();
    expect(r1.closed).toBe(1);
    expect(await balance(w.s, w.creator.user.tokenAccount)).toBe(96n * UNIT);

    // The taker's side (sideB) wins; the worker settles and reclaims rent.
    await w.s.admin.resolveContract(c, "sideB");
    const r2 = await w.s.worker.drain();
    expect(r2.settled).toBe(1);
    expect(r2.reclaimedPositions).toBe(1);
    expect(r2.reclaimedOffers).toBe(1);
    expect(await balance(w.s, w.taker.user.tokenAccount)).toBe(95n * UNIT + 5n * UNIT + 4n * UNIT - 400_000n);
    expect(await balance(w.s, w.creator.user.tokenAccount)).toBe(96n * UNIT);
    expect(await balance(w.s, w.s.chain.treasury)).toBe(400_000n);
    const settled = await w.s.db
      .selectFrom("positions")
      .selectAll()
      .where("address", "=", took.body.positionAddress as string)
      .executeTakeFirstOrThrow();
    expect(settled.status).toBe("SettledTakerWin");
    expect(settled.taker_payout_micros).toBe("8600000");
    expect(settled.fee_micros).toBe("400000");
    // The settled history stays readable after the rent was reclaimed.
    const finalView = await get(w.s, `/${offer}`, w.taker.token);
    expect(finalView.status, finalView.text).toBe(200);
    expect(finalView.body).toMatchObject({ status: "Settled", settledPositionCount: 1 });
    expect(finalView.body.viewer).toMatchObject({ position: { status: "SettledTakerWin", payoutMicros: "8600000", feeMicros: "400000" } });

    // A second pass finds nothing: restart-safe, nothing paid twice.
    const r3 = await w.s.worker.drain();
    expect(r3.settled + r3.closed + r3.voided).toBe(0);
    expect(await balance(w.s, w.taker.user.tokenAccount)).toBe(103_600_000n);
  });
});
