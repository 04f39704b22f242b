/**
 * Offer expiry, attacked for value (an independent review from the IDL and the program sources,
 * after #26 item 4): clock edges around `expires_at`, a stranger's close before and after it with
 * the refund's accounts substituted, i64 extremes and instruction data of the old length, take_best
 * over a mix of expired and open offers, the payouts of a partly filled expired offer to the
 * micro-unit, and Offer accounts of the old size. Every refusal checks its error and that no
 * token, claim or watched account moved; every success checks each balance to the micro-unit.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import { UNIT, type User } from "../../../harness/offers-world";
import { expectError, expectOk } from "../../support/expect";
import { setUp, closeTokenAccount, I64_MAX, ledger, looseUser, pid, refused, SIZE, users, w } from "./scene";

const I64_MIN = -(1n << 63n);

// LiteSVM's clock starts at 0, where `expires_at = now` would read as "no expiry": start later.
beforeAll(async () => {
  await setUp();
  await w.chain.setTime(1_800_000_000n);
});

/** A contract with its cutoff `cutoffIn` seconds ahead, the chain's time and the cutoff. */
async function fresh(cutoffIn = 1_000n) {
  const contract = await w.contract({ cutoffIn });
  const now = await w.chain.now();
  return { contract, now, cutoff: (await w.contractAccount(contract)).cutoffAt };
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

/** Refused with `name`; no token or claim moved and none of `watch` changed (lamports and data). */
type Ix = TransactionInstruction | Promise<TransactionInstruction>;
async function attempt(ixs: Ix | Ix[], signers: Keypair[], name: string | undefined, watch: PublicKey[] = []) {
  const before = await raw(watch);
  const r = await refused(await Promise.all(Array.isArray(ixs) ? ixs : [ixs]), signers, name);
  expect(await raw(watch)).toEqual(before);
  return r;
}

/** The instruction with `data` in place of its own. */
const withData = (ix: TransactionInstruction, data: Buffer) => new TransactionInstruction({ programId: ix.programId, keys: ix.keys, data });

/** A close_offer of `offer` by `caller` (the offer's recorded accounts unless `over` bends them). */
async function closeIx(
  caller: PublicKey,
  offer: PublicKey,
  over: { creatorToken?: PublicKey; payer?: PublicKey; revision?: bigint; overrides?: Record<string, PublicKey> } = {},
) {
  const o = await w.offer(offer);
  return w.client.closeOffer({
    caller,
    contract: o.contract,
    offer,
    creatorToken: over.creatorToken ?? o.creatorToken,
    creator: o.creator,
    expectedRevision: over.revision ?? o.revision,
    payer: over.payer,
    overrides: over.overrides,
  });
}

/** A token account's balance. */
const bal = (u: User) => w.balanceOf(u.token);

describe("offers: expiry attacked for value", () => {
  it("clock edge: a take and a stranger's close bundled one second before expiry: the close is refused and the take undone with it", async () => {
    const [creator, taker, stranger] = await users(3);
    const { contract, now } = await fresh();
    const expiresAt = now + 100n;
    const { offer } = await w.createOffer(creator, contract, { total: 50n * UNIT, target: 100n * UNIT, expiresAt });
    await w.chain.setTime(expiresAt - 1n);
    const take = await w.takeIx(taker, offer, 10n * UNIT);
    // The close names the revision the bundled take leaves (2), so only the expiry rule can refuse it.
    await attempt([take, closeIx(stranger.key.publicKey, offer, { revision: 2n })], [taker.key, stranger.key], "CloseNotAllowed", [
      offer,
      w.positionOf(offer, taker),
    ]);
    // The same second, alone: the take goes through, twice (same slot, same second), the close still does not.
    expectOk(await w.take(taker, offer, 10n * UNIT));
    expectOk(await w.take(taker, offer, 10n * UNIT));
    await attempt(closeIx(stranger.key.publicKey, offer), [stranger.key], "CloseNotAllowed", [offer]);
    // At the expiry second: a top-up of the existing position is refused like a first take.
    await w.chain.setTime(expiresAt);
    await attempt(w.takeIx(taker, offer, 10n * UNIT), [taker.key], "OfferExpired", [offer, w.positionOf(offer, taker)]);
    const [other] = await users(1);
    await attempt(w.takeIx(other, offer, 10n * UNIT), [other.key], "OfferExpired", [offer, w.positionOf(offer, other)]);
  });

  it("a stranger naming the creator as caller without its signature cannot close before expiry (MissingSignature)", async () => {
    const [creator, stranger] = await users(2);
    const { contract, now } = await fresh();
    const { offer } = await w.createOffer(creator, contract, { total: 5n * UNIT, target: 5n * UNIT, expiresAt: now + 100n });
    const ix = await closeIx(creator.key.publicKey, offer, { payer: stranger.key.publicKey });
    const bent = new TransactionInstruction({ programId: ix.programId, data: ix.data, keys: ix.keys.map((k, i) => (i === 0 ? { ...k, isSigner: false } : k)) });
    await attempt(bent, [stranger.key], "MissingSignature", [offer]);
  });

  it("after expiry a stranger cannot redirect the refund: creator_token, vault or the creator's claim substituted are refused; the honest close pays exactly the unmatched stake", async () => {
    const [creator, taker, stranger] = await users(3);
    const { contract, now } = await fresh();
    const expiresAt = now + 100n;
    const { offer } = await w.createOffer(creator, contract, { total: 50n * UNIT, target: 100n * UNIT, expiresAt });
    expectOk(await w.take(taker, offer, 30n * UNIT));
    await w.chain.setTime(expiresAt);
    const s = stranger.key.publicKey;
    await attempt(closeIx(s, offer, { creatorToken: stranger.token }), [stranger.key], "AccountMismatch", [offer]);
    await attempt(closeIx(s, offer, { overrides: { vault: stranger.token } }), [stranger.key], "AccountMismatch", [offer]);
    const [creatorBefore, strangerBefore, takerBefore, before] = [await bal(creator), await bal(stranger), await bal(taker), await ledger()];
    expectOk(await w.send([await closeIx(s, offer)], [stranger.key]));
    const refund = 50n * UNIT - 15n * UNIT;
    expect(await bal(creator)).toBe(creatorBefore + refund);
    expect(await bal(stranger)).toBe(strangerBefore);
    expect(await bal(taker)).toBe(takerBefore);
    const after = await ledger();
    expect(after.vault).toBe(before.vault - refund);
    expect(after.treasury).toBe(before.treasury);
    expect(after.claims).toEqual(before.claims);
    // Double close, by the stranger and by the creator.
    await attempt(closeIx(s, offer), [stranger.key], "OfferNotOpen", [offer]);
    await attempt(closeIx(creator.key.publicKey, offer), [creator.key], "OfferNotOpen", [offer]);
  });

  it("after expiry, creators whose token accounts are closed: a stranger's claim or another creator's claim in the creator's claim's place is refused; the honest close credits the creator's claim exactly, only the creator withdraws it", async () => {
    const [creator, other] = [await looseUser(100n * UNIT), await looseUser(100n * UNIT)];
    const [stranger] = await users(1);
    const { contract, now } = await fresh();
    const expiresAt = now + 100n;
    const made = [
      await w.createOffer(creator, contract, { total: 40n * UNIT, target: 40n * UNIT, expiresAt }),
      await w.createOffer(other, contract, { total: 7n * UNIT, target: 7n * UNIT, expiresAt }),
    ];
    for (const m of made) expectOk(m.r);
    const [offer, otherOffer] = made.map((m) => m.offer);
    await closeTokenAccount(creator);
    await closeTokenAccount(other);
    await w.chain.setTime(expiresAt);
    const s = stranger.key.publicKey;
    const strangerClaim = w.client.pda.claim(s)[0];
    const creatorClaim = w.client.pda.claim(creator.key.publicKey)[0];
    const otherClaim = w.client.pda.claim(other.key.publicKey)[0];
    // A claim address that does not exist yet: the program signs the creation for the creator's PDA only (runtime refusal).
    await attempt(closeIx(s, offer, { payer: s, overrides: { creatorClaim: strangerClaim } }), [stranger.key], undefined, [offer, strangerClaim, creatorClaim]);
    // The other creator's claim, existing: its owner is not this offer's creator.
    expectOk(await w.send([await closeIx(s, otherOffer, { payer: s })], [stranger.key]));
    expect((await w.claim(other.key.publicKey))!.amount).toBe(7n * UNIT);
    await attempt(closeIx(s, offer, { payer: s, overrides: { creatorClaim: otherClaim } }), [stranger.key], "AccountMismatch", [
      offer,
      otherClaim,
      creatorClaim,
    ]);
    const vaultBefore = (await ledger()).vault;
    expectOk(await w.send([await closeIx(s, offer, { payer: s })], [stranger.key]));
    const claim = (await w.claim(creator.key.publicKey))!;
    expect(claim.amount).toBe(40n * UNIT);
    expect((await w.claim(other.key.publicKey))!.amount).toBe(7n * UNIT);
    expect(await w.claim(s)).toBeNull();
    expect((await ledger()).vault).toBe(vaultBefore);
    // The stranger paid the claim's rent; it cannot take the claim's tokens.
    await attempt(w.substitutedClaimIx(stranger, creatorClaim), [stranger.key], "AccountMismatch", [creatorClaim]);
    const [strangerBefore, creatorBefore] = [await bal(stranger), await bal(creator)];
    expectOk(await w.withdrawClaim(creator.key, creator.token));
    expect(await bal(creator)).toBe(creatorBefore + 40n * UNIT);
    expect(await bal(stranger)).toBe(strangerBefore);
    expect((await ledger()).vault).toBe(vaultBefore - 40n * UNIT);
    expect(await w.chain.account(creatorClaim)).toBeNull();
  });

  it("i64 extremes written into the instruction data (i64::MIN, -1, 1, now, cutoff + 1, i64::MAX) are InvalidExpiry; nothing created", async () => {
    const [creator] = await users(1);
    const { contract, now, cutoff } = await fresh();
    for (const [i, expiresAt] of [I64_MIN, -1n, 1n, now - 1n, now, cutoff + 1n, I64_MAX].entries()) {
      const nonce = 9_000n + BigInt(i);
      const ix = await w.createOfferIx(creator, contract, { nonce, total: 5n * UNIT, target: 5n * UNIT, expiresAt: now + 10n });
      const data = Buffer.from(ix.data);
      data.writeBigInt64LE(expiresAt, data.length - 8);
      const address = w.client.pda.offer(contract, creator.key.publicKey, nonce)[0];
      await attempt(withData(ix, data), [creator.key], "InvalidExpiry", [address]);
      expect(await w.chain.account(address)).toBeNull();
    }
  });

  it("create_offer data of the old length (no expires_at) or with trailing bytes is InvalidInstructionData; nothing created", async () => {
    const [creator] = await users(1);
    const { contract, now } = await fresh();
    const nonce = 9_100n;
    const ix = await w.createOfferIx(creator, contract, { nonce, total: 5n * UNIT, target: 5n * UNIT, expiresAt: now + 10n });
    const address = w.client.pda.offer(contract, creator.key.publicKey, nonce)[0];
    const data = Buffer.from(ix.data);
    for (const bent of [
      data.subarray(0, data.length - 8),
      data.subarray(0, data.length - 1),
      Buffer.concat([data, Buffer.alloc(1)]),
      Buffer.concat([data, Buffer.alloc(8, 0xff)]),
    ]) {
      await attempt(withData(ix, bent), [creator.key], "InvalidInstructionData", [address]);
    }
    expect(await w.chain.account(address)).toBeNull();
  });

  it("expiry equal to the cutoff: a take one second before goes through; at it the contract's cutoff refuses first (CutoffPassed); a stranger closes for the exact refund", async () => {
    const [creator, taker, stranger] = await users(3);
    const { contract, cutoff } = await fresh(200n);
    const { offer } = await w.createOffer(creator, contract, { total: 30n * UNIT, target: 60n * UNIT, expiresAt: cutoff });
    await w.chain.setTime(cutoff - 1n);
    expectOk(await w.take(taker, offer, 20n * UNIT));
    await w.chain.setTime(cutoff);
    await attempt(w.takeIx(taker, offer, 10n * UNIT), [taker.key], "CutoffPassed", [offer]);
    await attempt(w.takeBestIx(taker, contract, [offer], 10n * UNIT), [taker.key], "CutoffPassed", [offer]);
    const [creatorBefore, vaultBefore] = [await bal(creator), (await ledger()).vault];
    expectOk(await w.send([await closeIx(stranger.key.publicKey, offer)], [stranger.key]));
    expect(await bal(creator)).toBe(creatorBefore + 20n * UNIT);
    expect((await ledger()).vault).toBe(vaultBefore - 20n * UNIT);
  });

  it("the clock set back before the expiry after a stranger's close: the offer stays closed (take OfferNotOpen, no second refund)", async () => {
    const [creator, taker, stranger] = await users(3);
    const { contract, now } = await fresh();
    const expiresAt = now + 100n;
    const { offer } = await w.createOffer(creator, contract, { total: 10n * UNIT, target: 10n * UNIT, expiresAt });
    await w.chain.setTime(expiresAt);
    expectOk(await w.send([await closeIx(stranger.key.publicKey, offer)], [stranger.key]));
    await w.chain.setTime(expiresAt - 10n);
    await attempt(w.takeIx(taker, offer, 5n * UNIT), [taker.key], "OfferNotOpen", [offer]);
    await attempt(closeIx(creator.key.publicKey, offer), [creator.key], "OfferNotOpen", [offer]);
    await attempt(w.takeBestIx(taker, contract, [offer], 5n * UNIT), [taker.key], "NothingTaken", [offer]);
    await w.chain.setTime(expiresAt + 1n);
  });

  it("take_best over expired + open offers: fill-or-kill cannot count the expired offer (NotFilled); fill-and-kill takes only the open one; the taker's position on the expired offer is untouched", async () => {
    const [c1, c2, taker] = await users(3);
    const { contract, now } = await fresh();
    const expiresAt = now + 50n;
    const { offer: expiring } = await w.createOffer(c1, contract, { total: 20n * UNIT, target: 20n * UNIT, expiresAt });
    const { offer: lasting } = await w.createOffer(c2, contract, { total: 5n * UNIT, target: 5n * UNIT });
    expectOk(await w.take(taker, expiring, 2n * UNIT));
    await w.chain.setTime(expiresAt);
    const watch = [expiring, lasting, w.positionOf(expiring, taker), w.positionOf(lasting, taker)];
    await attempt(w.takeBestIx(taker, contract, [expiring, lasting], 10n * UNIT, { mode: "fill-or-kill" }), [taker.key], "NotFilled", watch);
    await attempt(w.takeBestIx(taker, contract, [expiring], 1n * UNIT), [taker.key], "NothingTaken", watch);
    const [before, expBefore, posBefore] = [await ledger(), await raw([expiring]), await raw([w.positionOf(expiring, taker)])];
    expectOk(await w.takeBest(taker, contract, [expiring, lasting], 10n * UNIT));
    const after = await ledger();
    const ti = w.users.indexOf(taker);
    expect(after.users[ti]).toBe(before.users[ti] - 5n * UNIT);
    expect(after.vault).toBe(before.vault + 5n * UNIT);
    expect(await raw([expiring])).toEqual(expBefore);
    expect(await raw([w.positionOf(expiring, taker)])).toEqual(posBefore);
    expect((await w.offer(lasting)).status).toBe("Filled");
  });

  it("creator takes-then-closes in one transaction before expiry: the refund is exactly the stake not matched by the bundled take", async () => {
    const [creator, taker] = await users(2);
    const { contract, now } = await fresh();
    const { offer } = await w.createOffer(creator, contract, { total: 1_000_001n, target: 3n * UNIT, expiresAt: now + 100n });
    const before = [await bal(creator), await bal(taker), (await ledger()).vault];
    const take = await w.takeIx(taker, offer, UNIT, { contract, expectedRevision: 1n });
    const close = await w.client.closeOffer({
      caller: creator.key.publicKey,
      contract,
      offer,
      creatorToken: creator.token,
      creator: creator.key.publicKey,
      expectedRevision: 2n,
    });
    expectOk(await w.send([take, close], [taker.key, creator.key]));
    // floor(1_000_000 * 1_000_001 / 3_000_000) = 333_333 matched; the rest back to the creator.
    expect(await bal(creator)).toBe(before[0] + 1_000_001n - 333_333n);
    expect(await bal(taker)).toBe(before[1] - UNIT);
    expect((await ledger()).vault).toBe(before[2] - 1_000_001n + 333_333n + UNIT);
    expect(await w.offer(offer)).toMatchObject({ status: "Closed", creatorAllocated: 333_333n, creatorRefunded: 1_000_001n - 333_333n });
  });

  for (const result of ["sideA", "sideB", "void"] as const) {
    it(`a partly filled expired offer with rounding dust, closed by a stranger, then ${result}: creator gets the unmatched stake plus its positions' payouts, takers exactly theirs, the vault back to where it was`, async () => {
      const [creator, t1, t2, stranger] = await users(4);
      const vaultStart = (await ledger()).vault;
      const treasuryStart = (await ledger()).treasury;
      const { contract, now, cutoff } = await fresh(300n);
      const expiresAt = now + 100n;
      const total = 1_000_001n;
      const { offer } = await w.createOffer(creator, contract, { total, target: 3n * UNIT, expiresAt });
      const start = [await bal(creator), await bal(t1), await bal(t2), await bal(stranger)];
      expectOk(await w.take(t1, offer, UNIT));
      expectOk(await w.take(t2, offer, UNIT));
      await w.chain.setTime(expiresAt);
      // The take that would fill it (and get the 333_335 remainder) is refused.
      await attempt(w.takeIx(t1, offer, UNIT), [t1.key], "OfferExpired", [offer, w.positionOf(offer, t1)]);
      expectOk(await w.send([await closeIx(stranger.key.publicKey, offer)], [stranger.key]));
      const refund = total - 2n * 333_333n;
      expect(refund).toBe(333_335n);
      expect(await bal(creator)).toBe(start[0] + refund);
      // Nothing settles before the contract is decided; the offer account stays.
      await attempt(w.settleIx(w.positionOf(offer, t1)), [], "ContractNotResolved", [offer]);
      await attempt(w.client.closeOfferAccount({ offer, rentPayer: w.chain.payer.publicKey, contract }), [], "OfferNotFinished", [offer]);
      await w.chain.setTime(cutoff);
      expectOk(await w.resolve(contract, result));
      for (const t of [t1, t2]) expectOk(await w.settle(w.positionOf(offer, t)));
      await attempt(w.settleIx(w.positionOf(offer, t1)), [], "PositionAlreadySettled", [offer]);
      const fee = 1000n; // LAUNCH_FEE_BPS
      const perCreator = { sideA: 333_333n + UNIT - (UNIT * fee) / 10_000n, sideB: 0n, void: 333_333n }[result];
      const perTaker = { sideA: 0n, sideB: UNIT + 333_333n - (333_333n * fee) / 10_000n, void: UNIT }[result];
      const perFee = { sideA: (UNIT * fee) / 10_000n, sideB: (333_333n * fee) / 10_000n, void: 0n }[result];
      expect(await bal(creator)).toBe(start[0] + refund + 2n * perCreator);
      expect(await bal(t1)).toBe(start[1] - UNIT + perTaker);
      expect(await bal(t2)).toBe(start[2] - UNIT + perTaker);
      expect(await bal(stranger)).toBe(start[3]);
      const end = await ledger();
      expect(end.treasury).toBe(treasuryStart + 2n * perFee);
      expect(end.vault).toBe(vaultStart);
      expect((await w.offer(offer)).status).toBe("Settled");
      // The rent goes to its recorded payer only, not to the stranger who closed it.
      await attempt(w.client.closeOfferAccount({ offer, rentPayer: stranger.key.publicKey, contract }), [], "AccountMismatch", [offer, stranger.key.publicKey]);
      // Rent back to its payer, once; the address is gone for good.
      const closeAcc = await w.client.closeOfferAccount({ offer, rentPayer: w.chain.payer.publicKey, contract });
      expectOk(await w.send([closeAcc]));
      expect(await w.chain.account(offer)).toBeNull();
      await attempt(closeAcc, [], "WrongAccountOwner", [offer]);
      await w.chain.setTime(cutoff + 1n);
    });
  }

  it("an expired offer nobody closed, its contract then decided: settle waits for the close (OfferStillOpen); a filled offer at its expiry cannot be closed by a stranger; payouts exact", async () => {
    const [creator, taker, stranger] = await users(3);
    const { contract, now, cutoff } = await fresh(300n);
    const expiresAt = now + 100n;
    const start = [await bal(creator), await bal(taker), (await ledger()).vault, (await ledger()).treasury];
    const { offer } = await w.createOffer(creator, contract, { total: 12n * UNIT, target: 20n * UNIT, expiresAt });
    const { offer: filled } = await w.createOffer(creator, contract, { total: 3n * UNIT, target: 3n * UNIT, expiresAt });
    expectOk(await w.take(taker, offer, 5n * UNIT));
    expectOk(await w.take(taker, filled, 3n * UNIT));
    await w.chain.setTime(expiresAt);
    await attempt(closeIx(stranger.key.publicKey, filled), [stranger.key], "OfferNotOpen", [filled]);
    await w.chain.setTime(cutoff);
    expectOk(await w.resolve(contract, "sideB"));
    await attempt(w.settleIx(w.positionOf(offer, taker)), [], "OfferStillOpen", [offer, w.positionOf(offer, taker)]);
    expectOk(await w.settle(w.positionOf(filled, taker)));
    expectOk(await w.send([await closeIx(stranger.key.publicKey, offer)], [stranger.key]));
    expectOk(await w.settle(w.positionOf(offer, taker)));
    // 5 of 20 taken: 3 of 12 matched, 9 refunded; the taker wins 5 + 3 - 10% of 3, and 3 + 3 - 10% of 3.
    expect(await bal(creator)).toBe(start[0] - 12n * UNIT - 3n * UNIT + 9n * UNIT);
    expect(await bal(taker)).toBe(start[1] - 5n * UNIT - 3n * UNIT + (8n * UNIT - 300_000n) + (6n * UNIT - 300_000n));
    const end = await ledger();
    expect(end.vault).toBe(start[2]);
    expect(end.treasury).toBe(start[3] + 600_000n);
    await w.chain.setTime(cutoff + 1n);
  });

  it("the cutoff cannot move after an offer's expiry was checked against it: the contract re-created at its address with a later cutoff is AlreadyInitialized", async () => {
    const [creator] = await users(1);
    const [templateId, eventId] = [randomUUID(), randomUUID()];
    const now = await w.chain.now();
    expectOk(await w.send([await w.contractIx(now, { templateId, eventId, cutoffIn: 100n })], [w.authority]));
    const contract = w.client.pda.contract(templateId, eventId)[0];
    const { r, offer } = await w.createOffer(creator, contract, { total: 5n * UNIT, target: 5n * UNIT, expiresAt: now + 100n });
    expectOk(r);
    await attempt(w.contractIx(now, { templateId, eventId, cutoffIn: 1_000n }), [w.authority], "AlreadyInitialized", [contract, offer]);
    expect((await w.contractAccount(contract)).cutoffAt).toBe(now + 100n);
    // An expiry past the cutoff is still refused on this contract.
    const late = await w.createOffer(creator, contract, { total: 5n * UNIT, target: 5n * UNIT, expiresAt: now + 101n });
    expectError(late.r, "InvalidExpiry");
  });

  it("Offer accounts of the old size (without expires_at) or longer are refused by take, take_best, close and settle (WrongAccountType)", async () => {
    const [creator, taker] = await users(2);
    const { contract, now } = await fresh();
    const { offer } = await w.createOffer(creator, contract, { total: 10n * UNIT, target: 10n * UNIT, expiresAt: now + 100n });
    expectOk(await w.take(taker, offer, 2n * UNIT));
    const real = (await w.chain.account(offer))!;
    expect(real.data.length).toBe(SIZE.offer);
    const o = await w.offer(offer);
    for (const data of [Buffer.from(real.data).subarray(0, SIZE.offer - 8), Buffer.concat([Buffer.from(real.data), Buffer.alloc(8)])]) {
      const fake = Keypair.generate().publicKey;
      w.chain.setAccount(fake, { ...real, data: Buffer.from(data) });
      const watch = [fake, offer];
      await attempt(w.takeIx(taker, fake, UNIT, { contract, expectedRevision: o.revision }), [taker.key], "WrongAccountType", watch);
      await attempt(w.takeBestIx(taker, contract, [fake], UNIT), [taker.key], "WrongAccountType", watch);
      const close = await w.client.closeOffer({
        caller: creator.key.publicKey,
        contract,
        offer: fake,
        creatorToken: creator.token,
        creator: creator.key.publicKey,
        expectedRevision: o.revision,
      });
      await attempt(close, [creator.key], "WrongAccountType", watch);
      await attempt(w.settleIx(w.positionOf(offer, taker), { offer: fake }), [], "WrongAccountType", watch);
      // An old-size account in place of the real offer (as one made before the upgrade would be).
      const saved = (await w.chain.account(offer))!;
      const closeReal = await closeIx(creator.key.publicKey, offer);
      w.chain.setAccount(offer, { ...saved, data: Buffer.from(data) });
      await attempt(w.takeIx(taker, offer, UNIT, { contract, expectedRevision: o.revision }), [taker.key], "WrongAccountType", [offer]);
      await attempt(closeReal, [creator.key], "WrongAccountType", [offer]);
      w.chain.setAccount(offer, saved);
      expect(pid.equals(saved.owner)).toBe(true);
    }
  });
});
