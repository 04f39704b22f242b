/**
 * take_best, attacked for value (an independent review from the IDL and the program sources):
 * aliasing between the fixed accounts and the (offer, position) pairs, the same position for two
 * offers, a later pair failing after earlier ones were taken, u64 boundaries of the amount and the
 * odds limit, the maximum wager and the minimum take against splitting, payer/taker confusion,
 * pre-funded positions, OfferTaken events against the account changes, and a contract that
 * stopped taking offers or offers switched off in Config. Each refusal checks that no token,
 * claim, offer or position moved (`attempt`); each sweep that goes through checks that it moved
 * exactly what its events say.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey, SystemProgram, TransactionInstruction } from "@solana/web3.js";
import { LAUNCH_LIMITS, parseOffersEvents } from "../../../idl/client/offers";
import { UNIT, type User } from "../../../harness/offers-world";
import { TestMint } from "../../../harness/token";
import { expectOk } from "../../support/expect";
import { nonCanonical, unsigned } from "../../support/bent-ix";
import { setUp, alice, bob, carol, mallory, ledger, pid, refused, w, U64_MAX } from "./scene";

beforeAll(setUp);

const ANY_ODDS = { numerator: 1n, denominator: 1n };

/** A fresh contract with alice's 50-for-100 (taker odds 3:2) and carol's 40-for-100 (7:5), both on sideA. */
async function book(o: { minTake?: bigint } = {}) {
  const contract = await w.contract({ cutoffIn: 3_600n });
  const a = await w.createOffer(alice, contract, { total: 50n * UNIT, target: 100n * UNIT, minTake: o.minTake });
  const c = await w.createOffer(carol, contract, { total: 40n * UNIT, target: 100n * UNIT, minTake: o.minTake });
  expectOk(a.r);
  expectOk(c.r);
  return { contract, a: a.offer, c: c.offer };
}

/** Raw state of `addresses` (null when absent): owner, lamports and data. */
async function raw(addresses: PublicKey[]) {
  return Promise.all(
    addresses.map(async (a) => {
      const acc = await w.chain.account(a);
      return acc ? { owner: acc.owner.toBase58(), lamports: BigInt(acc.lamports), data: Buffer.from(acc.data).toString("hex") } : null;
    }),
  );
}

/** Sends `ixs`, expects refusal (named), and that no token, claim or watched account moved. */
async function attempt(ixs: TransactionInstruction | TransactionInstruction[], signers: Keypair[], name: string | undefined, watch: PublicKey[]) {
  const before = await raw(watch);
  const r = await refused(Array.isArray(ixs) ? ixs : [ixs], signers, name);
  expect(await raw(watch)).toEqual(before);
  return r;
}

/** The instruction with pair `i`'s account `slot` (0 offer, 1 position) replaced by `to` (writable unless told). */
function bendPair(ix: TransactionInstruction, i: number, slot: 0 | 1, to: PublicKey, o: { writable?: boolean; signer?: boolean } = {}) {
  const keys = ix.keys.map((k, j) => (j === 8 + 2 * i + slot ? { pubkey: to, isSigner: o.signer ?? false, isWritable: o.writable ?? true } : k));
  return new TransactionInstruction({ programId: ix.programId, data: ix.data, keys });
}

/** A fixed account (payer 0, taker 1, taker_token 2, config 3, contract 4, vault 5) of the instruction. */
const fixed = (ix: TransactionInstruction, i: number) => ix.keys[i].pubkey;

