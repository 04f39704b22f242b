/**
 * Demo data of the local stack: users with funded custodial wallets and tokens, a few days of
 * contracts across sports and competitions, offers and takes through the write service, and
 * one contract already played, resolved and settled so results show too.
 */
import { randomUUID } from "node:crypto";
import type { LocalStack } from "../stack/local-stack";
import { POOLS_SEED_CLOCK_SECONDS, seedPools } from "./seed-pools";

const UNIT = 1_000_000n;
const HOUR = 3_600n;

interface Fixture {
  title: string;
  event: string;
  sport: string;
  competition: string;
  a: string;
  b: string;
  inHours: bigint;
  image: string;
}

const FIXTURES: Fixture[] = [
  {
    title: "Will Arsenal beat Chelsea?",
    event: "Arsenal vs Chelsea",
    sport: "football",
    competition: "Premier League",
    a: "Arsenal win",
    b: "Chelsea win or draw",
    inHours: 6n,
    image: "football",
  },
  {
    title: "Will Real Madrid win El Clasico?",
    event: "Real Madrid vs Barcelona",
    sport: "football",
    competition: "La Liga",
    a: "Real Madrid win",
    b: "Barcelona win or draw",
    inHours: 30n,
    image: "football",
  },
  {
    title: "Over 2.5 goals in Bayern vs Dortmund?",
    event: "Bayern vs Dortmund",
    sport: "football",
    competition: "Bundesliga",
    a: "Over 2.5",
    b: "Under 2.5",
    inHours: 54n,
    image: "football",
  },
  {
    title: "Will the Lakers beat the Celtics?",
    event: "Lakers vs Celtics",
    sport: "basketball",
    competition: "NBA",
    a: "Lakers",
    b: "Celtics",
    inHours: 12n,
    image: "basketball",
  },
  {
    title: "Will Sinner win in straight sets?",
    event: "Sinner vs Alcaraz",
    sport: "tennis",
    competition: "ATP Finals",
    a: "Straight sets",
    b: "Not straight sets",
    inHours: 20n,
    image: "tennis",
  },
  {
    title: "Will Team Liquid take map 1?",
    event: "Liquid vs NaVi",
    sport: "esports",
    competition: "CS Major",
    a: "Liquid",
    b: "NaVi",
    inHours: 2n,
    image: "esports",
  },
  {
    title: "Will the Chiefs cover -3.5?",
    event: "Chiefs vs Bills",
    sport: "american-football",
    competition: "NFL",
    a: "Chiefs cover",
    b: "Bills cover",
    inHours: 72n,
    image: "nfl",
  },
];

export interface SeedResult {
  users: { name: string; wallet: string; token: string }[];
  contracts: string[];
  offers: string[];
  poolSlugs: string[];
}

/** The played match's cutoff: its offers are made before it, then the clock moves past it. */
const PLAYED_CUTOFF_SECONDS = 60n;
/** How far seeding moves the chain clock forward in all. */
export const SEED_CLOCK_SECONDS = POOLS_SEED_CLOCK_SECONDS + PLAYED_CUTOFF_SECONDS + 1n;

/**
 * Demo data. Seeding needs time to pass (picks and offers made before a cutoff that then passes),
 * so it first sets the chain clock SEED_CLOCK_SECONDS back and ends where it started: nothing
 * seeded carries a time ahead of the chain's, and a clock following wall time stays on it.
 */
