/**
 * Attacker-model fuzzer of the pools program (issue #10 "What must be shown", moves of #15).
 *
 * Every pool has a true outcome (known to the model). Honest users create pools, pick, propose
 * the truth as creators (some forget: the pool escalates after 72 h), vote the truth, and dispute
 * a false proposal before its window ends (the design's one liveness assumption: a participant
 * disputes a false proposal within 24 h); they move to new token accounts and withdraw claims.
 * The service's authority decides escalated pools truthfully (or cancels, or lets its 7 days
 * lapse so anyone cancels); its crank resolves, settles, refunds and cancels what is due.
 *
 * The attacker plays: its own pools (proposing a false outcome, the truth, or nothing), picks
 * in any pool, late large stakes right before the close on the outcome it likes, votes and
 * disputes to its own advantage, cranks with itself paying claim rent. And attacks:
 * initialize_config at every bump of ["config"] / ["vault"] as a non-upgrade-authority;
 * Config-shaped accounts planted at other addresses passed to every instruction taking a config
 * (authority_resolve with itself as authority included); lamports to future PDAs of honest
 * users (pools at their next nonce, participants, claims); its recorded token account closed,
 * re-opened (same address, its worthless mint, another owner) or re-owned before settlements and
 * refunds; pools re-created with a used nonce; withdrawals of honest users' claims; donations to
 * the vault; every instruction with accounts drawn from everything that exists (other users'
 * participants, non-canonical PDAs, the offers program's accounts, its own, vault, treasury,
 * duplicates), writable flags flipped and arguments bent.
 *
 * Every successful transaction's effect on the accounts it touched is checked against the rules
 * (signers, clock, proposal / dispute / escalation / authority deadlines) and applied to the
 * model with the model's own arithmetic; a pool with an honest participant must never resolve to
 * anything but its truth (or be canceled and refunded). After every step: the vault equals what
 * the model owes + claims + donations, honest users' tokens plus claims equal the model's, the
 * treasury equals the modelled fees (rounding dust included), the attacker never holds more than
 * the rules give it, the config and the offers vault never change; every honest action the model
 * allows succeeds. The run ends by deciding every pool and paying everyone: the model owes 0.
 */
import { describe, expect, it } from "vitest";
import { PublicKey } from "@solana/web3.js";
import { POOLS_PROGRAM_ID, SYSTEM_PROGRAM, TOKEN_PROGRAM, type RawParticipant, type RawPool } from "../../../idl/client/pools";
import type { AccountMap, Actor, Closed, FuzzContext, Sent, Step } from "../../support/attacker";
import { allBumps, attackerWorldOf, buildIx, canReceive, FUZZ_ACTIONS, FUZZ_TIMEOUT_MS, fuzzTitle, u64le } from "../../support/attacker";

const UNIT = 1_000_000n;
const FEE_BPS = 500;
const DAY = 86_400n;
const DISPUTE_WINDOW = DAY;
const PROPOSAL_DEADLINE = 72n * 3_600n;
const AUTHORITY_DEADLINE = 7n * DAY;
// Upper bounds of a new pool's times (a creator cannot lock stakes for ever).
const MAX_OPEN = 366n * DAY;
const MAX_RESOLUTION_DELAY = 30n * DAY;
const NONE = 255;

// States (programs/pools/src/state.rs).
const OPEN = 0,
  RESOLVING = 1,
  RESOLVED = 2,
  DISTRIBUTED = 3,
  CANCELED = 4,
  REFUNDED = 5;
const STATE = ["OPEN", "RESOLVING", "RESOLVED", "DISTRIBUTED", "CANCELED", "REFUNDED"];

type Plan = "truth" | "false" | "never";
interface MPool {
  addr: PublicKey;
  creator: Actor;
  creatorKey: PublicKey;
  nonce: bigint;
  n: number;
  closesAt: bigint;
  resolutionAt: bigint;
  feeBps: number;
  state: number;
  proposed: number;
  voteEndsAt: bigint;
  escalated: boolean;
  escalatedAt: bigint;
  disputes: number;
  voters: number;
  totals: bigint[];
  counts: number[];
  votes: bigint[];
  voteTotal: bigint;
  parts: MPart[];
  winner: number;
  settled: number;
  paidOut: bigint;
  fees: bigint;
  /** The real-world outcome; what the creator will propose; what the authority will do if asked. */
  truth: number;
  plan: Plan;
  authority: "truth" | "cancel" | "lapse";
}
interface MPart {
  addr: PublicKey;
  pool: MPool;
  user: Actor;
  key: PublicKey;
  userToken: PublicKey;
  stakes: bigint[];
  total: bigint;
  voted: boolean;
  voteOutcome: number;
  settled: boolean;
  payout: bigint;
  fee: bigint;
}
/** Accounts as the fuzzer reads them: codes, not names (the model keeps codes). */
type ChainPool = RawPool;
type ChainPart = RawParticipant;
const b58 = (k: PublicKey) => k.toBase58();
const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);
const field = (text: string, size: number) => {
  const out = Buffer.alloc(size);
  const b = Buffer.from(text, "utf8");
  b.copy(out, 0, 0, Math.min(size, b.length));
  return { len: b.length, bytes: [...out] };
};

