/**
 * A bankrun simulation written with the harness, the one harness/README.md walks through: one
 * creator backs the home side of a contract; takers with seeded random stakes take the other
 * side until the offer is filled or they run out; the clock passes the cutoff, the offer is
 * closed, the contract resolved for `winner`, every position settled. It returns the balances
 * before and after, which tests/harness/example.test.ts checks against the spec's payout rules.
 *
 *   npx tsx harness/examples/match-day.ts          (SVM_ENGINE=litesvm for LiteSVM)
 */
import type { PublicKey } from "@solana/web3.js";
import { OffersWorld, UNIT, type User } from "../offers-world";
import { Rng } from "../random";

export interface MatchDay {
  world: OffersWorld;
  creator: User;
  takers: User[];
  offer: PublicKey;
  /** Each taker's amount taken, in micro-units (0 when the offer was full before their turn). */
  taken: bigint[];
  before: { creator: bigint; takers: bigint[]; total: bigint };
  after: { creator: bigint; takers: bigint[]; treasury: bigint; total: bigint };
}

export async function matchDay(o: { seed?: number; takers?: number; winner?: "sideA" | "sideB" } = {}): Promise<MatchDay> {
  const rng = new Rng(o.seed ?? 1);
  // A world: a fresh chain with the offers program, a mint, the config at the spec's launch settings.
  const world = await OffersWorld.create();
  // Users: a keypair with SOL and a token account holding the mint (amounts in micro-units).
  const creator = await world.user(100n * UNIT);
  // One at a time: a chain processes one transaction after another (LiteSVM refuses overlapping sends).
  const takers: User[] = [];
  for (let i = 0; i < (o.takers ?? 4); i++) takers.push(await world.user(100n * UNIT));
  const contract = await world.contract({ cutoffIn: 3_600n }); // cutoff one hour from the chain's now
  const before = {
    creator: await world.balanceOf(creator.token),
    takers: await Promise.all(takers.map((t) => world.balanceOf(t.token))),
    total: (await world.balances()).total,
  };

  // Stake 40 on home (sideA) for 50 wanted on away: odds 1.8 for a taker.
  const { r, offer } = await world.createOffer(creator, contract, { side: "sideA", total: 40n * UNIT, target: 50n * UNIT });
  if (r.error) throw new Error(`create_offer refused: ${r.error}`);

  const taken: bigint[] = [];
  for (const taker of takers) {
    const now = await world.offer(offer);
    const left = now.takerTarget - now.takerFilled;
    const wanted = rng.big(1n, 25n) * UNIT; // 1 to 25 whole units; the last taker may get less
    const amount = wanted < left ? wanted : left;
    if (amount > 0n) {
      const t = await world.take(taker, offer, amount);
      if (t.error) throw new Error(`take_offer refused: ${t.error}`);
    }
    taken.push(amount);
  }

  // The chain clock: move past the cutoff, then anyone may close (the unmatched stake goes back).
  await world.chain.advance(3_601n);
  if ((await world.offer(offer)).status === "Open") {
    const c = await world.close(creator.key, offer);
    if (c.error) throw new Error(`close_offer refused: ${c.error}`);
  }
  const res = await world.resolve(contract, o.winner ?? "sideB");
  if (res.error) throw new Error(`resolve_contract refused: ${res.error}`);
  for (const [i, taker] of takers.entries()) {
    if (taken[i] === 0n) continue;
    const s = await world.settle(world.positionOf(offer, taker));
    if (s.error) throw new Error(`settle_position refused: ${s.error}`);
  }

  const b = await world.balances();
  const after = {
    creator: await world.balanceOf(creator.token),
    takers: await Promise.all(takers.map((t) => world.balanceOf(t.token))),
    treasury: b.treasury,
    total: b.total,
  };
  return { world, creator, takers, offer, taken, before, after };
}

// Run directly: print what happened (amounts in whole units).
if (import.meta.url === `file://${process.argv[1]}`) {
  const units = (m: bigint) => `${m / UNIT}.${String(m % UNIT).padStart(6, "0")}`;
  const d = await matchDay({ seed: Number(process.env.SEED ?? 1) });
  d.taken.forEach((t, i) => console.log(`taker ${i}: took ${units(t)}, ${units(d.before.takers[i])} -> ${units(d.after.takers[i])}`));
  console.log(
    `creator: ${units(d.before.creator)} -> ${units(d.after.creator)}; treasury ${units(d.after.treasury)}; total kept: ${d.before.total === d.after.total}`,
  );
}