export async function seed(s: LocalStack, opts: { log?: (m: string) => void } = {}): Promise<SeedResult> {
  const log = opts.log ?? (() => {});
  await s.chain.gateway.setTime((await s.chain.gateway.now()) - SEED_CLOCK_SECONDS);
  const users: SeedResult["users"] = [];
  const tokens = new Map<string, string>();
  for (const [name, display] of [
    ["alice", "Alice"],
    ["bob", "Bob"],
    ["carol", "Carol"],
    ["dave", "Dave"],
  ]) {
    const u = await s.admin.createUser(name, display, `https://avatars.example/${name}.png`);
    await s.admin.fund(name, 5_000n * UNIT);
    const { token } = await s.custody.issueToken(u.id, { ttlSeconds: 30 * 86_400, label: "demo" });
    tokens.set(name, token);
    users.push({ name, wallet: u.wallet.toBase58(), token });
  }
  const principal = async (name: string) => s.writes.authorize(`Bearer ${tokens.get(name)}`);
  const { slugs: poolSlugs } = await seedPools(s, { log });
  const now = await s.chain.gateway.now();
  const contracts: string[] = [];
  const offers: string[] = [];
  for (const f of FIXTURES) {
    const cutoff = now + f.inHours * HOUR;
    const c = await s.admin.createContract({
      title: f.title,
      event: f.event,
      sport: f.sport,
      competition: f.competition,
      startsAt: Number(cutoff),
      cutoffAt: cutoff,
      resolutionDeadline: cutoff + 24n * HOUR,
      sideALabel: f.a,
      sideBLabel: f.b,
      visuals: [{ src: `https://img.example/${f.image}.png`, alt: f.event }],
      eventId: randomUUID(),
      templateId: randomUUID(),
    });
    contracts.push(c.toBase58());
  }
  const settings = await s.writes.deps.gateway.getAccount(s.chain.client.pda.config()[0]);
  if (!settings) throw new Error("no config on the local chain");
  const plan: [string, number, "sideA" | "sideB", bigint, bigint][] = [
    ["alice", 0, "sideA", 40n, 50n],
    ["bob", 0, "sideB", 25n, 20n],
    ["carol", 1, "sideA", 100n, 120n],
    ["alice", 3, "sideB", 10n, 60n],
    ["dave", 4, "sideA", 30n, 30n],
    ["bob", 5, "sideA", 15n, 45n],
    ["carol", 6, "sideB", 200n, 180n],
  ];
  for (const [name, ci, side, total, target] of plan) {
    const r = await s.writes.create(await principal(name), {
      contractAddress: contracts[ci],
      creatorOutcome: side,
      creatorTotalMicros: String(total * UNIT),
      takerTargetMicros: String(target * UNIT),
      minimumTakeMicros: String(UNIT),
      expectedFeeBps: 1000,
      idempotencyKey: `seed-${name}-${ci}-${side}`,
    });
    offers.push(r.offerAddress);
    await s.chain.gateway.waitFor(r.signature);
  }
  // A few takes, once the creates are indexed (revision 1).
  for (const [taker, oi, amount] of [
    ["dave", 0, 20n],
    ["carol", 1, 20n],
    ["alice", 4, 30n],
    ["dave", 2, 50n],
  ] as const) {
    const r = await s.writes.take(await principal(taker), offers[oi], {
      takeAmountMicros: String(amount * UNIT),
      expectedRevision: "1",
      idempotencyKey: `seed-take-${taker}-${oi}`,
    });
    await s.chain.gateway.waitFor(r.signature);
  }
  // One match already played: offers taken before a 60 s cutoff, the clock moved past it (back to
  // where seeding started), the result set; the settlement worker pays it out.
  const played = await s.admin.createContract({
    title: "Will Inter beat Milan?",
    event: "Inter vs Milan",
    sport: "football",
    competition: "Serie A",
    startsAt: Number(now + PLAYED_CUTOFF_SECONDS),
    cutoffAt: now + PLAYED_CUTOFF_SECONDS,
    resolutionDeadline: now + PLAYED_CUTOFF_SECONDS + 24n * HOUR,
    sideALabel: "Inter win",
    sideBLabel: "Milan win or draw",
    visuals: [{ src: "https://img.example/football.png", alt: "Inter vs Milan" }],
  });
  contracts.push(played.toBase58());
  const c = await s.writes.create(await principal("bob"), {
    contractAddress: played.toBase58(),
    creatorOutcome: "sideA",
    creatorTotalMicros: String(8n * UNIT),
    takerTargetMicros: String(10n * UNIT),
    minimumTakeMicros: String(UNIT),
    expectedFeeBps: 1000,
    idempotencyKey: "seed-played-create",
  });
  await s.chain.gateway.waitFor(c.signature);
  const t = await s.writes.take(await principal("alice"), c.offerAddress, {
    takeAmountMicros: String(5n * UNIT),
    expectedRevision: "1",
    idempotencyKey: "seed-played-take",
  });
  await s.chain.gateway.waitFor(t.signature);
  offers.push(c.offerAddress);
  await s.chain.gateway.advance(PLAYED_CUTOFF_SECONDS + 1n);
  await s.admin.resolveContract(played, "sideB");
  await s.worker.drain();
  log(`seeded ${users.length} users, ${contracts.length} contracts, ${offers.length} offers`);
  return { users, contracts, offers, poolSlugs };
}
