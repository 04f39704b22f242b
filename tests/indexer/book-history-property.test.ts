/**
 * "What must be shown" of issue 23, on both stores: after random sequences of creates, takes,
 * closes, settlements, resolutions and cutoffs (clock moves) on the real offers program
 * (bankrun), indexed live,
 * - every contract's book (service/read/book.ts) equals a recomputation from the chain's offer
 *   and contract accounts: levels, their order, sums and counts;
 * - every contract's history (service/read/history.ts), each side and interval, equals a
 *   recomputation from the indexed fills and the chain's offers, done naively per point (the
 *   book replayed at each interval's last second), not the way the store derives it;
 * - a backfill of the same chain into an empty store has exactly the same history rows.
 * REST and GraphQL answer the same history; bad parameters are 400, an unknown contract 404. A
 * retracted take (a fork) takes its history with it, and the chain's version brings it back.
 * Knobs: PROPERTY_SEEDS (default 2 per store), PROPERTY_ACTIONS (default 40) for a longer run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keypair, type PublicKey } from "@solana/web3.js";
import { TestChain } from "../../harness/chain";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { runScenario } from "../../harness/indexer-scenario";
import { ReadService } from "../../service/read/read-service";
import { contractBook, type Book } from "../../service/read/book";
import { contractHistory, HISTORY_INTERVALS, type ContractHistory, type HistoryInterval } from "../../service/read/history";
import { gcd } from "../../idl/client/odds";
import { openStore } from "../../indexer/store/db";
import { StoreWriter } from "../../indexer/store/writer";
import { tableDiff, tableLines } from "../../indexer/store/checksum";
import type { FillsTable } from "../../indexer/store/schema";
import { createApp, listen, OFFERS_BASE } from "../../graphql/server";
import { decodeEvents } from "../../indexer/decode";
import type { Batch, TxEvent } from "../../indexer/sources/types";
import { catalogue } from "./catalogue";
import { attachIndexer, recordBatches, type Attached } from "./attach";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

const SEEDS = Number(process.env.PROPERTY_SEEDS ?? 2);
const ACTIONS = Number(process.env.PROPERTY_ACTIONS ?? 40);
const SIDES = ["sideA", "sideB"] as const;
const POINTS = 500;

interface ChainOffer {
  address: string;
  side: string;
  s: bigint;
  t: bigint;
  filled: bigint;
  status: string;
  createdAt: number;
  closedAt: number | null;
  /** Unix seconds; 0: none. */
  expiresAt: bigint;
}

async function chainOffers(w: OffersWorld, contract: PublicKey, offers: PublicKey[]): Promise<ChainOffer[]> {
  const out: ChainOffer[] = [];
  for (const a of offers) {
    if (!(await w.chain.account(a))) continue;
    const o = await w.offer(a);
    if (!o.contract.equals(contract)) continue;
    out.push({
      address: a.toBase58(),
      side: o.side,
      s: o.creatorTotal,
      t: o.takerTarget,
      filled: o.takerFilled,
      status: o.status,
      createdAt: Number(o.createdAt),
      closedAt: o.closedAt === 0n ? null : Number(o.closedAt),
      expiresAt: o.expiresAt,
    });
  }
  return out;
}

const reduce = (n: bigint, d: bigint) => {
  const g = gcd(n, d);
  return [String(n / g), String(d / g)];
};
/** Better taker odds first: (s + t) / t, compared by cross-multiplication. */
const better = (a: { s: bigint; t: bigint }, b: { s: bigint; t: bigint }) => a.s * b.t > b.s * a.t;

/** The book from the chain's accounts: levels keyed by the reduced ratio, sorted best first. */
function bookReference(offers: ChainOffer[], takeable: boolean, now: number) {
  // An offer leaves the book at its expiry second.
  const open = takeable ? offers.filter((o) => o.status === "Open" && o.filled < o.t && (o.expiresAt === 0n || BigInt(now) < o.expiresAt)) : [];
  return SIDES.map((side) => {
    const mine = open.filter((o) => o.side !== side);
    const levels = new Map<string, { o: ChainOffer; available: bigint; offers: ChainOffer[] }>();
    for (const o of mine) {
      const key = reduce(o.s + o.t, o.t).join(":");
      const l = levels.get(key) ?? { o, available: 0n, offers: [] };
      l.available += o.t - o.filled;
      l.offers.push(o);
      levels.set(key, l);
    }
    const sorted = [...levels.values()].sort((a, b) => (better(a.o, b.o) ? -1 : 1));
    return {
      side,
      best: sorted[0] ? reduce(sorted[0].o.s + sorted[0].o.t, sorted[0].o.t) : null,
      availableMicros: mine.reduce((s, o) => s + o.t - o.filled, 0n).toString(),
      offerCount: mine.length,
      levels: sorted.map((l) => ({
        ratio: reduce(l.o.s + l.o.t, l.o.t),
        availableMicros: l.available.toString(),
        offerCount: l.offers.length,
        offers: l.offers.sort((a, b) => a.createdAt - b.createdAt || (a.address < b.address ? -1 : 1)).map((o) => o.address),
      })),
    };
  });
}

