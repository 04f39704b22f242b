/**
 * Randomized lifecycles: creates, takes, closes, resolutions, voids and settlements over many
 * offers and takers, with clock moves. After every step: funds are conserved, the touched offer
 * and its positions are consistent and within limits, revisions only grow (and grow on every
 * fill and close). Every 100 steps and at the end, the vault equals what all offers still owe
 * plus every claim. Users sometimes close their recorded token account (moving the balance to a
 * new one), so payouts to it are credited to claims, which they sometimes withdraw.
 * RANDOM_ACTIONS (default 1200) and RANDOM_SEED select the run.
 */
import { describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { LAUNCH_LIMITS, parseOffersEvents } from "../../idl/client/offers";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import { outcome } from "../support/expect";
import { Rng } from "../../harness/random";

const ACTIONS = Number(process.env.RANDOM_ACTIONS ?? 1200);
const SEED = Number(process.env.RANDOM_SEED ?? 20261122);

interface Tracked {
  offer: PublicKey;
  contract: PublicKey;
  creator: User;
  takers: Set<User>;
  revision: bigint;
  open: boolean;
}

describe(`randomized offers lifecycle (${ACTIONS} actions, seed ${SEED})`, () => {
  it("keeps every invariant after every step", async () => {
    const rng = new Rng(SEED);
    const w = await OffersWorld.create();
    const users: User[] = [];
    for (let i = 0; i < 12; i++) users.push(await w.user(rng.big(50n, 5_000n) * UNIT));
    const initial = (await w.balances()).total;
    const contracts: PublicKey[] = [];
    const cutoffs = new Map<PublicKey, bigint>();
    /** Mostly pick among live items, sometimes among all, so late actions are tried too. */
    const live = async () => {
      const now = await w.chain.now();
      const l = contracts.filter((c) => cutoffs.get(c)! > now);
      return l.length && rng.chance(0.9) ? l : contracts;
    };
    const liveOffers = () => {
      const l = offers.filter((t) => t.open);
      return l.length && rng.chance(0.85) ? l : offers;
    };
    const offers: Tracked[] = [];
    const counts: Record<string, number> = {};
    let credits = 0;
    const credited = (logs: string[]) => {
      credits += parseOffersEvents(logs).filter((e) => e.name === "claimCredited").length;
    };
    const max = LAUNCH_LIMITS.maximumWagerMicros;

    const checkOffer = async (t: Tracked, grew: boolean) => {
      const a = await w.chain.account(t.offer);
      if (!a) return; // rent reclaimed
      const o = await w.offer(t.offer);
      expect(o.creatorAllocated <= o.creatorTotal).toBe(true);
      expect(o.takerFilled <= o.takerTarget).toBe(true);
      if (o.takerFilled === o.takerTarget) expect(o.creatorAllocated).toBe(o.creatorTotal);
      if (o.status === "Filled") expect(o.takerFilled).toBe(o.takerTarget);
      expect(grew ? o.revision > t.revision : o.revision === t.revision).toBe(true);
      t.revision = o.revision;
      t.open = o.status === "Open";
      let filled = 0n,
        allocated = 0n,
        settled = 0;
      for (const u of t.takers) {
        const p = await w.position(w.positionOf(t.offer, u));
        expect(p.takerAmount <= max).toBe(true);
        expect(p.takerAmount > 0n && p.creatorMatched > 0n).toBe(true);
        filled += p.takerAmount;
        allocated += p.creatorMatched;
        if (p.status !== "Open") settled++;
      }
      expect([filled, allocated, settled, t.takers.size]).toEqual([o.takerFilled, o.creatorAllocated, o.settledPositionCount, o.positionCount]);
    };

    /** The vault holds exactly the stakes not yet refunded or paid out. */
    const checkVault = async () => {
      let owed = 0n;
      for (const u of users) owed += (await w.claim(u.key.publicKey))?.amount ?? 0n;
      for (const t of offers) {
        const o = await w.offer(t.offer);
        owed += o.creatorTotal + o.takerFilled - o.creatorRefunded;
        for (const u of t.takers) {
          const p = await w.position(w.positionOf(t.offer, u));
          owed -= p.creatorPayout + p.takerPayout + p.fee;
        }
      }
      expect(await w.mint.balance(w.client.pda.vault()[0])).toBe(owed);
    };

    for (let step = 0; step < ACTIONS; step++) {
      const roll = rng.int(0, 99);
      let touched: Tracked | null = null;
      let action: string;
      let ok = false;
      if (contracts.length === 0 || roll < 4) {
        action = "contract";
        const cutoffIn = rng.big(600n, 14_400n);
        const c = await w.contract({ cutoffIn, deadlineAfterCutoff: rng.big(600n, 7_200n) });
        contracts.push(c);
        cutoffs.set(c, (await w.chain.now()) + cutoffIn);
        ok = true;
      } else if (roll < 30) {
        action = "create";
        const creator = rng.pick(users);
        const contract = rng.pick(await live());
        const total = rng.chance(0.9) ? rng.big(UNIT, 120n * UNIT) : rng.big(1n, 600n * UNIT);
        const target = rng.chance(0.9) ? (total * rng.big(2n, 50n)) / 10n : rng.big(1n, 2_000n * UNIT);
        const minTake = rng.chance(0.9) ? rng.big(UNIT, 5n * UNIT) : rng.big(0n, target + 1n);
        const { r, offer } = await w.createOffer(creator, contract, { side: rng.pick(["sideA", "sideB"] as const), total, target, minTake });
        ok = r.ok;
        if (ok) offers.push({ offer, contract, creator, takers: new Set(), revision: (await w.offer(offer)).revision, open: true });
        action += `:${outcome(r)}`;
      } else if (roll < 70 && offers.length) {
        touched = rng.pick(liveOffers());
        const taker = rng.pick(users);
        const o = (await w.chain.account(touched.offer)) ? await w.offer(touched.offer) : null;
        if (!o) {
          action = "take:gone";
        } else {
          const remaining = o.takerTarget - o.takerFilled;
          const amount = rng.chance(0.3) ? remaining : rng.big(0n, remaining > 0n ? remaining + UNIT : UNIT);
          const stale = rng.chance(0.05);
          const r = await w.take(taker, touched.offer, amount, stale ? o.revision - 1n : undefined);
          ok = r.ok;
          if (ok) touched.takers.add(taker);
          action = `take:${outcome(r)}`;
        }
      } else if (roll < 80 && offers.length) {
        touched = rng.pick(offers);
        const caller = rng.chance(0.6) ? touched.creator : rng.pick(users);
        if (!(await w.chain.account(touched.offer))) {
          action = "close:gone";
        } else {
          const r = await w.close(caller.key, touched.offer);
          ok = r.ok;
          credited(r.logs);
          action = `close:${outcome(r)}`;
        }
      } else if (roll < 86) {
        action = "clock";
        await w.chain.advance(rng.big(10n, 600n));
      } else if (roll < 87) {
        // A user closes its recorded token account: later payouts to it go to its claim.
        const u = rng.pick(users);
        u.token = await w.mint.closeAccount(u.token, u.key);
        action = "rotate";
      } else if (roll < 88) {
        const u = rng.pick(users);
        const had = (await w.claim(u.key.publicKey))?.amount ?? 0n;
        const r = await w.withdrawClaim(u.key, u.token);
        expect(r.ok).toBe(had > 0n);
        action = `withdraw:${outcome(r)}`;
      } else if (roll < 93 && contracts.length) {
        const contract = rng.pick(contracts);
        const r = await w.resolve(contract, rng.pick(["sideA", "sideB", "sideA", "sideB", "void"] as const));
        ok = r.ok;
        action = `resolve:${outcome(r)}`;
      } else if (offers.length) {
        // The service's crank: close what is past cutoff, then settle every open position.
        touched = rng.pick(offers);
        if (!(await w.chain.account(touched.offer))) {
          action = "settle:gone";
        } else {
          const o = await w.offer(touched.offer);
          if (o.status === "Open" && (await w.contractAccount(touched.contract)).status !== "Open") {
            const r = await w.close(rng.pick(users).key, touched.offer);
            expect(outcome(r)).toBe("ok");
            credited(r.logs);
            await checkOffer(touched, true);
          }
          action = "settle";
          for (const u of touched.takers) {
            const r = await w.settle(w.positionOf(touched.offer, u));
            credited(r.logs);
            action += `:${outcome(r)}`;
          }
        }
      } else {
        action = "noop";
      }
      counts[action.split(":").slice(0, 2).join(":")] = (counts[action.split(":").slice(0, 2).join(":")] ?? 0) + 1;
      expect((await w.balances()).total).toBe(initial);
      if (touched) await checkOffer(touched, ok && /^(take|close):ok/.test(action));
      if (step % 100 === 99) await checkVault();
    }
    await checkVault();
    // The run must have exercised the interesting paths, not only rejections.
    for (const k of ["create:ok", "take:ok", "close:ok", "resolve:ok", "contract"]) expect(counts[k] ?? 0, JSON.stringify(counts)).toBeGreaterThan(5);
    expect(Object.keys(counts).some((k) => k.startsWith("settle:ok"))).toBe(true);
    expect(counts["withdraw:ok"] ?? 0, JSON.stringify(counts)).toBeGreaterThan(0);
    expect(credits, "payouts credited to claims").toBeGreaterThan(0);
    console.log(`randomized: ${ACTIONS} actions, ${offers.length} offers, ${credits} claim credits`, counts);
  });
});
