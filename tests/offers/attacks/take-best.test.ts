/**
 * take_best (programs/SECURITY.md, "take_best"): every way its list could be abused (the same
 * offer twice, offers of another contract or side, the caller's own offer, closed and recreated
 * accounts, non-canonical positions, a foreign Config, an order picked by the attacker, limits at
 * the boundary, fill-or-kill, the total, the maximum wager), and its behaviour. Every sweep is
 * checked against the rules' plan (idl/client/take-best-rules.ts `planTakeBest`) made from the
 * accounts before it: balances, offers, positions and OfferTaken events are exactly what the plan
 * says, or nothing moves when the plan says the transaction fails.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import { OFFERS_ERRORS, TOKEN_PROGRAM, parseOffersEvents, type OfferAccount } from "../../../idl/client/offers";
import { planTakeBest, type SweepOffer, type TakeBestMode, type TakeBestPlan } from "../../../idl/client/take-best-rules";
import { UNIT, type User } from "../../../harness/offers-world";
import type { TxResult } from "../../../harness/chain";
import { expectError, expectOk, outcome } from "../../support/expect";
import { nonCanonical, unsigned } from "../../support/bent-ix";
import { setUp, alice, bob, carol, mallory, forgedConfig, ledger, pid, refused, w } from "./scene";

beforeAll(setUp);

interface Sweep {
  amount: bigint;
  worstOdds?: { numerator: bigint; denominator: bigint };
  mode?: TakeBestMode;
  side?: "sideA" | "sideB";
}

const ANY_ODDS = { numerator: 1n, denominator: 1n };

/** The offers as the rules see them, read from the chain, with what `taker` holds on each. */
async function sweepOffers(taker: User, offers: PublicKey[]): Promise<SweepOffer[]> {
  return Promise.all(
    offers.map(async (address) => {
      const o = await w.offer(address);
      const pos = await w.chain.account(w.positionOf(address, taker));
      const held = pos && pos.owner.equals(pid) ? (await w.position(w.positionOf(address, taker))).takerAmount : 0n;
      return { ...o, address: address.toBase58(), creator: o.creator.toBase58(), contract: o.contract.toBase58(), held };
    }),
  );
}

/**
 * `taker`'s take_best over `offers` of `contract`, checked against the plan: on success each
 * offer and position moved by its planned take, the taker paid `taken` into the vault and one
 * OfferTaken per take was logged, in list order; on failure the plan's error and nothing moved.
 */
async function sweepAsPlanned(taker: User, contract: PublicKey, offers: PublicKey[], s: Sweep): Promise<{ r: TxResult; plan: TakeBestPlan }> {
  const k = await w.contractAccount(contract);
  const plan = planTakeBest(await sweepOffers(taker, offers), {
    side: s.side ?? "sideB",
    amount: s.amount,
    worstOdds: s.worstOdds ?? ANY_ODDS,
    mode: s.mode ?? "fill-and-kill",
    taker: taker.key.publicKey.toBase58(),
    maximumWager: (await w.config()).limits.maximumWagerMicros,
    offersEnabled: (await w.config()).offersEnabled,
    contract: { address: contract.toBase58(), status: k.status, cutoffAt: k.cutoffAt },
    now: await w.chain.now(),
  });
  const before = await ledger();
  const offersBefore = new Map<string, OfferAccount>();
  for (const o of offers) offersBefore.set(o.toBase58(), await w.offer(o));
  const r = await w.takeBest(taker, contract, offers, s.amount, {
    worstOdds: s.worstOdds ?? ANY_ODDS,
    mode: s.mode ?? "fill-and-kill",
    side: s.side ?? "sideB",
  });
  expect(outcome(r), r.logs.join("\n")).toBe(plan.error ?? "ok");
  const after = await ledger();
  if (plan.error) {
    expect(after).toEqual(before);
    for (const o of offers) expect(await w.offer(o)).toEqual(offersBefore.get(o.toBase58()));
    return { r, plan };
  }
  const ti = w.users.indexOf(taker);
  expect(after.users[ti]).toBe(before.users[ti] - plan.taken);
  expect(after.vault).toBe(before.vault + plan.taken);
  expect(after.total).toBe(before.total);
  const takes = plan.fills.filter((f): f is Extract<typeof f, { take: bigint }> => "take" in f);
  for (const f of takes) {
    const was = offersBefore.get(f.offer)!;
    const now = await w.offer(new PublicKey(f.offer));
    expect(now.takerFilled).toBe(was.takerFilled + f.take);
    expect(now.creatorAllocated).toBe(was.creatorAllocated + f.matched);
    expect(now.revision).toBe(was.revision + 1n);
    expect(now.status).toBe(now.takerFilled === now.takerTarget ? "Filled" : "Open");
  }
  const events = parseOffersEvents(r.logs).filter((e) => e.name === "offerTaken");
  expect(events.map((e) => [String(e.data.offer), BigInt(String(e.data.takeAmount)), BigInt(String(e.data.creatorMatched))])).toEqual(
    takes.map((f) => [f.offer, f.take, f.matched]),
  );
  return { r, plan };
}