const bookShape = (b: Book) =>
  b.sides.map((s) => ({
    side: s.side,
    best: s.best ? [s.best.numerator, s.best.denominator] : null,
    availableMicros: s.availableMicros,
    offerCount: s.offerCount,
    levels: s.levels.map((l) => ({
      ratio: [l.odds.numerator, l.odds.denominator],
      availableMicros: l.availableMicros,
      offerCount: l.offerCount,
      offers: l.offers,
    })),
  }));

/**
 * The history window recomputed point by point from the fills and the chain's offers: for each
 * interval, its fills summed, and the book at its last second rebuilt from scratch.
 */
function historyReference(
  offers: ChainOffer[],
  fills: FillsTable[],
  side: string,
  interval: HistoryInterval,
  window: { first: number; last: number },
  contractEnd: number,
) {
  const seconds = HISTORY_INTERVALS[interval];
  const mine = offers.filter((o) => o.side !== side);
  const byAddress = new Map(mine.map((o) => [o.address, o]));
  const sideFills = fills.filter((f) => byAddress.has(f.offer));
  const points = [];
  for (let b = window.first; b <= window.last; b += seconds) {
    const inside = sideFills
      .filter((f) => Number(f.filled_at) >= b && Number(f.filled_at) < b + seconds)
      .sort(
        (x, y) =>
          Number(x.filled_at) - Number(y.filled_at) ||
          Number(x.slot) - Number(y.slot) ||
          (x.offer < y.offer ? -1 : x.offer > y.offer ? 1 : 0) ||
          Number(x.revision) - Number(y.revision),
      );
    const volume = inside.reduce((s, f) => s + BigInt(f.take_micros), 0n);
    const matched = inside.reduce((s, f) => s + BigInt(f.creator_matched_micros), 0n);
    const lastFill = inside[inside.length - 1];
    const lastOffer = lastFill ? byAddress.get(lastFill.offer)! : null;
    const t = b + seconds - 1;
    let best: ChainOffer | null = null;
    if (t < contractEnd) {
      for (const o of mine) {
        if (o.createdAt > t || (o.closedAt !== null && o.closedAt <= t)) continue;
        const taken = sideFills.filter((f) => f.offer === o.address && Number(f.filled_at) <= t).reduce((s, f) => s + BigInt(f.take_micros), 0n);
        if (o.t - taken <= 0n) continue;
        if (!best || better(o, best)) best = o;
      }
    }
    points.push({
      start: new Date(b * 1000).toISOString(),
      volumeMicros: volume.toString(),
      fillCount: inside.length,
      volumeWeighted: volume > 0n ? reduce(volume + matched, volume) : null,
      last: lastOffer ? reduce(lastOffer.s + lastOffer.t, lastOffer.t) : null,
      best: best ? reduce(best.s + best.t, best.t) : null,
    });
  }
  return points;
}

const historyShape = (h: ContractHistory) =>
  h.points.map((p) => ({
    start: p.start,
    volumeMicros: p.volumeMicros,
    fillCount: p.fillCount,
    volumeWeighted: p.volumeWeightedOdds ? [p.volumeWeightedOdds.numerator, p.volumeWeightedOdds.denominator] : null,
    last: p.lastOdds ? [p.lastOdds.numerator, p.lastOdds.denominator] : null,
    best: p.bestOdds ? [p.bestOdds.numerator, p.bestOdds.denominator] : null,
  }));

const ODDS = "numerator denominator decimal impliedProbabilityBps";
const HISTORY_FIELDS = `contract side interval intervalSeconds points { start end volumeMicros fillCount
  volumeWeightedOdds { ${ODDS} } lastOdds { ${ODDS} } bestOdds { ${ODDS} } }`;

