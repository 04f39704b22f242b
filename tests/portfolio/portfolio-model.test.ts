/**
 * The portfolio against a model, on both stores (SQLite and PostgreSQL): random creates, takes,
 * closes, resolutions, voids and settlements through the write service and the worker on the
 * local stack; after each step the portfolio of every user (read from the store the indexer fills)
 * equals the model's, computed here from the spec's settlement table independently of the rules
 * module. PORTFOLIO_MODEL_STEPS sets the number of steps (default 40 per store, for CI).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { LocalStack } from "../../stack/local-stack";
import type { Principal } from "../../service/custody/custody";
import { portfolio } from "../../service/read/portfolio";
import { ENGINES, freshStore, type StoreTarget } from "../indexer/stores";
import { UNIT, contract, key, makeUser, stack, type TestUser } from "../support/stack";
import { eventually } from "../support/wait";

const STEPS = Number(process.env.PORTFOLIO_MODEL_STEPS ?? 40);
const FEE = 1000n;
const fee = (profit: bigint) => (profit * FEE) / 10_000n;

type Side = "sideA" | "sideB";
interface MPosition {
  taker: number;
  t: bigint;
  m: bigint;
  settled: null | { creator: bigint; taker: bigint; status: "cw" | "tw" | "void" };
}
interface MOffer {
  address: string;
  creator: number;
  k: number;
  side: Side;
  total: bigint;
  target: bigint;
  filled: bigint;
  allocated: bigint;
  revision: bigint;
  open: boolean;
  positions: Map<number, MPosition>;
}
interface MContract {
  address: PublicKey;
  cutoff: bigint;
  status: "Open" | "Resolved" | "Voided";
  result: Side | "void" | null;
}

function rng(seed: number) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** The spec's table: [creator, taker] paid at settlement of (m, t) on a result. */
function settle(side: Side, result: Side | "void", m: bigint, t: bigint): { creator: bigint; taker: bigint; status: "cw" | "tw" | "void" } {
  if (result === "void") return { creator: m, taker: t, status: "void" };
  if (result === side) return { creator: m + t - fee(t), taker: 0n, status: "cw" };
  return { creator: 0n, taker: t + m - fee(m), status: "tw" };
}

/** What the model says the portfolio of user `u` is. */
function expected(u: number, offers: MOffer[], contracts: MContract[], users: TestUser[]) {
  let stakeAtRisk = 0n,
    unmatched = 0n,
    pending = 0n,
    realised = 0n,
    fees = 0n;
  const counts = { won: 0, lost: 0, refunded: 0 };
  const per = new Map<string, { matched: bigint; unmatched: bigint; ret: Record<string, bigint> }>();
  const acc = (k: MContract) => {
    const id = k.address.toBase58();
    if (!per.has(id)) per.set(id, { matched: 0n, unmatched: 0n, ret: { sideA: 0n, sideB: 0n, void: 0n } });
    return per.get(id)!;
  };
  for (const o of offers) {
    const k = contracts[o.k];
    if (o.creator === u && o.open) {
      unmatched += o.total - o.allocated;
      acc(k).unmatched += o.total - o.allocated;
    }
    for (const p of o.positions.values()) {
      const role = o.creator === u ? "creator" : p.taker === u ? "taker" : null;
      if (!role) continue;
      const stake = role === "creator" ? p.m : p.t;
      if (p.settled) {
        const paid = role === "creator" ? p.settled.creator : p.settled.taker;
        realised += paid - stake;
        if (p.settled.status === "void") counts.refunded++;
        else if ((p.settled.status === "cw") === (role === "creator")) {
          counts.won++;
          fees += role === "creator" ? fee(p.t) : fee(p.m);
        } else counts.lost++;
        continue;
      }
      const a = acc(k);
      a.matched += stake;
      for (const r of ["sideA", "sideB", "void"] as const) {
        const s = settle(o.side, r, p.m, p.t);
        a.ret[r] += role === "creator" ? s.creator : s.taker;
      }
      if (k.status === "Open") stakeAtRisk += stake;
      else {
        const s = settle(o.side, k.result!, p.m, p.t);
        pending += role === "creator" ? s.creator : s.taker;
      }
    }
  }
  return {
    wallet: users[u].user.wallet.toBase58(),
    totals: {
      stakeAtRiskMicros: String(stakeAtRisk),
      unmatchedLockedMicros: String(unmatched),
      pendingPayoutsMicros: String(pending),
      realisedPnlMicros: String(realised),
      feesPaidMicros: String(fees),
      ...counts,
    },
    contracts: Object.fromEntries(
      [...per.entries()].map(([id, a]) => [
        id,
        {
          matchedStakeMicros: String(a.matched),
          unmatchedMicros: String(a.unmatched),
          outcomes: (["sideA", "sideB", "void"] as const).map((r) => ({ result: r, returnMicros: String(a.ret[r]), netMicros: String(a.ret[r] - a.matched) })),
        },
      ]),
    ),
  };
}

