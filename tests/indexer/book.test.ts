/**
 * The contract book (service/read/book.ts) on both stores: random creates, takes, closes,
 * settlements and cutoffs on the real offers program (bankrun), indexed live; after each round
 * every contract's book equals a recomputation from the on-chain offer and contract accounts
 * (levels, order, sums, counts), a signed-in caller's book leaves out their own and blocked
 * creators' offers, REST and GraphQL answer the same book over a real HTTP server, and bad
 * inputs get 400 / 404.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keypair, type PublicKey } from "@solana/web3.js";
import { TestChain } from "../../harness/chain";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { runScenario, type ScenarioResult } from "../../harness/indexer-scenario";
import { ReadService } from "../../service/read/read-service";
import { contractBook, type Book } from "../../service/read/book";
import { creatorOdds, gcd, takerOdds } from "../../idl/client/odds";
import { createApp, listen, OFFERS_BASE } from "../../graphql/server";
import { catalogue } from "./catalogue";
import { attachIndexer, type Attached } from "./attach";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

const ROUNDS = 3;
const ACTIONS = Number(process.env.BOOK_ACTIONS ?? 60);

interface RefOffer {
  address: string;
  creator: string;
  side: string;
  s: bigint;
  t: bigint;
  remaining: bigint;
  createdAt: bigint;
}

/**
 * The book recomputed independently of the service: from the chain's accounts, levels keyed by
 * the reduced ratio (a map, not a comparison), ordered by comparing reduced fractions.
 */
async function reference(w: OffersWorld, contract: PublicKey, offers: PublicKey[], excluded: (o: RefOffer) => boolean) {
  const c = await w.contractAccount(contract);
  const now = await w.chain.now();
  const takeable = c.status === "Open" && now < c.cutoffAt;
  const open: RefOffer[] = [];
  for (const a of offers) {
    if (!(await w.chain.account(a))) continue;
    const o = await w.offer(a);
    if (!o.contract.equals(contract) || o.status !== "Open" || o.takerFilled >= o.takerTarget) continue;
    // An offer leaves the book at its expiry second.
    if (o.expiresAt !== 0n && now >= o.expiresAt) continue;
    const r = {
      address: a.toBase58(),
      creator: o.creator.toBase58(),
      side: o.side,
      s: o.creatorTotal,
      t: o.takerTarget,
      remaining: o.takerTarget - o.takerFilled,
      createdAt: o.createdAt,
    };
    if (takeable && !excluded(r)) open.push(r);
  }
  return (["sideA", "sideB"] as const).map((side) => {
    const levels = new Map<string, { n: bigint; d: bigint; offers: RefOffer[] }>();
    for (const o of open.filter((x) => x.side !== side)) {
      const g = gcd(o.s + o.t, o.t);
      const key = `${(o.s + o.t) / g}/${o.t / g}`;
      const l = levels.get(key) ?? { n: (o.s + o.t) / g, d: o.t / g, offers: [] };
      l.offers.push(o);
      levels.set(key, l);
    }
    const sorted = [...levels.values()].sort((a, b) => (a.n * b.d > b.n * a.d ? -1 : 1));
    return {
      side,
      best: sorted[0] ? [String(sorted[0].n), String(sorted[0].d)] : null,
      availableMicros: open
        .filter((x) => x.side !== side)
        .reduce((s, o) => s + o.remaining, 0n)
        .toString(),
      offerCount: open.filter((x) => x.side !== side).length,
      levels: sorted.map((l) => ({
        ratio: [String(l.n), String(l.d)],
        availableMicros: l.offers.reduce((s, o) => s + o.remaining, 0n).toString(),
        offerCount: l.offers.length,
        offers: l.offers
          .sort((a, b) => (a.createdAt !== b.createdAt ? Number(a.createdAt - b.createdAt) : a.address < b.address ? -1 : 1))
          .map((o) => o.address),
      })),
    };
  });
}

const shape = (b: Book) =>
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

