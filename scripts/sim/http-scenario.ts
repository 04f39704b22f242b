/**
 * The market scenario of ./scenario.ts driven through the whole service instead of the program:
 * the local stack (program in bankrun or LiteSVM, indexer, store, custody, write service,
 * settlement worker) with every user action an HTTP request to the REST API over loopback, the
 * way a frontend makes it (GET the offer for its revision and remaining amount, then POST with an
 * idempotency key). The operator's part goes through the same AdminOps the admin CLI uses, and
 * the settlement worker is the crank. Invariants are read from the chain: tokens conserved across
 * users, vault and treasury, and the vault empty once everything settled.
 */
import { AccountLayout } from "@solana/spl-token";
import type { PublicKey } from "@solana/web3.js";
import { startLocalStack, OFFERS_BASE } from "../../stack/local-stack";
import type { EngineName } from "../../harness/chain";
import { Rng } from "../../harness/random";
import { Timeline, type LiveContract, type ScenarioOptions } from "./timeline";
import { BookRecorder, sampleInterval, type BookQuote, type ContractBookTrace } from "./book-report";

// Measurements, not an operated service: no access line per request unless LOG_LEVEL asks for it.
process.env.LOG_LEVEL ??= "silent";

const UNIT = 1_000_000n;
const SPORTS = ["football", "basketball", "tennis", "esports"];

export type HttpScenarioOptions = ScenarioOptions;

export interface HttpScenarioSummary {
  engine: EngineName;
  users: number;
  actions: number;
  simulatedDays: number;
  requests: number;
  /** Requests answered with an error status, by status and message head. */
  rejections: Record<string, number>;
  offersCreated: number;
  fills: number;
  /** Takers' take-best requests answered 200, the offers their plans took, and fill-or-kill requests refused (409). */
  takeBestSweeps: number;
  sweepOffersTaken: number;
  fillOrKillRefusals: number;
  closes: number;
  contracts: number;
  positionsSettled: number;
  volumeMicros: bigint;
  feesMicros: bigint;
  payoutsMicros: bigint;
  invariantChecks: number;
  wallSeconds: number;
  requestsPerSecond: number;
  /** Each contract's best taker odds per side over time (./book-report.ts), as the book endpoint answered. */
  book: ContractBookTrace[];
  /** Simulated seconds between two book samples. */
  bookSampleSeconds: number;
}

interface SimUser {
  name: string;
  token: string;
  tokenAccount: PublicKey;
}
interface LiveOffer {
  address: string;
  contract: string;
  creator: SimUser;
  /** The outcome the creator backs; a taker of it backs the other. */
  creatorOutcome: "sideA" | "sideB";
  open: boolean;
}

/** As the in-process scenario (./scenario.ts): the share of taker actions that are a take-best, the fill-or-kill share of those, the worst odds as a fraction of the best. */
const TAKE_BEST_SHARE = 0.3;
const FILL_OR_KILL_SHARE = 0.25;
const WORST_ODDS_OF_BEST = { numerator: 19n, denominator: 20n };