/** A successful sweep moved exactly what its OfferTaken events say, and nothing else. */
async function sweepMatchesEvents(taker: User, contract: PublicKey, offers: PublicKey[], amount: bigint, o: Parameters<typeof w.takeBestIx>[4] = {}) {
  const before = await ledger();
  const offersBefore = await Promise.all(offers.map((x) => w.offer(x)));
  const r = await w.takeBest(taker, contract, offers, amount, o);
  expectOk(r);
  const taken = parseOffersEvents(r.logs).filter((e) => e.name === "offerTaken");
  const after = await ledger();
  const sum = taken.reduce((s, e) => s + BigInt(String(e.data.takeAmount)), 0n);
  const ti = w.users.indexOf(taker);
  expect(sum).toBeGreaterThan(0n);
  expect(sum).toBeLessThanOrEqual(amount);
  expect(after.users[ti]).toBe(before.users[ti] - sum);
  expect(after.vault).toBe(before.vault + sum);
  expect(after.total).toBe(before.total);
  expect(after.claims).toEqual(before.claims);
  for (const [i, x] of offers.entries()) {
    const ev = taken.filter((e) => String(e.data.offer) === x.toBase58());
    const now = await w.offer(x);
    const take = ev.reduce((s, e) => s + BigInt(String(e.data.takeAmount)), 0n);
    const matched = ev.reduce((s, e) => s + BigInt(String(e.data.creatorMatched)), 0n);
    expect(now.takerFilled - offersBefore[i].takerFilled).toBe(take);
    expect(now.creatorAllocated - offersBefore[i].creatorAllocated).toBe(matched);
    expect(now.creatorAllocated).toBeLessThanOrEqual(now.creatorTotal);
    expect(now.takerFilled).toBeLessThanOrEqual(now.takerTarget);
    for (const e of ev) expect(String(e.data.position)).toBe(w.positionOf(x, taker).toBase58());
  }
  return { r, taken, sum };
}