const BOOK_FIELDS = `contract revision updatedAt matchedVolumeMicros
  lastMatch { side amountMicros at odds { numerator denominator decimal impliedProbabilityBps } }
  sides { side label availableMicros offerCount best { numerator denominator decimal impliedProbabilityBps }
    levels { availableMicros offerCount offers odds { numerator denominator decimal impliedProbabilityBps } } }`;

describe.each(ENGINES)("contract book on %s", (engine) => {
  let target: StoreTarget;
  let chain: TestChain;
  let ix: Attached;
  let w: OffersWorld;
  let read: ReadService;
  let http: Awaited<ReturnType<typeof listen>>;
  const blocked = new Set<string>();
  const all: ScenarioResult = { contracts: [], offers: [], positions: [], txs: 0 };

  beforeAll(async () => {
    target = freshStore(engine, "book");
    chain = await TestChain.start();
    ix = await attachIndexer(chain, target.url);
    w = await OffersWorld.create({ chain });
    read = new ReadService({
      db: ix.store.db,
      now: async () => Number(await chain.now()),
      anonymousTtlMs: 0,
      clockCacheMs: 0,
      blockedWallets: async (ws) => new Set(ws.filter((x) => blocked.has(x))),
    });
    http = await listen(createApp({ read, custody: null, responseCacheTtlMs: 0 }));
  });
  afterAll(async () => {
    await http?.close();
    read?.close();
    ix?.detach();
    await ix?.store.close();
    await target?.drop();
  });

  it("equals a recomputation from the chain's offers after each round of random actions", async () => {
    let compared = 0;
    let levels = 0;
    let shared = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const r = await runScenario(w, { seed: 230 + round + (engine === "sqlite" ? 0 : 10), actions: ACTIONS });
      // Besides the random ones, a contract whose book surely has a level of several offers (the same ratio at other scales), one partly taken.
      const c = await w.contract({ cutoffIn: 7_200n });
      const [a, b, taker] = [await w.user(500n * UNIT), await w.user(500n * UNIT), await w.user(500n * UNIT)];
      const made = [];
      for (const [user, side, total, target] of [
        [a, "sideA", 3n, 2n],
        [b, "sideA", 6n, 4n],
        [a, "sideA", 9n, 6n],
        [b, "sideA", 5n, 2n],
        [a, "sideB", 4n, 4n],
      ] as const)
        made.push((await w.createOffer(user, c, { side, total: total * UNIT, target: target * UNIT, minTake: UNIT })).offer);
      expect((await w.take(taker, made[1], UNIT)).ok).toBe(true);
      r.contracts.push(c);
      r.offers.push(...made);
      all.contracts.push(...r.contracts);
      all.offers.push(...r.offers);
      await ix.source.drain();
      await catalogue(ix.store.db, r.contracts, "Book test");
      for (const c of all.contracts) {
        const book = await contractBook(read, c.toBase58(), 100, null);
        expect(shape(book)).toEqual(await reference(w, c, all.offers, () => false));
        expect(book.sides.map((s) => s.label)).toEqual(["Home", "Away"]);
        // Matched volume: the store's offer totals, a source apart from the fills the service sums.
        const rows = await ix.store.db.selectFrom("offers").select("taker_filled_micros").where("contract", "=", c.toBase58()).execute();
        expect(book.matchedVolumeMicros).toBe(rows.reduce((s, o) => s + BigInt(o.taker_filled_micros), 0n).toString());
        expect(book.lastMatch === null).toBe(book.matchedVolumeMicros === "0");
        compared++;
        levels += book.sides.reduce((n, s) => n + s.levels.length, 0);
        shared += book.sides.reduce((n, s) => n + s.levels.filter((l) => l.offerCount > 1).length, 0);
      }
    }
    expect(compared).toBeGreaterThan(2);
    // The rounds exercised the grouping: several levels, some holding more than one offer.
    expect(levels).toBeGreaterThan(5);
    expect(shared).toBeGreaterThan(0);
  });

  it("leaves out, for a signed-in caller, their own offers and blocked creators' offers", async () => {
    // The contract with the most creators in its book.
    let best: { c: PublicKey; creators: string[] } | null = null;
    for (const c of all.contracts) {
      const b = await contractBook(read, c.toBase58(), 100, null);
      const inBook = new Set(b.sides.flatMap((s) => s.levels.flatMap((l) => l.offers)));
      const rows = await ix.store.db.selectFrom("offers").select(["address", "creator"]).where("contract", "=", c.toBase58()).execute();
      const creators = [...new Set(rows.filter((r) => inBook.has(r.address)).map((r) => r.creator))];
      if (!best || creators.length > best.creators.length) best = { c, creators };
    }
    expect(best!.creators.length).toBeGreaterThan(1);
    const creators = best!.creators;
    const [me, other] = creators;
    blocked.add(other);
    try {
      const mine = await contractBook(read, best!.c.toBase58(), 100, me);
      expect(shape(mine)).toEqual(await reference(w, best!.c, all.offers, (o) => o.creator === me || o.creator === other));
      const anonymous = await contractBook(read, best!.c.toBase58(), 100, null);
      expect(mine.revision).not.toBe(anonymous.revision);
    } finally {
      blocked.delete(other);
    }
  });

  it("answers the same book over REST and GraphQL, and refuses bad inputs", async () => {
    const c = all.contracts[all.contracts.length - 1].toBase58();
    const rest = await fetch(`${http.url}${OFFERS_BASE}/contracts/${c}/book?depth=3`);
    expect(rest.status).toBe(200);
    const restBook = (await rest.json()) as Book;
    const gql = await fetch(`${http.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `query($a: Address!) { contract(address: $a) { book(depth: 3) { ${BOOK_FIELDS} } } }`, variables: { a: c } }),
    });
    const body = (await gql.json()) as { data: { contract: { book: Book } } };
    expect(body.data.contract.book).toEqual(restBook);
    expect(restBook).toEqual(JSON.parse(JSON.stringify(await contractBook(read, c, 3, null))));
    for (const s of restBook.sides) expect(s.levels.length).toBeLessThanOrEqual(3);

    // Every offer carries its odds, the same over REST and GraphQL, by the rule from the chain's amounts.
    const some = all.offers[all.offers.length - 2];
    const acc = await w.offer(some);
    const odds = { takerOdds: takerOdds(acc.creatorTotal, acc.takerTarget, acc.feeBps), creatorOdds: creatorOdds(acc.creatorTotal, acc.takerTarget) };
    const restOffer = (await (await fetch(`${http.url}${OFFERS_BASE}/${some.toBase58()}`)).json()) as Record<string, unknown>;
    expect({ takerOdds: restOffer.takerOdds, creatorOdds: restOffer.creatorOdds }).toEqual(odds);
    const o = ["numerator", "denominator", "decimal", "impliedProbabilityBps"].join(" ");
    const gqlOffer = (await (
      await fetch(`${http.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `{ offer(address: "${some.toBase58()}") { takerOdds { ${o} decimalAfterFee } creatorOdds { ${o} } } }` }),
      })
    ).json()) as { data: { offer: unknown } };
    expect(gqlOffer.data.offer).toEqual(odds);

    const status = async (path: string) => (await fetch(`${http.url}${OFFERS_BASE}${path}`)).status;
    for (const depth of ["0", "101", "abc", "1.5", "-1"]) expect(await status(`/contracts/${c}/book?depth=${depth}`), depth).toBe(400);
    expect(await status(`/contracts/${c}/book?depth=100`)).toBe(200);
    expect(await status(`/contracts/not-an-address/book`)).toBe(400);
    expect(await status(`/contracts/${Keypair.generate().publicKey.toBase58()}/book`)).toBe(404);
    const gqlError = async (query: string) => {
      const r = (await (
        await fetch(`${http.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) })
      ).json()) as { errors?: { message: string }[] };
      return r.errors?.[0]?.message ?? "";
    };
    expect(await gqlError(`{ contract(address: "${c}") { book(depth: 0) { revision } } }`)).toMatch(/depth must be an integer from 1 to 100/);
    expect(await gqlError(`{ contract(address: "${c}") { book(depth: 101) { revision } } }`)).toMatch(/depth/);
    expect(await gqlError(`{ contract(address: "${Keypair.generate().publicKey.toBase58()}") { address } }`)).toMatch(/contract not found/);
  });
});
