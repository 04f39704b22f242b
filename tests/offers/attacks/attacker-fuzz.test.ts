/**
 * Attacker-model fuzzer of the offers program (issue #10 "What must be shown", moves of #15).
 *
 * Honest users create, take and close offers, move to new token accounts and withdraw claims by
 * the rules; the service publishes and resolves contracts (or voids them) and its crank closes
 * offers after the cutoff, settles positions and reclaims rent. An attacker with its own keys,
 * its own worthless mint and real tokens plays along (its own offers, takes of honest offers,
 * right before the cutoff too, cranking with itself paying claim rent) and attacks:
 * initialize_config at every bump of ["config"] / ["vault"] as a non-upgrade-authority;
 * Config-shaped accounts planted at other addresses (its authority, treasury, mint, vault; one
 * signing as the canonical config) passed to every instruction that takes a config; lamports sent
 * to future PDAs of honest users (offers, positions, claims); its recorded token account closed
 * before refunds and payouts, re-opened at the same address (its worthless mint, another owner)
 * or re-owned; close_offer_account / close_position at every moment with any rent payer and
 * contract; offers re-created with a used nonce; withdrawals of honest users' claims; tokens
 * donated to the vault; and every instruction with accounts drawn from everything that exists
 * (other users', non-canonical PDAs, the pools program's, its own, the vault, the treasury,
 * duplicates within one instruction), writable flags flipped and arguments bent.
 * take_best (#24): honest users and the attacker sweep the book by the rules (best first, a
 * worst-odds limit, either mode), and the attacker abuses the list: the same offer twice, offers
 * of another contract or side, its own offers, closed offers and closed accounts, other takers'
 * and non-canonical positions, the worst offers first, limits at an offer's exact odds and one
 * unit past them, fill-or-kill beyond the book. Every take_best's outcome and each offer's fill
 * must be exactly what the rules' plan (idl/client/take-best-rules.ts) says from the model.
 * Expiry (#26): honest users and the attacker create offers with an expiry (up to the cutoff),
 * the clock is warped to a second before and to an expiry; the attacker creates with expiries
 * out of bounds, takes (and sweeps) offers at and after their expiry, and closes honest offers
 * once they expired (anyone may), the creator owed exactly the unmatched stake.
 *
 * The model holds what the rules owe everyone. Each successful transaction's effect on the
 * accounts it touched is checked against the rules (who signed, the clock, contract and offer
 * state) and applied to the model with the model's own arithmetic; a change no rule allows fails
 * the run, and so does a revival of a closed account. After every step (AttackerWorld.checkMoney):
 * the vault equals what the model owes + claims + donations, every honest user's tokens plus claim
 * equal the model's, the treasury equals the modelled fees, the attacker's tokens plus claims never
 * exceed what the rules give it, the config and the pools vault never change; the lamports of
 * every closed account go to its recorded rent payer; and every honest action the model allows
 * succeeds. The run ends by resolving everything and paying everyone: the model must then owe 0.
 * FUZZ_SEED / FUZZ_ACTIONS select the run.
 */
import { describe, expect, it } from "vitest";
import { PublicKey, type TransactionInstruction } from "@solana/web3.js";
import { randomUUID } from "node:crypto";
import {
  LAUNCH_FEE_BPS,
  LAUNCH_LIMITS,
  OFFERS_PROGRAM_ID,
  SYSTEM_PROGRAM,
  TOKEN_PROGRAM,
  uuidBytes,
  type RawOffer,
  type RawPosition,
} from "../../../idl/client/offers";
import type { AccountMap, Actor, BaseCall, Closed, FuzzContext, Sent, Step } from "../../support/attacker";
import { allBumps, attackerWorldOf, buildIx, canReceive, FUZZ_ACTIONS, FUZZ_TIMEOUT_MS, fuzzTitle, u64le } from "../../support/attacker";
import { planTakeBest, type SweepOffer, type TakeBestPlan } from "../../../idl/client/take-best-rules";

const UNIT = 1_000_000n;
const LIM = LAUNCH_LIMITS;
const FEE_BPS = LAUNCH_FEE_BPS;

// States (programs/offers/src/state.rs).
const C_OPEN = 0,
  C_RESOLVED = 1,
  C_VOIDED = 2;
const O_OPEN = 0,
  O_FILLED = 1,
  O_CLOSED = 2,
  O_SETTLED = 3;
const P_OPEN = 0,
  P_CREATOR = 1,
  P_TAKER = 2,
  P_REFUNDED = 3;
const RESULT_VOID = 3;

interface MContract {
  addr: PublicKey;
  cutoffAt: bigint;
  deadline: bigint;
  status: number;
  result: number;
}
interface MOffer {
  addr: PublicKey;
  contract: MContract;
  creator: Actor;
  creatorKey: PublicKey;
  creatorToken: PublicKey;
  rentPayer: PublicKey;
  nonce: bigint;
  side: number;
  feeBps: number;
  total: bigint;
  target: bigint;
  minTake: bigint;
  /** 0: none. */
  expiresAt: bigint;
  filled: bigint;
  allocated: bigint;
  refunded: bigint;
  status: number;
  revision: bigint;
  positions: MPosition[];
  settled: number;
  gone: boolean;
}
interface MPosition {
  addr: PublicKey;
  offer: MOffer;
  taker: Actor;
  takerKey: PublicKey;
  takerToken: PublicKey;
  rentPayer: PublicKey;
  amount: bigint;
  matched: bigint;
  status: number;
  creatorPayout: bigint;
  takerPayout: bigint;
  fee: bigint;
  gone: boolean;
}
/** Accounts as the fuzzer reads them: codes, not names (the model keeps codes). */
type ChainOffer = RawOffer;
type ChainPosition = RawPosition;
interface ChainContract {
  status: number;
  result: number;
  cutoffAt: bigint;
  resolutionDeadline: bigint;
}

const mulDiv = (a: bigint, b: bigint, c: bigint) => (a * b) / c;
/** programs/offers/src/math.rs, in the model's own arithmetic. */
const matchedForTake = (take: bigint, total: bigint, target: bigint, filled: bigint, allocated: bigint) =>
  filled + take === target ? total - allocated : mulDiv(take, total, target);
const feeOf = (bps: number, profit: bigint) => mulDiv(BigInt(bps), profit, 10_000n);
function payouts(creatorWins: boolean | null, bps: number, matched: bigint, amount: bigint): [bigint, bigint, bigint] {
  if (creatorWins === null) return [matched, amount, 0n];
  if (creatorWins) {
    const f = feeOf(bps, amount);
    return [matched + amount - f, 0n, f];
  }
  const f = feeOf(bps, matched);
  return [0n, amount + matched - f, f];
}
const oddsOk = (total: bigint, target: bigint) =>
  LIM.minimumOddsNumerator * target <= total * LIM.minimumOddsDenominator && total * LIM.maximumOddsDenominator <= LIM.maximumOddsNumerator * target;
const b58 = (k: PublicKey) => k.toBase58();
/** Offer::expired: the expiry second itself is past; 0 never expires. */
const expired = (o: { expiresAt: bigint }, now: bigint) => o.expiresAt !== 0n && now >= o.expiresAt;
const OFFER_STATUS = ["Open", "Filled", "Closed", "Settled"];
const CONTRACT_STATUS = ["Open", "Resolved", "Voided"];
/** take_best's arguments as the fuzzer draws them (side and mode as their codes). */
interface SweepArgs {
  side: number;
  amount: bigint;
  num: bigint;
  den: bigint;
  mode: number;
}
/** One (offer, position) pair of a take_best list; the position is the taker's canonical one unless given. */
interface Pair {
  offer: PublicKey;
  position?: PublicKey;
  bump?: number;
}

