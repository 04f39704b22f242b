/**
 * Random offers lifecycles on the real program (bankrun): contracts, creates, takes, closes,
 * clock moves, resolutions (sides and void), settlements and rent reclaims (account deletions).
 * Failed transactions are part of the stream too. Returns every address it created.
 */
import type { PublicKey } from "@solana/web3.js";
import { OffersWorld, UNIT, type User } from "./offers-world";
import type { PoolsWorld, User as PoolUser } from "./pools-world";
import { Rng } from "./random";

export interface ScenarioResult {
  contracts: PublicKey[];
  offers: PublicKey[];
  positions: PublicKey[];
  txs: number;
}

const RATIOS: [bigint, bigint][] = [
  [1n, 10n],
  [1n, 5n],
  [1n, 4n],
  [1n, 2n],
  [1n, 1n],
  [2n, 1n],
  [3n, 1n],
  [5n, 1n],
  [6n, 1n],
  [10n, 1n],
  [4n, 5n],
];

export async function runScenario(w: OffersWorld, opts: { seed: number; actions: number; users?: number }): Promise<ScenarioResult> {
  const rng = new Rng(opts.seed);
  const users: User[] = [];
  for (let i = 0; i < (opts.users ?? 8); i++) users.push(await w.user(rng.big(2_000n, 20_000n) * UNIT));
  const contracts: PublicKey[] = [];
  const cutoffs = new Map<PublicKey, bigint>();
  const failures: Record<string, number> = {};
  const note = (k: string, ok: boolean) => {
    if (!ok) failures[k] = (failures[k] ?? 0) + 1;
  };
  const offers: { offer: PublicKey; contract: PublicKey; creator: User }[] = [];
  const positions: { position: PublicKey; offer: PublicKey; contract: PublicKey }[] = [];
  const resolved = new Set<string>();
  let txs = 0;
  const c = w.client;

  for (let step = 0; step < opts.actions; step++) {
    const roll = rng.int(0, 99);
    txs++;
    if (contracts.length === 0 || roll < 6) {
      const cutoffIn = rng.big(1_800n, 14_400n);
      const contract = await w.contract({ cutoffIn, deadlineAfterCutoff: rng.big(600n, 7_200n) });
      contracts.push(contract);
      cutoffs.set(contract, (await w.chain.now()) + cutoffIn);
    } else if (roll < 30) {
      const now = await w.chain.now();
      const live = contracts.filter((k) => cutoffs.get(k)! > now);
      const contract = live.length && rng.chance(0.9) ? rng.pick(live) : rng.pick(contracts);
      const [n, d] = rng.pick(RATIOS);
      const total = rng.big(1n, 40n) * UNIT;
      const target = (total * d) / n;
      // Every third offer expires within ten minutes (or at the cutoff), drawing nothing from rng.
      const cutoff = cutoffs.get(contract)!;
      const expiresAt = offers.length % 3 === 2 && cutoff > now ? (now + 600n < cutoff ? now + 600n : cutoff) : undefined;
      const { offer, r } = await w.createOffer(rng.pick(users), contract, {
        side: rng.chance(0.5) ? "sideA" : "sideB",
        total,
        target,
        minTake: UNIT,
        expiresAt,
      });
      note("create", r.ok);
      const creatorKey = (await w.chain.account(offer)) ? (await w.offer(offer)).creator : null;
      if (creatorKey) offers.push({ offer, contract, creator: users.find((u) => u.key.publicKey.equals(creatorKey))! });
    } else if (roll < 60 && offers.length) {
      const openOffers = [];
      for (const x of offers.slice(-30)) if ((await w.chain.account(x.offer)) && (await w.offer(x.offer)).status === "Open") openOffers.push(x);
      const o = openOffers.length && rng.chance(0.9) ? rng.pick(openOffers) : rng.pick(offers);
      const a = await w.chain.account(o.offer);
      if (!a) continue;
      const acc = await w.offer(o.offer);
      const remaining = acc.takerTarget - acc.takerFilled;
      const taker = rng.pick(users.filter((u) => u !== o.creator));
      const amount = remaining > 0n && (rng.chance(0.3) || remaining < 2n * UNIT) ? remaining : rng.big(1n, 30n) * UNIT;
      const r = await w.take(taker, o.offer, amount, rng.chance(0.05) ? acc.revision + 1n : undefined);
      const position = w.positionOf(o.offer, taker);
      note("take", r.ok);
      if (r.ok && !positions.some((p) => p.position.equals(position))) positions.push({ position, offer: o.offer, contract: o.contract });
    } else if (roll < 68 && offers.length) {
      const o = rng.pick(offers);
      if (!(await w.chain.account(o.offer))) continue;
      await w.close(rng.chance(0.8) ? o.creator.key : rng.pick(users).key, o.offer);
    } else if (roll < 76) {
      await w.chain.advance(rng.big(60n, 1_500n));
      txs--;
    } else if (roll < 84 && contracts.length) {
      const now = await w.chain.now();
      const past = contracts.filter((k) => cutoffs.get(k)! <= now && !resolved.has(k.toBase58()));
      const contract = past.length && rng.chance(0.9) ? rng.pick(past) : rng.pick(contracts);
      const r = await w.resolve(contract, rng.pick(["sideA", "sideB", "void"] as const));
      note("resolve", r.ok);
      if (r.ok) resolved.add(contract.toBase58());
    } else if (roll < 94 && positions.length) {
      const settleable = positions.filter((p) => resolved.has(p.contract.toBase58()));
      const p = settleable.length && rng.chance(0.9) ? rng.pick(settleable) : rng.pick(positions);
      if (!(await w.chain.account(p.position)) || !(await w.chain.account(p.offer))) continue;
      note("settle", (await w.settle(p.position)).ok);
    } else if (roll < 97 && positions.length) {
      const p = rng.pick(positions);
      const a = await w.chain.account(p.position);
      if (!a) continue;
      const pos = await w.position(p.position);
      await w.send([await c.closePosition({ position: p.position, rentPayer: pos.rentPayer })]);
    } else if (offers.length) {
      const o = rng.pick(offers);
      if (!(await w.chain.account(o.offer))) continue;
      const acc = await w.offer(o.offer);
      await w.send([await c.closeOfferAccount({ offer: o.offer, rentPayer: acc.rentPayer, contract: acc.contract })]);
    }
  }
  if (process.env.SCENARIO_DEBUG) console.log("failures", failures);
  return { contracts, offers: offers.map((o) => o.offer), positions: positions.map((p) => p.position), txs };
}

