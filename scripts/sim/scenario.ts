/**
 * A reproducible market scenario on the offers program: many users create, take and close
 * offers on contracts spread over simulated days; the service's crank resolves contracts after
 * their cutoff (some voided, some left to expire and voided by anyone), closes open offers,
 * settles every position and reclaims rent. Invariants are checked as it goes.
 */
import type { PublicKey } from "@solana/web3.js";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import { TestChain, type EngineName, type TxResult } from "../../harness/chain";
import { LAUNCH_LIMITS, OFFERS_ERRORS, type OfferAccount, type SideName } from "../../idl/client/offers";
import { planTakeBest, takerOdds, type TakeBestMode } from "../../idl/client/take-best-rules";
import { Rng } from "../../harness/random";
import { Timeline, type LiveContract, type ScenarioOptions } from "./timeline";
import { BookRecorder, quoteOf, sampleInterval, type ContractBookTrace, type QuotedOffer } from "./book-report";

export type { ScenarioOptions };

export interface ScenarioSummary {
  engine: EngineName;
  users: number;
  actions: number;
  simulatedDays: number;
  transactions: number;
  failedTransactions: number;
  rejections: Record<string, number>;
  offersCreated: number;
  fills: number;
  /** Takers' take-best sweeps that landed, the offers they took, and fill-or-kill sweeps the program refused whole. */
  takeBestSweeps: number;
  sweepOffersTaken: number;
  fillOrKillRefusals: number;
  closes: number;
  contracts: number;
  contractsResolved: number;
  contractsVoided: number;
  positionsSettled: number;
  volumeMicros: bigint;
  feesMicros: bigint;
  payoutsMicros: bigint;
  computeUnits: bigint;
  invariantChecks: number;
  wallSeconds: number;
  txPerSecond: number;
  /** Each contract's best taker odds per side over time (./book-report.ts), from the offer accounts. */
  book: ContractBookTrace[];
  /** Simulated seconds between two book samples. */
  bookSampleSeconds: number;
}

interface LiveOffer {
  address: PublicKey;
  contract: PublicKey;
  creator: User;
  /** Each taker's position on the offer: taker amount held (the per-position maximum counts it). */
  takers: Map<User, bigint>;
  open: boolean;
}

/**
 * The share of taker actions that are a take-best (a bettor who wants an amount at about the best
 * price rather than one offer), the share of those that are fill-or-kill, the worst odds accepted
 * as a fraction of the best available, and how many of the best offers a sweep lists (a legacy
 * transaction holds 10 with the fee payer apart from the taker).
 */
export const TAKE_BEST_SHARE = 0.3;
export const FILL_OR_KILL_SHARE = 0.25;
const WORST_ODDS_OF_BEST = { numerator: 19n, denominator: 20n };
const SWEEP_OFFERS = 10;