describe("take_best: stealing with the list", () => {
  it("fixed accounts in the pairs: vault, taker token, payer, taker, config or contract as a position", async () => {
    const { contract, a, c } = await book();
    const ix = await w.takeBestIx(mallory, contract, [a], 10n * UNIT);
    const watch = [a, c, w.positionOf(a, mallory), w.client.pda.config()[0], contract];
    // A token account (vault, taker token) has data: never created over.
    await attempt(bendPair(ix, 0, 1, fixed(ix, 5)), [mallory.key], "AlreadyInitialized", watch);
    await attempt(bendPair(ix, 0, 1, fixed(ix, 2)), [mallory.key], "AlreadyInitialized", watch);
    // A signer (payer, taker) would let any address be "created" as the position.
    await attempt(bendPair(ix, 0, 1, w.chain.payer.publicKey, { signer: true }), [mallory.key], "AccountMismatch", watch);
    await attempt(bendPair(ix, 0, 1, mallory.key.publicKey, { signer: true }), [mallory.key], "AccountMismatch", watch);
    // The program's other accounts are not Positions.
    await attempt(bendPair(ix, 0, 1, fixed(ix, 3)), [mallory.key], "WrongAccountType", watch);
    await attempt(bendPair(ix, 0, 1, contract), [mallory.key], "WrongAccountType", watch);
  });

  it("fixed accounts or positions as the offer: config, contract, vault, a position", async () => {
    const { contract, a, c } = await book();
    expectOk(await w.take(bob, a, 10n * UNIT));
    // More than offer a holds, so that the sweep reaches pair 1 (pairs after the total is reached are never read).
    const ix = await w.takeBestIx(mallory, contract, [a, c], 150n * UNIT);
    const watch = [a, c, w.positionOf(a, bob), w.positionOf(a, mallory), w.positionOf(c, mallory)];
    await attempt(bendPair(ix, 1, 0, fixed(ix, 3)), [mallory.key], "WrongAccountType", watch);
    await attempt(bendPair(ix, 1, 0, contract), [mallory.key], "WrongAccountType", watch);
    await attempt(bendPair(ix, 1, 0, fixed(ix, 5)), [mallory.key], "WrongAccountOwner", watch);
    await attempt(bendPair(ix, 1, 0, w.positionOf(a, bob)), [mallory.key], "WrongAccountType", watch);
  });

  it("an offer passed as another pair's position, and one position for two offers", async () => {
    const { contract, a, c } = await book();
    const watch = [a, c, w.positionOf(a, mallory), w.positionOf(c, mallory)];
    // Offer c as the position of pair 0 (its offer a is taken first).
    const ix = await w.takeBestIx(mallory, contract, [a, c], 150n * UNIT);
    await attempt(bendPair(ix, 0, 1, c), [mallory.key], "WrongAccountType", watch);
    // Pair 0 creates mallory's position on a; pair 1 reuses it for c: two offers on one position.
    await attempt(bendPair(ix, 1, 1, w.positionOf(a, mallory)), [mallory.key], "AccountMismatch", watch);
    // The same with the position existing before the sweep.
    expectOk(await w.take(mallory, a, 5n * UNIT));
    const before = await raw([w.positionOf(a, mallory)]);
    const ix2 = await w.takeBestIx(mallory, contract, [a, c], 200n * UNIT);
    await attempt(bendPair(ix2, 1, 1, w.positionOf(a, mallory)), [mallory.key], "AccountMismatch", watch);
    expect(await raw([w.positionOf(a, mallory)])).toEqual(before);
  });

  it("the same offer twice, however it is spelled (read-only second copy, far apart, last pair)", async () => {
    const { contract, a, c } = await book();
    const watch = [a, c, w.positionOf(a, mallory), w.positionOf(c, mallory)];
    const ix = await w.takeBestIx(mallory, contract, [a, c, a], 300n * UNIT);
    await attempt(ix, [mallory.key], "DuplicateOffer", watch);
    // The second copy read-only: the runtime sees one account, still refused.
    const ro = await w.takeBestIx(mallory, contract, [a, a], 300n * UNIT);
    await attempt(bendPair(ro, 1, 0, a, { writable: false }), [mallory.key], "DuplicateOffer", watch);
    // With a distinct position slot (not the canonical one), still refused before any load.
    const other = await w.takeBestIx(mallory, contract, [a, a], 300n * UNIT);
    await attempt(bendPair(other, 1, 1, Keypair.generate().publicKey), [mallory.key], "DuplicateOffer", watch);
  });

  it("a later pair that fails undoes the takes before it (no partial state, no event stands)", async () => {
    const { contract, a, c } = await book();
    const other = await w.contract({ cutoffIn: 3_600n });
    const { r, offer: foreign } = await w.createOffer(carol, other, { total: 10n * UNIT, target: 10n * UNIT });
    expectOk(r);
    const watch = [a, c, foreign, w.positionOf(a, mallory), w.positionOf(c, mallory), w.positionOf(foreign, mallory)];
    // Pair 0 is taken, pair 1 is of another contract.
    await attempt(await w.takeBestIx(mallory, contract, [a, foreign, c], 150n * UNIT), [mallory.key], "AccountMismatch", watch);
    // Pair 0 is taken, pair 1's position is bob's.
    expectOk(await w.take(bob, c, 5n * UNIT));
    const ix = await w.takeBestIx(mallory, contract, [a, c], 150n * UNIT, { positions: [w.positionOf(a, mallory), w.positionOf(c, bob)] });
    await attempt(ix, [mallory.key], "AccountMismatch", [...watch, w.positionOf(c, bob)]);
    // Pair 1's position read-only: the account view would be written, refused.
    const ro = bendPair(await w.takeBestIx(mallory, contract, [a, c], 150n * UNIT), 1, 1, w.positionOf(c, mallory), { writable: false });
    await attempt(ro, [mallory.key], undefined, watch);
  });

  it("non-canonical or foreign-owned positions: a lower bump, the wrong bump, a look-alike owned by another program", async () => {
    const { contract, a, c } = await book();
    const seeds = [Buffer.from("position"), a.toBuffer(), mallory.key.publicKey.toBuffer()];
    const [lower, lowerBump] = nonCanonical(seeds, pid);
    const watch = [a, c, lower, w.positionOf(a, mallory)];
    await attempt(
      await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { positions: [lower], positionBumps: [lowerBump] }),
      [mallory.key],
      "AccountMismatch",
      watch,
    );
    // The canonical address with another bump: the signature derived does not match the account.
    const [, canon] = w.client.pda.position(a, mallory.key.publicKey);
    await refused([await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { positionBumps: [lowerBump] })], [mallory.key]);
    await refused([await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { positionBumps: [(canon + 1) % 256] })], [mallory.key]);
    // A Position-shaped account owned by the system program (data forged) at a keypair address:
    // not the program's, so treated as new, and never created over.
    expectOk(await w.take(mallory, c, 5n * UNIT));
    const real = (await w.chain.account(w.positionOf(c, mallory)))!;
    const lookalike = Keypair.generate().publicKey;
    w.chain.setAccount(lookalike, { ...real, owner: SystemProgram.programId });
    await attempt(await w.takeBestIx(mallory, contract, [c], 10n * UNIT, { positions: [lookalike] }), [mallory.key], "AlreadyInitialized", [
      ...watch,
      lookalike,
      w.positionOf(c, mallory),
    ]);
  });

  it("another taker's position or token account: mallory cannot ride on bob's", async () => {
    const { contract, a, c } = await book();
    expectOk(await w.take(bob, a, 10n * UNIT));
    const watch = [a, c, w.positionOf(a, bob), w.positionOf(a, mallory)];
    await attempt(await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { positions: [w.positionOf(a, bob)] }), [mallory.key], "AccountMismatch", watch);
    // Paying from bob's tokens.
    await attempt(await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { takerToken: bob.token }), [mallory.key], "NotTokenOwner", watch);
    // Paying "from" the vault.
    const vault = w.client.pda.vault()[0];
    await attempt(await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { takerToken: vault }), [mallory.key], "NotTokenOwner", watch);
    // bob named taker, mallory only pays the rent: bob's signature is missing.
    const asBob = await w.client.takeBest({
      payer: mallory.key.publicKey,
      taker: bob.key.publicKey,
      takerToken: bob.token,
      contract,
      side: "sideB",
      amount: 10n * UNIT,
      worstOdds: ANY_ODDS,
      mode: "fill-and-kill",
      offers: [a],
    });
    await attempt(unsigned(asBob, bob.key.publicKey), [mallory.key], "MissingSignature", watch);
    // A token account of another mint, owned by mallory.
    const otherMint = await TestMint.create(w.chain);
    const foreignToken = await otherMint.account(mallory.key.publicKey, 1_000n * UNIT);
    await attempt(await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { takerToken: foreignToken }), [mallory.key], "WrongMint", watch);
  });

  it("u64 boundaries: amount u64::MAX, odds limit at u64::MAX, cross-multiplication at 2^127", async () => {
    const { contract, a, c } = await book();
    const watch = [a, c, w.positionOf(a, mallory), w.positionOf(c, mallory)];
    // More than the balance: every fill is undone with the one transfer.
    const rich = await w.user(1n * UNIT);
    await attempt(await w.takeBestIx(rich, contract, [a, c], U64_MAX), [rich.key], "InsufficientBalance", [...watch, w.positionOf(a, rich)]);
    // No offer pays u64::MAX : 1.
    const big = { numerator: U64_MAX, denominator: 1n };
    await attempt(await w.takeBestIx(mallory, contract, [a, c], 10n * UNIT, { worstOdds: big }), [mallory.key], "NothingTaken", watch);
    // Just above alice's 3:2 with both terms near 2^64: (3*2^62 + 1) : 2^63.
    const above = { numerator: 3n * (1n << 62n) + 1n, denominator: 1n << 63n };
    await attempt(await w.takeBestIx(mallory, contract, [a, c], 10n * UNIT, { worstOdds: above }), [mallory.key], "NothingTaken", watch);
    // u64::MAX : u64::MAX - 1 is worse than 3:2 for every offer but not by overflow: both taken.
    const { sum } = await sweepMatchesEvents(mallory, contract, [a, c], 20n * UNIT, { worstOdds: { numerator: U64_MAX, denominator: U64_MAX - 1n } });
    expect(sum).toBe(20n * UNIT);
    // Exactly 3:2, scaled to 2^63: alice's offer qualifies, carol's (7:5) does not.
    const exact = { numerator: 3n * (1n << 62n), denominator: 1n << 63n };
    const { taken } = await sweepMatchesEvents(mallory, contract, [c, a], 10n * UNIT, { worstOdds: exact });
    expect(taken.map((e) => String(e.data.offer))).toEqual([a.toBase58()]);
    // Denominator 0 and numerator 0.
    await attempt(
      await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { worstOdds: { numerator: 1n, denominator: 0n } }),
      [mallory.key],
      "InvalidOddsLimit",
      watch,
    );
    await attempt(await w.takeBestIx(mallory, contract, [a], 0n), [mallory.key], "ZeroAmount", watch);
  });

  it("the maximum wager cannot be evaded by splitting one offer's take over a sweep", async () => {
    const max = LAUNCH_LIMITS.maximumWagerMicros;
    const contract = await w.contract({ cutoffIn: 3_600n });
    const whale = await w.user(2_000n * UNIT);
    const { r, offer: big } = await w.createOffer(whale, contract, { total: 500n * UNIT, target: 1_000n * UNIT });
    expectOk(r);
    const taker = await w.user(2_000n * UNIT);
    expectOk(await w.take(taker, big, max - 3n * UNIT));
    // Room of 3 units on the only position: the sweep takes 3, never more.
    const { sum } = await sweepMatchesEvents(taker, contract, [big], 100n * UNIT);
    expect(sum).toBe(3n * UNIT);
    expect((await w.position(w.positionOf(big, taker))).takerAmount).toBe(max);
    // Full: passed over, nothing taken.
    await attempt(await w.takeBestIx(taker, contract, [big], 10n * UNIT), [taker.key], "NothingTaken", [big, w.positionOf(big, taker)]);
    // Fill-or-kill beyond the room fails whole.
    const t2 = await w.user(2_000n * UNIT);
    await attempt(await w.takeBestIx(t2, contract, [big], max + 1n, { mode: "fill-or-kill" }), [t2.key], "NotFilled", [big, w.positionOf(big, t2)]);
    expect(await w.chain.account(w.positionOf(big, t2))).toBeNull();
  });

  it("minimum take: the remainder exception cannot be faked by a small total or a small room", async () => {
    const { contract, a, c } = await book({ minTake: 10n * UNIT });
    const watch = [a, c, w.positionOf(a, mallory), w.positionOf(c, mallory)];
    // 5 units left of the total, both offers want 10 at least, 100 left each.
    await attempt(await w.takeBestIx(mallory, contract, [a, c], 5n * UNIT), [mallory.key], "NothingTaken", watch);
    // Bring alice's offer to 3 left: the exact remainder of 3 is taken, the rest of 5 not elsewhere.
    expectOk(await w.take(bob, a, 97n * UNIT));
    const { taken, sum } = await sweepMatchesEvents(mallory, contract, [a, c], 5n * UNIT);
    expect(sum).toBe(3n * UNIT);
    expect(taken.map((e) => String(e.data.offer))).toEqual([a.toBase58()]);
    expect((await w.offer(a)).status).toBe("Filled");
    expect((await w.offer(a)).creatorAllocated).toBe(50n * UNIT);
  });

  it("fill-or-kill leaves nothing behind: no position, no revision, no event effect", async () => {
    const { contract, a, c } = await book();
    const watch = [a, c, w.positionOf(a, mallory), w.positionOf(c, mallory)];
    await attempt(await w.takeBestIx(mallory, contract, [a, c], 201n * UNIT, { mode: "fill-or-kill" }), [mallory.key], "NotFilled", watch);
    expect(await w.chain.account(w.positionOf(a, mallory))).toBeNull();
    expect((await w.offer(a)).revision).toBe(1n);
  });

  it("offers of the taker's own side or by the taker are never taken (wash and side flip)", async () => {
    const { contract, a, c } = await book();
    const watch = [a, c, w.positionOf(a, alice), w.positionOf(c, alice), w.positionOf(a, mallory)];
    // alice sweeping her own offer and carol's, backing sideA (the offers' side): nothing.
    await attempt(await w.takeBestIx(alice, contract, [a, c], 10n * UNIT, { side: "sideA" }), [alice.key], "NothingTaken", watch);
    // alice sweeping her own offer alone on the right side: nothing.
    await attempt(await w.takeBestIx(alice, contract, [a], 10n * UNIT), [alice.key], "NothingTaken", watch);
    // Side bytes other than 1 and 2.
    await attempt(await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { rawSide: 0 }), [mallory.key], "InvalidSide", watch);
    await attempt(await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { rawSide: 3 }), [mallory.key], "InvalidSide", watch);
    await attempt(await w.takeBestIx(mallory, contract, [a], 10n * UNIT, { rawMode: 2 }), [mallory.key], "InvalidTakeMode", watch);
  });

  it("a pre-funded position address neither blocks the sweep nor lends its lamports to anyone", async () => {
    const { contract, a } = await book();
    const pos = w.positionOf(a, mallory);
    // Someone (bob) sends lamports to mallory's future position.
    expectOk(await w.send([SystemProgram.transfer({ fromPubkey: bob.key.publicKey, toPubkey: pos, lamports: 5_000_000 })], [bob.key]));
    await sweepMatchesEvents(mallory, contract, [a], 10n * UNIT);
    const p = await w.position(pos);
    expect(p.takerAmount).toBe(10n * UNIT);
    expect(p.taker.equals(mallory.key.publicKey)).toBe(true);
    expect((await w.chain.account(pos))!.owner.equals(pid)).toBe(true);
  });

  it("events match the account changes across many pairs, partial fills and skips", async () => {
    const contract = await w.contract({ cutoffIn: 3_600n });
    const makers: User[] = [];
    for (let i = 0; i < 3; i++) makers.push(await w.user());
    const offers: PublicKey[] = [];
    for (const [i, m] of makers.entries()) {
      const { r, offer } = await w.createOffer(m, contract, { total: (7n + BigInt(i)) * UNIT + 3n, target: 13n * UNIT + 1n });
      expectOk(r);
      offers.push(offer);
    }
    const { r: rs, offer: sameSide } = await w.createOffer(carol, contract, { side: "sideB", total: 5n * UNIT, target: 5n * UNIT });
    expectOk(rs);
    const taker = await w.user();
    // Odd amounts so that the matched stake rounds down on partial takes.
    const { taken, sum } = await sweepMatchesEvents(taker, contract, [sameSide, ...offers], 30n * UNIT + 7n);
    expect(sum).toBe(30n * UNIT + 7n);
    expect(taken.length).toBe(3);
    expect(await w.offer(sameSide)).toMatchObject({ takerFilled: 0n, revision: 1n });
  });

  it("pairs past the total are never read: garbage there moves nothing and no event names it", async () => {
    const { contract, a, c } = await book();
    const garbage = Keypair.generate().publicKey;
    const ix = bendPair(bendPair(await w.takeBestIx(mallory, contract, [a, c], 10n * UNIT), 1, 0, w.client.pda.config()[0]), 1, 1, garbage);
    const untouched = [c, garbage, w.positionOf(c, mallory)];
    const before = await raw(untouched);
    const r = await w.send([ix], [mallory.key]);
    expectOk(r);
    const taken = parseOffersEvents(r.logs).filter((e) => e.name === "offerTaken");
    expect(taken.map((e) => String(e.data.offer))).toEqual([a.toBase58()]);
    expect(await raw(untouched)).toEqual(before);
    expect((await w.position(w.positionOf(a, mallory))).takerAmount).toBe(10n * UNIT);
  });

  // 17 pairs do not fit a legacy transaction (1 232 bytes); the program's own bound is in take-best.test.ts.
  it("list shapes: an odd count, no pair", async () => {
    const { contract, a, c } = await book();
    const watch = [a, c, w.positionOf(a, mallory), w.positionOf(c, mallory)];
    const ix = await w.takeBestIx(mallory, contract, [a, c], 10n * UNIT);
    const withKeys = (keys: TransactionInstruction["keys"]) => new TransactionInstruction({ programId: ix.programId, data: ix.data, keys });
    await attempt(withKeys(ix.keys.slice(0, 11)), [mallory.key], "InvalidOfferList", watch);
    await attempt(withKeys(ix.keys.slice(0, 8)), [mallory.key], "InvalidOfferList", watch);
  });

  it("offers switched off in Config, a voided contract, a contract past its cutoff", async () => {
    const { contract, a, c } = await book();
    const watch = [a, c, w.positionOf(a, mallory), w.positionOf(c, mallory)];
    const cfg = await w.config();
    const setEnabled = async (on: boolean) =>
      expectOk(
        await w.send(
          [await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: cfg.feeBps, offersEnabled: on, limits: cfg.limits })],
          [w.authority],
        ),
      );
    await setEnabled(false);
    await attempt(await w.takeBestIx(mallory, contract, [a, c], 10n * UNIT), [mallory.key], "OffersDisabled", watch);
    await setEnabled(true);
    // Voided before its cutoff: the offers are still Open but the contract takes nothing.
    const voided = await book();
    expectOk(await w.resolve(voided.contract, "void"));
    await attempt(await w.takeBestIx(mallory, voided.contract, [voided.a, voided.c], 10n * UNIT), [mallory.key], "ContractNotOpen", [
      voided.a,
      voided.c,
      w.positionOf(voided.a, mallory),
    ]);
    // Past the cutoff.
    await w.chain.advance(3_600n);
    await attempt(await w.takeBestIx(mallory, contract, [a, c], 10n * UNIT), [mallory.key], "CutoffPassed", watch);
  });
});
