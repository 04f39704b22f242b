/**
 * Randomized pool lifecycles: creates, picks, clock moves (seconds to days), proposals by the
 * creator (and by others), votes and disputes, resolutions and escalations, the authority's
 * decisions and cancels, cancels, settlements and refunds, token accounts re-owned by their
 * owner (so payouts land in claims) and claim withdrawals, over many pools and users. A model in
 * the test predicts the result of every action (success or the named error) and every payout.
 * After every step: funds are conserved (users + vault + treasury + what re-owned accounts took
 * away = everything minted), the vault holds exactly what all pools still owe plus every open claim, and every
 * pool's per-outcome totals, wager counts, participant count, vote weights, proposal, escalation
 * and state equal the model's, with each outcome's share in bps derivable exactly from the totals.
 * RANDOM_ACTIONS (default 1200) and RANDOM_SEED select the run.
 */
import { describe, expect, it } from "vitest";
import { Keypair, type PublicKey } from "@solana/web3.js";
import { AuthorityType, createSetAuthorityInstruction } from "@solana/spl-token";
import { PoolsWorld, UNIT, type User } from "../../harness/pools-world";
import { expectOk, outcome } from "../support/expect";
import { Rng } from "../../harness/random";
import { AUTHORITY_DEADLINE_SECONDS, CANCEL_OUTCOME, DISPUTE_WINDOW_SECONDS, POOLS_ERRORS, PROPOSAL_DEADLINE_SECONDS } from "../../idl/client/pools";
import { shareBps } from "../../idl/client/pools-rules";

const ACTIONS = Number(process.env.RANDOM_ACTIONS ?? 1200);
const SEED = Number(process.env.RANDOM_SEED ?? 20261122);
const FEE = 300n;
const HOUR = 3_600n;

type St = "OPEN" | "RESOLVING" | "RESOLVED" | "DISTRIBUTED" | "CANCELED" | "REFUNDED";
interface Part {
  stakes: bigint[];
  total: bigint;
  voted: boolean;
  settled: boolean;
  token: PublicKey;
}
interface M {
  pool: PublicKey;
  creator: User;
  n: number;
  closesAt: bigint;
  resolutionAt: bigint;
  state: St;
  proposed: number | null;
  voteEndsAt: bigint;
  disputes: number;
  voters: number;
  escalated: boolean;
  escalatedAt: bigint;
  totals: bigint[];
  counts: number[];
  votes: bigint[];
  parts: Map<User, Part>;
  winner: number | null;
  paidOut: bigint;
  fees: bigint;
  settled: number;
}