/** A fresh contract and one sideA offer per `[creator, total, target]` (minimum take 1 unit unless given). */
async function book(terms: [User, bigint, bigint, bigint?][], cutoffIn = 10_000n): Promise<{ contract: PublicKey; offers: PublicKey[] }> {
  const contract = await w.contract({ cutoffIn });
  const offers: PublicKey[] = [];
  for (const [creator, total, target, minTake] of terms) {
    const { r, offer } = await w.createOffer(creator, contract, { total: total * UNIT, target: target * UNIT, minTake });
    expectOk(r);
    offers.push(offer);
  }
  return { contract, offers };
}

describe("take_best: the list cannot be abused", () => {
  it("the same offer twice is refused, before or after the amount is reached", async () => {
    const { contract, offers } = await book([
      [alice, 10n, 10n],
      [carol, 10n, 10n],
    ]);
    const { plan } = await sweepAsPlanned(mallory, contract, [offers[0], offers[1], offers[0]], { amount: 25n * UNIT });
    expect(plan.error).toBe("DuplicateOffer");
    await refused(w.takeBestIx(mallory, contract, [offers[0], offers[0]], 15n * UNIT), [mallory.key], "DuplicateOffer");
    // Once the total is taken the rest of the list is not read: a repeat there moves nothing more.
    await sweepAsPlanned(mallory, contract, [offers[0], offers[0]], { amount: 10n * UNIT });
    expect(await w.offer(offers[0])).toMatchObject({ takerFilled: 10n * UNIT, fillCount: 1 });
  });

  it("an offer of another contract fails the sweep", async () => {
    const a = await book([[alice, 10n, 10n]]);
    const b = await book([[carol, 10n, 10n]]);
    await refused(w.takeBestIx(mallory, a.contract, [a.offers[0], b.offers[0]], 15n * UNIT), [mallory.key], "AccountMismatch");
    // Naming the other contract does not help: its offer is then the foreign one.
    await refused(w.takeBestIx(mallory, b.contract, [a.offers[0], b.offers[0]], 15n * UNIT), [mallory.key], "AccountMismatch");
  });

  it("offers whose creator backs the taker's side are passed over", async () => {
    const contract = await w.contract({ cutoffIn: 10_000n });
    const { offer: sameSide } = await w.createOffer(alice, contract, { side: "sideB", total: 10n * UNIT, target: 10n * UNIT });
    const { offer: other } = await w.createOffer(carol, contract, { total: 10n * UNIT, target: 10n * UNIT });
    const { plan } = await sweepAsPlanned(mallory, contract, [sameSide, other], { amount: 15n * UNIT });
    expect(plan.fills.map((f) => ("skip" in f ? f.skip : f.take))).toEqual(["WrongSide", 10n * UNIT]);
    expect(await w.offer(sameSide)).toMatchObject({ takerFilled: 0n });
  });

  it("the caller's own offer among others is passed over", async () => {
    const { contract, offers } = await book([
      [mallory, 40n, 10n],
      [alice, 10n, 10n],
    ]);
    const { plan } = await sweepAsPlanned(mallory, contract, offers, { amount: 10n * UNIT });
    expect(plan.fills[0]).toEqual({ offer: offers[0].toBase58(), skip: "SelfTake" });
    expect(await w.offer(offers[0])).toMatchObject({ takerFilled: 0n, positionCount: 0 });
  });

  it("closed offers are passed over; a closed and recreated account fails the sweep", async () => {
    const { contract, offers } = await book([
      [alice, 10n, 10n],
      [carol, 10n, 10n],
    ]);
    expectOk(await w.close(alice.key, offers[0]));
    const { plan } = await sweepAsPlanned(mallory, contract, offers, { amount: 10n * UNIT });
    expect(plan.fills[0]).toMatchObject({ skip: "OfferNotOpen" });
    // An offer account closed once its contract is resolved, then funded again by anyone, is
    // no Offer of the program: the sweep fails (and the contract takes nothing anyway).
    const done = await book([[alice, 10n, 10n]], 100n);
    await w.chain.advance(100n);
    expectOk(await w.close(alice.key, done.offers[0]));
    expectOk(await w.resolve(done.contract, "void"));
    expectOk(await w.closeOfferAccount(done.offers[0]));
    w.chain.setAccount(done.offers[0], { lamports: 10_000_000, data: Buffer.alloc(0), owner: Keypair.generate().publicKey, executable: false });
    await refused(w.takeBestIx(mallory, contract, [offers[1], done.offers[0]], 15n * UNIT), [mallory.key], "WrongAccountOwner");
    await refused(w.takeBestIx(mallory, done.contract, [done.offers[0]], 5n * UNIT), [mallory.key], "ContractNotOpen");
  });

  it("non-canonical positions are refused: another taker's, another offer's, a lower bump, a signing keypair", async () => {
    const { contract, offers } = await book([
      [alice, 10n, 10n],
      [carol, 10n, 10n],
    ]);
    expectOk(await w.take(bob, offers[0], 2n * UNIT));
    expectOk(await w.take(mallory, offers[1], 2n * UNIT));
    const ix = (positions: PublicKey[], positionBumps?: number[]) => w.takeBestIx(mallory, contract, offers, 5n * UNIT, { positions, positionBumps });
    await refused(ix([w.positionOf(offers[0], bob), w.positionOf(offers[1], mallory)]), [mallory.key], "AccountMismatch");
    await refused(ix([w.positionOf(offers[1], mallory), w.positionOf(offers[1], mallory)]), [mallory.key], "AccountMismatch");
    const seeds = [Buffer.from("position"), offers[0].toBuffer(), mallory.key.publicKey.toBuffer()];
    const [alt, altBump] = nonCanonical(seeds, pid);
    await refused(ix([alt, w.positionOf(offers[1], mallory)], [altBump]), [mallory.key], "AccountMismatch");
    await refused(ix([w.positionOf(offers[0], mallory), w.positionOf(offers[1], mallory)], [altBump]), [mallory.key], "AccountMismatch");
    const signing = Keypair.generate();
    await refused(ix([signing.publicKey, w.positionOf(offers[1], mallory)]), [mallory.key, signing], "AccountMismatch");
    expect(await w.chain.account(alt)).toBeNull();
    // With its own canonical positions the same sweep goes through.
    await sweepAsPlanned(mallory, contract, offers, { amount: 5n * UNIT });
  });

  it("a foreign Config, vault or token program is refused", async () => {
    const { contract, offers } = await book([[alice, 10n, 10n]]);
    const fake = await forgedConfig(mallory.key.publicKey, mallory.token);
    const ix = (overrides: Record<string, PublicKey>) => w.takeBestIx(mallory, contract, offers, 5n * UNIT, { overrides });
    await refused(ix({ config: fake }), [mallory.key], "AccountMismatch");
    await refused(ix({ vault: mallory.token }), [mallory.key], "AccountMismatch");
    await refused(ix({ tokenProgram: Keypair.generate().publicKey }), [mallory.key], "WrongProgram");
    await refused(ix({ systemProgram: TOKEN_PROGRAM }), [mallory.key], "WrongProgram");
  });

  it("the taker must sign and pay from its own token account", async () => {
    const { contract, offers } = await book([[alice, 10n, 10n]]);
    const ix = await w.takeBestIx(bob, contract, offers, 5n * UNIT);
    await refused(unsigned(ix, bob.key.publicKey), [], "MissingSignature");
    await refused(w.takeBestIx(mallory, contract, offers, 5n * UNIT, { takerToken: bob.token }), [mallory.key], "NotTokenOwner");
    const poor = await w.user(UNIT);
    await refused(w.takeBestIx(poor, contract, offers, 5n * UNIT), [poor.key], "InsufficientBalance");
  });

  it("an order picked by the taker never gets better than each offer's own odds", async () => {
    // Worst first, then tiny partial takes meant to round in the taker's favour: each fill is
    // matched at its offer's ratio rounded down, and the last take of an offer gets exactly the rest.
    const { contract, offers } = await book([
      [alice, 1n, 3n],
      [carol, 10n, 3n],
      [bob, 7n, 7n],
    ]);
    for (let i = 0; i < 2; i++) {
      const { plan } = await sweepAsPlanned(mallory, contract, offers, { amount: UNIT + 1n });
      expect(plan.taken).toBe(UNIT + 1n);
    }
    await sweepAsPlanned(mallory, contract, [...offers].reverse(), { amount: 20n * UNIT });
    for (const address of offers) {
      const o = await w.offer(address);
      const p = await w.position(w.positionOf(address, mallory));
      // creator stake matched / taker amount <= creatorTotal / takerTarget, and all of it once filled.
      expect(p.creatorMatched * o.takerTarget <= p.takerAmount * o.creatorTotal).toBe(true);
      expect(o.creatorAllocated <= o.creatorTotal).toBe(true);
      if (o.status === "Filled") expect(o.creatorAllocated).toBe(o.creatorTotal);
    }
  });

  it("limits at the exact boundary: odds equal to the limit are taken, one unit worse are not", async () => {
    // 8 against 10 pays the taker 18:10.
    const { contract, offers } = await book([[alice, 8n, 10n]]);
    const limit = (numerator: bigint, denominator: bigint) => ({ amount: 5n * UNIT, worstOdds: { numerator, denominator } });
    expect((await sweepAsPlanned(mallory, contract, offers, limit(18n * UNIT + 1n, 10n * UNIT))).plan.error).toBe("NothingTaken");
    expect((await sweepAsPlanned(mallory, contract, offers, limit(18n, 10n))).plan.taken).toBe(5n * UNIT);
    expect((await sweepAsPlanned(mallory, contract, offers, limit(9n, 5n))).plan.taken).toBe(5n * UNIT);
  });

  it("fill-or-kill fails unless the whole amount is taken", async () => {
    const { contract, offers } = await book([
      [alice, 10n, 10n],
      [carol, 30n, 10n],
    ]);
    const fok = (amount: bigint, worstOdds = ANY_ODDS) => sweepAsPlanned(mallory, contract, offers, { amount: amount * UNIT, mode: "fill-or-kill", worstOdds });
    expect((await fok(21n)).plan.error).toBe("NotFilled");
    expect((await fok(15n, { numerator: 3n, denominator: 1n })).plan.error).toBe("NotFilled");
    expect((await fok(20n)).plan.error).toBe(null);
  });

  it("the total is never exceeded", async () => {
    const { contract, offers } = await book([
      [alice, 10n, 10n],
      [carol, 10n, 10n],
      [bob, 10n, 10n],
    ]);
    const { plan } = await sweepAsPlanned(mallory, contract, offers, { amount: 12_345_678n });
    expect(plan.taken).toBe(12_345_678n);
    expect(plan.fills.map((f) => ("skip" in f ? f.skip : f.take))).toEqual([10n * UNIT, 2_345_678n, "AmountTaken"]);
  });

  it("the maximum wager per position counts what the taker holds already", async () => {
    const { contract, offers } = await book([
      [alice, 500n, 600n],
      [carol, 500n, 600n],
    ]);
    expectOk(await w.take(mallory, offers[0], 495n * UNIT));
    const { plan } = await sweepAsPlanned(mallory, contract, offers, { amount: 20n * UNIT });
    expect(plan.fills.map((f) => ("skip" in f ? f.skip : f.take))).toEqual([5n * UNIT, 15n * UNIT]);
    expect(await w.position(w.positionOf(offers[0], mallory))).toMatchObject({ takerAmount: 500n * UNIT });
    // Full now: passed over, and the rest of a 600 sweep stops at 500 on the other offer.
    const again = await sweepAsPlanned(mallory, contract, offers, { amount: 600n * UNIT });
    expect(again.plan.fills.map((f) => ("skip" in f ? f.skip : f.take))).toEqual(["PositionAboveMaximum", 485n * UNIT]);
  });

  it("bad arguments and lists are refused", async () => {
    const { contract, offers } = await book([[alice, 10n, 10n]]);
    const ix = (o: Parameters<typeof w.takeBestIx>[4], amount = 5n * UNIT) => w.takeBestIx(mallory, contract, offers, amount, o);
    await refused(ix({ rawSide: 3 }), [mallory.key], "InvalidSide");
    await refused(ix({ rawMode: 2 }), [mallory.key], "InvalidTakeMode");
    await refused(ix({ worstOdds: { numerator: 1n, denominator: 0n } }), [mallory.key], "InvalidOddsLimit");
    await refused(ix({}, 0n), [mallory.key], "ZeroAmount");
    await refused(w.takeBestIx(mallory, contract, [], 5n * UNIT), [mallory.key], "InvalidOfferList");
    const base = await ix({});
    const odd = new TransactionInstruction({
      programId: base.programId,
      data: base.data,
      keys: [...base.keys, { pubkey: offers[0], isSigner: false, isWritable: true }],
    });
    await refused(odd, [mallory.key], "InvalidOfferList");
    const more = await book(Array.from({ length: 9 }, () => [carol, 1n, 1n] as [User, bigint, bigint]));
    const all = [...more.offers, ...more.offers].slice(0, 16);
    const full = await w.takeBestIx(mallory, more.contract, all, 5n * UNIT);
    const seventeen = new TransactionInstruction({
      programId: full.programId,
      data: full.data,
      keys: [
        ...full.keys,
        { pubkey: more.offers[8], isSigner: false, isWritable: true },
        { pubkey: w.positionOf(more.offers[8], mallory), isSigner: false, isWritable: true },
      ],
    });
    const r = await w.send([seventeen], [mallory.key]);
    expect(OFFERS_ERRORS.get(r.code ?? 0)?.name ?? r.error, r.logs.join("\n")).toBe("InvalidOfferList");
  });
});

