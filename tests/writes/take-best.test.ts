/**
 * The take-best write (POST /contracts/{c}/take-best, the takeBest mutation) over a real HTTP
 * server on the local stack, with the compiled offers program in bankrun: the book's best offers
 * within the worst odds taken in one transaction, what was taken showing as positions (the
 * documented way to observe completion) and as token balances; fill-or-kill all or nothing (409,
 * nothing moved); a plan larger than one transaction split under fill-and-kill only;
 * idempotency (same key and body: the same answer, once; another body: 400); strict bodies (400),
 * the token (401), compliance (403), unknown contracts (404), the balance (400).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, type PublicKey } from "@solana/web3.js";
import { UNIT, balance, contract, createBody, key, makeUser, writeSuite, type TestUser } from "../support/stack";
import { get, gql, post } from "../support/http";
import { until } from "../support/wait";

const u = (n: number | bigint) => String(BigInt(n) * UNIT);
const body = (o: Record<string, unknown> = {}) => ({
  side: "sideB",
  amountMicros: u(25),
  worstOdds: { numerator: "2", denominator: "1" },
  mode: "fill-and-kill",
  idempotencyKey: key(),
  ...o,
});

describe("take-best", () => {
  const w = writeSuite({ alice: 1_000n * UNIT, bob: 1_000n * UNIT, carol: 1_000n * UNIT, dave: 1_000n * UNIT }, { contract: true });
  const offers: Record<string, string> = {};

  async function create(user: TestUser, c: PublicKey, s: bigint, t: bigint): Promise<string> {
    const r = await post(w.s, "/", createBody(c, { creatorTotalMicros: u(s), takerTargetMicros: u(t), minimumTakeMicros: u(1) }), user.token);
    expect(r.status, r.text).toBe(200);
    return r.body.offerAddress as string;
  }
  const inBook = (c: PublicKey, n: number) =>
    until(async () => {
      const r = await get(w.s, `/contracts/${c.toBase58()}/book`);
      return r.status === 200 && r.body.sides[1].offerCount === n;
    });
  const takeBest = (c: PublicKey, b: unknown, token?: string) => post(w.s, `/contracts/${c.toBase58()}/take-best`, b, token);
  /** Completion as a client observes it: the caller's position on each offer, once indexed. */
  const positionOn = (offer: string, token: string, amount: string) =>
    until(async () => {
      const v = (await get(w.s, `/${offer}`, token)).body;
      return v?.viewer?.position?.takerAmountMicros === amount ? v.viewer.position : null;
    });

  beforeAll(async () => {
    offers.a18 = await create(w.alice, w.c, 8n, 10n); // taker odds 18:10
    offers.c25 = await create(w.carol, w.c, 15n, 10n); // 25:10
    offers.c20 = await create(w.carol, w.c, 10n, 10n); // 20:10
    offers.b30 = await create(w.bob, w.c, 20n, 10n); // 30:10, bob's own
    await inBook(w.c, 4);
  });

  it("fill-and-kill: the best offers within the limit in one transaction, without the caller's own; positions appear with the amounts", async () => {
    const before = await balance(w.s, w.bob.user.tokenAccount);
    const quote = await get(w.s, `/contracts/${w.c.toBase58()}/quote?side=sideB&amountMicros=${u(25)}&worstOdds=2/1`, w.bob.token);
    const r = await takeBest(w.c, body(), w.bob.token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toBe("pending");
    expect(r.body.signatures).toHaveLength(1);
    expect(r.body.signature).toBe(r.body.signatures[0]);
    // The answer's plan is the quote's, read just before.
    expect(r.body.plan).toEqual(quote.body);
    expect(r.body.plan.fills.map((f: { offer: string }) => f.offer)).toEqual([offers.c25, offers.c20]);
    expect(r.body.plan.unfilledMicros).toBe(u(5));
    const p1 = await positionOn(offers.c25, w.bob.token, u(10));
    expect(p1.creatorMatchedMicros).toBe(u(15));
    const p2 = await positionOn(offers.c20, w.bob.token, u(10));
    expect(p2.creatorMatchedMicros).toBe(u(10));
    expect(await balance(w.s, w.bob.user.tokenAccount)).toBe(before - 20n * UNIT);
    expect((await get(w.s, `/${offers.a18}`, w.bob.token)).body.viewer.position).toBeNull();
  });

  it("fill-or-kill: 409 when the book cannot fill it, nothing moves; filled in full otherwise", async () => {
    const before = await balance(w.s, w.dave.user.tokenAccount);
    // Left within 9:5 for dave: bob's 30:10 and alice's 18:10, 10 each.
    const no = await takeBest(w.c, body({ mode: "fill-or-kill", amountMicros: u(21), worstOdds: { numerator: "9", denominator: "5" } }), w.dave.token);
    expect(no.status, no.text).toBe(409);
    expect(no.body.error).toContain("fill-or-kill");
    expect(await balance(w.s, w.dave.user.tokenAccount)).toBe(before);
    const yes = await takeBest(w.c, body({ mode: "fill-or-kill", amountMicros: u(10), worstOdds: { numerator: "9", denominator: "5" } }), w.dave.token);
    expect(yes.status, yes.text).toBe(200);
    expect(yes.body.plan.fills.map((f: { offer: string; amountMicros: string }) => [f.offer, f.amountMicros])).toEqual([[offers.b30, u(10)]]);
    await positionOn(offers.b30, w.dave.token, u(10));
    expect(await balance(w.s, w.dave.user.tokenAccount)).toBe(before - 10n * UNIT);
  });

  it("fill-and-kill with nothing within the limit: 409, nothing taken", async () => {
    const r = await takeBest(w.c, body({ worstOdds: { numerator: "5", denominator: "1" } }), w.dave.token);
    expect(r.status, r.text).toBe(409);
  });

  it("idempotency: the same key and body answer the same, once; the same key with another body is 400", async () => {
    const b = body({ amountMicros: u(2), worstOdds: { numerator: "1", denominator: "1" } });
    const erin = await makeUser(w.s, 100n * UNIT);
    const first = await takeBest(w.c, b, erin.token);
    expect(first.status, first.text).toBe(200);
    const again = await takeBest(w.c, b, erin.token);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const other = await takeBest(w.c, { ...b, amountMicros: u(3) }, erin.token);
    expect(other.status).toBe(400);
    expect(other.body.error).toContain("idempotencyKey");
    const offer = first.body.plan.fills[0].offer as string;
    const pos = await positionOn(offer, erin.token, u(2));
    expect(pos.fillCount).toBe(1);
  });

  it("a replay that has to re-sign (the first transaction lost, its blockhash expired) answers the new signature in signatures too", async () => {
    const b = body({ amountMicros: u(1), worstOdds: { numerator: "1", denominator: "1" } });
    const frank = await makeUser(w.s, 100n * UNIT);
    w.s.chain.gateway.dropNext(1);
    const first = await takeBest(w.c, b, frank.token);
    expect(first.status, first.text).toBe(200);
    expect(first.body.signatures).toEqual([first.body.signature]);
    // Past the 150 recent blockhashes a validator accepts: the recorded bytes can no longer land.
    for (let i = 0; i <= 150; i++) {
      await w.s.chain.gateway.engine.renewBlockhash();
      await w.s.chain.gateway.blockhash();
    }
    const replay = await takeBest(w.c, b, frank.token);
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body.signature).not.toBe(first.body.signature);
    expect(replay.body.signatures).toEqual([replay.body.signature]);
    expect(replay.body.plan).toEqual(first.body.plan);
    // The row holds the re-signed answer: a later replay answers it again.
    expect((await takeBest(w.c, b, frank.token)).body).toEqual(replay.body);
    await positionOn(first.body.plan.fills[0].offer as string, frank.token, u(1));
  });

  it("strict bodies 400, no token 401, a blocked caller 403, an unknown contract 404, the balance 400", async () => {
    const bad: [Record<string, unknown>, string][] = [
      [body({ side: "home" }), "side"],
      [body({ amountMicros: "0" }), "amountMicros"],
      [body({ amountMicros: 5 }), "amountMicros"],
      [body({ worstOdds: "2/1" }), "worstOdds"],
      [body({ worstOdds: { numerator: "2" } }), "denominator"],
      [body({ worstOdds: { numerator: "0", denominator: "1" } }), "worstOdds.numerator"],
      [body({ worstOdds: { numerator: "2", denominator: "1", x: "1" } }), "worstOdds"],
      [body({ mode: "all" }), "mode"],
      [body({ idempotencyKey: "short" }), "idempotencyKey"],
      [body({ extra: 1 }), "unknown field"],
    ];
    for (const [b, field] of bad) {
      const r = await takeBest(w.c, b, w.bob.token);
      expect(r.status, `${JSON.stringify(b)}: ${r.text}`).toBe(400);
      expect(r.body.error, JSON.stringify(b)).toContain(field);
    }
    expect((await takeBest(w.c, body())).status).toBe(401);
    expect((await takeBest(Keypair.generate().publicKey, body(), w.bob.token)).status).toBe(404);
    const poor = await makeUser(w.s, 3n * UNIT);
    const r = await takeBest(w.c, body({ amountMicros: u(10), worstOdds: { numerator: "1", denominator: "1" } }), poor.token);
    expect(r.status, r.text).toBe(400);
    expect(r.body.error).toContain("insufficient balance");
    const blocked = await makeUser(w.s, 100n * UNIT);
    await w.s.custody.setBlocked(blocked.user.id, true, "test");
    expect((await takeBest(w.c, body(), blocked.token)).status).toBe(403);
  });

  it("GraphQL: the takeBest mutation answers what REST answers", async () => {
    const g = await gql(
      w.s,
      `mutation($c: Address!, $k: String!) { takeBest(contractAddress: $c, input: { side: sideB, amountMicros: "1000000",
        worstOdds: { numerator: "1", denominator: "1" }, mode: "fill-and-kill", idempotencyKey: $k }) {
        signature signatures status mode plan { filledMicros unfilledMicros fills { offer amountMicros } } } }`,
      { c: w.c.toBase58(), k: key() },
      w.dave.token,
    );
    expect(g.body.errors, g.text).toBeUndefined();
    expect(g.body.data.takeBest).toMatchObject({ status: "pending", mode: "fill-and-kill", plan: { filledMicros: u(1), unfilledMicros: "0" } });
    expect(g.body.data.takeBest.signatures).toEqual([g.body.data.takeBest.signature]);
  });

  it("the caller's position counts against the maximum alike in the quote (indexed) and the write (from the chain)", async () => {
    const c3 = await contract(w.s);
    const big = await create(w.carol, c3, 300n, 600n); // more than one position may hold (500)
    await inBook(c3, 1);
    const grace = await makeUser(w.s, 1_000n * UNIT);
    const t = await post(w.s, `/${big}/take`, { takeAmountMicros: u(100), expectedRevision: "1", idempotencyKey: key() }, grace.token);
    expect(t.status, t.text).toBe(200);
    await positionOn(big, grace.token, u(100));
    const quote = await get(w.s, `/contracts/${c3.toBase58()}/quote?side=sideB&amountMicros=${u(550)}`, grace.token);
    expect(quote.body.fills.map((f: { amountMicros: string }) => f.amountMicros)).toEqual([u(400)]);
    const r = await takeBest(c3, body({ amountMicros: u(550), worstOdds: { numerator: "1", denominator: "1" } }), grace.token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.plan).toEqual({ ...quote.body, worstOdds: r.body.plan.worstOdds });
    await positionOn(big, grace.token, u(500));
  });

  it("a plan larger than one transaction: split under fill-and-kill, 409 under fill-or-kill", async () => {
    const c2 = await contract(w.s);
    const made: string[] = [];
    for (let i = 0; i < 12; i++) made.push(await create(i % 2 ? w.alice : w.carol, c2, 10n + BigInt(i), 10n));
    await inBook(c2, 12);
    const fok = await takeBest(c2, body({ mode: "fill-or-kill", amountMicros: u(120), worstOdds: { numerator: "1", denominator: "1" } }), w.bob.token);
    expect(fok.status, fok.text).toBe(409);
    const before = await balance(w.s, w.bob.user.tokenAccount);
    const fak = await takeBest(c2, body({ amountMicros: u(120), worstOdds: { numerator: "1", denominator: "1" } }), w.bob.token);
    expect(fak.status, fak.text).toBe(200);
    expect(fak.body.signatures.length, fak.text).toBe(2);
    expect(fak.body.plan.filledMicros).toBe(u(120));
    // Best first: the offers with the most creator stake.
    expect(fak.body.plan.fills.map((f: { offer: string }) => f.offer)).toEqual([...made].reverse());
    for (const m of made) await positionOn(m, w.bob.token, u(10));
    expect(await balance(w.s, w.bob.user.tokenAccount)).toBe(before - 120n * UNIT);
  });
});
