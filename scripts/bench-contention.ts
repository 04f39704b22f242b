/**
 * Contention at kick-off (issue 24): TAKERS takers act at once on a contract whose book holds
 * OFFERS offers, each wanting WANT units (together exactly the book), over HTTP on the local stack
 * (offers program in bankrun, indexer, SQLite store):
 *
 *   (a) single takes, the spec's client rule: read the book, read the best offer (revision,
 *       remaining), take it with expectedRevision; on 409 re-read and retry (the next offer once
 *       it is gone); refused when the book is empty;
 *   (b) one take-best each (fill-and-kill, worst odds 1:1).
 *
 * Reports, per scenario: time until every taker is filled or refused (and the median per taker),
 * requests sent, 409s, transactions (writes answered `pending`), takers filled in full, and the
 * units taken in all as indexed (checked against the book). The bare baseline, in the same run:
 * one taker alone doing (a) and (b) on a fresh book.
 *
 * With --validator the same scenarios run on the cluster stack against a solana-test-validator the
 * script starts and stops (RpcGateway sends and confirms, the RPC indexer fills the SQLite store),
 * so a winner's take is seen only once the validator has confirmed it and the indexer applied it.
 * There a write is simulated at `confirmed` and answered `pending` once sent, so racing takes can
 * all be answered 200 and then fail on chain: each taker follows its signatures to confirmed or
 * failed (as a client would on any RPC node), counts a failed take as refused (re-read and retry
 * in (a)), and the failures are reported as `failedOnChain`.
 * Needs the validator binary (scripts/setup-test-validator.sh).
 *
 *   npx tsx scripts/bench-contention.ts [--takers 50] [--offers 10] [--validator]
 */
import { Command } from "commander";
import type { PublicKey } from "@solana/web3.js";
import { startLocalStack, OFFERS_BASE } from "../stack/local-stack";
import { validatorStack } from "../stack/validator-stack";
import type { AppParts } from "../stack/service-parts";
import { workedExampleCreate } from "../harness/api-requests";
import { sizeOption } from "../stack/config/settings";
import { exitOnError, strictExit } from "../stack/config/cli";
process.env.LOG_LEVEL ??= "silent";

const o = strictExit(new Command().name("bench-contention"))
  .addOption(sizeOption("--takers <n>", "takers acting at once", 50))
  .addOption(sizeOption("--offers <n>", "offers in the book", 10))
  .option("--validator", "run on a solana-test-validator (started and stopped here) instead of the in-process chain", false)
  .parse()
  .opts<{ takers: number; offers: number; validator: boolean }>();
const UNIT = 1_000_000n;
const OFFER_UNITS = 10n;
/** Each taker wants its share of the book, so that the book can serve every taker. */
const WANT = (OFFER_UNITS * BigInt(o.offers) * UNIT) / BigInt(o.takers);

interface Counters {
  requests: number;
  conflicts: number;
  transactions: number;
  failedOnChain: number;
}
interface Taker {
  token: string;
  wallet: string;
}

/** What the benchmark needs of either stack. */
type Stack = AppParts & {
  url: string;
  stop(): Promise<void>;
  /** On the validator: whether a sent transaction landed (waits for confirmed or failed). Locally a 200 has landed. */
  landed?: (signature: string) => Promise<boolean>;
};

let seq = 0;
async function users(s: Stack, n: number, funds: bigint): Promise<Taker[]> {
  const one = async (): Promise<Taker> => {
    const u = await s.admin.createUser(`c${++seq}`);
    await s.admin.fund(u.name, funds);
    return { token: (await s.custody.issueToken(u.id)).token, wallet: u.wallet.toBase58() };
  };
  const out: Taker[] = [];
  // In batches: on the validator each user costs two confirmed transactions (setup, not measured).
  while (out.length < n) out.push(...(await Promise.all(Array.from({ length: Math.min(10, n - out.length) }, one))));
  return out;
}

