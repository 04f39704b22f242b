/**
 * The quote (GET /contracts/{c}/quote, Contract.quote) over a real HTTP server on the local stack
 * (bankrun, the compiled offers program, offers created and taken through the write API and
 * indexed live): the offers used in the book's order within the worst odds, the caller's own
 * offers left out, the per-position maximum counting the caller's position, exact averages and
 * fees, REST and GraphQL alike, and strict parameters (400) and unknown contracts (404).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, type PublicKey } from "@solana/web3.js";
import { UNIT, contract, createBody, key, writeSuite, type TestUser } from "../support/stack";
import { get, gql, post } from "../support/http";
import { until } from "../support/wait";

const u = (n: number | bigint) => String(BigInt(n) * UNIT);

describe("quote", () => {
  const w = writeSuite({ alice: 1_000n * UNIT, bob: 1_000n * UNIT, carol: 1_000n * UNIT }, { contract: true });
  const offers: Record<string, string> = {};
  let c2: PublicKey;

  async function create(user: TestUser, c: PublicKey, s: bigint, t: bigint, minimum = 1n): Promise<string> {
    const r = await post(w.s, "/", createBody(c, { creatorTotalMicros: u(s), takerTargetMicros: u(t), minimumTakeMicros: u(minimum) }), user.token);
    expect(r.status, r.text).toBe(200);
    return r.body.offerAddress as string;
  }
  const bookCount = (c: PublicKey, n: number) =>
    until(async () => {
      const r = await get(w.s, `/contracts/${c.toBase58()}/book`);
      return r.status === 200 && r.body.sides[1].offerCount === n;
    });

  beforeAll(async () => {
    // Creators back sideA: a taker backing sideB meets them at (T + S) : T.
    offers.a18 = await create(w.alice, w.c, 8n, 10n); // 18:10
    offers.c25 = await create(w.carol, w.c, 15n, 10n); // 25:10
    offers.c20 = await create(w.carol, w.c, 10n, 10n); // 20:10
    offers.b30 = await create(w.bob, w.c, 20n, 10n); // 30:10, bob's own
    await bookCount(w.c, 4);
    c2 = await contract(w.s);
    offers.big = await create(w.carol, c2, 300n, 600n); // 900:600, more than one position may hold
    const r = await post(w.s, `/${offers.big}/take`, { takeAmountMicros: u(100), expectedRevision: "1", idempotencyKey: key() }, w.bob.token);
    expect(r.status, r.text).toBe(200);
    await until(
      async () => (await get(w.s, `/${offers.big}`, w.bob.token)).body?.viewer?.position !== null && (await get(w.s, `/${offers.big}`)).body.revision === "2",
    );
  });

  const quote = (c: PublicKey, q: string, token?: string) => get(w.s, `/contracts/${c.toBase58()}/quote?${q}`, token);

  it("a signed-in caller: best odds first within the limit, without the caller's own offer; exact average, fee and return", async () => {
    const r = await quote(w.c, `side=sideB&amountMicros=${u(25)}&worstOdds=2/1`, w.bob.token);
    expect(r.status, r.text).toBe(200);
    const q = r.body;
    expect(q.fills.map((f: { offer: string }) => f.offer)).toEqual([offers.c25, offers.c20]);
    expect(q.fills.map((f: { amountMicros: string; creatorMatchedMicros: string }) => [f.amountMicros, f.creatorMatchedMicros])).toEqual([
      [u(10), u(15)],
      [u(10), u(10)],
    ]);
    expect(q.fills[0].odds).toMatchObject({ numerator: "5", denominator: "2", decimal: "2.5000" });
    expect(q).toMatchObject({ side: "sideB", amountMicros: u(25), filledMicros: u(20), creatorMatchedMicros: u(25), unfilledMicros: u(5) });
    expect(q.fills.map((f: { feeBps: number }) => f.feeBps)).toEqual([1000, 1000]);
    expect(q.worstOdds).toMatchObject({ numerator: "2", denominator: "1" });
    // (20 + 25) : 20 = 9 : 4; the fee is 10% of each position's matched stake: 1.5 + 1.
    expect(q.averageOdds).toMatchObject({ numerator: "9", denominator: "4", decimal: "2.2500" });
    expect(q.feeIfWinMicros).toBe(String(2_500_000n));
    expect(q.returnIfWinMicros).toBe(String(45n * UNIT - 2_500_000n));
  });

  it("anonymous and without a limit: every offer in the book's order; the creator of an offer does not meet it", async () => {
    const anon = (await quote(w.c, `side=sideB&amountMicros=${u(35)}`)).body;
    expect(anon.fills.map((f: { offer: string }) => f.offer)).toEqual([offers.b30, offers.c25, offers.c20, offers.a18]);
    expect(anon.fills.map((f: { amountMicros: string }) => f.amountMicros)).toEqual([u(10), u(10), u(10), u(5)]);
    expect(anon).toMatchObject({ filledMicros: u(35), unfilledMicros: "0", worstOdds: null });
    const asAlice = (await quote(w.c, `side=sideB&amountMicros=${u(100)}`, w.alice.token)).body;
    expect(asAlice.fills.map((f: { offer: string }) => f.offer)).toEqual([offers.b30, offers.c25, offers.c20]);
    expect(asAlice.unfilledMicros).toBe(u(70));
    // The other side backs sideA: its offers would be creators backing sideB, of which there are none.
    const other = (await quote(w.c, `side=sideA&amountMicros=${u(5)}`)).body;
    expect(other).toMatchObject({ fills: [], filledMicros: "0", unfilledMicros: u(5), averageOdds: null, feeIfWinMicros: "0" });
  });

  it("a limit above every offer fills nothing; a limit exactly at an offer's odds includes it", async () => {
    expect((await quote(w.c, `side=sideB&amountMicros=${u(5)}&worstOdds=31/10`)).body.fills).toEqual([]);
    const at = (await quote(w.c, `side=sideB&amountMicros=${u(50)}&worstOdds=9/5`, w.bob.token)).body;
    expect(at.fills.map((f: { offer: string }) => f.offer)).toEqual([offers.c25, offers.c20, offers.a18]);
    const above = (await quote(w.c, `side=sideB&amountMicros=${u(50)}&worstOdds=1800001/1000000`, w.bob.token)).body;
    expect(above.fills.map((f: { offer: string }) => f.offer)).toEqual([offers.c25, offers.c20]);
  });

  it("the per-position maximum counts the caller's position on the offer", async () => {
    const anon = (await quote(c2, `side=sideB&amountMicros=${u(550)}`)).body;
    expect(anon.fills.map((f: { amountMicros: string }) => f.amountMicros)).toEqual([u(500)]);
    expect(anon.unfilledMicros).toBe(u(50));
    const bob = (await quote(c2, `side=sideB&amountMicros=${u(550)}`, w.bob.token)).body;
    expect(bob.fills.map((f: { amountMicros: string }) => f.amountMicros)).toEqual([u(400)]);
    expect(bob.fills[0].creatorMatchedMicros).toBe(u(200));
  });

  it("GraphQL answers what REST answers", async () => {
    const rest = (await quote(w.c, `side=sideB&amountMicros=${u(25)}&worstOdds=2/1`, w.bob.token)).body;
    const g = await gql(
      w.s,
      `query($a: Address!, $n: Amount!) { contract(address: $a) { quote(side: sideB, amountMicros: $n, worstOdds: "2/1") {
        contract side amountMicros filledMicros creatorMatchedMicros unfilledMicros feeIfWinMicros returnIfWinMicros
        worstOdds { numerator denominator decimal impliedProbabilityBps } averageOdds { numerator denominator decimal impliedProbabilityBps }
        fills { offer amountMicros creatorMatchedMicros feeBps odds { numerator denominator decimal impliedProbabilityBps } } } } }`,
      { a: w.c.toBase58(), n: u(25) },
      w.bob.token,
    );
    expect(g.body.errors, g.text).toBeUndefined();
    expect(g.body.data.contract.quote).toEqual(rest);
    const bad = await gql(w.s, `query($a: Address!) { contract(address: $a) { quote(side: sideB, amountMicros: "5", worstOdds: "0/1") { filledMicros } } }`, {
      a: w.c.toBase58(),
    });
    expect(bad.body.errors?.[0]?.extensions?.code, bad.text).toBe("BAD_REQUEST");
  });

  it("strict parameters: 400 naming the parameter; 404 for an address that is no contract", async () => {
    const cases: [string, string][] = [
      [`amountMicros=${u(1)}`, "side"],
      [`side=home&amountMicros=1`, "side"],
      [`side=sideB`, "amountMicros"],
      [`side=sideB&amountMicros=0`, "amountMicros"],
      [`side=sideB&amountMicros=01`, "amountMicros"],
      [`side=sideB&amountMicros=-5`, "amountMicros"],
      [`side=sideB&amountMicros=1.5`, "amountMicros"],
      [`side=sideB&amountMicros=18446744073709551616`, "amountMicros"],
      [`side=sideB&amountMicros=5&worstOdds=2`, "worstOdds"],
      [`side=sideB&amountMicros=5&worstOdds=0/1`, "worstOdds"],
      [`side=sideB&amountMicros=5&worstOdds=2/0`, "worstOdds"],
      [`side=sideB&amountMicros=5&worstOdds=2.5/1`, "worstOdds"],
      [`side=sideB&amountMicros=5&worstOdds=5/2/1`, "worstOdds"],
    ];
    for (const [q, field] of cases) {
      const r = await quote(w.c, q);
      expect(r.status, `${q}: ${r.text}`).toBe(400);
      expect(r.body.error, q).toContain(field);
    }
    expect((await get(w.s, `/contracts/not-an-address/quote?side=sideB&amountMicros=5`)).status).toBe(400);
    const unknown = await get(w.s, `/contracts/${Keypair.generate().publicKey.toBase58()}/quote?side=sideB&amountMicros=5`);
    expect(unknown.status, unknown.text).toBe(404);
    expect((await quote(w.c, `side=sideB&amountMicros=5`, "pat_not_a_token")).status).toBe(401);
  });
});