describe(`randomized pools (${ACTIONS} actions, seed ${SEED})`, () => {
  it("keeps every invariant after every step", async () => {
    const rng = new Rng(SEED);
    const w = await PoolsWorld.create({ feeBps: Number(FEE) });
    const users: User[] = [];
    const bal = new Map<User, bigint>();
    const claims = new Map<User, bigint>();
    for (let i = 0; i < 14; i++) {
      const b = rng.big(300n, 3_000n) * UNIT;
      const u = await w.user(b);
      users.push(u);
      bal.set(u, b);
    }
    let initial = (await w.balances()).total;
    /** Tokens that left the modelled accounts with a re-owned token account. */
    let gone = 0n;
    const pools: M[] = [];
    const tally: Record<string, number> = {};
    let now = await w.chain.now();

    const settledError = (m: M) =>
      ["RESOLVED", "DISTRIBUTED"].includes(m.state) ? "AlreadyResolved" : ["CANCELED", "REFUNDED"].includes(m.state) ? "AlreadyCanceled" : null;
    const proposalDeadline = (m: M) => (m.resolutionAt > m.closesAt ? m.resolutionAt : m.closesAt) + PROPOSAL_DEADLINE_SECONDS;
    const authorityDeadline = (m: M) => m.escalatedAt + AUTHORITY_DEADLINE_SECONDS;
    const escalate = (m: M) => {
      m.state = "RESOLVING";
      m.escalated = true;
      m.escalatedAt = now;
    };
    /** Mostly pools where the action can succeed, sometimes any pool, so rejections are tried too. */
    const choose = (ok: (m: M) => boolean) => {
      const l = pools.filter(ok);
      return rng.pick(l.length && rng.chance(0.85) ? l : pools);
    };
    /** A participant's payout: to its recorded token account while its owner still holds it, else to its claim. */
    const credit = (u: User, p: Part, amount: bigint) => {
      if (amount === 0n) return;
      if (p.token.equals(u.token)) bal.set(u, bal.get(u)! + amount);
      else claims.set(u, (claims.get(u) ?? 0n) + amount);
    };

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
      expect([p.proposedOutcome, p.voteEndsAt, p.disputeCount, p.voterCount, p.escalated, p.escalatedAt]).toEqual([
        m.proposed,
        m.voteEndsAt,
        m.disputes,
        m.voters,
        m.escalated,
        m.escalated ? m.escalatedAt : 0n,
      ]);
      expect([p.paidOut, p.feesPaid]).toEqual([m.paidOut, m.fees]);
      // Largest remainder: each share is its floor or one more, and they sum to 10000 exactly.
      const shares = shareBps(p.outcomes.map((o) => o.totalOi));
      shares.forEach((s, i) => {
        const floor = total === 0n ? 0n : (m.totals[i] * 10_000n) / total;
        expect(BigInt(s) - floor === 0n || BigInt(s) - floor === 1n).toBe(true);
      });
      expect(shares.reduce((a, x) => a + x, 0)).toBe(total === 0n ? 0 : 10_000);
    };
    const checkClaim = async (u: User) => {
      expect((await w.claim(u.key.publicKey))?.amount ?? 0n).toBe(claims.get(u) ?? 0n);
    };
    /** Conservation, every balance as modelled, and the vault equal to what all pools and claims still owe. */
    const check = async (touched: M | undefined, user: User | undefined, all: boolean) => {
      const b = await w.balances();
      expect(b.total + gone).toBe(initial);
      users.forEach((u, i) => expect(b.users[i]).toBe(bal.get(u)));
      const owed = pools.reduce((a, m) => a + m.totals.reduce((x, y) => x + y, 0n) - m.paidOut - m.fees, 0n);
      expect(b.vault).toBe(owed + [...claims.values()].reduce((a, x) => a + x, 0n));
      for (const m of all ? pools : touched ? [touched] : []) await checkPool(m);
      for (const u of all ? users : user ? [user] : []) await checkClaim(u);
    };

    for (let step = 0; step < ACTIONS; step++) {
      const roll = rng.int(0, 99);
      let kind: string, expected: string, r, touched: M | undefined, user: User | undefined;
      let after: () => void = () => {};
      if (roll < 7 || pools.length < 3) {
        kind = "create";
        const creator = rng.pick(users);
        const n = rng.chance(0.5) ? 2 : rng.int(3, 8);
        const closesAt = now + rng.big(100n, 1_500n);
        const resolutionAt = rng.chance(0.3) ? closesAt + rng.big(0n, 2n * HOUR) : 0n;
        const labels = n === 2 && rng.chance(0.5) ? undefined : Array.from({ length: n }, (_, i) => `O${i}`);
        const res = await w.createPool(creator, { labels, outcomeCount: n, closesAt, resolutionAt });
        r = res.r;
        expected = "ok";
        after = () =>
          void pools.push(
            (touched = {
              pool: res.pool,
              creator,
              n,
              closesAt,
              resolutionAt,
              state: "OPEN",
              proposed: null,
              voteEndsAt: 0n,
              disputes: 0,
              voters: 0,
              escalated: false,
              escalatedAt: 0n,
              totals: Array(n).fill(0n),
              counts: Array(n).fill(0),
              votes: Array(n).fill(0n),
              parts: new Map(),
              winner: null,
              paidOut: 0n,
              fees: 0n,
              settled: 0,
            }),
          );
      } else if (roll < 42) {
        kind = "pick";
        const m = (touched = choose((x) => x.state === "OPEN" && now < x.closesAt));
        const u = (user = rng.pick(users));
        const o = rng.int(0, m.n - 1);
        const amount = rng.chance(0.1) ? rng.big(1n, 999n) : rng.big(1n, 40n) * UNIT + rng.big(0n, 999_999n);
        r = await w.pick(u, m.pool, o, amount);
        expected = m.state !== "OPEN" ? "PoolNotOpen" : now >= m.closesAt ? "PoolClosed" : bal.get(u)! < amount ? "InsufficientBalance" : "ok";
        after = () => {
          m.totals[o] += amount;
          m.counts[o]++;
          const p = m.parts.get(u) ?? { stakes: Array(m.n).fill(0n), total: 0n, voted: false, settled: false, token: u.token };
          p.stakes[o] += amount;
          p.total += amount;
          m.parts.set(u, p);
          bal.set(u, bal.get(u)! - amount);
        };
      } else if (roll < 53) {
        kind = "advance";
        const x = rng.int(0, 99);
        now +=
          x < 75 ? rng.big(5n, 120n) : x < 90 ? DISPUTE_WINDOW_SECONDS / 2n : x < 97 ? DISPUTE_WINDOW_SECONDS + rng.big(0n, HOUR) : 4n * DISPUTE_WINDOW_SECONDS;
        await w.chain.setTime(now);
        expected = "ok";
        r = null;
      } else if (roll < 61) {
        kind = "propose";
        const m = (touched = choose((x) => x.state === "OPEN" && now >= x.closesAt && now >= x.resolutionAt && now < proposalDeadline(x) && x.parts.size > 0));
        const caller = rng.chance(0.9) ? m.creator : rng.pick(users);
        const o = rng.chance(0.05) ? m.n : rng.int(0, m.n - 1);
        r = await w.propose(caller.key, m.pool, o);
        expected =
          caller !== m.creator
            ? "NotCreator"
            : m.state === "RESOLVING"
              ? "AlreadyProposed"
              : (settledError(m) ??
                (now < m.closesAt
                  ? "PoolStillOpen"
                  : now < m.resolutionAt
                    ? "ResolutionTimeNotReached"
                    : now >= proposalDeadline(m)
                      ? "ProposalDeadlinePassed"
                      : m.parts.size === 0
                        ? "NoParticipants"
                        : o >= m.n
                          ? "InvalidOutcome"
                          : "ok"));
        after = () => {
          m.state = "RESOLVING";
          m.proposed = o;
          m.voteEndsAt = now + DISPUTE_WINDOW_SECONDS;
        };
      } else if (roll < 73) {
        kind = "vote";
        const m = (touched = choose((x) => x.state === "RESOLVING" && now < x.voteEndsAt));
        const u = rng.chance(0.85) && m.parts.size ? rng.pick([...m.parts.keys()]) : rng.pick(users);
        // Mostly confirmations of the proposal, sometimes disputes.
        const o = m.proposed !== null && rng.chance(0.7) ? m.proposed : rng.int(0, m.n - 1);
        r = await w.vote(u, m.pool, o);
        const p = m.parts.get(u);
        expected = !p
          ? "NotParticipant"
          : m.state !== "RESOLVING"
            ? "NotResolving"
            : now >= m.voteEndsAt
              ? "VoteWindowClosed"
              : p.voted
                ? "AlreadyVoted"
                : "ok";
        after = () => {
          p!.voted = true;
          m.votes[o] += p!.total;
          m.voters++;
          if (o !== m.proposed) m.disputes++;
        };
      } else if (roll < 80) {
        kind = "resolve";
        const m = (touched = choose((x) => (x.state === "RESOLVING" && !x.escalated) || (x.state === "OPEN" && now >= proposalDeadline(x))));
        r = await w.resolve(rng.pick(users).key, m.pool);
        if (m.state === "OPEN") {
          expected = m.parts.size === 0 ? "NoParticipants" : now < proposalDeadline(m) ? "ProposalDeadlineNotPassed" : "ok";
          after = () => escalate(m);
        } else if (m.state === "RESOLVING") {
          expected = m.escalated ? "EscalationPending" : now < m.voteEndsAt && m.voters < m.parts.size ? "DisputeWindowOpen" : "ok";
          after = () => {
            if (m.disputes > 0) escalate(m);
            else {
              m.state = "RESOLVED";
              m.winner = m.proposed;
            }
          };
        } else expected = settledError(m)!;
      } else if (roll < 84) {
        kind = "authority";
        const m = (touched = choose((x) => x.state === "RESOLVING" && x.escalated && now < authorityDeadline(x)));
        const asAuthority = rng.chance(0.9);
        const o = rng.chance(0.25) ? CANCEL_OUTCOME : rng.chance(0.05) ? m.n : rng.int(0, m.n - 1);
        r = await w.authorityResolve(m.pool, o, asAuthority ? w.authority : rng.pick(users).key);
        expected = !asAuthority
          ? "Unauthorized"
          : m.state !== "RESOLVING" || !m.escalated
            ? "NotEscalated"
            : now >= authorityDeadline(m)
              ? "AuthorityDeadlinePassed"
              : o !== CANCEL_OUTCOME && o >= m.n
                ? "InvalidOutcome"
                : "ok";
        after = () => {
          if (o === CANCEL_OUTCOME) m.state = "CANCELED";
          else {
            m.state = "RESOLVED";
            m.winner = o;
          }
        };
      } else if (roll < 88) {
        kind = "cancel";
        const m = (touched = choose((x) => x.state === "OPEN" || x.state === "RESOLVING"));
        const caller = rng.chance(0.5) ? m.creator : rng.pick(users);
        r = await w.cancel(caller.key, m.pool);
        expected =
          settledError(m) ??
          (now < m.closesAt
            ? caller === m.creator
              ? "ok"
              : "CancelNotAllowed"
            : m.escalated
              ? now < authorityDeadline(m)
                ? "EscalationPending"
                : "ok"
              : m.parts.size === 0
                ? "ok"
                : "CancelNotAllowed");
        after = () => {
          m.state = m.parts.size === 0 ? "REFUNDED" : "CANCELED";
        };
      } else if (roll < 90) {
        // The user re-owns its token account (as owners may): those tokens leave the model, and
        // the user goes on with a fresh, funded account; payouts recorded to the old one go to its claim.
        kind = "reown";
        const u = (user = rng.pick(users));
        const ix = createSetAuthorityInstruction(u.token, u.key.publicKey, AuthorityType.AccountOwner, Keypair.generate().publicKey);
        expectOk(await w.send([ix], [u.key]));
        gone += bal.get(u)!;
        const fresh = rng.big(300n, 3_000n) * UNIT;
        u.token = await w.mint.account(u.key.publicKey, fresh);
        initial += fresh;
        bal.set(u, fresh);
        expected = "ok";
        r = null;
      } else if (roll < 92) {
        kind = "withdraw";
        const withClaims = users.filter((u) => (claims.get(u) ?? 0n) > 0n);
        const u = (user = withClaims.length && rng.chance(0.85) ? rng.pick(withClaims) : rng.pick(users));
        r = await w.withdrawClaim(u);
        const c = claims.get(u) ?? 0n;
        expected = c > 0n ? "ok" : "WrongAccountOwner";
        after = () => {
          bal.set(u, bal.get(u)! + c);
          claims.delete(u);
        };
      } else {
        kind = rng.chance(0.5) ? "settle" : "refund";
        const ends = pools.filter((m) => m.parts.size > 0 && (m.state === "RESOLVED" || m.state === "CANCELED"));
        const withParts = ends.length && rng.chance(0.85) ? ends : pools.filter((m) => m.parts.size > 0);
        if (!withParts.length) {
          step--;
          continue;
        }
        const m = (touched = rng.pick(withParts));
        const u = (user = rng.pick([...m.parts.keys()]));
        const p = m.parts.get(u)!;
        if (kind === "settle") {
          r = await w.settle(m.pool, u.key.publicKey);
          expected = m.state === "DISTRIBUTED" ? "AlreadyDistributed" : m.state !== "RESOLVED" ? "NotResolved" : p.settled ? "AlreadySettled" : "ok";
          after = () => {
            const total = m.totals.reduce((a, b) => a + b, 0n);
            const wt = m.totals[m.winner!];
            let pay: bigint,
              fee = 0n;
            if (wt === 0n) pay = p.total;
            else {
              const stake = p.stakes[m.winner!];
              const gross = (stake * total) / wt;
              fee = ((gross - stake) * FEE) / 10_000n;
              pay = gross - fee;
            }
            p.settled = true;
            m.settled++;
            m.paidOut += pay;
            m.fees += fee;
            credit(u, p, pay);
            if (m.settled === m.parts.size) {
              m.fees = total - m.paidOut;
              m.state = wt === 0n ? "REFUNDED" : "DISTRIBUTED";
            }
          };
        } else {
          r = await w.refund(m.pool, u.key.publicKey);
          expected = m.state === "REFUNDED" ? "AlreadyRefunded" : m.state !== "CANCELED" ? "NotCanceled" : p.settled ? "AlreadySettled" : "ok";
          after = () => {
            p.settled = true;
            m.settled++;
            m.paidOut += p.total;
            credit(u, p, p.total);
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
      await check(touched, user, step % 100 === 99);
    }
    await check(undefined, undefined, true);
    console.log(`pools: ${pools.length}; actions by result:`, JSON.stringify(tally));
    expect(Object.entries(tally).filter(([k]) => k.endsWith(" ok")).length).toBeGreaterThanOrEqual(12);
  });
});