describe.each(ENGINES)("book and history on %s", (engine) => {
  let target: StoreTarget;
  let chain: TestChain;
  let ix: Attached;
  let w: OffersWorld;
  let read: ReadService;
  let http: Awaited<ReturnType<typeof listen>>;
  const contracts: PublicKey[] = [];
  const offers: PublicKey[] = [];

  beforeAll(async () => {
    target = freshStore(engine, "bookhist");
    chain = await TestChain.start();
    ix = await attachIndexer(chain, target.url);
    w = await OffersWorld.create({ chain });
    read = new ReadService({ db: ix.store.db, now: async () => Number(await chain.now()), anonymousTtlMs: 0, clockCacheMs: 0 });
    http = await listen(createApp({ read, custody: null, responseCacheTtlMs: 0 }));
  });
  afterAll(async () => {
    await http?.close();
    read?.close();
    ix?.detach();
    await ix?.store.close();
    await target?.drop();
  });

  it(`after random sequences (${SEEDS} seeds, ${ACTIONS} actions), the book and the history equal their recomputations, and a backfill rebuilds the same history`, async () => {
    const seen = { books: 0, levels: 0, points: 0, filled: 0, best: 0, emptied: 0 };
    for (let seed = 0; seed < SEEDS; seed++) {
      const r = await runScenario(w, { seed: 2300 + seed + (engine === "sqlite" ? 0 : 50), actions: ACTIONS });
      contracts.push(...r.contracts);
      offers.push(...r.offers);
      await ix.source.drain();
      // The read API knows a contract once the service catalogued it.
      await catalogue(ix.store.db, r.contracts, "History test");
      const now = Number(await chain.now());
      for (const c of contracts) {
        const acc = await w.contractAccount(c);
        const onChain = await chainOffers(w, c, offers);
        const book = await contractBook(read, c.toBase58(), 100, null);
        expect(bookShape(book), `book of ${c.toBase58()}`).toEqual(bookReference(onChain, acc.status === "Open" && BigInt(now) < acc.cutoffAt, now));
        seen.books++;
        seen.levels += book.sides.reduce((n, s) => n + s.levels.length, 0);

        const fills = onChain.length
          ? await ix.store.db
              .selectFrom("fills")
              .selectAll()
              .where(
                "offer",
                "in",
                onChain.map((o) => o.address),
              )
              .execute()
          : [];
        // The fills are complete: each offer's fills add up to what the chain says it has taken.
        for (const o of onChain) expect(fills.filter((f) => f.offer === o.address).reduce((s, f) => s + BigInt(f.take_micros), 0n)).toBe(o.filled);
        const cutoff = Number(acc.cutoffAt);
        const end = acc.resolvedAt === 0n ? cutoff : Math.min(cutoff, Number(acc.resolvedAt));
        for (const side of SIDES) {
          for (const interval of Object.keys(HISTORY_INTERVALS) as HistoryInterval[]) {
            const seconds = HISTORY_INTERVALS[interval];
            const until = Math.min(now, cutoff);
            const last = until - (until % seconds);
            const window = { first: last - (POINTS - 1) * seconds, last };
            const h = await contractHistory(read, c.toBase58(), side, interval, POINTS);
            expect(h.points.length).toBe(POINTS);
            expect(historyShape(h), `${c.toBase58()} ${side} ${interval}`).toEqual(historyReference(onChain, fills, side, interval, window, end));
            seen.points += h.points.length;
            seen.filled += h.points.filter((p) => p.fillCount > 0).length;
            seen.best += h.points.filter((p) => p.bestOdds !== null).length;
            // A book that had offers, then none (taken, closed, cut off): the history shows it going empty.
            seen.emptied += h.points.some((p, i) => i > 0 && p.bestOdds === null && h.points[i - 1].bestOdds !== null) ? 1 : 0;
          }
        }
      }
    }
    // The sequences exercised what is compared.
    expect(seen.levels).toBeGreaterThan(3);
    expect(seen.filled).toBeGreaterThan(10);
    expect(seen.best).toBeGreaterThan(50);
    expect(seen.emptied).toBeGreaterThan(0);

    // A backfill of the same chain from scratch: the same history rows.
    const bf = freshStore(engine, "bookhistbf");
    const bfStore = await openStore(bf.url);
    try {
      const writer = await StoreWriter.open(bfStore, "bankrun");
      await ix.source.snapshot((b) => writer.apply(b));
      const live = await tableLines(ix.store.db, "contract_history", "content");
      expect(live.length).toBeGreaterThan(20);
      expect(await tableDiff(ix.store.db, bfStore.db, ["contract_history"])).toEqual([]);
      expect(await tableLines(bfStore.db, "contract_history", "content")).toEqual(live);
    } finally {
      await bfStore.close();
      await bf.drop();
    }
  });

  it("answers the same history over REST and GraphQL, and refuses bad parameters", async () => {
    // The contract with the most fills.
    const counts = await ix.store.db.selectFrom("contract_history").select(["contract", "fill_count"]).where("interval", "=", "1d").execute();
    const busiest = counts.sort((a, b) => Number(b.fill_count) - Number(a.fill_count))[0].contract;
    const side = (
      await ix.store.db.selectFrom("contract_history").select("side").where("contract", "=", busiest).where("fill_count", ">", 0).executeTakeFirstOrThrow()
    ).side;
    const rest = await fetch(`${http.url}${OFFERS_BASE}/contracts/${busiest}/history?side=${side}&interval=1h&points=48`);
    expect(rest.status).toBe(200);
    const restHistory = (await rest.json()) as ContractHistory;
    expect(restHistory.points.length).toBe(48);
    expect(restHistory.points.some((p) => p.fillCount > 0)).toBe(true);
    expect(restHistory).toEqual(JSON.parse(JSON.stringify(await contractHistory(read, busiest, side as "sideA", "1h", 48))));
    const gql = await fetch(`${http.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: `query($a: Address!, $s: Side!) { contract(address: $a) { history(side: $s, interval: "1h", points: 48) { ${HISTORY_FIELDS} } } }`,
        variables: { a: busiest, s: side },
      }),
    });
    const body = (await gql.json()) as { data: { contract: { history: ContractHistory } } };
    expect(body.data.contract.history).toEqual(restHistory);

    const status = async (q: string, contract = busiest) => {
      const res = await fetch(`${http.url}${OFFERS_BASE}/contracts/${contract}/history?${q}`);
      return { status: res.status, body: (await res.json()) as { error?: string; code?: string } };
    };
    for (const q of [
      "interval=1h",
      "side=sideA",
      "side=sideC&interval=1h",
      "side=sideA&interval=2h",
      "side=sideA&interval=1H",
      "side=sideA&interval=1h&points=0",
      "side=sideA&interval=1h&points=501",
      "side=sideA&interval=1h&points=x",
    ]) {
      const r = await status(q);
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toBeTruthy();
    }
    expect((await status("side=sideB&interval=1d&points=500")).status).toBe(200);
    expect((await status("side=sideA&interval=1m", "not-an-address")).status).toBe(400);
    const unknown = await status("side=sideA&interval=1m", Keypair.generate().publicKey.toBase58());
    expect(unknown.status).toBe(404);
    const gqlBad = (await (
      await fetch(`${http.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `{ contract(address: "${busiest}") { history(side: sideA, interval: "7m") { interval } } }` }),
      })
    ).json()) as { errors?: { message: string; extensions?: { code?: string } }[] };
    expect(gqlBad.errors?.[0].message).toMatch(/interval must be one of/);
  });
});

