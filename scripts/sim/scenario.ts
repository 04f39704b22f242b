/**
 * A reproducible market scenario on the offers program: many users create, take and close
 * offers on contracts spread over simulated days; the service's crank resolves contracts after
 * their cutoff (some voided, some left to expire and voided by anyone), closes open offers,
 * settles every position and reclaims rent. Invariants are checked as it goes.
 */
import type { PublicKey } from "@solana/web3.js";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import { TestChain, type EngineName, type TxResult } from "../../harness/chain";
import { OFFERS_ERRORS } from "../../idl/client/offers";
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
  takers: Set<User>;
  open: boolean;
}

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
        for (const t of off.takers) {
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
        offers.push({ address: offer, contract: c.address, creator, takers: new Set(), open: true });
        s.offersCreated++;
        s.volumeMicros += total;
      }
    } else if (roll < 85 && offers.some((x) => x.open)) {
      const off = rng.pick(offers.filter((x) => x.open));
      const taker = rng.pick(users);
      const acc = await w.offer(off.address);
      const remaining = acc.takerTarget - acc.takerFilled;
      const amount = rng.chance(0.4) || remaining < 2n * UNIT ? remaining : rng.big(UNIT, remaining);
      if (tally(await w.take(taker, off.address, amount))) {
        off.takers.add(taker);
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
