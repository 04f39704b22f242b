/**
 * Randomized pool lifecycles: creates, picks, clock moves, vote openings, votes, resolutions,
 * cancels, settlements and refunds over many pools and users. A model in the test predicts the
 * result of every action (success or the named error) and every payout. After every step: funds
 * are conserved (users + vault + treasury), the vault holds exactly what all pools still owe,
 * and every pool's per-outcome totals, wager counts, participant count, vote weights and state
 * equal the model's, with each outcome's share in bps derivable exactly from the totals.
 * RANDOM_ACTIONS (default 1200) and RANDOM_SEED select the run.
 */
import { describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { PoolsWorld, UNIT, type User } from "../harness/pools-world";
import { outcome } from "../harness/expect";
import { Rng } from "../harness/random";
import { POOLS_ERRORS, sharesBps, VOTE_WINDOW_SECONDS } from "../../idl/client/pools";

const ACTIONS = Number(process.env.RANDOM_ACTIONS ?? 1200);
const SEED = Number(process.env.RANDOM_SEED ?? 20261122);
const FEE = 300n;

type St = "OPEN" | "RESOLVING" | "RESOLVED" | "DISTRIBUTED" | "CANCELED" | "REFUNDED";
interface Part { stakes: bigint[]; total: bigint; voted: boolean; settled: boolean }
interface M {
  pool: PublicKey; creator: User; n: number; closesAt: bigint; state: St; voteEndsAt: bigint;
  totals: bigint[]; counts: number[]; votes: bigint[]; parts: Map<User, Part>; winner: number | null;
  paidOut: bigint; fees: bigint; settled: number;
}

describe(`randomized pools (${ACTIONS} actions, seed ${SEED})`, () => {
  it("keeps every invariant after every step", async () => {
    const rng = new Rng(SEED);
    const w = await PoolsWorld.create({ feeBps: Number(FEE) });
    const users: User[] = [];
    const bal = new Map<User, bigint>();
    for (let i = 0; i < 14; i++) {
      const b = rng.big(300n, 3_000n) * UNIT;
      const u = await w.user(b);
      users.push(u);
      bal.set(u, b);
    }
    const initial = (await w.balances()).total;
    const pools: M[] = [];
    const tally: Record<string, number> = {};
    let now = await w.chain.now();

    const verdict = (m: M): number | string => {
      let leader = 0, best = 0n, tied = false;
      for (let i = 0; i < m.n; i++) {
        if (m.votes[i] > best) [leader, best, tied] = [i, m.votes[i], false];
        else if (m.votes[i] === best) tied = true;
      }
      const total = m.totals.reduce((a, b) => a + b, 0n);
      if (best > total / 2n) return leader;
      if (now < m.voteEndsAt) return "VoteWindowOpen";
      const cast = m.votes.reduce((a, b) => a + b, 0n);
      if (total * 5000n > cast * 10_000n || best === 0n) return "QuorumNotReached";
      if (tied) return "VoteTied";
      return leader;
    };
    /** Mostly pools where the action can succeed, sometimes any pool, so rejections are tried too. */
    const choose = (ok: (m: M) => boolean) => { const l = pools.filter(ok); return rng.pick(l.length && rng.chance(0.85) ? l : pools); };

    const checkPool = async (m: M) => {
        const p = await w.pool(m.pool);
        expect(p.state).toBe(m.state);
        expect(p.outcomes.map((o) => o.totalOi)).toEqual(m.totals);
        expect(p.outcomes.map((o) => o.wagerCount)).toEqual(m.counts);
        expect(p.outcomes.map((o) => o.voteWeight)).toEqual(m.votes);
        const total = m.totals.reduce((a, x) => a + x, 0n);
        expect(p.totalOi).toBe(total);
        expect(p.participantCount).toBe(m.parts.size);
        expect(p.settledCount).toBe(m.settled);
        expect(p.winningOutcome).toBe(m.winner);
        expect([p.paidOut, p.feesPaid]).toEqual([m.paidOut, m.fees]);
        const shares = sharesBps(p);
        shares.forEach((s, i) => expect(BigInt(s)).toBe(total === 0n ? 0n : (m.totals[i] * 10_000n) / total));
        const sum = shares.reduce((a, x) => a + x, 0);
        if (total > 0n) expect(sum > 10_000 - m.n && sum <= 10_000).toBe(true);
    };
    /** Conservation, every balance as modelled, and the vault equal to what all pools still owe. */
    const check = async (touched: M | undefined, all: boolean) => {
      const b = await w.balances();
      expect(b.total).toBe(initial);
      users.forEach((u, i) => expect(b.users[i]).toBe(bal.get(u)));
      const owed = pools.reduce((a, m) => a + m.totals.reduce((x, y) => x + y, 0n) - m.paidOut - m.fees, 0n);
      expect(b.vault).toBe(owed);
      for (const m of all ? pools : touched ? [touched] : []) await checkPool(m);
    };

    for (let step = 0; step < ACTIONS; step++) {
      const roll = rng.int(0, 99);
      let kind: string, expected: string, r, touched: M | undefined;
      let after: () => void = () => {};
      if (roll < 7 || pools.length < 3) {
        kind = "create";
        const creator = rng.pick(users);
        const n = rng.chance(0.5) ? 2 : rng.int(3, 8);
        const closesAt = now + rng.big(100n, 1_500n);
        const labels = n === 2 && rng.chance(0.5) ? undefined : Array.from({ length: n }, (_, i) => `O${i}`);
        const res = await w.createPool(creator, { labels, outcomeCount: n, closesAt });
        r = res.r;
        expected = "ok";
        after = () => void pools.push(touched = { pool: res.pool, creator, n, closesAt, state: "OPEN", voteEndsAt: 0n, totals: Array(n).fill(0n), counts: Array(n).fill(0), votes: Array(n).fill(0n), parts: new Map(), winner: null, paidOut: 0n, fees: 0n, settled: 0 });
      } else if (roll < 45) {
        kind = "pick";
        const m = touched = choose((x) => x.state === "OPEN" && now < x.closesAt);
        const u = rng.pick(users);
        const o = rng.int(0, m.n - 1);
        const amount = rng.chance(0.1) ? rng.big(1n, 999n) : rng.big(1n, 40n) * UNIT + rng.big(0n, 999_999n);
        r = await w.pick(u, m.pool, o, amount);
        expected = m.state !== "OPEN" ? "PoolNotOpen" : now >= m.closesAt ? "PoolClosed" : bal.get(u)! < amount ? "InsufficientBalance" : "ok";
        after = () => {
          m.totals[o] += amount; m.counts[o]++;
          const p = m.parts.get(u) ?? { stakes: Array(m.n).fill(0n), total: 0n, voted: false, settled: false };
          p.stakes[o] += amount; p.total += amount; m.parts.set(u, p);
          bal.set(u, bal.get(u)! - amount);
        };
      } else if (roll < 56) {
        kind = "advance";
        now += rng.chance(0.15) ? VOTE_WINDOW_SECONDS / 2n : rng.big(5n, 120n);
        await w.chain.setTime(now);
        expected = "ok";
        r = null;
      } else if (roll < 64) {
        kind = "startVote";
        const m = touched = choose((x) => x.state === "OPEN" && now >= x.closesAt && x.parts.size > 0);
        r = await w.startVote(rng.pick(users).key, m.pool);
        expected = m.state !== "OPEN" ? "PoolNotOpen" : now < m.closesAt ? "PoolStillOpen" : m.parts.size === 0 ? "NoParticipants" : "ok";
        after = () => { m.state = "RESOLVING"; m.voteEndsAt = now + VOTE_WINDOW_SECONDS; };
      } else if (roll < 76) {
        kind = "vote";
        const m = touched = choose((x) => x.state === "RESOLVING" && now < x.voteEndsAt);
        const u = rng.chance(0.85) && m.parts.size ? rng.pick([...m.parts.keys()]) : rng.pick(users);
        const o = rng.int(0, m.n - 1);
        r = await w.vote(u, m.pool, o);
        const p = m.parts.get(u);
        expected = !p ? "NotParticipant" : m.state !== "RESOLVING" ? "NotResolving" : now >= m.voteEndsAt ? "VoteWindowClosed" : p.voted ? "AlreadyVoted" : "ok";
        after = () => { p!.voted = true; m.votes[o] += p!.total; };
      } else if (roll < 82) {
        kind = "resolve";
        const m = touched = choose((x) => x.state === "RESOLVING");
        r = await w.resolve(rng.pick(users).key, m.pool);
        const v = m.state === "RESOLVING" ? verdict(m) : "NotResolving";
        expected = typeof v === "number" ? "ok" : v;
        after = () => { m.state = "RESOLVED"; m.winner = v as number; };
      } else if (roll < 87) {
        kind = "cancel";
        const m = touched = choose((x) => x.state === "OPEN" || x.state === "RESOLVING");
        const caller = rng.chance(0.5) ? m.creator : rng.pick(users);
        r = await w.cancel(caller.key, m.pool);
        const failedVote = m.state === "RESOLVING" && now >= m.voteEndsAt && typeof verdict(m) === "string";
        expected = ["RESOLVED", "DISTRIBUTED"].includes(m.state) ? "AlreadyResolved" : ["CANCELED", "REFUNDED"].includes(m.state) ? "AlreadyCanceled"
          : caller !== m.creator && !failedVote ? "CancelNotAllowed" : "ok";
        after = () => { m.state = m.parts.size === 0 ? "REFUNDED" : "CANCELED"; };
      } else {
        kind = rng.chance(0.5) ? "settle" : "refund";
        const ends = pools.filter((m) => m.parts.size > 0 && (m.state === "RESOLVED" || m.state === "CANCELED"));
        const withParts = ends.length && rng.chance(0.85) ? ends : pools.filter((m) => m.parts.size > 0);
        if (!withParts.length) { step--; continue; }
        const m = touched = rng.pick(withParts);
        const u = rng.pick([...m.parts.keys()]);
        const p = m.parts.get(u)!;
        if (kind === "settle") {
          r = await w.settle(m.pool, u.key.publicKey);
          expected = m.state === "DISTRIBUTED" ? "AlreadyDistributed" : m.state !== "RESOLVED" ? "NotResolved" : p.settled ? "AlreadySettled" : "ok";
          after = () => {
            const total = m.totals.reduce((a, b) => a + b, 0n);
            const wt = m.totals[m.winner!];
            let pay: bigint, fee = 0n;
            if (wt === 0n) pay = p.total;
            else {
              const stake = p.stakes[m.winner!];
              const gross = (stake * total) / wt;
              fee = ((gross - stake) * FEE) / 10_000n;
              pay = gross - fee;
            }
            p.settled = true; m.settled++; m.paidOut += pay; m.fees += fee;
            bal.set(u, bal.get(u)! + pay);
            if (m.settled === m.parts.size) { m.fees = total - m.paidOut; m.state = wt === 0n ? "REFUNDED" : "DISTRIBUTED"; }
          };
        } else {
          r = await w.refund(m.pool, u.key.publicKey);
          expected = m.state === "REFUNDED" ? "AlreadyRefunded" : m.state !== "CANCELED" ? "NotCanceled" : p.settled ? "AlreadySettled" : "ok";
          after = () => {
            p.settled = true; m.settled++; m.paidOut += p.total;
            bal.set(u, bal.get(u)! + p.total);
            if (m.settled === m.parts.size) m.state = "REFUNDED";
          };
        }
      }
      if (r) {
        const got = outcome(r, POOLS_ERRORS);
        expect(`${step} ${kind} ${got}`, r.logs.join("\n")).toBe(`${step} ${kind} ${expected}`);
        if (got === "ok") after();
      }
      tally[`${kind} ${expected}`] = (tally[`${kind} ${expected}`] ?? 0) + 1;
      await check(touched, step % 100 === 99);
    }
    await check(undefined, true);
    console.log(`pools: ${pools.length}; actions by result:`, JSON.stringify(tally));
    expect(Object.entries(tally).filter(([k]) => k.endsWith(" ok")).length).toBeGreaterThanOrEqual(8);
  });
});
