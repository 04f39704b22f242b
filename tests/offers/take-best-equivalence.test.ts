/**
 * Model equivalence (issue 24): a take_best's effect equals the sequence of single take_offers
 * the rules derive for the same book, amount, limit and mode. Each round builds the same random
 * book twice (two contracts, the same creators and terms, the taker holding the same positions
 * on both), sweeps the first with one take_best and takes the second offer by offer with the
 * take_offers of `planTakeBest`'s fills; the offers, the taker's positions, the events and the
 * balances must move alike. Both engines.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { parseOffersEvents, type SideName } from "../../idl/client/offers";
import { planTakeBest, type TakeBestMode } from "../../idl/client/take-best-rules";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import { Rng } from "../../harness/random";
import { expectOk } from "../support/expect";

const ROUNDS = Number(process.env.TAKE_BEST_ROUNDS ?? 12);

let w: OffersWorld;
let creators: User[];
let taker: User;
beforeAll(async () => {
  w = await OffersWorld.create();
  creators = [await w.user(100_000n * UNIT), await w.user(100_000n * UNIT), await w.user(100_000n * UNIT)];
  taker = await w.user(100_000n * UNIT);
});

interface Terms {
  creator: User;
  side: SideName;
  total: bigint;
  target: bigint;
  minTake: bigint;
  /** Taken before the sweep: by the taker (its position), by another user, or closed. */
  before: { taker: bigint; other: bigint; closed: boolean };
}

function randomBook(rng: Rng): Terms[] {
  return Array.from({ length: rng.int(1, 8) }, () => {
    const target = rng.big(1n, 60n) * UNIT + (rng.chance(0.5) ? rng.big(0n, UNIT - 1n) : 0n);
    const scaled = (target * rng.big(2n, 40n)) / 10n;
    const total = scaled < UNIT ? UNIT : scaled;
    const minTake = rng.chance(0.5) ? UNIT : rng.big(UNIT, target < 10n * UNIT ? target : 10n * UNIT);
    const pre = (max: bigint) => (rng.chance(0.3) && max >= minTake ? rng.big(minTake, max) : 0n);
    const t = pre(target / 2n);
    const o = pre(target - t - (target - t) / 2n);
    return {
      creator: rng.pick(creators),
      side: rng.chance(0.85) ? "sideA" : "sideB",
      total,
      target,
      minTake,
      before: { taker: t, other: o, closed: rng.chance(0.1) },
    };
  });
}

/** The book on a fresh contract, in the state `terms` says. */
async function build(terms: Terms[], other: User): Promise<{ contract: PublicKey; offers: PublicKey[] }> {
  const contract = await w.contract({ cutoffIn: 10_000n });
  const offers: PublicKey[] = [];
  for (const t of terms) {
    const { r, offer } = await w.createOffer(t.creator, contract, { side: t.side, total: t.total, target: t.target, minTake: t.minTake });
    expectOk(r);
    if (t.before.taker) expectOk(await w.take(taker, offer, t.before.taker));
    if (t.before.other) expectOk(await w.take(other, offer, t.before.other));
    if (t.before.closed) expectOk(await w.close(t.creator.key, offer));
    offers.push(offer);
  }
  return { contract, offers };
}

/** What the taker's sweep changed, per offer of the list and in all, comparable across the two books. */
async function effect(offers: PublicKey[], run: () => Promise<string[][]>) {
  const before = await w.balanceOf(taker.token);
  const logs = await run();
  const rows = [];
  for (const o of offers) {
    const { takerFilled, creatorAllocated, revision, status, fillCount, positionCount } = await w.offer(o);
    const p = await w.chain.account(w.positionOf(o, taker));
    const pos = p ? await w.position(w.positionOf(o, taker)) : null;
    rows.push({
      takerFilled,
      creatorAllocated,
      revision,
      status,
      fillCount,
      positionCount,
      position: pos && { amount: pos.takerAmount, matched: pos.creatorMatched, fills: pos.fillCount },
    });
  }
  const events = logs
    .flatMap((l) => parseOffersEvents(l))
    .map((e) => {
      const d = e.data as Record<string, { toString(): string }>;
      return [
        e.name,
        offers.findIndex((o) => o.toBase58() === d.offer.toString()),
        ...["takeAmount", "creatorMatched", "takerFilled", "creatorAllocated", "revision"].map((k) => d[k].toString()),
      ];
    });
  return { paid: before - (await w.balanceOf(taker.token)), rows, events };
}

describe("take_best = the single take_offers the rules derive", () => {
  it(`agrees on ${ROUNDS} random books, limits and modes`, async () => {
    const rng = new Rng(2424);
    const other = await w.user(100_000n * UNIT);
    let taken = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const terms = randomBook(rng);
      const [a, b] = [await build(terms, other), await build(terms, other)];
      const sweep = {
        side: "sideB" as SideName,
        amount: rng.big(1n, 200n) * UNIT + (rng.chance(0.3) ? rng.big(1n, UNIT) : 0n),
        worstOdds: rng.chance(0.3) ? { numerator: 1n, denominator: 1n } : { numerator: rng.big(10n, 40n), denominator: 10n },
        mode: (rng.chance(0.3) ? "fill-or-kill" : "fill-and-kill") as TakeBestMode,
      };
      const k = await w.contractAccount(a.contract);
      const book = await Promise.all(
        a.offers.map(async (o, i) => {
          const x = await w.offer(o);
          return { ...x, address: o.toBase58(), creator: x.creator.toBase58(), contract: x.contract.toBase58(), held: terms[i].before.taker };
        }),
      );
      const plan = planTakeBest(book, {
        ...sweep,
        taker: taker.key.publicKey.toBase58(),
        maximumWager: (await w.config()).limits.maximumWagerMicros,
        contract: { address: a.contract.toBase58(), status: k.status, cutoffAt: k.cutoffAt },
        now: await w.chain.now(),
      });
      const viaBest = await effect(a.offers, async () => {
        const r = await w.takeBest(taker, a.contract, a.offers, sweep.amount, sweep);
        expect(r.ok).toBe(plan.error === null);
        // A failed transaction's log still shows the events emitted before it failed; nothing of it stands.
        return r.ok ? [r.logs] : [];
      });
      const viaSingles = await effect(b.offers, async () => {
        if (plan.error) return [];
        const logs: string[][] = [];
        for (const [i, f] of plan.fills.entries()) {
          if (!("take" in f)) continue;
          const r = await w.take(taker, b.offers[i], f.take);
          expectOk(r);
          logs.push(r.logs);
        }
        return logs;
      });
      const why = JSON.stringify({ round, book: terms.map((t) => ({ ...t, creator: creators.indexOf(t.creator) })), sweep, plan }, (_k, v) =>
        typeof v === "bigint" ? String(v) : v,
      );
      expect(viaBest, why).toEqual(viaSingles);
      expect(viaBest.paid).toBe(plan.error ? 0n : plan.taken);
      if (!plan.error) taken++;
    }
    expect(taken).toBeGreaterThan(ROUNDS / 3);
  });
});
