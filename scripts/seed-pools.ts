/**
 * Demo pools of the local stack, one in each state of the embed endpoint: two OPEN (two-outcome
 * with default labels, and a four-outcome one), LOCKED, RESOLVING, DISTRIBUTED, REFUNDED, plus a
 * private and a flagged one (404 from the embed endpoint). Moves the chain clock
 * POOLS_SEED_CLOCK_SECONDS forward.
 */
import type { PublicKey } from "@solana/web3.js";
import { upsertPoolCatalog } from "../indexer";
import { PoolOps } from "../service/chain/pools-ops";
import type { LocalStack } from "../stack/local-stack";

const UNIT = 1_000_000n;
const DAY = 86_400n;
/** How far seedPools moves the chain clock (picks close after 60 s). */
export const POOLS_SEED_CLOCK_SECONDS = 61n;

export async function seedPools(s: LocalStack, opts: { log?: (m: string) => void } = {}): Promise<{ slugs: string[]; pools: Record<string, PublicKey> }> {
  const ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
  const now = await s.chain.gateway.now();
  const soon = now + POOLS_SEED_CLOCK_SECONDS - 1n;
  const pools: Record<string, PublicKey> = {};
  pools["premier-league-winner"] = await ops.create("alice", {
    question: "Who wins the Premier League this season?",
    labels: ["Arsenal", "Liverpool", "Man City", "Another club"],
    closesAt: now + 30n * DAY,
    criteria: "The club top of the final table on the last matchday.",
    coverUrl: "https://img.example/pl.png",
  });
  pools["white-christmas"] = await ops.create("bob", {
    question: "Will it snow in London on Christmas Day?",
    closesAt: now + 20n * DAY,
    resolutionAt: now + 33n * DAY,
    criteria: "Met Office record for Heathrow.",
  });
  for (const slug of ["locked-demo", "resolving-demo", "distributed-demo", "refunded-demo", "private-demo", "flagged-demo"]) {
    pools[slug] = await ops.create("carol", { question: `Demo pool: ${slug.replace("-demo", "")}?`, labels: ["Yes", "No"], closesAt: soon });
  }
  const picks: [string, string, number, bigint][] = [
    ["premier-league-winner", "alice", 0, 50n],
    ["premier-league-winner", "bob", 1, 30n],
    ["premier-league-winner", "carol", 1, 20n],
    ["premier-league-winner", "dave", 2, 10n],
    ["premier-league-winner", "alice", 1, 5n],
    ["white-christmas", "carol", 0, 12n],
    ["white-christmas", "dave", 1, 40n],
    ["locked-demo", "alice", 0, 10n],
    ["locked-demo", "bob", 1, 10n],
    ["resolving-demo", "alice", 0, 10n],
    ["resolving-demo", "bob", 1, 30n],
    ["distributed-demo", "alice", 0, 40n],
    ["distributed-demo", "bob", 1, 10n],
    ["refunded-demo", "dave", 0, 25n],
    ["private-demo", "alice", 0, 5n],
    ["flagged-demo", "bob", 1, 5n],
  ];
  for (const [slug, user, outcome, amount] of picks) await ops.pick(user, pools[slug], outcome, amount * UNIT);
  // A creator may cancel only while picks are open.
  await ops.cancel("carol", pools["refunded-demo"]);
  await ops.payOut(pools["refunded-demo"], ["dave"], "refund");
  await s.chain.gateway.advance(POOLS_SEED_CLOCK_SECONDS);
  // The creator proposes; the dispute window (24 h) stays open while bob has not voted.
  await ops.propose("carol", pools["resolving-demo"], 0);
  await ops.vote("alice", pools["resolving-demo"], 0);
  // Every participant confirmed the proposal: no dispute can come, so it resolves at once.
  await ops.propose("carol", pools["distributed-demo"], 0);
  await ops.vote("alice", pools["distributed-demo"], 0);
  await ops.vote("bob", pools["distributed-demo"], 0);
  await ops.resolve(pools["distributed-demo"]);
  await ops.payOut(pools["distributed-demo"], ["alice", "bob"], "settle");
  for (const [slug, pool] of Object.entries(pools)) {
    await upsertPoolCatalog(s.db, { pool: pool.toBase58(), slug, isPublic: slug !== "private-demo", flagged: slug === "flagged-demo" });
  }
  opts.log?.(`seeded ${Object.keys(pools).length} pools`);
  return { slugs: Object.keys(pools).filter((x) => !["private-demo", "flagged-demo"].includes(x)), pools };
}
