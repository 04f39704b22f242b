/**
 * The settlement worker on contracts with many positions: every balance equals the spec's
 * settlement table computed independently here, to the micro-unit; two workers running at once
 * and a re-run after "restart" pay nothing twice; a contract left unresolved past its deadline is
 * voided and refunded; rent goes back to the service.
 */
import { describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { SettlementWorker } from "../../service/worker/worker";
import { UNIT, balance, contract, createBody, key, makeUser, type TestUser, writeSuite } from "../support/stack";
import { post } from "../support/http";

interface Book {
  offer: string;
  creator: TestUser;
  side: "sideA" | "sideB";
  total: bigint;
  allocated: bigint;
  feeBps: bigint;
  positions: Map<string, { taker: TestUser; t: bigint; m: bigint }>;
}

function rng(seed: number) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

describe("settlement worker", () => {
  const w = writeSuite();

  it("settles many positions to the micro-unit, once, with two workers; voids expired contracts", async () => {
    const rand = rng(42);
    const START = 2_000n * UNIT;
    const creators = await Promise.all(Array.from({ length: 8 }, () => makeUser(w.s, START)));
    const takers = await Promise.all(Array.from({ length: 6 }, () => makeUser(w.s, START)));
    const everyone = [...creators, ...takers];
    const cA = await contract(w.s, 3_600n, 3_600n);
    const cB = await contract(w.s, 3_600n, 600n);
    const books: (Book & { contract: PublicKey })[] = [];
    for (const [i, cr] of creators.entries()) {
      const k = i < 6 ? cA : cB;
      const total = BigInt(5 + Math.floor(rand() * 60)) * UNIT + BigInt(Math.floor(rand() * 999_999));
      const target = (total * BigInt(3 + Math.floor(rand() * 25))) / 10n;
      const side = i % 2 === 0 ? "sideA" : "sideB";
      const r = await post(
        w.s,
        "/",
        createBody(k, { creatorOutcome: side, creatorTotalMicros: String(total), takerTargetMicros: String(target), minimumTakeMicros: String(UNIT) }),
        cr.token,
      );
      expect(r.status, r.text).toBe(200);
      books.push({ offer: r.body.offerAddress as string, creator: cr, side, total, allocated: 0n, feeBps: 1000n, positions: new Map(), contract: k });
    }
    // Rounds of takes: random takers, random amounts, sometimes the exact remainder.
    let takes = 0;
    for (let round = 0; round < 5; round++) {
      for (const b of books) {
        for (const t of takers) {
          if (rand() < 0.35) continue;
          const row = await w.s.db.selectFrom("offers").selectAll().where("address", "=", b.offer).executeTakeFirstOrThrow();
          const remaining = BigInt(row.taker_target_micros) - BigInt(row.taker_filled_micros);
          if (remaining === 0n) continue;
          const amount = remaining <= 2n * UNIT || rand() < 0.1 ? remaining : UNIT + BigInt(Math.floor(rand() * Number(remaining / 3n)));
          const r = await post(
            w.s,
            `/${b.offer}/take`,
            { takeAmountMicros: String(amount), expectedRevision: String(row.revision), idempotencyKey: key() },
            t.token,
          );
          if (r.status === 400 && /maximumWagerMicros|too small/.test(String(r.body.error))) continue;
          expect(r.status, r.text).toBe(200);
          takes++;
          const m = BigInt(r.body.creatorMatchedMicros as string);
          const p = b.positions.get(t.name) ?? { taker: t, t: 0n, m: 0n };
          p.t += amount;
          p.m += m;
          b.positions.set(t.name, p);
          b.allocated += m;
        }
      }
    }
    const positions = books.reduce((n, b) => n + b.positions.size, 0);
    expect(positions).toBeGreaterThanOrEqual(30);
    expect(takes).toBeGreaterThanOrEqual(positions);

    // Expected balances from the settlement table.
    const expected = new Map(everyone.map((u) => [u.name, START]));
    const add = (u: TestUser, v: bigint) => expected.set(u.name, expected.get(u.name)! + v);
    let fees = 0n;
    for (const b of books) {
      add(b.creator, -b.total); // stake locked at create
      add(b.creator, b.total - b.allocated); // unmatched part refunded at cutoff
      const result = b.contract.equals(cA) ? "sideA" : "void";
      for (const p of b.positions.values()) {
        add(p.taker, -p.t);
        if (result === "void") {
          add(b.creator, p.m);
          add(p.taker, p.t);
        } else if (b.side === result) {
          const fee = (b.feeBps * p.t) / 10_000n;
          add(b.creator, p.t + p.m - fee);
          fees += fee;
        } else {
          const fee = (b.feeBps * p.m) / 10_000n;
          add(p.taker, p.t + p.m - fee);
          fees += fee;
        }
      }
    }

    // Past cutoff: the worker closes open offers (refunds); resolve A; B passes its deadline.
    await w.s.chain.gateway.advance(3_601n);
    await w.s.admin.resolveContract(cA, "sideA");
    await w.s.chain.gateway.advance(601n);
    const lamportsBefore = await w.s.chain.gateway.getAccount(w.s.chain.service.publicKey).then((a) => BigInt(a!.lamports));
    const second = new SettlementWorker({ ...w.s.worker.deps });
    const [r1, r2] = await Promise.all([w.s.worker.drain(), second.drain()]);
    // Both workers may send the identical settle transaction (same signature: one transaction);
    // the chain settles each position exactly once.
    expect(r1.settled + r2.settled).toBeGreaterThanOrEqual(positions);
    expect(await w.s.db.selectFrom("settlements").select(["position"]).execute()).toHaveLength(positions);
    expect(r1.voided + r2.voided).toBeGreaterThanOrEqual(1);
    expect((await w.s.db.selectFrom("contracts").select(["status"]).where("address", "=", cB.toBase58()).executeTakeFirstOrThrow()).status).toBe("Voided");
    for (const u of everyone) expect(await balance(w.s, u.user.tokenAccount), u.name).toBe(expected.get(u.name));
    expect(await balance(w.s, w.s.chain.treasury)).toBe(fees);
    expect(await balance(w.s, w.s.chain.client.pda.vault()[0])).toBe(0n);
    // Rent came back to the service (more than the fees it paid).
    const lamportsAfter = await w.s.chain.gateway.getAccount(w.s.chain.service.publicKey).then((a) => BigInt(a!.lamports));
    expect(lamportsAfter).toBeGreaterThan(lamportsBefore);
    expect(r1.reclaimedPositions + r2.reclaimedPositions).toBeGreaterThanOrEqual(positions);
    expect(await w.s.db.selectFrom("positions").select(["address"]).where("deleted", "=", 0).execute()).toHaveLength(0);
    const statuses = await w.s.db.selectFrom("positions").select(["status"]).execute();
    expect(statuses.every((x) => x.status !== "Open")).toBe(true);

    // "Restart": a fresh worker finds nothing to do and pays nothing.
    const again = await new SettlementWorker({ ...w.s.worker.deps }).drain();
    expect(again.settled + again.closed + again.voided + again.reclaimedPositions + again.reclaimedOffers).toBe(0);
    for (const u of everyone) expect(await balance(w.s, u.user.tokenAccount)).toBe(expected.get(u.name));
  });
});