describe(fuzzTitle("offers"), () => {
  it(
    "the attacker gains nothing; honest users hold exactly what the rules owe them and are never blocked",
    async () => {
      const w = await attackerWorldOf("offers", {
        honestCount: 5,
        honestFunds: [800n * UNIT, 3_000n * UNIT],
        attackerFunds: 3_000n * UNIT,
      });
      // An explicit type: ctx.check is an assertion.
      const ctx: FuzzContext = w.ctx;
      const { rng, tally, program, chain, A, A2, aMain, service, crank, treasury, honest } = w;
      const PID = OFFERS_PROGRAM_ID;
      const CONFIG = w.CONFIG,
        VAULT = w.VAULT;
      const offerPda = (contract: PublicKey, creator: PublicKey, nonce: bigint) =>
        w.pda([Buffer.from("offer"), contract.toBuffer(), creator.toBuffer(), u64le(nonce)]);
      const positionPda = (offer: PublicKey, taker: PublicKey) => w.pda([Buffer.from("position"), offer.toBuffer(), taker.toBuffer()]);
      const claimOf = (k: PublicKey) => w.claimOf(k);

      // ---------------------------------------------------------------- model
      const contracts: MContract[] = [];
      const offers: MOffer[] = [];
      const positions: MPosition[] = [];
      const byAddr = new Map<string, MContract | MOffer | MPosition>();
      const nonces = new Map<string, bigint>(); // creator key -> highest nonce used
      const nextNonce = (k: PublicKey) => (nonces.get(b58(k)) ?? 0n) + 1n;
      const owed = () =>
        offers.reduce((s, o) => s + o.total + o.filled - o.refunded, 0n) - positions.reduce((s, p) => s + p.creatorPayout + p.takerPayout + p.fee, 0n);
      const readOffer = (k: PublicKey) => w.readAs<ChainOffer>(k, "offer");
      const readPosition = (k: PublicKey) => w.readAs<ChainPosition>(k, "position");
      const readContract = (k: PublicKey) => w.readAs<ChainContract>(k, "contract");
      const contractOf = (k: PublicKey) => {
        const c = byAddr.get(b58(k));
        return c && "deadline" in c ? c : undefined;
      };

      const compareOffer = (o: MOffer, c: ChainOffer) => {
        const want = {
          status: o.status,
          filled: o.filled,
          allocated: o.allocated,
          refunded: o.refunded,
          revision: o.revision,
          positions: o.positions.length,
          settled: o.settled,
          total: o.total,
          target: o.target,
          creator: b58(o.creatorKey),
          token: b58(o.creatorToken),
          rent: b58(o.rentPayer),
          contract: b58(o.contract.addr),
          fee: o.feeBps,
          side: o.side,
          expiresAt: o.expiresAt,
        };
        const got = {
          status: c.status,
          filled: c.takerFilled,
          allocated: c.creatorAllocated,
          refunded: c.creatorRefunded,
          revision: c.revision,
          positions: c.positionCount,
          settled: c.settledPositionCount,
          total: c.creatorTotal,
          target: c.takerTarget,
          creator: b58(c.creator),
          token: b58(c.creatorToken),
          rent: b58(c.rentPayer),
          contract: b58(c.contract),
          fee: c.feeBps,
          side: c.side,
          expiresAt: c.expiresAt,
        };
        for (const k of Object.keys(want) as (keyof typeof want)[])
          ctx.check(want[k] === got[k], () => `offer ${b58(o.addr)} ${k}: chain ${got[k]}, model ${want[k]}`);
      };
      const comparePosition = (p: MPosition, c: ChainPosition) => {
        const want = {
          status: p.status,
          amount: p.amount,
          matched: p.matched,
          cp: p.creatorPayout,
          tp: p.takerPayout,
          fee: p.fee,
          offer: b58(p.offer.addr),
          taker: b58(p.takerKey),
          token: b58(p.takerToken),
          rent: b58(p.rentPayer),
        };
        const got = {
          status: c.status,
          amount: c.takerAmount,
          matched: c.creatorMatched,
          cp: c.creatorPayout,
          tp: c.takerPayout,
          fee: c.fee,
          offer: b58(c.offer),
          taker: b58(c.taker),
          token: b58(c.takerToken),
          rent: b58(c.rentPayer),
        };
        for (const k of Object.keys(want) as (keyof typeof want)[])
          ctx.check(want[k] === got[k], () => `position ${b58(p.addr)} ${k}: chain ${got[k]}, model ${want[k]}`);
      };

      /**
       * What a successful transaction changed, checked against the rules and applied to the model.
       * Only accounts of the transaction can change: each tracked one is compared with the model,
       * each new program account must be a creation the rules allow.
       */
      w.reconcileProgram = async (s: Sent): Promise<Closed[]> => {
        const now = w.now;
        const signed = (k: PublicKey) => s.signers.has(b58(k));
        const touchedOffers = new Set<MOffer>();
        const touchedPositions = new Set<MPosition>();
        const closed: Closed[] = [];
        // Contracts: decided only by the authority (a side only after the cutoff), or voided by anyone after the deadline.
        for (const k of s.keys) {
          const m = byAddr.get(k);
          if (!m || !("deadline" in m)) continue;
          const c = await readContract(m.addr);
          ctx.check(c !== null, `contract ${k} vanished`);
          if (c.status === m.status && c.result === m.result) continue;
          ctx.check(m.status === C_OPEN, `contract ${k} changed after it was decided`);
          const byAuthority =
            signed(service.publicKey) &&
            (c.result === RESULT_VOID ? c.status === C_VOIDED : (c.result === 1 || c.result === 2) && c.status === C_RESOLVED && now >= m.cutoffAt);
          const expired = c.status === C_VOIDED && c.result === RESULT_VOID && now > m.deadline;
          ctx.check(
            byAuthority || expired,
            `contract ${k} became status ${c.status} result ${c.result} without the authority (signers ${[...s.signers].join(",")})`,
            s.r.logs,
          );
          m.status = c.status;
          m.result = c.result;
        }
        // New program accounts.
        const newPositions: { addr: PublicKey; c: ChainPosition }[] = [];
        for (const k of s.keys) {
          if (byAddr.has(k) || k === b58(CONFIG) || w.isRogue(k) || w.claimAddrs.has(k)) continue;
          const x = await w.accountKind(new PublicKey(k));
          if (!x || x.kind === "claim") continue; // claims: AttackerWorld
          if (x.kind === "position") {
            newPositions.push({ addr: new PublicKey(k), c: w.decode<ChainPosition>("position", x.data)! });
            continue;
          }
          if (x.kind === "offer") {
            const c = w.decode<ChainOffer>("offer", x.data)!;
            const contract = contractOf(c.contract);
            ctx.check(contract !== undefined, `offer ${k} on an unknown contract ${b58(c.contract)}`, s.r.logs);
            ctx.check(signed(c.creator), `offer ${k} created for ${b58(c.creator)} without its signature`, s.r.logs);
            ctx.check(signed(c.rentPayer), `offer ${k} records rent payer ${b58(c.rentPayer)} who did not sign`);
            ctx.check(offerPda(c.contract, c.creator, c.nonce).equals(new PublicKey(k)), `offer ${k} is not the canonical PDA of (contract, creator, nonce)`);
            ctx.check(contract.status === C_OPEN && now < contract.cutoffAt, `offer ${k} created on a contract that takes no offers`);
            ctx.check(
              c.expiresAt === 0n || (c.expiresAt > now && c.expiresAt <= contract.cutoffAt),
              `offer ${k} created with expiry ${c.expiresAt} (now ${now}, cutoff ${contract.cutoffAt})`,
              s.r.logs,
            );
            const t = c.creatorTotal,
              g = c.takerTarget;
            ctx.check(
              t >= LIM.minimumCreatorMicros &&
                t <= LIM.maximumWagerMicros &&
                g > 0n &&
                oddsOk(t, g) &&
                c.minimumTake >= LIM.minimumTakeMicros &&
                c.minimumTake <= g &&
                (c.side === 1 || c.side === 2),
              `offer ${k} breaks the limits`,
            );
            ctx.check(
              c.status === O_OPEN && c.takerFilled === 0n && c.creatorAllocated === 0n && c.positionCount === 0 && c.feeBps === FEE_BPS && c.revision === 1n,
              `offer ${k} created in a non-initial state`,
            );
            const creator = w.actorOf(c.creator);
            creator.expected -= t;
            const o: MOffer = {
              addr: new PublicKey(k),
              contract,
              creator,
              creatorKey: c.creator,
              creatorToken: c.creatorToken,
              rentPayer: c.rentPayer,
              nonce: c.nonce,
              side: c.side,
              feeBps: c.feeBps,
              total: t,
              target: g,
              minTake: c.minimumTake,
              expiresAt: c.expiresAt,
              filled: 0n,
              allocated: 0n,
              refunded: 0n,
              status: O_OPEN,
              revision: c.revision,
              positions: [],
              settled: 0,
              gone: false,
            };
            offers.push(o);
            byAddr.set(k, o);
            if (c.nonce >= nextNonce(c.creator)) nonces.set(b58(c.creator), c.nonce);
            touchedOffers.add(o);
            continue;
          }
          ctx.check(x.kind === "contract" && signed(service.publicKey), `transaction created a ${x.kind ?? "unknown"} account ${k}`, s.r.logs);
        }
        // Offers: takes and closes (and no revival of a closed one).
        for (const k of s.keys) {
          const o = byAddr.get(k);
          if (!o || !("creatorToken" in o) || touchedOffers.has(o)) continue;
          if (o.gone) {
            ctx.check(!(await chain.account(o.addr)), `offer ${k} was closed and exists again (revival)`, s.r.logs);
            continue;
          }
          const c = await readOffer(o.addr);
          touchedOffers.add(o);
          if (!c) {
            const finished = o.status === O_SETTLED || (o.status === O_CLOSED && o.settled === o.positions.length);
            ctx.check(
              finished && o.contract.status !== C_OPEN,
              `offer ${k} closed while not finished (status ${o.status}, ${o.settled}/${o.positions.length} settled, contract ${o.contract.status})`,
              s.r.logs,
            );
            o.gone = true;
            closed.push({ addr: k, rentPayer: o.rentPayer });
            continue;
          }
          if (c.takerFilled !== o.filled) {
            const amount = c.takerFilled - o.filled;
            const pos = [
              ...newPositions.filter((p) => p.c.offer.equals(o.addr)).map((p) => p.addr),
              ...o.positions.filter((p) => s.keys.has(b58(p.addr))).map((p) => p.addr),
            ];
            ctx.check(amount > 0n && pos.length === 1, `offer ${k} filled moved by ${amount} with ${pos.length} positions in the transaction`, s.r.logs);
            const pc = (await readPosition(pos[0]))!;
            const remaining = o.target - o.filled;
            const matched = matchedForTake(amount, o.total, o.target, o.filled, o.allocated);
            ctx.check(
              o.status === O_OPEN && o.contract.status === C_OPEN && now < o.contract.cutoffAt && !expired(o, now),
              `take on offer ${k} that is not takeable (status ${o.status}, contract ${o.contract.status}, now ${now}, cutoff ${o.contract.cutoffAt}, expiry ${o.expiresAt})`,
              s.r.logs,
            );
            ctx.check(signed(pc.taker) && !pc.taker.equals(o.creatorKey), `take on offer ${k} by ${b58(pc.taker)}: not signed, or the creator`, s.r.logs);
            ctx.check(
              amount <= remaining && (amount >= o.minTake || amount === remaining) && matched > 0n,
              `take of ${amount} on offer ${k} breaks the take rules`,
              s.r.logs,
            );
            let p = o.positions.find((x) => x.addr.equals(pos[0]));
            if (!p) {
              ctx.check(positionPda(o.addr, pc.taker).equals(pos[0]), `position ${b58(pos[0])} is not the canonical PDA`);
              ctx.check(signed(pc.rentPayer), `position ${b58(pos[0])} records rent payer ${b58(pc.rentPayer)} who did not sign`);
              p = {
                addr: pos[0],
                offer: o,
                taker: w.actorOf(pc.taker),
                takerKey: pc.taker,
                takerToken: pc.takerToken,
                rentPayer: pc.rentPayer,
                amount: 0n,
                matched: 0n,
                status: P_OPEN,
                creatorPayout: 0n,
                takerPayout: 0n,
                fee: 0n,
                gone: false,
              };
              o.positions.push(p);
              positions.push(p);
              byAddr.set(b58(pos[0]), p);
            }
            ctx.check(p.status === P_OPEN, `take increased settled position ${b58(p.addr)}`, s.r.logs);
            ctx.check(p.amount + amount <= LIM.maximumWagerMicros, `position ${b58(p.addr)} above the maximum wager`);
            p.amount += amount;
            p.matched += matched;
            p.taker.expected -= amount;
            o.filled += amount;
            o.allocated += matched;
            o.revision += 1n;
            if (o.filled === o.target) o.status = O_FILLED;
            touchedPositions.add(p);
          }
          if (c.status === O_CLOSED && o.status === O_OPEN) {
            ctx.check(
              signed(o.creatorKey) || now >= o.contract.cutoffAt || o.contract.status !== C_OPEN || expired(o, now),
              `offer ${k} closed by someone else before the cutoff and its expiry`,
              s.r.logs,
            );
            const refund = o.total - o.allocated;
            o.refunded = refund;
            o.creator.expected += refund;
            o.status = O_CLOSED;
            o.revision += 1n;
          }
        }
        // Positions: settlements and closes (and no revival).
        for (const k of s.keys) {
          const p = byAddr.get(k);
          if (!p || !("takerKey" in p)) continue;
          if (p.gone) {
            ctx.check(!(await chain.account(p.addr)), `position ${k} was closed and exists again (revival)`, s.r.logs);
            continue;
          }
          touchedPositions.add(p);
          const c = await readPosition(p.addr);
          if (!c) {
            ctx.check(p.status !== P_OPEN, `position ${k} closed while open`, s.r.logs);
            p.gone = true;
            closed.push({ addr: k, rentPayer: p.rentPayer });
            continue;
          }
          if (c.status !== P_OPEN && p.status === P_OPEN) {
            const o = p.offer;
            ctx.check(
              o.contract.status !== C_OPEN && o.status !== O_OPEN,
              `position ${k} settled before its contract was decided / its offer finished`,
              s.r.logs,
            );
            const creatorWins = o.contract.result === RESULT_VOID ? null : o.contract.result === o.side;
            const [toCreator, toTaker, fee] = payouts(creatorWins, o.feeBps, p.matched, p.amount);
            p.status = creatorWins === null ? P_REFUNDED : creatorWins ? P_CREATOR : P_TAKER;
            p.creatorPayout = toCreator;
            p.takerPayout = toTaker;
            p.fee = fee;
            o.creator.expected += toCreator;
            p.taker.expected += toTaker;
            w.treasuryExpected += fee;
            o.settled += 1;
            if (o.settled === o.positions.length) o.status = O_SETTLED;
            touchedOffers.add(o);
          }
        }
        for (const o of touchedOffers) {
          if (o.gone) continue;
          const c = await readOffer(o.addr);
          ctx.check(c !== null, `offer ${b58(o.addr)} vanished`);
          compareOffer(o, c);
        }
        for (const p of touchedPositions) {
          if (p.gone) continue;
          const c = await readPosition(p.addr);
          ctx.check(c !== null, `position ${b58(p.addr)} vanished`);
          comparePosition(p, c);
        }
        return closed;
      };

      // ---------------------------------------------------------------- instructions
      const ixCreateOffer = (
        payer: PublicKey,
        creator: PublicKey,
        creatorToken: PublicKey,
        contract: PublicKey,
        nonce: bigint,
        p: { side: number; total: bigint; target: bigint; minTake: bigint; expiresAt: bigint },
      ) => {
        const offer = offerPda(contract, creator, nonce);
        return buildIx(
          program,
          "createOffer",
          {
            nonce,
            bump: w.bumpOf(offer),
            side: p.side,
            creatorTotal: p.total,
            takerTarget: p.target,
            minimumTake: p.minTake,
            expectedFeeBps: FEE_BPS,
            expiresAt: p.expiresAt,
          },
          { payer, creator, creatorToken, config: CONFIG, contract, offer, vault: VAULT, tokenProgram: TOKEN_PROGRAM, systemProgram: SYSTEM_PROGRAM },
        );
      };
      const ixTake = (payer: PublicKey, taker: PublicKey, takerToken: PublicKey, o: MOffer, amount: bigint) => {
        const position = positionPda(o.addr, taker);
        return buildIx(
          program,
          "takeOffer",
          { amount, expectedRevision: o.revision, positionBump: w.bumpOf(position) },
          {
            payer,
            taker,
            takerToken,
            config: CONFIG,
            contract: o.contract.addr,
            offer: o.addr,
            position,
            vault: VAULT,
            tokenProgram: TOKEN_PROGRAM,
            systemProgram: SYSTEM_PROGRAM,
          },
        );
      };
      const ixTakeBest = (payer: PublicKey, taker: PublicKey, takerToken: PublicKey, contract: PublicKey, list: Pair[], a: SweepArgs) => {
        const positionOf = (l: Pair) => l.position ?? positionPda(l.offer, taker);
        const positionBumps = Array.from({ length: 16 }, (_, i) => (list[i] ? (list[i].bump ?? w.bumpOf(positionOf(list[i]))) : 0));
        const ix = buildIx(
          program,
          "takeBest",
          { side: a.side, amount: a.amount, worstOddsNumerator: a.num, worstOddsDenominator: a.den, mode: a.mode, positionBumps },
          { payer, taker, takerToken, config: CONFIG, contract, vault: VAULT, tokenProgram: TOKEN_PROGRAM, systemProgram: SYSTEM_PROGRAM },
        );
        for (const l of list)
          ix.keys.push({ pubkey: l.offer, isSigner: false, isWritable: true }, { pubkey: positionOf(l), isSigner: false, isWritable: true });
        return ix;
      };
      const ixClose = (caller: PublicKey, payer: PublicKey, o: MOffer) =>
        buildIx(
          program,
          "closeOffer",
          { expectedRevision: o.revision },
          {
            caller,
            config: CONFIG,
            contract: o.contract.addr,
            offer: o.addr,
            vault: VAULT,
            creatorToken: o.creatorToken,
            tokenProgram: TOKEN_PROGRAM,
            payer,
            creatorClaim: claimOf(o.creatorKey),
            systemProgram: SYSTEM_PROGRAM,
          },
          {},
          w.bumps,
        );
      const ixSettle = (payer: PublicKey, p: MPosition) =>
        buildIx(
          program,
          "settlePosition",
          {},
          {
            config: CONFIG,
            contract: p.offer.contract.addr,
            offer: p.offer.addr,
            position: p.addr,
            vault: VAULT,
            creatorToken: p.offer.creatorToken,
            takerToken: p.takerToken,
            treasury,
            tokenProgram: TOKEN_PROGRAM,
            payer,
            creatorClaim: claimOf(p.offer.creatorKey),
            takerClaim: claimOf(p.takerKey),
            systemProgram: SYSTEM_PROGRAM,
          },
          {},
          w.bumps,
        );
      const ixClosePosition = (p: MPosition, over: AccountMap = {}) =>
        buildIx(program, "closePosition", {}, { position: p.addr, rentPayer: p.rentPayer, ...over });
      const ixCloseOfferAccount = (o: MOffer, over: AccountMap = {}) =>
        buildIx(program, "closeOfferAccount", {}, { offer: o.addr, rentPayer: o.rentPayer, contract: o.contract.addr, ...over });
      const ixResolve = (c: MContract, result: number) =>
        buildIx(program, "resolveContract", { result }, { authority: service.publicKey, config: CONFIG, contract: c.addr });
      const ixVoidExpired = (c: MContract) => buildIx(program, "voidExpiredContract", {}, { contract: c.addr, config: CONFIG });

      // ---------------------------------------------------------------- the rules, for honest moves
      const openContracts = () => contracts.filter((c) => c.status === C_OPEN && w.now < c.cutoffAt);
      const takeable = (o: MOffer) => !o.gone && o.status === O_OPEN && o.contract.status === C_OPEN && w.now < o.contract.cutoffAt && !expired(o, w.now);
      /** Anyone may close it: Open, and expired or its contract takes no more offers. */
      const closableByAnyone = (o: MOffer) =>
        !o.gone && o.status === O_OPEN && (w.now >= o.contract.cutoffAt || o.contract.status !== C_OPEN || expired(o, w.now));
      /** A take amount the rules accept for `takerKey` on `o`, or null. */
      const takeAmount = (o: MOffer, takerKey: PublicKey, balance: bigint): bigint | null => {
        if (!takeable(o) || takerKey.equals(o.creatorKey)) return null;
        const p = o.positions.find((x) => x.takerKey.equals(takerKey));
        const remaining = o.target - o.filled;
        const room = LIM.maximumWagerMicros - (p?.amount ?? 0n);
        for (let i = 0; i < 4; i++) {
          const amount = rng.chance(0.3) || remaining <= o.minTake ? remaining : rng.big(o.minTake, remaining);
          if (amount <= 0n || amount > balance || amount > room) continue;
          if (matchedForTake(amount, o.total, o.target, o.filled, o.allocated) === 0n) continue;
          return amount;
        }
        return null;
      };
      /** An expiry the rules accept on `c` (open at w.now): none half the time, else up to the cutoff (sometimes exactly it, sometimes one second ahead). */
      const expiryFor = (c: MContract): bigint => {
        if (!c || w.now >= c.cutoffAt || rng.chance(0.5)) return 0n;
        if (rng.chance(0.15)) return c.cutoffAt;
        if (rng.chance(0.15)) return w.now + 1n;
        return rng.big(w.now + 1n, c.cutoffAt);
      };
      /** An expiry the rules refuse on `c`: now, the past, one second past the cutoff, far out, negative. */
      const badExpiryFor = (c: MContract): bigint =>
        rng.pick([w.now, w.now - rng.big(1n, 1_000n), c.cutoffAt + 1n, c.cutoffAt + rng.big(2n, 1n << 40n), (1n << 63n) - 1n, -1n]);
      const offerParams = (c?: MContract) => {
        const total = rng.big(1n, 60n) * UNIT + rng.big(0n, UNIT - 1n);
        let target = rng.big((total + 9n) / 10n, total * 10n);
        if (target < LIM.minimumTakeMicros) target = LIM.minimumTakeMicros;
        const minTake = rng.big(LIM.minimumTakeMicros, target < 5n * UNIT ? target : 5n * UNIT);
        return { total, target, minTake, side: rng.int(1, 2), expiresAt: c ? expiryFor(c) : 0n };
      };

      // ---------------------------------------------------------------- honest steps
      const newContract = async () => {
        const [templateId, eventId] = [randomUUID(), randomUUID()];
        const cutoffAt = w.now + rng.big(900n, 9_000n);
        const deadline = cutoffAt + rng.big(600n, 7_200n);
        const addr = w.pda([Buffer.from("contract"), Buffer.from(uuidBytes(templateId)), Buffer.from(uuidBytes(eventId))]);
        const ix = buildIx(
          program,
          "createContract",
          { templateId: uuidBytes(templateId), eventId: uuidBytes(eventId), cutoffAt, resolutionDeadline: deadline, bump: w.bumpOf(addr) },
          { authority: service.publicKey, payer: crank.publicKey, config: CONFIG, contract: addr, systemProgram: SYSTEM_PROGRAM },
        );
        const m: MContract = { addr, cutoffAt, deadline, status: C_OPEN, result: 0 };
        byAddr.set(b58(addr), m);
        contracts.push(m);
        await w.honestSend("create_contract", [ix], [service]);
      };
      const honestCreate = async () => {
        const open = openContracts();
        if (!open.length) return newContract();
        const h = rng.pick(honest);
        const c = rng.pick(open);
        const p = offerParams(c);
        if ((await w.realBalance(h.current.address)) < p.total) return void tally.add("honest:create_offer", "skip:balance");
        const key = h.keys[0];
        const payer = rng.chance(0.5) ? crank : key;
        await w.honestSend(
          "create_offer",
          [ixCreateOffer(payer.publicKey, key.publicKey, h.current.address, c.addr, nextNonce(key.publicKey), p)],
          [key, payer],
        );
      };
      const honestTake = async () => {
        const h = rng.pick(honest);
        const cands = offers.filter((o) => takeable(o) && !o.creatorKey.equals(h.keys[0].publicKey));
        if (!cands.length) return honestCreate();
        const o = rng.pick(cands);
        const amount = takeAmount(o, h.keys[0].publicKey, await w.realBalance(h.current.address));
        if (amount === null) return void tally.add("honest:take_offer", "skip:no-valid-amount");
        await w.honestSend("take_offer", [ixTake(crank.publicKey, h.keys[0].publicKey, h.current.address, o, amount)], [h.keys[0]]);
      };
      // ---------------------------------------------------------------- take_best
      /** What the rules say a take_best of `list` by `takerKey` on `c` does, from the model. */
      const planOf = (c: MContract, list: MOffer[], takerKey: PublicKey, a: SweepArgs): TakeBestPlan => {
        const book: SweepOffer[] = list.map((o) => ({
          address: b58(o.addr),
          side: o.side === 1 ? "sideA" : "sideB",
          status: OFFER_STATUS[o.status],
          creator: b58(o.creatorKey),
          creatorTotal: o.total,
          takerTarget: o.target,
          takerFilled: o.filled,
          creatorAllocated: o.allocated,
          minimumTake: o.minTake,
          revision: o.revision,
          expiresAt: o.expiresAt,
          contract: b58(o.contract.addr),
          held: o.positions.find((p) => p.takerKey.equals(takerKey))?.amount ?? 0n,
        }));
        return planTakeBest(book, {
          side: a.side === 1 ? "sideA" : "sideB",
          amount: a.amount,
          worstOdds: { numerator: a.num, denominator: a.den },
          mode: a.mode === 1 ? "fill-or-kill" : "fill-and-kill",
          taker: b58(takerKey),
          maximumWager: LIM.maximumWagerMicros,
          contract: { address: b58(c.addr), status: CONTRACT_STATUS[c.status], cutoffAt: c.cutoffAt },
          now: w.now,
        });
      };
      /** Offers of `c` a taker backing `side` can take (creators on the other side), best taker odds (S:T) first. */
      const bookOf = (c: MContract, side: number, takerKey: PublicKey) =>
        offers
          .filter((o) => o.contract === c && takeable(o) && o.side !== side && !o.creatorKey.equals(takerKey))
          .sort((x, y) => (y.total * x.target > x.total * y.target ? 1 : y.total * x.target < x.total * y.target ? -1 : 0));
      /** A sweep's arguments: up to a few units past `cap`, a limit at the odds of one offer of `book` (or none), either mode. */
      const sweepArgs = (side: number, book: MOffer[], cap: bigint): SweepArgs => {
        const amount = rng.chance(0.2) ? rng.big(1n, 3n * UNIT) : rng.big(UNIT, cap > UNIT ? cap : UNIT);
        const at = book.length && rng.chance(0.6) ? rng.pick(book) : undefined;
        const [num, den] = at ? [at.target + at.total, at.target] : [1n, 1n];
        return { side, amount, num, den, mode: rng.chance(0.3) ? 1 : 0 };
      };
      /**
       * Sends a take_best of `list` and checks it against the plan: it succeeds exactly when the
       * plan has no error and the balance covers what it takes (unless `structural`: a list the
       * plan cannot see is bent, then it must fail when the bent pair is reached), and each offer
       * moved by exactly its planned take.
       */
      const sweep = async (
        kind: string,
        send: (ix: TransactionInstruction) => Promise<Sent>,
        c: MContract,
        takerKey: PublicKey,
        token: PublicKey,
        list: MOffer[],
        a: SweepArgs,
        ix: TransactionInstruction,
        structural = false,
      ) => {
        const plan = planOf(c, list, takerKey, a);
        const balance = await w.realBalance(token);
        const before = new Map(list.map((o) => [o, o.filled]));
        const s = await send(ix);
        const expectOk = plan.error === null && balance >= plan.taken;
        if (!structural) {
          ctx.check(
            s.r.ok === expectOk,
            () => `${kind}: ${s.r.error ?? "ok"}, the plan says ${plan.error ?? "ok"} (taken ${plan.taken}, balance ${balance})`,
            s.r.logs,
          );
        } else ctx.check(!s.r.ok, `${kind}: a bent list went through`, s.r.logs);
        const takes = new Map<MOffer, bigint>();
        plan.fills.forEach((f, i) => "take" in f && s.r.ok && takes.set(list[i], f.take));
        for (const [o, was] of before)
          ctx.check(
            o.filled - was === (takes.get(o) ?? 0n),
            () => `${kind}: offer ${b58(o.addr)} moved by ${o.filled - was}, the plan says ${takes.get(o) ?? 0n}`,
            s.r.logs,
          );
      };
      const honestTakeBest = async () => {
        const h = rng.pick(honest);
        const key = h.keys[0];
        const side = rng.int(1, 2);
        const open = openContracts().filter((c) => bookOf(c, side, key.publicKey).length);
        if (!open.length) return honestTake();
        const c = rng.pick(open);
        const list = bookOf(c, side, key.publicKey).slice(0, rng.int(1, 6));
        const balance = await w.realBalance(h.current.address);
        if (balance < UNIT) return void tally.add("honest:take_best", "skip:balance");
        const a = sweepArgs(side, list, balance < 200n * UNIT ? balance : 200n * UNIT);
        if (a.amount > balance) a.amount = balance;
        const plan = planOf(c, list, key.publicKey, a);
        const ix = ixTakeBest(
          crank.publicKey,
          key.publicKey,
          h.current.address,
          c.addr,
          list.map((o) => ({ offer: o.addr })),
          a,
        );
        await sweep("honest take_best", (x) => w.honestSend("take_best", [x], [key], plan.error === null), c, key.publicKey, h.current.address, list, a, ix);
      };
      /** The attacker's take_best: by the rules (`abuse` false) or with its list bent one way. */
      const attackerTakeBest = async (abuse: boolean) => {
        const open = openContracts();
        if (!open.length) return aCreate();
        // Mostly a contract and side with a book to take from.
        const withBook = open.flatMap((k) => [1, 2].map((sd) => ({ k, sd }))).filter((x) => bookOf(x.k, x.sd, A.publicKey).length);
        const { k: c, sd: side } = withBook.length && rng.chance(0.9) ? rng.pick(withBook) : { k: rng.pick(open), sd: rng.int(1, 2) };
        const tok = await w.attackerToken(UNIT);
        if (!tok) return void tally.add("attack:play:take_best", "skip:no-tokens");
        let list = bookOf(c, side, A.publicKey).slice(0, rng.int(1, 8));
        const a = sweepArgs(side, list, 300n * UNIT);
        const pairs = (l: MOffer[]): Pair[] => l.map((o) => ({ offer: o.addr }));
        let kind = "play:take_best";
        let bent: Pair[] | undefined;
        if (abuse) {
          const others = offers.filter((o) => o.contract === c && !o.gone);
          const variant = rng.pick(["dup", "foreign", "mixed", "gone", "position", "boundary", "worst_first", "fok", "expired"] as const);
          kind = `take_best:${variant}`;
          const insert = (o: MOffer) => {
            const l = [...list];
            l.splice(rng.int(0, l.length), 0, o);
            return l.slice(0, 16);
          };
          if (variant === "dup" && list.length) list = insert(rng.pick(list));
          else if (variant === "foreign") {
            const far = offers.filter((o) => o.contract !== c && !o.gone);
            if (far.length) list = insert(rng.pick(far));
          } else if (variant === "mixed" && others.length) {
            // Its own offers, the other side's, filled and closed ones, in among the book.
            for (let i = 0; i < 3; i++) list = insert(rng.pick(others));
            list = list.filter((o, i) => list.indexOf(o) === i);
          } else if (variant === "gone") {
            const gone = offers.filter((o) => o.gone);
            if (gone.length) {
              list = [rng.pick(gone), ...list].slice(0, 16);
              bent = pairs(list);
            }
          } else if (variant === "position" && list.length) {
            // The first pair's position: another taker's, another offer's, or its own at a lower bump.
            const o = list[0];
            const theirs = o.positions.filter((p) => !p.takerKey.equals(A.publicKey) && !p.gone);
            const elsewhere = positions.filter((p) => !p.gone && p.offer !== o);
            const lower = allBumps([Buffer.from("position"), o.addr.toBuffer(), A.publicKey.toBuffer()], PID, 2)[1];
            const pick = rng.int(0, 2);
            const first: Pair =
              pick === 0 && theirs.length
                ? { offer: o.addr, position: rng.pick(theirs).addr }
                : pick === 1 && elsewhere.length
                  ? { offer: o.addr, position: rng.pick(elsewhere).addr }
                  : { offer: o.addr, position: lower.address, bump: lower.bump };
            const firstTaken = "take" in (planOf(c, list, A.publicKey, a).fills[0] ?? {});
            const existing = await chain.account(first.position!);
            if (firstTaken || (existing && existing.owner.equals(PID))) bent = [first, ...pairs(list.slice(1))];
          } else if (variant === "boundary" && list.length) {
            // A limit at one offer's exact taker odds, scaled, or one unit past them.
            const o = rng.pick(list);
            const k = rng.big(1n, 1_000n);
            a.num = (o.target + o.total) * k + (rng.chance(0.5) ? 1n : 0n);
            a.den = o.target * k;
          } else if (variant === "expired") {
            // Offers of this contract past their expiry (still Open), in among the book.
            const stale = others.filter((o) => o.status === O_OPEN && expired(o, w.now));
            for (let i = 0; i < 3 && stale.length; i++) list = insert(rng.pick(stale));
            list = list.filter((o, i) => list.indexOf(o) === i);
          } else if (variant === "worst_first") list = [...list].reverse();
          else if (variant === "fok") {
            a.mode = 1;
            // The whole book (fillable unless a minimum or the cap stops it), or one micro-unit more.
            a.amount = list.reduce((t, o) => t + o.target - o.filled, 0n) + rng.big(0n, 1n);
          }
        }
        if (!list.length) return void tally.add(`attack:${kind}`, "skip:empty-book");
        const ix = ixTakeBest(A.publicKey, A.publicKey, tok.address, c.addr, bent ?? pairs(list), a);
        await sweep(kind, (x) => w.attackSend(kind, [x]), c, A.publicKey, tok.address, list, a, ix, bent !== undefined);
      };
      const honestCloseOwn = async () => {
        const cands = offers.filter((o) => !o.gone && o.status === O_OPEN && o.creator.honest);
        if (!cands.length) return honestCreate();
        const o = rng.pick(cands);
        const key = o.creator.keys[0];
        await w.honestSend("close_offer", [ixClose(key.publicKey, key.publicKey, o)], [key]);
      };
      const serviceResolve = async () => {
        const due = contracts.filter((c) => c.status === C_OPEN && w.now >= c.cutoffAt);
        const early = contracts.filter((c) => c.status === C_OPEN && w.now < c.cutoffAt);
        if (due.length) {
          const c = rng.pick(due);
          if (w.now > c.deadline && rng.chance(0.5)) return void (await w.honestSend("void_expired_contract", [ixVoidExpired(c)], []));
          return void (await w.honestSend("resolve_contract", [ixResolve(c, rng.pick([1, 2, 1, 2, 3]))], [service]));
        }
        // Now and then the service voids a contract before its cutoff (an event called off).
        if (early.length && rng.chance(0.15)) return void (await w.honestSend("void_contract_early", [ixResolve(rng.pick(early), RESULT_VOID)], [service]));
        tally.add("honest:resolve_contract", "skip:none-due");
      };
      /** The service's crank on one offer: close after the cutoff, settle every position, reclaim rent. */
      const crankOffer = async (o: MOffer, all = false) => {
        if (closableByAnyone(o)) await w.honestSend("crank:close_offer", [ixClose(crank.publicKey, crank.publicKey, o)], []);
        if (o.contract.status === C_OPEN || o.status === O_OPEN) return;
        for (const p of o.positions) if (p.status === P_OPEN) await w.honestSend("crank:settle_position", [ixSettle(crank.publicKey, p)], []);
        for (const p of o.positions) if (!p.gone && (all || rng.chance(0.7))) await w.honestSend("crank:close_position", [ixClosePosition(p)], []);
        if (!o.gone && (all || rng.chance(0.6))) await w.honestSend("crank:close_offer_account", [ixCloseOfferAccount(o)], []);
      };
      const crankSome = async () => {
        const due = offers.filter((o) => closableByAnyone(o) || (!o.gone && o.status !== O_OPEN && o.contract.status !== C_OPEN));
        if (due.length) await crankOffer(rng.pick(due));
        else tally.add("honest:crank", "skip:nothing-due");
        for (const c of contracts)
          if (c.status === C_OPEN && w.now > c.deadline && rng.chance(0.5)) await w.honestSend("crank:void_expired", [ixVoidExpired(c)], []);
      };

      // ---------------------------------------------------------------- the attacker playing by the rules
      const attackerNonces: { contract: MContract; nonce: bigint }[] = [];
      const aCreate = async (kind = "play:create_offer", reuse = false, badExpiry = false) => {
        const open = openContracts();
        let c = open.length ? rng.pick(open) : rng.pick(contracts);
        let nonce = nextNonce(A.publicKey);
        if (reuse && attackerNonces.length) {
          const u = rng.pick(attackerNonces);
          nonce = u.nonce;
          if (rng.chance(0.7)) c = u.contract;
        }
        const p = offerParams(c);
        if (badExpiry) p.expiresAt = badExpiryFor(c);
        const tok = (await w.attackerToken(p.total)) ?? aMain;
        const s = await w.attackSend(kind, [ixCreateOffer(rng.pick([A, A2]).publicKey, A.publicKey, tok.address, c.addr, nonce, p)], [A2], {
          mustFail: badExpiry,
        });
        if (s.r.ok) attackerNonces.push({ contract: c, nonce });
      };
      /** Honest offers still Open whose expiry has come (their contract still open): nobody may take them, anyone may close them. */
      const expiredHonest = () => offers.filter((o) => !o.gone && o.status === O_OPEN && o.creator.honest && expired(o, w.now) && o.contract.status === C_OPEN);
      /** The attacker takes an honest offer at or after its expiry: refused. */
      const aTakeExpired = async () => {
        const stale = expiredHonest();
        if (!stale.length) return void tally.add("attack:take_expired", "skip:none-expired");
        const o = rng.pick(stale);
        const tok = (await w.attackerToken(1n)) ?? aMain;
        const amount = rng.chance(0.5) ? o.target - o.filled : o.minTake;
        await w.attackSend("take_expired", [ixTake(rng.pick([A, A2]).publicKey, A.publicKey, tok.address, o, amount)], [A2], { mustFail: true });
      };
      /** The attacker closes an honest offer: before its expiry (and the cutoff) refused; after it allowed, the refund the creator's. */
      const aCloseHonest = async () => {
        const live = offers.filter((o) => !o.gone && o.status === O_OPEN && o.creator.honest && !closableByAnyone(o));
        const stale = expiredHonest();
        if (stale.length && (rng.chance(0.7) || !live.length))
          return void (await w.attackSend("close_expired", [ixClose(A.publicKey, A.publicKey, rng.pick(stale))]));
        if (!live.length) return void tally.add("attack:close_early", "skip:none-live");
        await w.attackSend("close_early", [ixClose(A.publicKey, A.publicKey, rng.pick(live))], [], { mustFail: true });
      };
      /** The clock to one second before an open offer's expiry, or to the expiry itself. */
      const expiryClock = async () => {
        const ahead = offers.filter((o) => !o.gone && o.status === O_OPEN && o.expiresAt > w.now);
        if (!ahead.length) return void tally.add("honest:expiry_clock", "skip:none-ahead");
        const before = rng.chance(0.5);
        const at = rng.pick(ahead).expiresAt - (before ? 1n : 0n);
        if (at > w.now) await w.advance(at - w.now);
        tally.add("honest:expiry_clock", before ? "one_second_before" : "at_expiry");
      };
      const aTake = async (late: boolean) => {
        const cands = offers.filter((o) => takeable(o) && o.creator.honest);
        if (!cands.length) return aCreate();
        let o = rng.pick(cands);
        if (late) {
          o = cands.reduce((a, b) => (b.contract.cutoffAt < a.contract.cutoffAt ? b : a));
          if (o.contract.cutoffAt - 1n > w.now) await w.advance(o.contract.cutoffAt - 1n - w.now);
        }
        const tok = await w.attackerToken(1n);
        if (!tok) return void tally.add("attack:play:take_offer", "skip:no-tokens");
        const amount = takeAmount(o, A.publicKey, await w.realBalance(tok.address)) ?? o.target - o.filled;
        await w.attackSend(late ? "late_take" : "play:take_offer", [ixTake(rng.pick([A, A2]).publicKey, A.publicKey, tok.address, o, amount)], [A2]);
      };
      const aCloseOwn = async () => {
        const cands = offers.filter((o) => !o.gone && o.status === O_OPEN && !o.creator.honest);
        if (!cands.length) return aCreate();
        await w.attackSend("play:close_offer", [ixClose(A.publicKey, rng.pick([A, A2]).publicKey, rng.pick(cands))], [A2]);
      };
      /** The attacker cranks (anyone may), paying any claim rent itself. */
      const aCrank = async () => {
        const cands = offers.filter((o) => closableByAnyone(o) || (!o.gone && o.status !== O_OPEN && o.contract.status !== C_OPEN));
        if (!cands.length) return void tally.add("attack:play:crank", "skip:nothing");
        const o = rng.pick(cands);
        if (o.status === O_OPEN) return void (await w.attackSend("play:crank_close", [ixClose(A.publicKey, A.publicKey, o)]));
        const p = o.positions.find((x) => x.status === P_OPEN);
        if (p) await w.attackSend("play:crank_settle", [ixSettle(A.publicKey, p)]);
      };

      // ---------------------------------------------------------------- attacks of this program
      const prefundTargets = () => {
        const t: PublicKey[] = [];
        for (const h of honest) {
          const k = h.keys[0].publicKey;
          t.push(claimOf(k));
          for (const c of openContracts()) t.push(offerPda(c.addr, k, nextNonce(k)));
        }
        for (const o of offers.filter(takeable))
          for (const h of honest) if (!o.positions.some((p) => p.takerKey.equals(h.keys[0].publicKey))) t.push(positionPda(o.addr, h.keys[0].publicKey));
        return t;
      };
      const reclaimAttack = async () => {
        if (rng.chance(0.5) && positions.length) {
          const p = rng.pick(positions);
          await w.attackSend("close_position", [ixClosePosition(p, { rentPayer: rng.pick([p.rentPayer, A.publicKey, A2.publicKey]) })]);
        } else if (offers.length) {
          const o = rng.pick(offers);
          await w.attackSend("close_offer_account", [
            ixCloseOfferAccount(o, { rentPayer: rng.pick([o.rentPayer, A.publicKey]), contract: rng.pick([o.contract.addr, rng.pick(contracts).addr]) }),
          ]);
        }
      };
      const extraAccounts = (): PublicKey[] => {
        const u: PublicKey[] = [];
        for (let i = 0; i < 4 && contracts.length; i++) u.push(rng.pick(contracts).addr);
        for (let i = 0; i < 6 && offers.length; i++) u.push(rng.pick(offers).addr);
        for (let i = 0; i < 6 && positions.length; i++) u.push(rng.pick(positions).addr);
        if (offers.length) {
          const o = rng.pick(offers);
          u.push(
            ...allBumps([Buffer.from("offer"), o.contract.addr.toBuffer(), o.creatorKey.toBuffer(), u64le(o.nonce)], PID, 3)
              .slice(1)
              .map((p) => p.address),
          );
          u.push(...allBumps([Buffer.from("position"), o.addr.toBuffer(), A.publicKey.toBuffer()], PID, 3).map((p) => p.address));
        }
        return u;
      };
      /** A plausible account map and arguments for `name`, the attacker signing wherever a signature is needed. */
      const baseFor = (name: string): BaseCall => {
        // Mostly live entities (so the call gets past the state checks to the account checks), sometimes any.
        const livePos = positions.filter((p) => p.status === P_OPEN);
        const anyPos = livePos.length && rng.chance(0.7) ? rng.pick(livePos) : positions.length ? rng.pick(positions) : undefined;
        const liveOffers = offers.filter(takeable);
        const o = liveOffers.length && rng.chance(0.7) ? rng.pick(liveOffers) : offers.length ? rng.pick(offers) : anyPos?.offer;
        const c = openContracts().length && rng.chance(0.7) ? rng.pick(openContracts()) : contracts.length ? rng.pick(contracts) : undefined;
        const common = w.attackAccounts();
        switch (name) {
          case "initializeConfig":
          case "updateConfig":
            return w.configAttempt(name, common, { feeBps: 0, offersEnabled: 1, limits: LIM });
          case "setTreasury":
            return w.configAttempt(name, common);
          case "createContract": {
            const [t, e] = [randomUUID(), randomUUID()];
            const addr = w.pda([Buffer.from("contract"), Buffer.from(uuidBytes(t)), Buffer.from(uuidBytes(e))]);
            return {
              accounts: { ...common, authority: A.publicKey, contract: addr },
              args: { templateId: uuidBytes(t), eventId: uuidBytes(e), cutoffAt: w.now + 10n, resolutionDeadline: w.now + 20n, bump: w.bumpOf(addr) },
            };
          }
          case "resolveContract":
            return { accounts: { ...common, authority: A.publicKey, contract: c?.addr }, args: { result: rng.int(0, 4) } };
          case "voidExpiredContract":
            return { accounts: { ...common, contract: c?.addr }, args: {} };
          case "createOffer": {
            if (!c) return { accounts: common, args: {} };
            const nonce = rng.chance(0.5) ? nextNonce(A.publicKey) : BigInt(rng.int(0, 5));
            const offer = offerPda(c.addr, A.publicKey, nonce);
            const p = offerParams(c);
            if (rng.chance(0.3)) p.expiresAt = badExpiryFor(c);
            return {
              accounts: { ...common, creator: A.publicKey, creatorToken: aMain.address, contract: c.addr, offer },
              args: {
                nonce,
                bump: w.bumpOf(offer),
                side: p.side,
                creatorTotal: p.total,
                takerTarget: p.target,
                minimumTake: p.minTake,
                expectedFeeBps: FEE_BPS,
                expiresAt: p.expiresAt,
              },
            };
          }
          case "takeOffer": {
            if (!o) return { accounts: common, args: { amount: 1n, expectedRevision: 1n, positionBump: 255 } };
            const position = positionPda(o.addr, A.publicKey);
            return {
              accounts: { ...common, taker: A.publicKey, takerToken: aMain.address, contract: o.contract.addr, offer: o.addr, position },
              args: { amount: o.target - o.filled, expectedRevision: o.revision, positionBump: w.bumpOf(position) },
            };
          }
          case "takeBest": {
            const k = o?.contract ?? c;
            if (!k) return { accounts: common, args: {} };
            const list = offers.filter((x) => x.contract === k && !x.gone).slice(0, rng.int(1, 5));
            const positionBumps = Array.from({ length: 16 }, (_, i) => (list[i] ? w.bumpOf(positionPda(list[i].addr, A.publicKey)) : 0));
            return {
              accounts: { ...common, taker: A.publicKey, takerToken: aMain.address, contract: k.addr },
              args: {
                side: rng.int(1, 2),
                amount: rng.big(1n, 100n * UNIT),
                worstOddsNumerator: 1n,
                worstOddsDenominator: 1n,
                mode: rng.int(0, 1),
                positionBumps,
              },
              remaining: list.flatMap((x) => [x.addr, positionPda(x.addr, A.publicKey)]),
            };
          }
          case "closeOffer": {
            if (!o) return { accounts: common, args: { expectedRevision: 1n, creatorClaimBump: 255 } };
            const cl = claimOf(o.creatorKey);
            return {
              accounts: { ...common, caller: A.publicKey, contract: o.contract.addr, offer: o.addr, creatorToken: o.creatorToken, creatorClaim: cl },
              args: { expectedRevision: o.revision, creatorClaimBump: w.bumpOf(cl) },
            };
          }
          case "settlePosition": {
            if (!anyPos) return { accounts: common, args: { creatorClaimBump: 255, takerClaimBump: 255 } };
            const p = anyPos;
            const cc = claimOf(p.offer.creatorKey),
              tc = claimOf(p.takerKey);
            return {
              accounts: {
                ...common,
                contract: p.offer.contract.addr,
                offer: p.offer.addr,
                position: p.addr,
                creatorToken: p.offer.creatorToken,
                takerToken: p.takerToken,
                creatorClaim: cc,
                takerClaim: tc,
              },
              args: { creatorClaimBump: w.bumpOf(cc), takerClaimBump: w.bumpOf(tc) },
            };
          }
          case "closePosition":
            return { accounts: { position: anyPos?.addr, rentPayer: anyPos?.rentPayer ?? A.publicKey }, args: {} };
          case "closeOfferAccount":
            return { accounts: { offer: o?.addr, rentPayer: o?.rentPayer ?? A.publicKey, contract: (o?.contract ?? c)?.addr }, args: {} };
          case "withdrawClaim":
            return w.withdrawClaimAttempt(common);
          default:
            return { accounts: common, args: {} };
        }
      };

      /**
       * A keypair the attacker signs with as the claim account of a payout whose payee cannot
       * receive (its recorded token account closed or re-owned): the payout must go to the payee's
       * canonical claim or the call must fail.
       */
      const signerAsClaim = async () => {
        const receives = async (token: PublicKey, owner: PublicKey) => canReceive(chain, token, w.mint.mint, owner);
        const settle: { p: MPosition; slot: "creatorClaim" | "takerClaim" }[] = [];
        for (const p of positions.filter((x) => x.status === P_OPEN && x.offer.contract.status !== C_OPEN && x.offer.status !== O_OPEN)) {
          if (!(await receives(p.offer.creatorToken, p.offer.creatorKey))) settle.push({ p, slot: "creatorClaim" });
          if (!(await receives(p.takerToken, p.takerKey))) settle.push({ p, slot: "takerClaim" });
        }
        const close: MOffer[] = [];
        for (const o of offers.filter(closableByAnyone)) if (!(await receives(o.creatorToken, o.creatorKey))) close.push(o);
        if (close.length && (!settle.length || rng.chance(0.3))) {
          const o = rng.pick(close);
          return w.signerAsPda(
            "signer_as_claim",
            "closeOffer",
            "creatorClaim",
            () => ({ accounts: { ...accountsOf(ixClose(A.publicKey, A.publicKey, o)) }, args: { expectedRevision: o.revision } }),
            false,
          );
        }
        if (!settle.length) return void tally.add("attack:signer_as_claim", "skip:no-blocked-payee");
        const { p, slot } = rng.pick(settle);
        return w.signerAsPda("signer_as_claim", "settlePosition", slot, () => ({ accounts: accountsOf(ixSettle(A.publicKey, p)), args: {} }), false);
      };
      const accountsOf = (ix: TransactionInstruction) => w.accountsOf(ix);

      // ---------------------------------------------------------------- the run
      for (let i = 0; i < 3; i++) await newContract();
      await w.checkMoney(owed());
      const targets = { baseFor, extraAccounts, prefundTargets };
      const steps: Step[] = [
        // honest users and the service
        [95, "honest_create", honestCreate],
        [130, "honest_take", honestTake],
        [40, "honest_take_best", honestTakeBest],
        [30, "honest_close", honestCloseOwn],
        [50, "resolve", serviceResolve],
        [90, "crank", crankSome],
        ...w.honestTokenSteps(20),
        [70, "clock", () => w.advance(rng.chance(0.1) ? rng.big(3_600n, 10_000n) : rng.big(20n, 900n))],
        [25, "expiry_clock", expiryClock],
        // the attacker playing by the rules
        [25, "a_create", () => aCreate()],
        [30, "a_take", () => aTake(false)],
        [10, "a_late_take", () => aTake(true)],
        [20, "a_take_best", () => attackerTakeBest(false)],
        [10, "a_close", aCloseOwn],
        [15, "a_withdraw", async () => (await w.attackerWithdraw()) || aCrank()],
        [10, "a_crank", aCrank],
        // attacks
        ...w.configAndTokenAttacks({ offersEnabled: 1, limits: LIM }, targets),
        [25, "reclaim", reclaimAttack],
        [40, "take_best_abuse", () => attackerTakeBest(true)],
        [15, "recreate_offer", () => aCreate("recreate_offer", true)],
        [10, "bad_expiry", () => aCreate("bad_expiry", false, true)],
        [20, "take_expired", aTakeExpired],
        [20, "close_honest", aCloseHonest],
        ...w.accountAttacks(
          targets,
          [
            ["createOffer", "offer"],
            ["takeOffer", "position"],
          ],
          signerAsClaim,
        ),
      ];
      await w.runSteps(steps, owed, {
        choose: (drawn) => (openContracts().length < 2 || rng.chance(0.025) ? [0, "new_contract", newContract] : drawn),
        size: () => `${offers.length} offers`,
      });

      // ---------------------------------------------------------------- wind-down: every honest stake must come back by the rules
      const last = contracts.reduce((m, c) => (c.deadline > m ? c.deadline : m), w.now);
      await w.advance(last - w.now + 1n);
      for (const c of contracts) if (c.status === C_OPEN) await w.honestSend("resolve_contract", [ixResolve(c, rng.pick([1, 2, 3]))], [service]);
      for (const o of offers) await crankOffer(o, true);
      await w.withdrawAllHonest();
      await w.checkMoney(owed());
      ctx.check(owed() === 0n, `the model still owes ${owed()} after the wind-down`);
      ctx.check(offers.every((o) => o.gone) && positions.every((p) => p.gone), "an account could not be closed after the wind-down");
      for (const h of honest) ctx.check((await w.readClaim(claimOf(h.keys[0].publicKey))) === null, `${h.name} still has a claim after withdrawing`);

      console.log(await w.report(`${contracts.length} contracts, ${offers.length} offers, ${positions.length} positions`));
      expect(tally.total("attack:")).toBeGreaterThan(FUZZ_ACTIONS / 4);
    },
    FUZZ_TIMEOUT_MS,
  );
});