describe.each(ENGINES)("history through a fork on %s", (engine) => {
  it("a retracted take leaves the history, the chain's version of it comes back", async () => {
    const chain = await TestChain.start();
    const { source, batches } = await recordBatches(chain);
    const w = await OffersWorld.create({ chain });
    const [creator, taker] = [await w.user(), await w.user()];
    const contract = await w.contract({ cutoffIn: 3_600n, deadlineAfterCutoff: 600n });
    const { offer } = await w.createOffer(creator, contract, { side: "sideA", total: 10n * UNIT, target: 20n * UNIT, minTake: UNIT });
    expect((await w.take(taker, offer, 20n * UNIT)).error).toBeNull();
    await source.drain();
    const take = batches.flatMap((b) => b.transactions).find((t) => decodeEvents([t]).fills.length === 1)!;
    const target = freshStore(engine, "histfork");
    const store = await openStore(target.url);
    try {
      const writer = await StoreWriter.open(store, "t");
      for (const b of batches) await writer.apply(b);
      const batch = (t: TxEvent): Batch => ({ slot: t.slot, writeVersion: 0, accounts: [], transactions: [t], cursor: "" });
      const at = Number((await store.db.selectFrom("fills").select("filled_at").executeTakeFirstOrThrow()).filled_at);
      // The minute of the take (the cutoff, an hour later, ends the book in the day's row anyway).
      const day = () =>
        store.db
          .selectFrom("contract_history")
          .select(["fill_count", "volume_micros", "best_numerator", "best_denominator"])
          .where("contract", "=", contract.toBase58())
          .where("side", "=", "sideB")
          .where("interval", "=", "1m")
          .where("bucket_at", "=", at - (at % 60))
          .execute();
      const taken = await day();
      // Taken whole: a fill, and the book empty at the day's end.
      expect(taken[0]).toMatchObject({ fill_count: 1, volume_micros: String(20n * UNIT), best_numerator: null });
      await writer.apply(batch({ ...take, retracted: true }));
      const retracted = await day();
      expect(retracted[0]).toMatchObject({ fill_count: 0, volume_micros: "0", best_numerator: "3", best_denominator: "2" });
      await writer.apply(batch({ ...take, fromHistory: true }));
      expect(await day()).toEqual(taken);
    } finally {
      await store.close();
      await target.drop();
    }
  });
});