describe("take_best: behaviour", () => {
  it("fill-and-kill takes the best offers in order, in part where less is left, one OfferTaken each", async () => {
    // Taker odds 4:1, 2:1 and 1.5:1; a limit of 3:2 admits all three.
    const { contract, offers } = await book([
      [carol, 30n, 10n],
      [alice, 10n, 10n],
      [bob, 5n, 10n],
    ]);
    const { r, plan } = await sweepAsPlanned(mallory, contract, offers, { amount: 25n * UNIT, worstOdds: { numerator: 3n, denominator: 2n } });
    expectOk(r);
    expect(plan.fills.map((f) => ("skip" in f ? f.skip : [f.take, f.matched]))).toEqual([
      [10n * UNIT, 30n * UNIT],
      [10n * UNIT, 10n * UNIT],
      [5n * UNIT, 2_500_000n],
    ]);
    expect(await w.position(w.positionOf(offers[2], mallory))).toMatchObject({ takerAmount: 5n * UNIT, creatorMatched: 2_500_000n, fillCount: 1 });
  });

  it("passes over what no longer qualifies: filled meanwhile, the remainder below the minimum, worse odds", async () => {
    const { contract, offers } = await book([
      [alice, 10n, 10n],
      [carol, 10n, 10n, 5n * UNIT],
      [bob, 1n, 10n],
      [alice, 20n, 10n],
    ]);
    expectOk(await w.take(carol, offers[0], 10n * UNIT));
    const { plan } = await sweepAsPlanned(mallory, contract, offers, { amount: 13n * UNIT, worstOdds: { numerator: 3n, denominator: 2n } });
    expect(plan.fills.map((f) => ("skip" in f ? f.skip : f.take))).toEqual(["OfferNotOpen", 10n * UNIT, "OddsBelowLimit", 3n * UNIT]);
    // 2 left of the total, below the 5-unit minimum of an untouched offer: passed over, not failed.
    const { contract: k2, offers: o2 } = await book([
      [alice, 10n, 10n],
      [carol, 10n, 10n, 5n * UNIT],
    ]);
    const second = await sweepAsPlanned(mallory, k2, o2, { amount: 12n * UNIT });
    expect(second.plan.fills.map((f) => ("skip" in f ? f.skip : f.take))).toEqual([10n * UNIT, "TakeBelowMinimum"]);
  });

  it("nothing to take fails, and so does a contract past its cutoff", async () => {
    const { contract, offers } = await book([[alice, 10n, 10n]], 50n);
    expectError((await sweepAsPlanned(mallory, contract, offers, { amount: 5n * UNIT, side: "sideA" })).r, "NothingTaken");
    await w.chain.advance(50n);
    expectError((await sweepAsPlanned(mallory, contract, offers, { amount: 5n * UNIT })).r, "CutoffPassed");
  });
});