export async function runScenario(o: ScenarioOptions): Promise<ScenarioSummary> {
  const rng = new Rng(o.seed);
  const chain = await TestChain.start(undefined, { engine: o.engine });
  const w = await OffersWorld.create({ chain });
  const users: User[] = [];
  for (let i = 0; i < o.users; i++) users.push(await w.user(rng.big(100n, 2_000n) * UNIT));
  const initialTotal = (await w.balances()).total;
  const s: ScenarioSummary = {
    engine: o.engine,
    users: o.users,
    actions: o.actions,
    simulatedDays: o.days,
    transactions: 0,
    failedTransactions: 0,
    rejections: {},
    offersCreated: 0,
    fills: 0,
    takeBestSweeps: 0,
    sweepOffersTaken: 0,
    fillOrKillRefusals: 0,
    closes: 0,
    contracts: 0,
    contractsResolved: 0,
    contractsVoided: 0,
    positionsSettled: 0,
    volumeMicros: 0n,
    feesMicros: 0n,
    payoutsMicros: 0n,
    computeUnits: 0n,
    invariantChecks: 0,
    wallSeconds: 0,
    txPerSecond: 0,
    book: [],
    bookSampleSeconds: 0,
  };
  const tally = (r: TxResult) => {
    s.transactions++;
    s.computeUnits += r.computeUnits;
    if (!r.ok) {
      s.failedTransactions++;
      const name = r.code !== null ? (OFFERS_ERRORS.get(r.code)?.name ?? `custom ${r.code}`) : "runtime";
      s.rejections[name] = (s.rejections[name] ?? 0) + 1;
    }
    return r.ok;
  };
  const contracts: LiveContract[] = [];
  const offers: LiveOffer[] = [];
  const time = await Timeline.start(o, () => chain.now());
  const book = new BookRecorder();
  const every = sampleInterval(o.actions);
  s.bookSampleSeconds = Number(time.at(every) - time.at(0));

  /** The book of every contract still taking offers, as the program's accounts hold it. */
  const sampleBooks = async (now: bigint) => {
    for (const [n, c] of contracts.entries()) {
      if (c.done || now >= c.cutoff) continue;
      const quoted: QuotedOffer[] = [];
      for (const off of offers.filter((x) => x.contract.equals(c.address))) {
        const a = await w.offer(off.address);
        if (a.status === "Open")
          quoted.push({ creatorSide: a.side, creatorTotal: a.creatorTotal, takerTarget: a.takerTarget, remaining: a.takerTarget - a.takerFilled });
      }
      book.record(c.address.toBase58(), `contract ${n + 1}`, Number(now - time.t0), [quoteOf(quoted, "sideA", "A"), quoteOf(quoted, "sideB", "B")]);
    }
  };

  const newContract = async () => {
    const cutoffIn = rng.big(3_600n, 2n * 86_400n);
    const address = await w.contract({ cutoffIn, deadlineAfterCutoff: 6n * 3_600n });
    const now = await chain.now();
    contracts.push({ address, cutoff: now + cutoffIn, deadline: now + cutoffIn + 6n * 3_600n, done: false });
    s.contracts++;
    s.transactions++;
  };

  /** The service's crank for contracts past their cutoff. */
  const crank = async (now: bigint) => {
    for (const c of contracts) {
      if (c.done || now < c.cutoff) continue;
      const k = await w.contractAccount(c.address);
      if (k.status === "Open") {
        if (rng.chance(0.1) && now <= c.deadline) continue; // late resolution: left for the deadline
        if (now > c.deadline) {
          if (tally(await w.send([await w.client.voidExpiredContract({ contract: c.address })]))) s.contractsVoided++;
        } else if (tally(await w.resolve(c.address, rng.pick(["sideA", "sideB", "sideA", "sideB", "void"] as const)))) {
          s.contractsResolved++;
        }
      }
      for (const off of offers.filter((x) => x.contract.equals(c.address))) {
        const acc = await w.offer(off.address);
        if (acc.status === "Open" && tally(await w.close(rng.pick(users).key, off.address))) s.closes++;
        for (const t of off.takers.keys()) {
          const pos = w.positionOf(off.address, t);
          const before = await w.mint.balance(w.treasury);
          if (tally(await w.settle(pos))) {
            s.positionsSettled++;
            const p = await w.position(pos);
            s.payoutsMicros += p.creatorPayout + p.takerPayout;
            s.feesMicros += (await w.mint.balance(w.treasury)) - before;
            tally(await w.send([await w.client.closePosition({ position: pos, rentPayer: chain.payer.publicKey })]));
          }
        }
        tally(await w.closeOfferAccount(off.address));
      }
      c.done = true;
      for (let i = offers.length - 1; i >= 0; i--) if (offers[i].contract.equals(c.address)) offers.splice(i, 1);
    }
  };

  /**
   * A taker's take-best on the contract of a random open offer, backing the other outcome: a
   * random amount (up to 1.5 times what the listed offers hold) at no worse than 95% of the best
   * taker odds, over the best offers first. The program's effect is checked against the rules
   * module's plan (idl/client/take-best-rules.ts planTakeBest) of the same list: what each offer
   * was taken for, what the taker paid, and under fill-or-kill nothing moved when it refused.
   */
  const sweep = async (now: bigint) => {
    const takingOffers = offers.filter((x) => x.open && contracts.some((c) => c.address.equals(x.contract) && c.cutoff > now));
    if (takingOffers.length === 0) return;
    const contract = rng.pick(takingOffers).contract;
    const timing = {
      address: contract.toBase58(),
      status: (await w.contractAccount(contract)).status,
      cutoffAt: contracts.find((c) => c.address.equals(contract))!.cutoff,
    };
    const taker = rng.pick(users);
    const listed: { off: LiveOffer; a: OfferAccount }[] = [];
    for (const off of offers.filter((x) => x.open && x.contract.equals(contract))) listed.push({ off, a: await w.offer(off.address) });
    const side: SideName = listed[0].a.side === "sideA" ? "sideB" : "sideA";
    const book = listed.filter(({ a }) => a.side !== side && a.status === "Open" && a.takerFilled < a.takerTarget);
    if (book.length === 0) return;
    // Best taker odds (T + S) : T first, i.e. the highest S : T; oldest first within a level (the list's order).
    book.sort((x, y) => {
      const d = y.a.creatorTotal * x.a.takerTarget - x.a.creatorTotal * y.a.takerTarget;
      return d > 0n ? 1 : d < 0n ? -1 : 0;
    });
    const list = book.slice(0, SWEEP_OFFERS);
    const best = takerOdds(list[0].a);
    const worstOdds = { numerator: best.numerator * WORST_ODDS_OF_BEST.numerator, denominator: best.denominator * WORST_ODDS_OF_BEST.denominator };
    const available = list.reduce((t, { a }) => t + a.takerTarget - a.takerFilled, 0n);
    const amount = rng.big(UNIT < available ? UNIT : 1n, available + available / 2n);
    const mode: TakeBestMode = rng.chance(FILL_OR_KILL_SHARE) ? "fill-or-kill" : "fill-and-kill";
    const plan = planTakeBest(
      list.map(({ off, a }) => ({
        ...a,
        address: off.address.toBase58(),
        contract: a.contract.toBase58(),
        creator: a.creator.toBase58(),
        held: off.takers.get(taker) ?? 0n,
      })),
      { side, amount, worstOdds, mode, taker: taker.key.publicKey.toBase58(), maximumWager: LAUNCH_LIMITS.maximumWagerMicros, contract: timing, now },
    );
    const paidBefore = await w.mint.balance(taker.token);
    const ok = tally(
      await w.takeBest(
        taker,
        contract,
        list.map((x) => x.off.address),
        amount,
        { side, worstOdds, mode },
      ),
    );
    const paid = paidBefore - (await w.mint.balance(taker.token));
    const expectOk = plan.error === null && paidBefore >= plan.taken;
    if (ok !== expectOk)
      throw new Error(`take-best ${ok ? "landed" : "refused"}, the rules say ${plan.error ?? "it lands"} (balance ${paidBefore}, taken ${plan.taken})`);
    if (!ok) {
      if (paid !== 0n) throw new Error(`a refused take-best moved ${paid}`);
      if (plan.error === "NotFilled") s.fillOrKillRefusals++;
      return;
    }
    if (paid !== plan.taken) throw new Error(`take-best took ${paid}, the rules say ${plan.taken}`);
    for (const [k, f] of plan.fills.entries()) {
      const { off, a } = list[k];
      const after = await w.offer(off.address);
      const take = "take" in f ? f.take : 0n;
      if (after.takerFilled !== a.takerFilled + take || after.creatorAllocated !== a.creatorAllocated + ("take" in f ? f.matched : 0n))
        throw new Error(`take-best filled ${off.address.toBase58()} otherwise than the rules`);
      if (take === 0n) continue;
      off.takers.set(taker, (off.takers.get(taker) ?? 0n) + take);
      if (after.takerFilled === after.takerTarget) off.open = false;
      s.fills++;
      s.sweepOffersTaken++;
    }
    s.takeBestSweeps++;
    s.volumeMicros += plan.taken;
  };

  for (let i = 0; i < o.actions; i++) {
    const now = time.at(i);
    await chain.setTime(now);
    const live = contracts.filter((c) => !c.done && c.cutoff > now + 60n);
    if (live.length < 8 || rng.chance(0.01)) await newContract();
    const roll = rng.int(0, 99);
    if (roll < 35) {
      const creator = rng.pick(users);
      const c = rng.pick(contracts.filter((x) => !x.done && x.cutoff > now + 60n));
      const total = rng.big(1n, 50n) * UNIT;
      const target = (total * rng.big(3n, 40n)) / 10n;
      const { r, offer } = await w.createOffer(creator, c.address, { side: rng.pick(["sideA", "sideB"] as const), total, target, minTake: UNIT });
      if (tally(r)) {
        offers.push({ address: offer, contract: c.address, creator, takers: new Map(), open: true });
        s.offersCreated++;
        s.volumeMicros += total;
      }
    } else if (roll < 85 && offers.some((x) => x.open) && rng.chance(TAKE_BEST_SHARE)) {
      await sweep(now);
    } else if (roll < 85 && offers.some((x) => x.open)) {
      const off = rng.pick(offers.filter((x) => x.open));
      const taker = rng.pick(users);
      const acc = await w.offer(off.address);
      const remaining = acc.takerTarget - acc.takerFilled;
      const amount = rng.chance(0.4) || remaining < 2n * UNIT ? remaining : rng.big(UNIT, remaining);
      if (tally(await w.take(taker, off.address, amount))) {
        off.takers.set(taker, (off.takers.get(taker) ?? 0n) + amount);
        if (amount === remaining) off.open = false;
        s.fills++;
        s.volumeMicros += amount;
      }
    } else if (roll < 90 && offers.some((x) => x.open)) {
      const off = rng.pick(offers.filter((x) => x.open));
      if (tally(await w.close(off.creator.key, off.address))) {
        s.closes++;
        off.open = false;
      }
    } else {
      await crank(now);
    }
    if (i % every === 0) await sampleBooks(now);
    if (i % 50 === 0) {
      if ((await w.balances()).total !== initialTotal) throw new Error(`funds not conserved at action ${i}`);
      s.invariantChecks++;
    }
    o.onProgress?.(i + 1);
  }
  // Run out the clock: every contract resolves or expires, every position settles.
  await chain.setTime(time.end);
  await crank(time.end);
  const end = await w.balances();
  if (end.total !== initialTotal) throw new Error("funds not conserved at the end");
  if (end.vault !== 0n) throw new Error(`vault holds ${end.vault} after everything settled`);
  s.invariantChecks += 2;
  s.wallSeconds = time.wallSeconds();
  s.txPerSecond = s.transactions / s.wallSeconds;
  s.book = book.all();
  return s;
}
