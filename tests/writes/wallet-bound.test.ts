/**
 * The service wallet cannot be bled through the API (issue #15, part 2), over real HTTP with the
 * default limits (service/writes/wallet-guard.ts): burst 60 writes, 60 writes per hour, 20 offers
 * and 100 positions per user not yet settled and reclaimed.
 *
 * Documented bound, per user: fees <= (writeBurst + writesPerHour * hours) * F with
 * F = 4 signatures = 20,000 lamports; rent locked <= maxOpenOffers * rentOffer + maxOpenPositions
 * * rentPosition.
 * - A create-then-close loop of 60 cycles, 10 per contract (each contract then resolves, so the
 *   worker can reclaim the closed offers' rent and the offers cap never binds): 30 cycles pass
 *   (60 writes), then 429 with `Retry-After`; the service's fees stay within the bound; another
 *   user is unaffected; a replay of an accepted request is still answered; one write per minute
 *   refills. The same loop with the limits switched off spends past the bound (what it prevents).
 * - A take loop on 102 offers: 100 positions, then 409 with a message; adding to a held position
 *   and other users are unaffected; the rent locked stays within the bound; once the positions
 *   settle and their rent is reclaimed the user can open new ones. Likewise 20 offers, then 409,
 *   also after closing one (its account holds the rent until the contract resolves).
 * The rate limit's clock is the service's wall clock (`walletClockMs`), moved by the test.
 */
import { afterAll, describe, expect, it } from "vitest";
import { PublicKey } from "@solana/web3.js";
import type { LocalStack } from "../../stack/local-stack";
import { DEFAULT_WALLET_LIMITS, FEE_BOUND_SIGNATURES_PER_WRITE } from "../../service/writes/wallet-guard";
import type { Kysely } from "kysely";
import { Custody } from "../../service/custody/custody";
import { WriteService } from "../../service/writes/write-service";
import { ApiError } from "../../service/api-error";
import { ENGINES, freshStore } from "../indexer/stores";
import { UNIT, contract, createBody, key, makeUser, stack, type TestUser } from "../support/stack";
import { get, post } from "../support/http";
import { until } from "../support/wait";

const LAMPORTS_PER_SIGNATURE = 5_000n;
const F = BigInt(FEE_BOUND_SIGNATURES_PER_WRITE) * LAMPORTS_PER_SIGNATURE;
const L = DEFAULT_WALLET_LIMITS;

async function lamports(s: LocalStack, a: PublicKey | string): Promise<bigint> {
  const acc = await s.chain.gateway.getAccount(typeof a === "string" ? new PublicKey(a) : a);
  return BigInt(acc?.lamports ?? 0);
}

/** Rent the service holds in offer and position accounts (every one of them is paid by it). */
async function lockedRent(s: LocalStack, owner?: { creator?: string; taker?: string }): Promise<bigint> {
  let q = s.db.selectFrom("offers").select("address").where("deleted", "=", 0);
  if (owner?.creator) q = q.where("creator", "=", owner.creator);
  let p = s.db.selectFrom("positions").select("address").where("deleted", "=", 0);
  if (owner?.taker) p = p.where("taker", "=", owner.taker);
  const rows = [...(owner?.taker ? [] : await q.execute()), ...(owner?.creator ? [] : await p.execute())];
  let sum = 0n;
  for (const r of rows) sum += await lamports(s, r.address);
  return sum;
}

const CREATE = "mutation($input: CreateOfferInput!) { createOffer(input: $input) { signature offerAddress } }";