describe(fuzzTitle("pools"), () => {
  it(
    "the attacker gains nothing; honest users hold exactly what the rules owe them, are never blocked, and no false outcome stands",
    async () => {
      const w = await attackerWorldOf("pools", {
        honestCount: 6,
        honestFunds: [1_000n * UNIT, 4_000n * UNIT],
        attackerFunds: 5_000n * UNIT,
      });
      // An explicit type: ctx.check is an assertion.
      const ctx: FuzzContext = w.ctx;
      const { rng, tally, program, chain, A, A2, aMain, service, crank, treasury, honest, attacker } = w;
      const PID = POOLS_PROGRAM_ID;
      const CONFIG = w.CONFIG,
        VAULT = w.VAULT;
      const poolPda = (creator: PublicKey, nonce: bigint) => w.pda([Buffer.from("pool"), creator.toBuffer(), u64le(nonce)]);
      const partPda = (pool: PublicKey, user: PublicKey) => w.pda([Buffer.from("participant"), pool.toBuffer(), user.toBuffer()]);
      const claimOf = (k: PublicKey) => w.claimOf(k);

      // ---------------------------------------------------------------- model
      const pools: MPool[] = [];
      const parts: MPart[] = [];
      const byAddr = new Map<string, MPool | MPart>();
      const nonces = new Map<string, bigint>();
      const nextNonce = (k: PublicKey) => (nonces.get(b58(k)) ?? 0n) + 1n;
      const plans = new Map<string, Plan>(); // pool address -> the creator's plan, set before creating
      const owed = () => pools.reduce((s, p) => s + sum(p.totals) - p.paidOut - p.fees, 0n);
      const proposalDeadline = (p: MPool) => (p.resolutionAt > p.closesAt ? p.resolutionAt : p.closesAt) + PROPOSAL_DEADLINE;
      const windowOver = (p: MPool) => w.now >= p.voteEndsAt || p.voters === p.parts.length;
      const readPool = (k: PublicKey) => w.readAs<ChainPool>(k, "pool");
      const readPart = (k: PublicKey) => w.readAs<ChainPart>(k, "participant");

      const comparePool = (m: MPool, c: ChainPool) => {
        const n = m.n;
        const want = {
          state: STATE[m.state],
          proposed: m.proposed,
          escalated: m.escalated ? 1 : 0,
          escalatedAt: m.escalatedAt,
          voteEndsAt: m.voteEndsAt,
          disputes: m.disputes,
          voters: m.voters,
          totals: m.totals.join(","),
          counts: m.counts.join(","),
          votes: m.votes.join(","),
          voteTotal: m.voteTotal,
          totalOi: sum(m.totals),
          participants: m.parts.length,
          winner: m.winner,
          settled: m.settled,
          paidOut: m.paidOut,
          fees: m.fees,
          creator: b58(m.creatorKey),
          closesAt: m.closesAt,
          resolutionAt: m.resolutionAt,
          feeBps: m.feeBps,
          n,
        };
        const o = c.outcomes.slice(0, n);
        const got = {
          state: STATE[c.state],
          proposed: c.proposedOutcome,
          escalated: c.escalated,
          escalatedAt: c.escalatedAt,
          voteEndsAt: c.voteEndsAt,
          disputes: c.disputeCount,
          voters: c.voterCount,
          totals: o.map((x) => x.totalOi).join(","),
          counts: o.map((x) => x.wagerCount).join(","),
          votes: o.map((x) => x.voteWeight).join(","),
          voteTotal: c.voteWeightTotal,
          totalOi: c.totalOi,
          participants: c.participantCount,
          winner: c.winningOutcome,
          settled: c.settledCount,
          paidOut: c.paidOut,
          fees: c.feesPaid,
          creator: b58(c.creator),
          closesAt: c.closesAt,
          resolutionAt: c.resolutionAt,
          feeBps: c.feeBps,
          n: c.outcomeCount,
        };
        for (const k of Object.keys(want) as (keyof typeof want)[])
          ctx.check(want[k] === got[k], () => `pool ${b58(m.addr)} ${k}: chain ${got[k]}, model ${want[k]}`);
        ctx.check(
          c.outcomes.slice(n).every((x) => x.totalOi === 0n && x.voteWeight === 0n && x.wagerCount === 0),
          `pool ${b58(m.addr)} has totals beyond its outcomes`,
        );
      };
      const comparePart = (m: MPart, c: ChainPart) => {
        const want = {
          pool: b58(m.pool.addr),
          user: b58(m.key),
          token: b58(m.userToken),
          stakes: m.stakes.join(","),
          total: m.total,
          voted: m.voted ? 1 : 0,
          vote: m.voteOutcome,
          settled: m.settled ? 1 : 0,
          payout: m.payout,
          fee: m.fee,
        };
        const got = {
          pool: b58(c.pool),
          user: b58(c.user),
          token: b58(c.userToken),
          stakes: c.stakes.slice(0, m.pool.n).join(","),
          total: c.total,
          voted: c.voted,
          vote: c.voteOutcome,
          settled: c.settled,
          payout: c.payout,
          fee: c.fee,
        };
        for (const k of Object.keys(want) as (keyof typeof want)[])
          ctx.check(want[k] === got[k], () => `participant ${b58(m.addr)} ${k}: chain ${got[k]}, model ${want[k]}`);
      };

      /** The state a pool may move to, checked against the rules (who signed, the clock, votes, deadlines), applied to the model. */
      const transition = (m: MPool, c: ChainPool, signed: (k: PublicKey) => boolean, logs: string[]) => {
        const now = w.now;
        const k = b58(m.addr);
        const to = c.state;
        if (to === m.state && (c.escalated !== 0) === m.escalated) return;
        if (to === DISTRIBUTED || (to === REFUNDED && m.state !== OPEN)) return; // the last settlement or refund: below
        const why = `pool ${k} ${STATE[m.state]}${m.escalated ? "(escalated)" : ""} -> ${STATE[to]}${c.escalated ? "(escalated)" : ""}`;
        if (m.state === OPEN && to === RESOLVING && !c.escalated) {
          ctx.check(
            signed(m.creatorKey) && now >= m.closesAt && now >= m.resolutionAt && now < proposalDeadline(m) && m.parts.length > 0 && c.proposedOutcome < m.n,
            `${why}: a proposal the rules refuse`,
            logs,
          );
          m.state = RESOLVING;
          m.proposed = c.proposedOutcome;
          m.voteEndsAt = now + DISPUTE_WINDOW;
        } else if (m.state === OPEN && to === RESOLVING && c.escalated) {
          ctx.check(now >= proposalDeadline(m) && m.parts.length > 0, `${why}: escalated before the creator's deadline`, logs);
          m.state = RESOLVING;
          m.escalated = true;
          m.escalatedAt = now;
        } else if (m.state === RESOLVING && !m.escalated && to === RESOLVING && c.escalated) {
          ctx.check(windowOver(m) && m.disputes > 0, `${why}: escalated without a dispute or inside the window`, logs);
          m.escalated = true;
          m.escalatedAt = now;
        } else if (m.state === RESOLVING && !m.escalated && to === RESOLVED) {
          ctx.check(
            windowOver(m) && m.disputes === 0 && c.winningOutcome === m.proposed,
            `${why}: resolved to ${c.winningOutcome} (proposed ${m.proposed}, ${m.disputes} disputes)`,
            logs,
          );
          m.state = RESOLVED;
          m.winner = c.winningOutcome;
        } else if (m.state === RESOLVING && m.escalated && to === RESOLVED) {
          ctx.check(
            signed(service.publicKey) && now < m.escalatedAt + AUTHORITY_DEADLINE && c.winningOutcome < m.n,
            `${why}: decided without the authority or after its deadline`,
            logs,
          );
          m.state = RESOLVED;
          m.winner = c.winningOutcome;
        } else if (m.state === RESOLVING && m.escalated && to === CANCELED) {
          ctx.check(
            (signed(service.publicKey) && now < m.escalatedAt + AUTHORITY_DEADLINE) || now >= m.escalatedAt + AUTHORITY_DEADLINE,
            `${why}: canceled before the authority's deadline`,
            logs,
          );
          m.state = CANCELED;
        } else if (m.state === OPEN && (to === CANCELED || to === REFUNDED)) {
          const empty = m.parts.length === 0;
          ctx.check((now < m.closesAt && signed(m.creatorKey)) || (now >= m.closesAt && empty), `${why}: canceled by someone the rules do not allow`, logs);
          ctx.check(to === (empty ? REFUNDED : CANCELED), `${why}: wrong state for ${m.parts.length} participants`);
          m.state = to;
        } else {
          ctx.fail(`${why}: no rule allows it`, logs);
        }
        if (m.state === RESOLVED && m.parts.some((p) => p.user.honest))
          ctx.check(m.winner === m.truth, `pool ${k} with honest participants resolved to ${m.winner}; the truth is ${m.truth}`, logs);
      };

      w.reconcileProgram = async (s: Sent): Promise<Closed[]> => {
        const now = w.now;
        const signed = (k: PublicKey) => s.signers.has(b58(k));
        const touchedPools = new Set<MPool>();
        const touchedParts = new Set<MPart>();
        // New accounts: pools, participants.
        const newParts: { addr: PublicKey; c: ChainPart }[] = [];
        for (const k of s.keys) {
          if (byAddr.has(k) || k === b58(CONFIG) || w.isRogue(k) || w.claimAddrs.has(k)) continue;
          const x = await w.accountKind(new PublicKey(k));
          if (!x || x.kind === "claim") continue;
          if (x.kind === "participant") {
            newParts.push({ addr: new PublicKey(k), c: w.decode<ChainPart>("participant", x.data)! });
            continue;
          }
          ctx.check(x.kind === "pool", `transaction created a ${x.kind ?? "unknown"} account ${k}`, s.r.logs);
          const c = w.decode<ChainPool>("pool", x.data)!;
          ctx.check(signed(c.creator), `pool ${k} created for ${b58(c.creator)} without its signature`, s.r.logs);
          ctx.check(poolPda(c.creator, c.nonce).equals(new PublicKey(k)), `pool ${k} is not the canonical PDA of (creator, nonce)`);
          ctx.check(
            c.state === OPEN &&
              c.closesAt > now &&
              c.closesAt <= now + MAX_OPEN &&
              (c.resolutionAt === 0n || (c.resolutionAt >= c.closesAt && c.resolutionAt <= c.closesAt + MAX_RESOLUTION_DELAY)) &&
              c.outcomeCount >= 2 &&
              c.outcomeCount <= 8 &&
              c.feeBps === FEE_BPS &&
              c.totalOi === 0n &&
              c.participantCount === 0 &&
              c.proposedOutcome === NONE &&
              c.winningOutcome === NONE,
            `pool ${k} created in a state the rules refuse`,
            s.r.logs,
          );
          const n = c.outcomeCount;
          const creator = w.actorOf(c.creator);
          const m: MPool = {
            addr: new PublicKey(k),
            creator,
            creatorKey: c.creator,
            nonce: c.nonce,
            n,
            closesAt: c.closesAt,
            resolutionAt: c.resolutionAt,
            feeBps: c.feeBps,
            state: OPEN,
            proposed: NONE,
            voteEndsAt: 0n,
            escalated: false,
            escalatedAt: 0n,
            disputes: 0,
            voters: 0,
            totals: Array(n).fill(0n),
            counts: Array(n).fill(0),
            votes: Array(n).fill(0n),
            voteTotal: 0n,
            parts: [],
            winner: NONE,
            settled: 0,
            paidOut: 0n,
            fees: 0n,
            truth: rng.int(0, n - 1),
            plan: plans.get(k) ?? (creator.honest ? "truth" : "false"),
            authority: rng.chance(0.8) ? "truth" : rng.chance(0.5) ? "cancel" : "lapse",
          };
          pools.push(m);
          byAddr.set(k, m);
          if (c.nonce >= nextNonce(c.creator)) nonces.set(b58(c.creator), c.nonce);
          touchedPools.add(m);
        }
        for (const { addr, c } of newParts) {
          const m = byAddr.get(b58(c.pool));
          ctx.check(m !== undefined && "truth" in m, `participant ${b58(addr)} of an unknown pool`, s.r.logs);
          ctx.check(partPda(m.addr, c.user).equals(addr), `participant ${b58(addr)} is not the canonical PDA of (pool, user)`);
          const p: MPart = {
            addr,
            pool: m,
            user: w.actorOf(c.user),
            key: c.user,
            userToken: c.userToken,
            stakes: Array(m.n).fill(0n),
            total: 0n,
            voted: false,
            voteOutcome: NONE,
            settled: false,
            payout: 0n,
            fee: 0n,
          };
          m.parts.push(p);
          parts.push(p);
          byAddr.set(b58(addr), p);
        }
        // Participants: picks, votes (pool tallies move with them).
        for (const k of s.keys) {
          const p = byAddr.get(k);
          if (!p || !("stakes" in p)) continue;
          const c = await readPart(p.addr);
          ctx.check(c !== null, `participant ${k} vanished`);
          touchedParts.add(p);
          const m = p.pool;
          const diff = p.stakes.map((x, i) => c.stakes[i] - x);
          if (diff.some((d) => d !== 0n)) {
            const moved = diff.map((d, i) => [d, i] as const).filter(([d]) => d !== 0n);
            ctx.check(moved.length === 1 && moved[0][0] > 0n, `participant ${k} stakes moved by ${diff.join(",")}`, s.r.logs);
            const [amount, o] = moved[0];
            ctx.check(
              m.state === OPEN && now < m.closesAt && signed(p.key),
              `pick of ${amount} on pool ${b58(m.addr)} (${STATE[m.state]}, closes ${m.closesAt}, now ${now}) the rules refuse`,
              s.r.logs,
            );
            p.stakes[o] += amount;
            p.total += amount;
            p.user.expected -= amount;
            m.totals[o] += amount;
            m.counts[o] += 1;
            touchedPools.add(m);
          }
          if (c.voted && !p.voted) {
            ctx.check(
              m.state === RESOLVING && !m.escalated && now < m.voteEndsAt && signed(p.key) && c.voteOutcome < m.n,
              `vote on pool ${b58(m.addr)} the rules refuse`,
              s.r.logs,
            );
            p.voted = true;
            p.voteOutcome = c.voteOutcome;
            m.votes[c.voteOutcome] += p.total;
            m.voteTotal += p.total;
            m.voters += 1;
            if (c.voteOutcome !== m.proposed) m.disputes += 1;
            touchedPools.add(m);
          }
        }
        // Pools: state changes.
        for (const k of s.keys) {
          const m = byAddr.get(k);
          if (!m || !("truth" in m)) continue;
          const c = await readPool(m.addr);
          ctx.check(c !== null, `pool ${k} vanished`);
          touchedPools.add(m);
          transition(m, c, signed, s.r.logs);
        }
        // Settlements and refunds.
        for (const p of touchedParts) {
          const c = (await readPart(p.addr))!;
          if (!c.settled || p.settled) continue;
          const m = p.pool;
          const total = sum(m.totals);
          let payout: bigint,
            fee = 0n;
          if (m.state === RESOLVED) {
            const wt = m.totals[m.winner];
            if (wt === 0n) payout = p.total;
            else {
              const stake = p.stakes[m.winner];
              const gross = (stake * total) / wt;
              fee = ((gross - stake) * BigInt(m.feeBps)) / 10_000n;
              payout = gross - fee;
            }
            m.settled += 1;
            m.paidOut += payout;
            m.fees += fee;
            w.treasuryExpected += fee;
            if (m.settled === m.parts.length) {
              const dust = total - m.paidOut - m.fees;
              m.fees += dust;
              w.treasuryExpected += dust;
              m.state = wt === 0n ? REFUNDED : DISTRIBUTED;
            }
          } else {
            ctx.check(m.state === CANCELED, `participant ${b58(p.addr)} paid while its pool is ${STATE[m.state]}`, s.r.logs);
            payout = p.total;
            m.settled += 1;
            m.paidOut += payout;
            if (m.settled === m.parts.length) m.state = REFUNDED;
          }
          p.settled = true;
          p.payout = payout;
          p.fee = fee;
          p.user.expected += payout;
          touchedPools.add(m);
        }
        for (const m of touchedPools) comparePool(m, (await readPool(m.addr))!);
        for (const p of touchedParts) comparePart(p, (await readPart(p.addr))!);
        return []; // pools and participants are never closed
      };

      // ---------------------------------------------------------------- instructions
      const createPoolArgs = (creator: PublicKey, nonce: bigint, n: number, closesAt: bigint, resolutionAt: bigint) => {
        const pool = poolPda(creator, nonce);
        const labels = Buffer.alloc(8 * 24);
        const lens = Array<number>(8).fill(0);
        for (let i = 0; i < n; i++) {
          const f = field(`Outcome ${i}`, 24);
          lens[i] = f.len;
          Buffer.from(f.bytes).copy(labels, i * 24);
        }
        const q = field(`Question ${nonce}?`, 160),
          cr = field("", 280),
          u = field("", 128);
        return {
          pool,
          args: {
            nonce,
            bump: w.bumpOf(pool),
            outcomeCount: n,
            closesAt,
            resolutionAt,
            questionLen: q.len,
            question: q.bytes,
            criteriaLen: cr.len,
            criteria: cr.bytes,
            coverUrlLen: u.len,
            coverUrl: u.bytes,
            labelLens: lens,
            labels: [...labels],
          } as Record<string, unknown>,
        };
      };
      const ixCreatePool = (payer: PublicKey, creator: PublicKey, nonce: bigint, n: number, closesAt: bigint, resolutionAt: bigint) => {
        const { pool, args } = createPoolArgs(creator, nonce, n, closesAt, resolutionAt);
        return buildIx(program, "createPool", args, { payer, creator, config: CONFIG, pool, systemProgram: SYSTEM_PROGRAM });
      };
      const ixPick = (payer: PublicKey, user: PublicKey, userToken: PublicKey, m: MPool, outcome: number, amount: bigint) => {
        const participant = partPda(m.addr, user);
        return buildIx(
          program,
          "placePick",
          { outcome, amount, participantBump: w.bumpOf(participant) },
          { payer, user, userToken, config: CONFIG, pool: m.addr, participant, vault: VAULT, tokenProgram: TOKEN_PROGRAM, systemProgram: SYSTEM_PROGRAM },
        );
      };
      const ixPropose = (creator: PublicKey, m: MPool, outcome: number) => buildIx(program, "proposeOutcome", { outcome }, { creator, pool: m.addr });
      const ixVote = (voter: PublicKey, m: MPool, outcome: number) =>
        buildIx(program, "castVote", { outcome }, { voter, pool: m.addr, participant: partPda(m.addr, voter) });
      const ixResolve = (caller: PublicKey, m: MPool) => buildIx(program, "resolvePool", {}, { caller, pool: m.addr });
      const ixAuthority = (m: MPool, outcome: number) =>
        buildIx(program, "authorityResolve", { outcome }, { authority: service.publicKey, config: CONFIG, pool: m.addr });
      const ixCancel = (caller: PublicKey, m: MPool) => buildIx(program, "cancelPool", {}, { caller, pool: m.addr });
      /** settle_participant and refund_participant take the same accounts but the treasury (buildIx drops names the IDL lacks). */
      const ixPayout = (name: "settleParticipant" | "refundParticipant") => (payer: PublicKey, p: MPart) =>
        buildIx(
          program,
          name,
          { claimBump: w.bumpOf(claimOf(p.key)) },
          {
            config: CONFIG,
            pool: p.pool.addr,
            participant: p.addr,
            vault: VAULT,
            userToken: p.userToken,
            treasury,
            tokenProgram: TOKEN_PROGRAM,
            payer,
            userClaim: claimOf(p.key),
            systemProgram: SYSTEM_PROGRAM,
          },
        );
      const ixSettle = ixPayout("settleParticipant");
      const ixRefund = ixPayout("refundParticipant");

      // ---------------------------------------------------------------- the rules, for honest moves
      const pickable = (m: MPool) => m.state === OPEN && w.now < m.closesAt;
      const proposable = (m: MPool) => m.state === OPEN && w.now >= m.closesAt && w.now >= m.resolutionAt && w.now < proposalDeadline(m) && m.parts.length > 0;
      const votable = (m: MPool) => m.state === RESOLVING && !m.escalated && w.now < m.voteEndsAt;
      const resolvable = (m: MPool) =>
        (m.state === RESOLVING && !m.escalated && windowOver(m)) || (m.state === OPEN && m.parts.length > 0 && w.now >= proposalDeadline(m));
      const decidable = (m: MPool) => m.state === RESOLVING && m.escalated && w.now < m.escalatedAt + AUTHORITY_DEADLINE;
      const cancelableByAnyone = (m: MPool) =>
        (m.state === RESOLVING && m.escalated && w.now >= m.escalatedAt + AUTHORITY_DEADLINE) ||
        (m.state === OPEN && w.now >= m.closesAt && m.parts.length === 0);
      const payable = (m: MPool) => (m.state === RESOLVED || m.state === CANCELED) && m.parts.some((p) => !p.settled);
      const partOf = (m: MPool, k: PublicKey) => m.parts.find((p) => p.key.equals(k));

      // ---------------------------------------------------------------- honest steps
      const newPool = async (creator: Actor, key = creator.keys[0], plan?: Plan, payerKey?: typeof key) => {
        const n = rng.chance(0.5) ? 2 : rng.int(3, 5);
        const closesAt = w.now + rng.big(600n, 6_000n);
        const resolutionAt = rng.chance(0.6) ? 0n : closesAt + rng.big(0n, 7_200n);
        const nonce = nextNonce(key.publicKey);
        plans.set(b58(poolPda(key.publicKey, nonce)), plan ?? (rng.chance(0.9) ? "truth" : "never"));
        const payer = payerKey ?? (rng.chance(0.5) ? crank : key);
        return { ix: ixCreatePool(payer.publicKey, key.publicKey, nonce, n, closesAt, resolutionAt), signers: [key, payer] };
      };
      const honestCreate = async () => {
        const { ix, signers } = await newPool(rng.pick(honest));
        await w.honestSend("create_pool", [ix], signers);
      };
      const honestPick = async () => {
        const open = pools.filter(pickable);
        if (!open.length) return honestCreate();
        // Honest users pick in the attacker's pools too (a third of the time when there are some).
        const theirs = open.filter((x) => !x.creator.honest);
        const m = theirs.length && rng.chance(0.33) ? rng.pick(theirs) : rng.pick(open);
        const h = rng.pick(honest);
        const amount = rng.big(1n, 40n) * UNIT + rng.big(0n, UNIT - 1n);
        if ((await w.realBalance(h.current.address)) < amount) return void tally.add("honest:place_pick", "skip:balance");
        await w.honestSend("place_pick", [ixPick(crank.publicKey, h.keys[0].publicKey, h.current.address, m, rng.int(0, m.n - 1), amount)], [h.keys[0]]);
      };
      const honestPropose = async () => {
        const due = pools.filter((m) => m.creator.honest && m.plan === "truth" && proposable(m));
        if (!due.length) return honestVote();
        const m = rng.pick(due);
        await w.honestSend("propose_outcome", [ixPropose(m.creatorKey, m, m.truth)], [m.creator.keys[0]]);
      };
      /** An honest participant votes the truth (a dispute when the proposal is false). */
      const honestVote = async (m?: MPool) => {
        const cands = (m ? [m] : pools.filter(votable)).flatMap((x) => x.parts.filter((p) => p.user.honest && !p.voted));
        if (!cands.length) return void tally.add("honest:cast_vote", "skip:none");
        const p = rng.pick(cands);
        await w.honestSend(p.pool.proposed === p.pool.truth ? "cast_vote" : "dispute", [ixVote(p.key, p.pool, p.pool.truth)], [p.user.keys[0]]);
      };
      const crankResolve = async () => {
        const due = pools.filter(resolvable);
        if (!due.length) return void tally.add("honest:resolve_pool", "skip:none");
        await w.honestSend("resolve_pool", [ixResolve(crank.publicKey, rng.pick(due))], []);
      };
      const authorityDecide = async () => {
        const due = pools.filter((m) => decidable(m) && m.authority !== "lapse");
        if (!due.length) return void tally.add("honest:authority_resolve", "skip:none");
        const m = rng.pick(due);
        await w.honestSend(
          m.authority === "truth" ? "authority_resolve" : "authority_cancel",
          [ixAuthority(m, m.authority === "truth" ? m.truth : NONE)],
          [service],
        );
      };
      const crankCancel = async () => {
        const due = pools.filter(cancelableByAnyone);
        if (due.length) return void (await w.honestSend("cancel_pool", [ixCancel(crank.publicKey, rng.pick(due))], []));
        const own = pools.filter((m) => m.creator.honest && pickable(m));
        if (own.length && rng.chance(0.3)) {
          const m = rng.pick(own);
          return void (await w.honestSend("creator_cancel", [ixCancel(m.creatorKey, m)], [m.creator.keys[0]]));
        }
        tally.add("honest:cancel_pool", "skip:none");
      };
      const crankPay = async (m?: MPool) => {
        const due = m ? [m] : pools.filter(payable);
        if (!due.length) return void tally.add("honest:settle", "skip:none");
        const x = m ?? rng.pick(due);
        for (const p of x.parts) {
          if (p.settled) continue;
          if (x.state === RESOLVED) await w.honestSend("settle_participant", [ixSettle(crank.publicKey, p)], []);
          else if (x.state === CANCELED) await w.honestSend("refund_participant", [ixRefund(crank.publicKey, p)], []);
        }
      };
      /**
       * The clock, with diligent honest participants: before a dispute window with a false proposal
       * closes, an honest participant who has not voted disputes it (the design's liveness assumption).
       */
      const advance = async (secs: bigint) => {
        for (const m of pools) {
          if (!votable(m) || m.proposed === m.truth || m.voteEndsAt > w.now + secs) continue;
          if (m.parts.some((p) => p.user.honest && p.voted && p.voteOutcome !== m.proposed)) continue;
          const p = m.parts.find((x) => x.user.honest && !x.voted);
          if (p) await w.honestSend("watcher_dispute", [ixVote(p.key, m, m.truth)], [p.user.keys[0]]);
        }
        await w.advance(secs);
      };

      // ---------------------------------------------------------------- the attacker playing
      const aCreatePool = async (kind = "play:create_pool") => {
        const { ix } = await newPool(attacker, A, rng.pick(["false", "false", "truth", "never"] as const), rng.pick([A, A2]));
        await w.attackSend(kind, [ix], [A2]);
      };
      const aPick = async (late: boolean) => {
        const open = pools.filter(pickable);
        if (!open.length) return aCreatePool();
        const own = open.filter((x) => !x.creator.honest);
        let m = own.length && rng.chance(0.4) ? rng.pick(own) : rng.pick(open);
        if (late) {
          m = open.reduce((a, b) => (b.closesAt < a.closesAt ? b : a));
          if (m.closesAt - 1n > w.now) await advance(m.closesAt - 1n - w.now);
        }
        const amount = late ? rng.big(100n, 1_200n) * UNIT : rng.big(1n, 60n) * UNIT;
        const tok = await w.attackerToken(amount);
        if (!tok) return void tally.add("attack:play:place_pick", "skip:no-tokens");
        const outcome = rng.chance(0.7) && m.truth !== undefined ? (m.truth + rng.int(1, m.n - 1)) % m.n : rng.int(0, m.n - 1);
        await w.attackSend(
          late ? "late_large_stake" : "play:place_pick",
          [ixPick(rng.pick([A, A2]).publicKey, A.publicKey, tok.address, m, outcome, amount)],
          [A2],
        );
      };
      /** Its own pools: propose as planned (false: the outcome it backed most, or any other than the truth). */
      const aPropose = async () => {
        const due = pools.filter((m) => !m.creator.honest && m.plan !== "never" && proposable(m));
        if (!due.length) return aVote();
        const m = rng.pick(due);
        const mine = partOf(m, A.publicKey);
        let outcome = m.truth;
        if (m.plan === "false") {
          const best = mine ? mine.stakes.indexOf(mine.stakes.reduce((a, b) => (b > a ? b : a))) : -1;
          outcome = best >= 0 && best !== m.truth ? best : (m.truth + 1) % m.n;
        }
        await w.attackSend(m.plan === "false" ? "false_proposal" : "play:propose_truth", [ixPropose(A.publicKey, m, outcome)]);
      };
      /** Votes for the outcome it backed most: a dispute of any other proposal. */
      const aVote = async () => {
        const cands = pools.filter((m) => votable(m) && partOf(m, A.publicKey) && !partOf(m, A.publicKey)!.voted);
        if (!cands.length) return aCrank();
        const m = rng.pick(cands);
        const mine = partOf(m, A.publicKey)!;
        const best = mine.stakes.indexOf(mine.stakes.reduce((a, b) => (b > a ? b : a)));
        await w.attackSend(best === m.proposed ? "play:vote" : "self_serving_dispute", [ixVote(A.publicKey, m, best)]);
      };
      /** Anyone's moves, made by the attacker (paying claim rent itself), sometimes too early. */
      const aCrank = async () => {
        const m = pools.length ? rng.pick(pools) : undefined;
        if (!m) return aCreatePool();
        const which = rng.int(0, 3);
        if (which === 0) return void (await w.attackSend("crank:resolve_pool", [ixResolve(A.publicKey, m)]));
        if (which === 1) return void (await w.attackSend("crank:cancel_pool", [ixCancel(A.publicKey, m)]));
        const p = m.parts.length ? rng.pick(m.parts) : undefined;
        if (!p) return void (await w.attackSend("crank:resolve_pool", [ixResolve(A.publicKey, m)]));
        await w.attackSend(which === 2 ? "crank:settle" : "crank:refund", [which === 2 ? ixSettle(A.publicKey, p) : ixRefund(A.publicKey, p)]);
      };

      // ---------------------------------------------------------------- attacks of this program
      const prefundTargets = () => {
        const t: PublicKey[] = [];
        for (const h of honest) {
          const k = h.keys[0].publicKey;
          t.push(claimOf(k), poolPda(k, nextNonce(k)), poolPda(k, nextNonce(k) + 1n));
          for (const m of pools.filter(pickable)) if (!partOf(m, k)) t.push(partPda(m.addr, k));
        }
        return t;
      };
      const recreatePool = async () => {
        const mine = pools.filter((m) => m.creatorKey.equals(A.publicKey));
        if (!mine.length) return aCreatePool();
        const m = rng.pick(mine);
        await w.attackSend("recreate_pool", [ixCreatePool(A.publicKey, A.publicKey, m.nonce, m.n, w.now + 1_000n, 0n)], [], { mustFail: true });
      };
      const extraAccounts = (): PublicKey[] => {
        const u: PublicKey[] = [];
        for (let i = 0; i < 6 && pools.length; i++) u.push(rng.pick(pools).addr);
        for (let i = 0; i < 6 && parts.length; i++) u.push(rng.pick(parts).addr);
        if (pools.length) {
          const m = rng.pick(pools);
          u.push(
            ...allBumps([Buffer.from("pool"), m.creatorKey.toBuffer(), u64le(m.nonce)], PID, 3)
              .slice(1)
              .map((p) => p.address),
          );
          u.push(...allBumps([Buffer.from("participant"), m.addr.toBuffer(), A.publicKey.toBuffer()], PID, 3).map((p) => p.address));
        }
        return u;
      };
      const baseFor = (name: string): { accounts: AccountMap; args: Record<string, unknown> } => {
        // Mostly live entities (so the call gets past the state checks to the account checks), sometimes any.
        const live = pools.filter((x) => x.state !== DISTRIBUTED && x.state !== REFUNDED);
        const m = live.length && rng.chance(0.7) ? rng.pick(live) : pools.length ? rng.pick(pools) : undefined;
        const unpaid = parts.filter((x) => !x.settled);
        const p = unpaid.length && rng.chance(0.7) ? rng.pick(unpaid) : parts.length ? rng.pick(parts) : undefined;
        const common = w.attackAccounts();
        switch (name) {
          case "initializeConfig":
            return w.configAttempt(name, common, { feeBps: 0 });
          case "updateConfig":
            return w.configAttempt(name, common, { feeBps: rng.int(0, 10_000) });
          case "setTreasury":
            return w.configAttempt(name, common);
          case "createPool": {
            const nonce = rng.chance(0.5) ? nextNonce(A.publicKey) : BigInt(rng.int(0, 4));
            const { pool, args } = createPoolArgs(A.publicKey, nonce, rng.int(2, 8), w.now + rng.big(1n, 5_000n), 0n);
            return { accounts: { ...common, creator: A.publicKey, pool }, args };
          }
          case "placePick": {
            const open = pools.filter(pickable);
            const m = open.length && rng.chance(0.8) ? rng.pick(open) : pools.length ? rng.pick(pools) : undefined;
            if (!m) return { accounts: common, args: { outcome: 0, amount: 1n, participantBump: 255 } };
            const participant = partPda(m.addr, A.publicKey);
            return {
              accounts: { ...common, user: A.publicKey, userToken: aMain.address, pool: m.addr, participant },
              args: { outcome: rng.int(0, m.n - 1), amount: rng.big(1n, 10n) * UNIT, participantBump: w.bumpOf(participant) },
            };
          }
          case "proposeOutcome":
            return { accounts: { creator: A.publicKey, pool: m?.addr }, args: { outcome: rng.int(0, 8) } };
          case "castVote":
            return { accounts: { voter: A.publicKey, pool: (p?.pool ?? m)?.addr, participant: p?.addr }, args: { outcome: rng.int(0, 8) } };
          case "resolvePool":
            return { accounts: { caller: A.publicKey, pool: m?.addr }, args: {} };
          case "authorityResolve":
            return { accounts: { ...common, authority: A.publicKey, pool: m?.addr }, args: { outcome: rng.pick([0, 1, 2, NONE]) } };
          case "cancelPool":
            return { accounts: { caller: A.publicKey, pool: m?.addr }, args: {} };
          case "settleParticipant":
          case "refundParticipant": {
            if (!p) return { accounts: common, args: { claimBump: 255 } };
            const cl = claimOf(p.key);
            return {
              accounts: { ...common, pool: p.pool.addr, participant: p.addr, userToken: p.userToken, userClaim: cl },
              args: { claimBump: w.bumpOf(cl) },
            };
          }
          case "withdrawClaim":
            return w.withdrawClaimAttempt(common);
          default:
            return { accounts: common, args: {} };
        }
      };

      /**
       * A keypair the attacker signs with as the claim account of a settlement or refund whose
       * participant cannot receive: the payout must go to the canonical claim or the call must fail.
       */
      const signerAsClaim = async () => {
        const blocked: MPart[] = [];
        for (const p of parts.filter((x) => !x.settled && (x.pool.state === RESOLVED || x.pool.state === CANCELED))) {
          if (!(await canReceive(chain, p.userToken, w.mint.mint, p.key))) blocked.push(p);
        }
        if (!blocked.length) return void tally.add("attack:signer_as_claim", "skip:no-blocked-payee");
        const p = rng.pick(blocked);
        const name = p.pool.state === RESOLVED ? "settleParticipant" : "refundParticipant";
        const ix = name === "settleParticipant" ? ixSettle(A.publicKey, p) : ixRefund(A.publicKey, p);
        const accounts = w.accountsOf(ix);
        return w.signerAsPda("signer_as_claim", name, "userClaim", () => ({ accounts, args: { claimBump: w.bumpOf(claimOf(p.key)) } }), false);
      };

      // ---------------------------------------------------------------- the run
      for (let i = 0; i < 3; i++) await honestCreate();
      await w.checkMoney(owed());
      const targets = { baseFor, extraAccounts, prefundTargets };
      const steps: Step[] = [
        [45, "honest_create", honestCreate],
        [150, "honest_pick", honestPick],
        [45, "honest_propose", honestPropose],
        [45, "honest_vote", () => honestVote()],
        [35, "resolve", crankResolve],
        [30, "authority", authorityDecide],
        [20, "cancel", crankCancel],
        [55, "pay", () => crankPay()],
        ...w.honestTokenSteps(15),
        [
          80,
          "clock",
          () => advance(rng.chance(0.85) ? rng.big(60n, 2_400n) : rng.chance(0.75) ? rng.big(6n * 3_600n, 30n * 3_600n) : rng.big(3n * DAY, 8n * DAY)),
        ],
        [20, "a_create_pool", () => aCreatePool()],
        [30, "a_pick", () => aPick(false)],
        [12, "a_late_large_stake", () => aPick(true)],
        [35, "a_propose", aPropose],
        [20, "a_vote", aVote],
        [20, "a_crank", aCrank],
        [12, "a_withdraw", async () => (await w.attackerWithdraw()) || aCrank()],
        ...w.configAndTokenAttacks({}, targets),
        [10, "recreate_pool", recreatePool],
        ...w.accountAttacks(
          targets,
          [
            ["createPool", "pool"],
            ["placePick", "participant"],
          ],
          signerAsClaim,
        ),
      ];
      await w.runSteps(steps, owed, {
        choose: (drawn) => (pools.filter(pickable).length < 2 ? [0, "honest_create", honestCreate] : drawn),
        size: () => `${pools.length} pools`,
      });

      // ---------------------------------------------------------------- wind-down: decide every pool, pay everyone
      for (let round = 0; round < 8 && pools.some((m) => m.state !== DISTRIBUTED && m.state !== REFUNDED); round++) {
        for (const m of pools) {
          if (proposable(m) && m.creator.honest && m.plan === "truth")
            await w.honestSend("propose_outcome", [ixPropose(m.creatorKey, m, m.truth)], [m.creator.keys[0]]);
          if (votable(m))
            for (const p of m.parts) if (p.user.honest && !p.voted) await w.honestSend("cast_vote", [ixVote(p.key, m, m.truth)], [p.user.keys[0]]);
          if (resolvable(m)) await w.honestSend("resolve_pool", [ixResolve(crank.publicKey, m)], []);
          if (decidable(m) && m.authority !== "lapse")
            await w.honestSend("authority_resolve", [ixAuthority(m, m.authority === "truth" ? m.truth : NONE)], [service]);
          if (cancelableByAnyone(m)) await w.honestSend("cancel_pool", [ixCancel(crank.publicKey, m)], []);
          if (payable(m)) await crankPay(m);
        }
        await advance(round < 2 ? DAY + 1n : 4n * DAY);
      }
      await w.withdrawAllHonest();
      await w.checkMoney(owed());
      const stuck = pools.filter((m) => m.state !== DISTRIBUTED && m.state !== REFUNDED);
      ctx.check(
        stuck.length === 0,
        () => `${stuck.length} pools never finished: ${stuck.map((m) => `${b58(m.addr)} ${STATE[m.state]}${m.escalated ? "(escalated)" : ""}`).join(", ")}`,
      );
      ctx.check(owed() === 0n, `the model still owes ${owed()} after the wind-down`);

      const falseProposals = pools.filter((m) => m.proposed !== NONE && m.proposed !== m.truth).length;
      const escalated = pools.filter((m) => m.escalated).length;
      console.log(await w.report(`${pools.length} pools (${falseProposals} false proposals, ${escalated} escalated), ${parts.length} participants`));
      expect(tally.total("attack:")).toBeGreaterThan(FUZZ_ACTIONS / 4);
    },
    FUZZ_TIMEOUT_MS,
  );
});