function client(s: Stack, c: Counters) {
  const call = async (method: "GET" | "POST", path: string, token: string, body?: unknown) => {
    c.requests++;
    const r = await fetch(`${s.url}${OFFERS_BASE}${path}`, {
      method,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await r.json()) as Record<string, unknown>;
    if (r.status === 409) c.conflicts++;
    let failed = 0;
    if (method === "POST" && r.status === 200) {
      const sigs = (Array.isArray(json.signatures) ? json.signatures : [json.signature]) as string[];
      c.transactions += sigs.length;
      if (s.landed) failed = (await Promise.all(sigs.map((x) => s.landed!(x)))).filter((ok) => !ok).length;
      c.failedOnChain += failed;
    }
    return { status: r.status, body: json, failed };
  };
  return call;
}

/** A book of `n` offers of OFFER_UNITS each at slightly different odds (creators back sideA). */
async function book(s: Stack, creators: Taker[], n: number): Promise<PublicKey> {
  const now = await s.chain.gateway.now();
  const contract = await s.admin.createContract({
    title: "Kick-off",
    event: "Home vs Away",
    sport: "football",
    competition: "Bench",
    startsAt: Number(now + 86_400n),
    cutoffAt: now + 86_400n,
    resolutionDeadline: now + 172_800n,
    sideALabel: "Home",
    sideBLabel: "Away",
  });
  const c: Counters = { requests: 0, conflicts: 0, transactions: 0, failedOnChain: 0 };
  const call = client(s, c);
  for (let i = 0; i < n; i++) {
    const body = workedExampleCreate(contract, `book-${contract.toBase58()}-${i}`, {
      creatorTotalMicros: String((OFFER_UNITS + BigInt(i % 3)) * UNIT),
      takerTargetMicros: String(OFFER_UNITS * UNIT),
      minimumTakeMicros: String(UNIT),
    });
    const r = await call("POST", "/", creators[i % creators.length].token, body);
    if (r.status !== 200 || r.failed) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  }
  for (;;) {
    // Anonymous: a creator's own book leaves out the creator's offers.
    const r = await call("GET", `/contracts/${contract.toBase58()}/book`, "");
    const sides = r.body.sides as { offerCount: number }[];
    if (sides[1].offerCount === n) return contract;
    await new Promise((x) => setTimeout(x, 20));
  }
}

/** (a): the spec's client rule with single takes. Resolves true when the taker got all it wanted. */
async function singleTakes(call: ReturnType<typeof client>, contract: PublicKey, t: Taker): Promise<boolean> {
  let left = WANT;
  let key = 0;
  for (;;) {
    const b = await call("GET", `/contracts/${contract.toBase58()}/book?depth=100`, t.token);
    const levels = (b.body.sides as { levels: { offers: string[] }[] }[])[1].levels;
    const offers = levels.flatMap((l) => l.offers);
    if (offers.length === 0) return false;
    // Everyone reads the same book: the best offer is where the collisions are.
    const offer = offers[0];
    for (;;) {
      const r = await call("GET", `/${offer}`, t.token);
      const remaining = BigInt(String(r.body.remainingTakerMicros ?? "0"));
      if (r.status !== 200 || r.body.status !== "Open" || remaining === 0n) break;
      const amount = left < remaining ? left : remaining;
      const took = await call("POST", `/${offer}/take`, t.token, {
        takeAmountMicros: String(amount),
        expectedRevision: String(r.body.revision),
        idempotencyKey: `take-${t.wallet}-${++key}`,
      });
      if (took.status === 200 && took.failed === 0) {
        left -= amount;
        if (left === 0n) return true;
        continue;
      }
      if (took.status !== 409 && took.failed === 0) throw new Error(`take: ${took.status} ${JSON.stringify(took.body)}`);
      // A client backs off a little before re-reading (the winner's take must be indexed to be seen).
      await new Promise((x) => setTimeout(x, 20 + Math.random() * 40));
    }
  }
}

/** (b): one take-best. */
async function oneTakeBest(call: ReturnType<typeof client>, contract: PublicKey, t: Taker): Promise<boolean> {
  const r = await call("POST", `/contracts/${contract.toBase58()}/take-best`, t.token, {
    side: "sideB",
    amountMicros: String(WANT),
    worstOdds: { numerator: "1", denominator: "1" },
    mode: "fill-and-kill",
    idempotencyKey: `best-${t.wallet}`,
  });
  if (r.status !== 200 && r.status !== 409) throw new Error(`take-best: ${r.status} ${JSON.stringify(r.body)}`);
  return r.status === 200 && r.failed === 0 && (r.body.plan as { unfilledMicros: string }).unfilledMicros === "0";
}

async function takenOn(s: Stack, contract: PublicKey): Promise<bigint> {
  const rows = await s.db.selectFrom("offers").select("taker_filled_micros").where("contract", "=", contract.toBase58()).execute();
  return rows.reduce((a, r) => a + BigInt(r.taker_filled_micros), 0n);
}

async function scenario(s: Stack, name: string, creators: Taker[], takers: Taker[], act: typeof singleTakes) {
  const row = await run(s, name, creators, takers, act);
  console.log(JSON.stringify(row));
  return row;
}

async function run(s: Stack, name: string, creators: Taker[], takers: Taker[], act: typeof singleTakes) {
  const contract = await book(s, creators, o.offers);
  const c: Counters = { requests: 0, conflicts: 0, transactions: 0, failedOnChain: 0 };
  const call = client(s, c);
  const t0 = performance.now();
  const done = await Promise.all(
    takers.map(async (t) => {
      const filled = await act(call, contract, t);
      return { filled, ms: performance.now() - t0 };
    }),
  );
  const total = performance.now() - t0;
  // The chain has every transaction: wait for the indexer to show them before counting.
  let taken = 0n;
  for (const until = performance.now() + 30_000; performance.now() < until;) {
    taken = await takenOn(s, contract);
    if (taken >= WANT * BigInt(done.filter((d) => d.filled).length)) break;
    await new Promise((x) => setTimeout(x, 25));
  }
  const ms = done.map((d) => d.ms).sort((a, b) => a - b);
  return {
    scenario: name,
    takers: takers.length,
    allDoneMs: Math.round(total),
    medianMs: Math.round(ms[Math.floor(ms.length / 2)]),
    requests: c.requests,
    conflicts409: c.conflicts,
    transactions: c.transactions,
    failedOnChain: c.failedOnChain,
    filled: done.filter((d) => d.filled).length,
    takenUnits: Number(taken) / 1e6,
  };
}

const walletLimits = { writeBurst: 0, writesPerHour: 0, maxOpenOffers: 0, maxOpenPositions: 0 };

/** The cluster stack on a fresh validator (stack/validator-stack.ts, as tests/rpc starts it). */
async function onValidator(): Promise<Stack> {
  const { validator, s } = await validatorStack({ walletLimits });
  const landed = async (signature: string) => {
    // Polled more often than the gateway's waitFor: the figure is the time until every taker knows.
    for (const until = Date.now() + 60_000; Date.now() < until;) {
      const st = await s.chain.gateway.status(signature);
      if (st.state === "confirmed") return true;
      if (st.state === "failed") return false;
      await new Promise((x) => setTimeout(x, 50));
    }
    throw new Error(`${signature}: neither confirmed nor failed after 60 s`);
  };
  return {
    ...s,
    landed,
    stop: async () => {
      await s.stop();
      await validator.stop();
    },
  };
}

async function main() {
  const s = o.validator ? await onValidator() : await startLocalStack({ storeUrl: ":memory:", walletLimits });
  try {
    console.log(`stack: ${o.validator ? "cluster stack on solana-test-validator (RPC indexer, SQLite)" : "local stack (bankrun, SQLite :memory:)"}`);
    const creators = await users(s, 5, 10_000n * UNIT);
    const rows = [];
    // The bare baseline: one taker alone on a fresh book.
    rows.push(await scenario(s, "baseline (a) one taker, single takes", creators, await users(s, 1, 1_000n * UNIT), singleTakes));
    rows.push(await scenario(s, "baseline (b) one taker, take-best", creators, await users(s, 1, 1_000n * UNIT), oneTakeBest));
    rows.push(await scenario(s, `(a) ${o.takers} takers, single takes + retry`, creators, await users(s, o.takers, 1_000n * UNIT), singleTakes));
    rows.push(await scenario(s, `(b) ${o.takers} takers, one take-best each`, creators, await users(s, o.takers, 1_000n * UNIT), oneTakeBest));
    console.log(`book: ${o.offers} offers of ${OFFER_UNITS} units; each taker wants ${Number(WANT) / 1e6} units`);
    console.table(rows);
    const [a, b] = rows.slice(2);
    console.log(`requests (a) / (b): ${(a.requests / b.requests).toFixed(1)}x; 409s (b): ${b.conflicts409}`);
  } finally {
    await s.stop();
  }
}

main().then(() => process.exit(0), exitOnError);