describe("bound on the service wallet", () => {
  const stacks: LocalStack[] = [];
  afterAll(async () => {
    for (const s of stacks) await s.stop();
  });

  /**
   * The create-then-close loop, 10 cycles per contract: then the contract passes its cutoff, the
   * operator resolves it and the worker reclaims the closed offers' rent (the program reclaims an
   * offer account only once its contract is resolved or voided). `fees`: what the user's writes
   * and the worker's passes took from the service's wallet, net of the rent that came back (the
   * operator's own contract creation and resolution are not counted).
   */
  async function loop(s: LocalStack, u: TestUser, cycles: number) {
    const svc = s.chain.service.publicKey;
    let fees = 0n;
    const paid = async <T>(fn: () => Promise<T>): Promise<T> => {
      const before = await lamports(s, svc);
      const out = await fn();
      fees += before - (await lamports(s, svc));
      return out;
    };
    const startLocked = await lockedRent(s);
    let k = await contract(s, 60n, 600n);
    const settle = async () => {
      await s.chain.gateway.advance(61n);
      await s.admin.resolveContract(k, "sideA");
      await paid(() => s.worker.drain());
    };
    let accepted = 0;
    let maxLocked = 0n;
    const refused: { cycle: number; status: number; retryAfter: string | null; error: string }[] = [];
    let firstBody: Record<string, unknown> | null = null;
    let firstSignature = "";
    let rentOffer = 0n;
    for (let i = 0; i < cycles; i++) {
      if (i > 0 && i % 10 === 0) {
        await settle();
        k = await contract(s, 60n, 600n);
      }
      const body = createBody(k);
      const c = await paid(() => post(s, "/", body, u.token));
      if (c.status !== 200) {
        refused.push({ cycle: i, status: c.status, retryAfter: c.headers.get("retry-after"), error: String(c.body.error) });
        continue;
      }
      if (!firstBody) {
        firstBody = body;
        firstSignature = c.body.signature as string;
        rentOffer = await lamports(s, c.body.offerAddress as string);
      }
      const cl = await paid(() => post(s, `/${c.body.offerAddress}/close`, { expectedRevision: "1", idempotencyKey: key() }, u.token));
      expect(cl.status, cl.text).toBe(200);
      accepted++;
      const locked = (await lockedRent(s)) - startLocked;
      if (locked > maxLocked) maxLocked = locked;
    }
    await settle();
    const endLocked = (await lockedRent(s)) - startLocked;
    return { accepted, refused, fees, maxLocked, endLocked, firstBody: firstBody!, firstSignature, rentOffer };
  }

  it("create-then-close loop: 429 + Retry-After at the bound, fees within it, other users unaffected", async () => {
    let nowMs = Date.now();
    const s = await stack({ walletClockMs: () => nowMs });
    stacks.push(s);
    const [alice, bob] = await Promise.all([makeUser(s), makeUser(s)]);

    const r = await loop(s, alice, 60);
    const k = await contract(s);
    // Two writes per cycle: the burst of 60 lets 30 cycles through, then every create is 429.
    expect(r.accepted).toBe(L.writeBurst / 2);
    expect(r.refused).toHaveLength(60 - L.writeBurst / 2);
    expect(r.refused[0].cycle).toBe(L.writeBurst / 2);
    for (const x of r.refused) {
      expect(x.status).toBe(429);
      expect(x.retryAfter).toBe("60"); // one write per minute refills
      expect(x.error).toMatch(/too many writes: at most 60 at once and 60 per hour per user; retry in 60 s/);
    }
    // Measured: each cycle costs the service 25,000 lamports (create 2 signatures, close 2, the
    // worker's rent reclaim 1); within the documented bound of burst * F (no time has passed).
    expect(r.fees).toBe(BigInt(r.accepted) * 5n * LAMPORTS_PER_SIGNATURE);
    expect(r.fees).toBeLessThanOrEqual(BigInt(L.writeBurst) * F);
    const rentOffer = r.rentOffer;
    expect(rentOffer).toBeGreaterThan(0n);
    // At most 10 closed offers awaited their contract's resolution at once.
    expect(r.maxLocked).toBe(10n * rentOffer);
    expect(r.maxLocked).toBeLessThanOrEqual(BigInt(L.maxOpenOffers) * rentOffer);
    expect(r.endLocked).toBe(0n); // every offer's rent came back
    console.log(
      `wallet bound: loop of 60 cycles -> ${r.accepted} accepted, fees ${r.fees} lamports (bound ${BigInt(L.writeBurst) * F}), offer rent ${rentOffer} lamports`,
    );

    // A replay of an accepted request is answered from its record (no new write, no token).
    const replay = await post(s, "/", r.firstBody, alice.token);
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body.signature).toBe(r.firstSignature);

    // GraphQL answers the same limit.
    const g = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${alice.token}` },
      body: JSON.stringify({ query: CREATE, variables: { input: createBody(k) } }),
    });
    const gj = (await g.json()) as { errors?: { message: string; extensions: Record<string, unknown> }[] };
    expect(gj.errors?.[0].extensions).toEqual({ code: "TOO_MANY_REQUESTS", status: 429, retryAfter: 60 });

    // Another user is unaffected.
    const bc = await post(s, "/", createBody(k), bob.token);
    expect(bc.status, bc.text).toBe(200);
    expect((await post(s, `/${bc.body.offerAddress}/close`, { expectedRevision: "1", idempotencyKey: key() }, bob.token)).status).toBe(200);

    // A minute later one write passes, the next waits another minute; a refused key is reusable.
    nowMs += 60_000;
    const again = await post(s, "/", createBody(k), alice.token);
    expect(again.status, again.text).toBe(200);
    const closeBody = { expectedRevision: "1", idempotencyKey: key() };
    const limited = await post(s, `/${again.body.offerAddress}/close`, closeBody, alice.token);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("60");
    nowMs += 60_000;
    expect((await post(s, `/${again.body.offerAddress}/close`, closeBody, alice.token)).status).toBe(200);

    // The loop on one contract that does not resolve: the closed offers keep their rent locked
    // (the program reclaims an offer account only after its contract resolves), so the offers
    // cap stops it first, at 20 cycles: rent locked 20 * rentOffer, fees 20 * (2 + 2) signatures.
    const [dave] = await Promise.all([makeUser(s)]);
    const kd = await contract(s);
    const before = await lamports(s, s.chain.service.publicKey);
    const codes: number[] = [];
    for (let i = 0; i < 60; i++) {
      const c = await post(s, "/", createBody(kd), dave.token);
      codes.push(c.status);
      if (c.status !== 200) continue;
      expect((await post(s, `/${c.body.offerAddress}/close`, { expectedRevision: "1", idempotencyKey: key() }, dave.token)).status).toBe(200);
      await s.worker.runOnce();
    }
    expect(codes.slice(0, L.maxOpenOffers).every((x) => x === 200)).toBe(true);
    expect(new Set(codes.slice(L.maxOpenOffers))).toEqual(new Set([409]));
    const daveLocked = await lockedRent(s, { creator: dave.user.wallet.toBase58() });
    expect(daveLocked).toBe(BigInt(L.maxOpenOffers) * rentOffer);
    expect(before - (await lamports(s, s.chain.service.publicKey)) - daveLocked).toBe(BigInt(L.maxOpenOffers) * 4n * LAMPORTS_PER_SIGNATURE);
    console.log(
      `wallet bound: loop on one unresolved contract -> ${L.maxOpenOffers} accepted, then 409; rent locked ${daveLocked}, fees ${BigInt(L.maxOpenOffers) * 4n * LAMPORTS_PER_SIGNATURE} lamports`,
    );

    // The same loop with the limits switched off: every cycle passes and the fees pass the bound.
    const open = await stack({ walletLimits: { writeBurst: 0, writesPerHour: 0, maxOpenOffers: 0, maxOpenPositions: 0 } });
    stacks.push(open);
    const [carol] = await Promise.all([makeUser(open)]);
    const u = await loop(open, carol, 60);
    expect(u.accepted).toBe(60);
    expect(u.fees).toBe(60n * 5n * LAMPORTS_PER_SIGNATURE);
    expect(u.fees).toBeGreaterThan(BigInt(L.writeBurst) * F);
  });

  it("take loop: 100 positions then 409; 20 offers then 409; rent locked within the bound; settlement frees the cap", async () => {
    let nowMs = Date.now();
    const s = await stack({ walletClockMs: () => nowMs });
    stacks.push(s);
    const creators = await Promise.all(Array.from({ length: 6 }, () => makeUser(s)));
    const [taker, other, maker] = await Promise.all([makeUser(s), makeUser(s), makeUser(s)]);
    const k = await contract(s, 3_600n, 600n);

    // 102 offers by 6 creators (17 each, within their own caps).
    const offers: string[] = [];
    for (const c of creators) {
      for (let i = 0; i < 17; i++) {
        const r = await post(s, "/", createBody(k), c.token);
        expect(r.status, r.text).toBe(200);
        offers.push(r.body.offerAddress as string);
      }
    }

    // One take per offer, a minute apart (so the rate limit never refuses): 100 positions, then 409.
    const statuses: number[] = [];
    let capError = "";
    for (const o of offers) {
      nowMs += 60_000;
      const r = await post(s, `/${o}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
      statuses.push(r.status);
      if (r.status === 409) {
        capError = String(r.body.error);
        expect(r.headers.get("retry-after")).toBeNull();
      }
    }
    expect(statuses.slice(0, L.maxOpenPositions).every((x) => x === 200)).toBe(true);
    expect(statuses.slice(L.maxOpenPositions)).toEqual([409, 409]);
    expect(capError).toBe(
      "you have 100 positions not yet settled; at most 100 per user. You can add to a position you already hold, or take a new offer once one of your positions settles",
    );
    const wallet = taker.user.wallet.toBase58();
    expect(await s.db.selectFrom("positions").select("address").where("taker", "=", wallet).execute()).toHaveLength(L.maxOpenPositions);

    // Rent locked for this user's positions: within maxOpenPositions * rentPosition.
    const positionRows = await s.db.selectFrom("positions").select("address").where("taker", "=", wallet).execute();
    const rentPosition = await lamports(s, positionRows[0].address);
    const locked = await lockedRent(s, { taker: wallet });
    expect(locked).toBe(BigInt(L.maxOpenPositions) * rentPosition);

    // Adding to a position already held opens no account: allowed at the cap.
    nowMs += 60_000;
    const more = await post(s, `/${offers[0]}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "2", idempotencyKey: key() }, taker.token);
    expect(more.status, more.text).toBe(200);
    // Another user is unaffected.
    const o101 = await post(s, `/${offers[101]}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "1", idempotencyKey: key() }, other.token);
    expect(o101.status, o101.text).toBe(200);

    // The offers cap: 20, then 409. A closed offer's account holds its rent until the contract is
    // resolved and the worker reclaims it, so it still counts until then.
    const mine: string[] = [];
    for (let i = 0; i < L.maxOpenOffers; i++) {
      const r = await post(s, "/", createBody(k), maker.token);
      expect(r.status, r.text).toBe(200);
      mine.push(r.body.offerAddress as string);
    }
    const over = createBody(k);
    const refused = await post(s, "/", over, maker.token);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe(
      "you have 20 offers not yet settled (an offer counts until its contract is resolved and the offer settled, even after you close it); at most 20 per user. You can create again once one of them is settled",
    );
    const rentOffer = await lamports(s, mine[0]);
    expect(await lockedRent(s, { creator: maker.user.wallet.toBase58() })).toBe(BigInt(L.maxOpenOffers) * rentOffer);
    expect((await post(s, `/${mine[0]}/close`, { expectedRevision: "1", idempotencyKey: key() }, maker.token)).status).toBe(200);
    // Closed but its rent not yet reclaimed: still counted.
    expect((await post(s, "/", over, maker.token)).status).toBe(409);

    const bound = BigInt(L.maxOpenOffers) * rentOffer + BigInt(L.maxOpenPositions) * rentPosition;
    console.log(`wallet bound: rent offer ${rentOffer}, position ${rentPosition} lamports; locked per user at most ${bound} lamports`);

    // Settlement and rent reclaim free the cap.
    await s.chain.gateway.advance(3_601n);
    await s.admin.resolveContract(k, "sideB");
    await s.worker.drain();
    expect(await s.db.selectFrom("positions").select("address").where("taker", "=", wallet).where("deleted", "=", 0).execute()).toHaveLength(0);
    expect(await lockedRent(s, { creator: maker.user.wallet.toBase58() })).toBe(0n);
    const k2 = await contract(s);
    const created = await post(s, "/", { ...over, contractAddress: k2.toBase58() }, maker.token); // the refused key is reusable
    expect(created.status, created.text).toBe(200);
    const fresh = await post(s, "/", createBody(k2), other.token);
    expect(fresh.status, fresh.text).toBe(200);
    nowMs += 60_000;
    const t = await post(s, `/${fresh.body.offerAddress}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
    expect(t.status, t.text).toBe(200);
  });
});

describe("holdings not yet indexed", () => {
  it("a submitted create the store has not shown (a lost transaction) counts against the offers cap", async () => {
    const s = await stack({ walletLimits: { maxOpenOffers: 2 } });
    try {
      const u = await makeUser(s);
      const k = await contract(s);
      expect((await post(s, "/", createBody(k), u.token)).status).toBe(200);
      s.chain.gateway.dropNext(1); // accepted, never processed: recorded `submitted`, unknown to the store
      const lostBody = createBody(k);
      const lost = await post(s, "/", lostBody, u.token);
      expect(lost.status).toBe(200);
      const lostRows = () =>
        s.db
          .selectFrom("offers")
          .select("address")
          .where("address", "=", lost.body.offerAddress as string)
          .execute();
      expect(await lostRows()).toHaveLength(0);
      const third = await post(s, "/", createBody(k), u.token);
      expect(third.status).toBe(409);
      expect(third.body.error).toMatch(/^you have 2 offers not yet settled/);
      // Its replay resends it (it lands now): still 2, still refused.
      const replay = await post(s, "/", lostBody, u.token);
      expect(replay.status, replay.text).toBe(200);
      expect(await lostRows()).toHaveLength(1);
      expect((await post(s, "/", createBody(k), u.token)).status).toBe(409);
      expect(await s.db.selectFrom("offers").select("address").where("creator", "=", u.user.wallet.toBase58()).execute()).toHaveLength(2);
    } finally {
      await s.stop();
    }
  });
});

describe("take-best holdings not yet indexed", () => {
  it("two quick sweeps: the first's positions, sent but not indexed (a lost transaction), count against the positions cap of the second", async () => {
    const s = await stack({ walletLimits: { maxOpenPositions: 2 } });
    try {
      const [creator, taker] = [await makeUser(s), await makeUser(s)];
      const k = await contract(s);
      for (let i = 0; i < 3; i++) expect((await post(s, "/", createBody(k), creator.token)).status).toBe(200);
      await until(async () => (await get(s, `/contracts/${k.toBase58()}/book`)).body?.sides?.[1]?.offerCount === 3);
      const sweep = (amount: bigint, idempotencyKey = key()) => ({
        side: "sideB",
        amountMicros: String(amount),
        worstOdds: { numerator: "1", denominator: "1" },
        mode: "fill-and-kill",
        idempotencyKey,
      });
      const takeBest = (b: unknown) => post(s, `/contracts/${k.toBase58()}/take-best`, b, taker.token);
      s.chain.gateway.dropNext(1); // accepted, never processed: recorded `submitted`, unknown to the store
      const firstBody = sweep(20n * UNIT);
      const first = await takeBest(firstBody);
      expect(first.status, first.text).toBe(200);
      expect(first.body.plan.fills).toHaveLength(2);
      const mine = () => s.db.selectFrom("positions").select("address").where("taker", "=", taker.user.wallet.toBase58()).execute();
      expect(await mine()).toHaveLength(0);
      const second = await takeBest(sweep(UNIT));
      expect(second.status, second.text).toBe(409);
      expect(second.body.error).toMatch(/^you have 2 positions not yet settled/);
      // Its replay resends it (it lands now): 2 indexed, still refused.
      expect((await takeBest(firstBody)).status).toBe(200);
      await until(async () => (await mine()).length === 2);
      expect((await takeBest(sweep(UNIT))).status).toBe(409);
      expect(await mine()).toHaveLength(2);
    } finally {
      await s.stop();
    }
  });
});

describe.each(ENGINES)("write bucket on %s", (engine) => {
  it("is shared by two service instances on one store, exact under concurrency, and kept across a restart", async () => {
    const target = freshStore(engine, "bucket");
    const s = await stack({ storeUrl: target.url });
    try {
      const u = await makeUser(s);
      const k = await contract(s);
      let nowMs = Date.now();
      const limits = { writeBurst: 3, writesPerHour: 60, maxOpenOffers: 0, maxOpenPositions: 0 };
      const mk = async () =>
        new WriteService({
          custody: await Custody.open(s.db as Kysely<unknown>, s.custody.key),
          gateway: s.chain.gateway,
          payer: s.chain.service,
          walletLimits: limits,
          walletClockMs: () => nowMs,
        });
      const [a, b] = [await mk(), await mk()];
      const p = await a.authorize(`Bearer ${u.token}`);
      // 10 concurrent creates over both instances: exactly the burst (3) passes.
      const rs = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).create(p, createBody(k))));
      const ok = rs.filter((r) => r.status === "fulfilled");
      expect(ok).toHaveLength(3);
      for (const r of rs) if (r.status === "rejected") expect(r.reason).toMatchObject({ status: 429, retryAfterSeconds: 60 });
      // A restarted instance sees the same bucket; a minute refills one write, on either instance.
      const c = await mk();
      await expect(c.create(p, createBody(k))).rejects.toBeInstanceOf(ApiError);
      nowMs += 60_000;
      await expect(c.create(p, createBody(k))).resolves.toMatchObject({ status: "pending" });
      await expect(a.create(p, createBody(k))).rejects.toMatchObject({ status: 429 });
    } finally {
      await s.stop();
      await target.drop();
    }
  });
});