describe.each(ENGINES)("portfolio against a model (%s)", (engine) => {
  let s: LocalStack;
  let target: StoreTarget;
  beforeAll(async () => {
    target = freshStore(engine, "portfolio");
    s = await stack({ storeUrl: target.url, walletLimits: { writeBurst: 0, maxOpenOffers: 0, maxOpenPositions: 0 } });
  });
  afterAll(async () => {
    await s?.stop();
    await target?.drop();
  });

  it(`${STEPS} random steps: every user's portfolio equals the model's after each`, async () => {
    const rand = rng(engine === "sqlite" ? 26 : 62);
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
    const users: TestUser[] = [];
    for (let i = 0; i < 4; i++) users.push(await makeUser(s, 5_000n * UNIT));
    const principals: Principal[] = [];
    for (const u of users) principals.push((await s.custody.authenticate(u.token))!);
    const contracts: MContract[] = [];
    const now0 = await s.chain.gateway.now();
    for (let i = 0; i < 4; i++)
      contracts.push({ address: await contract(s, BigInt(1_000 * (i + 1))), cutoff: now0 + BigInt(1_000 * (i + 1)), status: "Open", result: null });
    const offers: MOffer[] = [];
    const ops: Record<string, number> = {};

    const check = async () => {
      for (let u = 0; u < users.length; u++) {
        const want = expected(u, offers, contracts, users);
        await eventually(
          async () => {
            const got = await portfolio(s.db, want.wallet);
            expect({ ...got.totals, claimsWaitingMicros: undefined }).toEqual({ ...want.totals, claimsWaitingMicros: undefined });
            const byContract = Object.fromEntries(
              got.contracts.map((c) => [c.contract, { matchedStakeMicros: c.matchedStakeMicros, unmatchedMicros: c.unmatchedMicros, outcomes: c.outcomes }]),
            );
            expect(byContract).toEqual(want.contracts);
          },
          10_000,
          50,
        );
      }
    };
    const drain = async () => {
      await s.worker.drain();
      const now = await s.chain.gateway.now();
      for (const o of offers) {
        const k = contracts[o.k];
        if (o.open && (k.status !== "Open" || now >= k.cutoff)) o.open = false;
        if (k.status === "Open") continue;
        for (const p of o.positions.values()) if (!p.settled) p.settled = settle(o.side, k.result!, p.m, p.t);
      }
      ops.settle = (ops.settle ?? 0) + 1;
    };

    let resolved = 0;
    for (let step = 0; step < STEPS; step++) {
      // Fresh contracts keep coming, each cutoff after the last, so that long runs keep trading.
      if (contracts.filter((k) => k.status === "Open").length < 3) {
        const t = await s.chain.gateway.now();
        const last = contracts[contracts.length - 1].cutoff;
        const cutoff = (last > t ? last : t) + 1_000n;
        contracts.push({ address: await contract(s, cutoff - t), cutoff, status: "Open", result: null });
      }
      const now = await s.chain.gateway.now();
      const live = contracts.map((k, i) => ({ k, i })).filter(({ k }) => k.status === "Open" && now < k.cutoff);
      const takeable = offers.filter((o) => o.open && o.filled < o.target && contracts[o.k].status === "Open" && now < contracts[o.k].cutoff);
      const r = rand();
      if ((r < 0.3 || takeable.length === 0) && live.length > 0) {
        const { i } = pick(live);
        const c = pick([0, 1, 2, 3]);
        const total = BigInt(2 + Math.floor(rand() * 40)) * UNIT + BigInt(Math.floor(rand() * 1000));
        const target = (total * BigInt(5 + Math.floor(rand() * 25))) / 10n;
        const side: Side = rand() < 0.5 ? "sideA" : "sideB";
        const res = await s.writes.create(principals[c], {
          contractAddress: contracts[i].address.toBase58(),
          creatorOutcome: side,
          creatorTotalMicros: String(total),
          takerTargetMicros: String(target),
          minimumTakeMicros: String(UNIT),
          expectedFeeBps: Number(FEE),
          idempotencyKey: key(),
        });
        offers.push({
          address: res.offerAddress,
          creator: c,
          k: i,
          side,
          total,
          target,
          filled: 0n,
          allocated: 0n,
          revision: 1n,
          open: true,
          positions: new Map(),
        });
        ops.create = (ops.create ?? 0) + 1;
      } else if (r < 0.65 && takeable.length > 0) {
        const o = pick(takeable);
        const t = pick([0, 1, 2, 3].filter((x) => x !== o.creator));
        const remaining = o.target - o.filled;
        const amount = remaining <= 2n * UNIT || rand() < 0.25 ? remaining : UNIT + BigInt(Math.floor(rand() * Number(remaining - UNIT)));
        const res = await s.writes.take(principals[t], o.address, {
          takeAmountMicros: String(amount),
          expectedRevision: String(o.revision),
          idempotencyKey: key(),
        });
        const m = BigInt(res.creatorMatchedMicros);
        const p = o.positions.get(t) ?? { taker: t, t: 0n, m: 0n, settled: null };
        p.t += amount;
        p.m += m;
        o.positions.set(t, p);
        o.filled += amount;
        o.allocated += m;
        o.revision += 1n;
        if (o.filled === o.target) o.open = false;
        ops.take = (ops.take ?? 0) + 1;
      } else if (r < 0.75 && offers.some((o) => o.open)) {
        const o = pick(offers.filter((x) => x.open));
        await s.writes.close(principals[o.creator], o.address, { expectedRevision: String(o.revision), idempotencyKey: key() });
        o.open = false;
        ops.close = (ops.close ?? 0) + 1;
      } else if (r < 0.85 && resolved < contracts.length) {
        // The next contract's cutoff passes; it resolves (a side, or void).
        const k = contracts[resolved++];
        const t = await s.chain.gateway.now();
        if (t <= k.cutoff) await s.chain.gateway.advance(k.cutoff - t + 1n);
        const result = pick(["sideA", "sideB", "void"] as const);
        await s.admin.resolveContract(k.address, result);
        k.status = result === "void" ? "Voided" : "Resolved";
        k.result = result;
        ops[result === "void" ? "void" : "resolve"] = (ops[result === "void" ? "void" : "resolve"] ?? 0) + 1;
      } else {
        await drain();
      }
      await check();
    }
    await drain();
    await check();
    console.log(`${engine}: ${STEPS} steps ${JSON.stringify(ops)}`);
    expect(ops.create).toBeGreaterThan(0);
    expect(ops.take).toBeGreaterThan(0);
  }, 600_000);
});