export async function runHttpScenario(o: HttpScenarioOptions): Promise<HttpScenarioSummary> {
  const rng = new Rng(o.seed);
  const s = await startLocalStack({ engine: o.engine });
  try {
    const gw = s.chain.gateway;
    const api = `${s.url}${OFFERS_BASE}`;
    const sum: HttpScenarioSummary = {
      engine: o.engine,
      users: o.users,
      actions: o.actions,
      simulatedDays: o.days,
      requests: 0,
      rejections: {},
      offersCreated: 0,
      fills: 0,
      takeBestSweeps: 0,
      sweepOffersTaken: 0,
      fillOrKillRefusals: 0,
      closes: 0,
      contracts: 0,
      positionsSettled: 0,
      volumeMicros: 0n,
      feesMicros: 0n,
      payoutsMicros: 0n,
      invariantChecks: 0,
      wallSeconds: 0,
      requestsPerSecond: 0,
      book: [],
      bookSampleSeconds: 0,
    };
    let keySeq = 0;
    const call = async (
      method: "GET" | "POST",
      path: string,
      token: string | null,
      body?: unknown,
    ): Promise<{ status: number; body: Record<string, unknown> }> => {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers["content-type"] = "application/json";
      const payload =
        body === undefined ? undefined : JSON.stringify({ ...(body as object), idempotencyKey: `sim-${o.seed}-${String(++keySeq).padStart(8, "0")}` });
      const r = await fetch(`${api}${path}`, { method, headers, body: payload });
      sum.requests++;
      const parsed = (await r.json()) as Record<string, unknown>;
      if (r.status >= 400) {
        const k = `${r.status} ${String(parsed.error ?? "")
          .split(/[:(]/)[0]
          .slice(0, 60)}`;
        sum.rejections[k] = (sum.rejections[k] ?? 0) + 1;
      }
      return { status: r.status, body: parsed };
    };
    const tokenBalance = async (a: PublicKey) => {
      const acc = await gw.getAccount(a);
      return acc ? AccountLayout.decode(acc.data).amount : 0n;
    };

    const users: SimUser[] = [];
    for (let i = 0; i < o.users; i++) {
      const name = `sim${i}`;
      const u = await s.admin.createUser(name);
      await s.admin.fund(name, rng.big(100n, 2_000n) * UNIT);
      const { token } = await s.custody.issueToken(u.id, { scopes: ["bet:write"] });
      users.push({ name, token, tokenAccount: u.tokenAccount });
    }
    const vault = s.chain.client.pda.vault()[0];
    const total = async () => {
      let t = (await tokenBalance(vault)) + (await tokenBalance(s.chain.treasury));
      for (const u of users) t += await tokenBalance(u.tokenAccount);
      return t;
    };
    const initialTotal = await total();
    const contracts: LiveContract[] = [];
    const offers: LiveOffer[] = [];
    const time = await Timeline.start(o, () => gw.now());
    const book = new BookRecorder();
    const every = sampleInterval(o.actions);
    sum.bookSampleSeconds = Number(time.at(every) - time.at(0));

    /** The book of every contract still taking offers, as GET /contracts/{address}/book answers it to anyone. */
    const sampleBooks = async (now: bigint) => {
      for (const [n, c] of contracts.entries()) {
        if (c.done || now >= c.cutoff) continue;
        const r = await call("GET", `/contracts/${c.address.toBase58()}/book?depth=1`, null);
        if (r.status !== 200) throw new Error(`book of ${c.address.toBase58()}: ${r.status}`);
        const sides = (r.body.sides as (Omit<BookQuote, "bestAvailableMicros"> & { levels: { availableMicros: string }[] })[]).map((x): BookQuote => ({
          side: x.side,
          label: x.label,
          best: x.best,
          bestAvailableMicros: x.levels[0]?.availableMicros ?? "0",
          availableMicros: x.availableMicros,
        }));
        book.record(c.address.toBase58(), `Match ${n + 1}`, Number(now - time.t0), sides);
      }
    };

    const newContract = async () => {
      const now = await gw.now();
      const cutoffIn = rng.big(3_600n, 2n * 86_400n);
      const sport = rng.pick(SPORTS);
      const address = await s.admin.createContract({
        title: `Match ${contracts.length + 1}`,
        event: `Home ${contracts.length + 1} vs Away`,
        sport,
        competition: `${sport} league`,
        startsAt: Number(now + cutoffIn),
        cutoffAt: now + cutoffIn,
        resolutionDeadline: now + cutoffIn + 6n * 3_600n,
        sideALabel: "Home",
        sideBLabel: "Away",
        visuals: [],
      });
      contracts.push({ address, cutoff: now + cutoffIn, deadline: now + cutoffIn + 6n * 3_600n, done: false });
      sum.contracts++;
    };

    /** The operator resolves what is past its cutoff (some left to expire); the worker does the rest. */
    const crank = async (now: bigint) => {
      for (const c of contracts) {
        if (c.done || now < c.cutoff) continue;
        if (now <= c.deadline) {
          if (rng.chance(0.1)) continue; // resolved late or never: the worker voids it after the deadline
          await s.admin.resolveContract(c.address, rng.pick(["sideA", "sideB", "sideA", "sideB", "void"] as const));
        }
        c.done = true;
        for (const off of offers) if (off.contract === c.address.toBase58()) off.open = false;
      }
      await s.worker.drain();
    };

    /**
     * A take-best as a bettor makes it: the quote of the side for a random amount (the best taker
     * odds now), then POST take-best no worse than 95% of them. A 200's plan must stay within the
     * amount and the limit (funds conservation is checked with the rest); a fill-or-kill refused
     * (409) moves none of the taker's tokens.
     */
    const sweep = async (off: LiveOffer, taker: SimUser) => {
      const side = off.creatorOutcome === "sideA" ? "sideB" : "sideA";
      const amount = rng.big(UNIT, 200n * UNIT);
      const quote = await call("GET", `/contracts/${off.contract}/quote?side=${side}&amountMicros=${amount}`, taker.token);
      const fills = (quote.body.fills ?? []) as { odds: { numerator: string; denominator: string } }[];
      if (quote.status !== 200 || fills.length === 0) return;
      const worstOdds = {
        numerator: BigInt(fills[0].odds.numerator) * WORST_ODDS_OF_BEST.numerator,
        denominator: BigInt(fills[0].odds.denominator) * WORST_ODDS_OF_BEST.denominator,
      };
      const mode = rng.chance(FILL_OR_KILL_SHARE) ? "fill-or-kill" : "fill-and-kill";
      const before = await tokenBalance(taker.tokenAccount);
      const r = await call("POST", `/contracts/${off.contract}/take-best`, taker.token, {
        side,
        amountMicros: String(amount),
        worstOdds: { numerator: String(worstOdds.numerator), denominator: String(worstOdds.denominator) },
        mode,
      });
      if (r.status === 409 && mode === "fill-or-kill") {
        if ((await tokenBalance(taker.tokenAccount)) !== before) throw new Error("a refused fill-or-kill take-best moved tokens");
        sum.fillOrKillRefusals++;
        return;
      }
      if (r.status !== 200) return;
      const plan = r.body.plan as { filledMicros: string; fills: { odds: { numerator: string; denominator: string } }[] };
      const filled = BigInt(plan.filledMicros);
      if (filled <= 0n || filled > amount) throw new Error(`take-best planned ${filled} of ${amount}`);
      for (const f of plan.fills) {
        if (BigInt(f.odds.numerator) * worstOdds.denominator < worstOdds.numerator * BigInt(f.odds.denominator))
          throw new Error("take-best planned an offer below the limit");
      }
      sum.takeBestSweeps++;
      sum.sweepOffersTaken += plan.fills.length;
      sum.fills += plan.fills.length;
      sum.volumeMicros += filled;
    };

    for (let i = 0; i < o.actions; i++) {
      const now = time.at(i);
      if (now > (await gw.now())) await gw.setTime(now);
      const live = contracts.filter((c) => !c.done && c.cutoff > now + 60n);
      if (live.length < 8 || rng.chance(0.01)) await newContract();
      const roll = rng.int(0, 99);
      const open = offers.filter((x) => x.open);
      if (roll < 35) {
        const creator = rng.pick(users);
        const c = rng.pick(contracts.filter((x) => !x.done && x.cutoff > now + 60n));
        const stake = rng.big(1n, 50n) * UNIT;
        const target = (stake * rng.big(3n, 40n)) / 10n;
        const creatorOutcome = rng.pick(["sideA", "sideB"] as const);
        const r = await call("POST", "/", creator.token, {
          contractAddress: c.address.toBase58(),
          creatorOutcome,
          creatorTotalMicros: String(stake),
          takerTargetMicros: String(target),
          minimumTakeMicros: String(UNIT),
          expectedFeeBps: 1000,
        });
        if (r.status === 200) {
          offers.push({ address: r.body.offerAddress as string, contract: c.address.toBase58(), creator, creatorOutcome, open: true });
          sum.offersCreated++;
          sum.volumeMicros += stake;
        }
      } else if (roll < 85 && open.length && rng.chance(TAKE_BEST_SHARE)) {
        await sweep(rng.pick(open), rng.pick(users));
      } else if (roll < 85 && open.length) {
        const off = rng.pick(open);
        const taker = rng.pick(users);
        const view = await call("GET", `/${off.address}`, taker.token);
        if (view.status !== 200 || view.body.status !== "Open") {
          off.open = false;
          continue;
        }
        const remaining = BigInt(view.body.remainingTakerMicros as string);
        const amount = rng.chance(0.4) || remaining < 2n * UNIT ? remaining : rng.big(UNIT, remaining);
        const r = await call("POST", `/${off.address}/take`, taker.token, { takeAmountMicros: String(amount), expectedRevision: view.body.revision });
        if (r.status === 200) {
          if (amount === remaining) off.open = false;
          sum.fills++;
          sum.volumeMicros += amount;
        }
      } else if (roll < 90 && open.length) {
        const off = rng.pick(open);
        const view = await call("GET", `/${off.address}`, off.creator.token);
        const r = await call("POST", `/${off.address}/close`, off.creator.token, { expectedRevision: view.body.revision });
        if (r.status === 200) {
          sum.closes++;
          off.open = false;
        }
      } else {
        await crank(now);
      }
      if (i % every === 0) await sampleBooks(now);
      if (i % 50 === 0) {
        if ((await total()) !== initialTotal) throw new Error(`funds not conserved at action ${i}`);
        sum.invariantChecks++;
      }
      o.onProgress?.(i + 1);
    }
    // Run out the clock: every contract resolves or expires, the worker settles everything.
    await gw.setTime(time.end);
    await crank(time.end);
    if ((await total()) !== initialTotal) throw new Error("funds not conserved at the end");
    const left = await tokenBalance(vault);
    if (left !== 0n) throw new Error(`vault holds ${left} after everything settled`);
    sum.invariantChecks += 2;
    // Payouts and fees as the indexer recorded the settlements.
    for (const st of await s.db.selectFrom("settlements").selectAll().execute()) {
      sum.positionsSettled++;
      sum.payoutsMicros += BigInt(st.creator_payout_micros) + BigInt(st.taker_payout_micros);
      sum.feesMicros += BigInt(st.fee_micros);
    }
    if (sum.feesMicros !== (await tokenBalance(s.chain.treasury))) throw new Error("fees recorded by the indexer differ from the treasury balance");
    sum.invariantChecks++;
    sum.wallSeconds = time.wallSeconds();
    sum.requestsPerSecond = sum.requests / sum.wallSeconds;
    sum.book = book.all();
    return sum;
  } finally {
    await s.stop();
  }
}