/**
 * Random pool lifecycles for the indexer suites: creates (2 to 4 outcomes), picks, clock moves,
 * proposals, votes and disputes, resolutions and escalations, the authority's decisions, cancels,
 * settlements and refunds. Outcomes are not predicted
 * (tests/pools does that); rejected transactions stay in the stream like any other.
 */
export async function runPoolsScenario(w: PoolsWorld, opts: { seed: number; actions: number; users?: number }): Promise<{ pools: PublicKey[]; txs: number }> {
  const rng = new Rng(opts.seed);
  const users: PoolUser[] = [];
  for (let i = 0; i < (opts.users ?? 6); i++) users.push(await w.user(rng.big(500n, 5_000n) * UNIT));
  const pools: { pool: PublicKey; creator: PoolUser; n: number; pickers: Set<PoolUser> }[] = [];
  let txs = 0;
  for (let step = 0; step < opts.actions; step++) {
    const roll = rng.int(0, 99);
    txs++;
    if (pools.length === 0 || roll < 12) {
      const creator = rng.pick(users);
      const n = rng.int(2, 4);
      const labels = n === 2 && rng.chance(0.5) ? undefined : Array.from({ length: n }, (_, i) => `Outcome ${i + 1}`);
      const { r, pool } = await w.createPool(creator, { closesIn: rng.big(600n, 7_200n), ...(labels ? { labels } : {}) });
      if (r.ok) pools.push({ pool, creator, n, pickers: new Set() });
    } else if (roll < 55) {
      const p = rng.pick(pools);
      const u = rng.pick(users);
      if ((await w.pick(u, p.pool, rng.int(0, p.n - 1), rng.big(1n, 50n) * UNIT)).ok) p.pickers.add(u);
    } else if (roll < 65) {
      await w.chain.advance(rng.big(300n, 3_000n));
      txs--;
    } else if (roll < 72) {
      const p = rng.pick(pools);
      await w.propose((rng.chance(0.9) ? p.creator : rng.pick(users)).key, p.pool, rng.int(0, p.n - 1));
    } else if (roll < 80) {
      const p = rng.pick(pools);
      const voters = [...p.pickers];
      if (voters.length) await w.vote(rng.pick(voters), p.pool, rng.int(0, p.n - 1));
    } else if (roll < 84) {
      await w.chain.advance(rng.chance(0.3) ? 3n * 86_400n : 86_400n);
      await w.resolve(rng.pick(users).key, rng.pick(pools).pool);
    } else if (roll < 86) {
      const p = rng.pick(pools);
      await w.authorityResolve(p.pool, rng.chance(0.2) ? 255 : rng.int(0, p.n - 1));
    } else if (roll < 89) {
      const p = rng.pick(pools);
      await w.cancel(rng.chance(0.8) ? p.creator.key : rng.pick(users).key, p.pool);
    } else {
      const p = rng.pick(pools);
      const voters = [...p.pickers];
      if (!voters.length) continue;
      const u = rng.pick(voters).key.publicKey;
      await (rng.chance(0.5) ? w.settle(p.pool, u) : w.refund(p.pool, u));
    }
  }
  return { pools: pools.map((p) => p.pool), txs };
}
