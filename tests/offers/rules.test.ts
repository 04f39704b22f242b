/**
 * Every rule of create / take / close / settle / resolve / reclaim, through the generated client
 * against the compiled program; each rejection asserts its named error and that no token moved.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair } from "@solana/web3.js";
import { LAUNCH_LIMITS, LAUNCH_FEE_BPS } from "../../idl/client/offers";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import { expectError, expectOk } from "../support/expect";

let w: OffersWorld;
let alice: User, bob: User, carol: User, poor: User;

beforeAll(async () => {
  w = await OffersWorld.create();
  alice = await w.user(2_000n * UNIT);
  bob = await w.user(2_000n * UNIT);
  carol = await w.user(2_000n * UNIT);
  poor = await w.user(3n * UNIT);
});

/** Runs `fn`, and asserts the total of all balances and each user's balance are unchanged. */
async function unchanged(fn: () => Promise<void>) {
  const before = await w.balances();
  await fn();
  const after = await w.balances();
  expect(after).toEqual(before);
}

describe("create_offer", () => {
  it("locks the stake and records the offer fields", async () => {
    const contract = await w.contract();
    const { r, offer } = await w.createOffer(alice, contract, { side: "sideB", total: 20n * UNIT, target: 30n * UNIT, minTake: 2n * UNIT });
    expectOk(r);
    const o = await w.offer(offer);
    expect(o).toMatchObject({
      side: "sideB",
      status: "Open",
      creatorTotal: 20n * UNIT,
      takerTarget: 30n * UNIT,
      minimumTake: 2n * UNIT,
      takerFilled: 0n,
      creatorAllocated: 0n,
      revision: 1n,
      feeBps: LAUNCH_FEE_BPS,
      fillCount: 0,
      positionCount: 0,
    });
    expect(o.createdAt).toBe(await w.chain.now());
  });

  it.each([
    ["stake below the minimum", { total: UNIT - 1n, target: UNIT }, "StakeBelowMinimum"],
    ["stake above the maximum wager", { total: 500n * UNIT + 1n, target: 500n * UNIT }, "StakeAboveMaximum"],
    ["zero target", { total: 10n * UNIT, target: 0n, minTake: 0n }, "InvalidTarget"],
    ["odds below 1:10", { total: 10n * UNIT, target: 100n * UNIT + 1n }, "OddsBelowMinimum"],
    ["odds above 10:1", { total: 10n * UNIT + 1n, target: UNIT }, "OddsAboveMaximum"],
    ["minimum take below the configured minimum", { total: 10n * UNIT, target: 10n * UNIT, minTake: UNIT - 1n }, "MinimumTakeTooSmall"],
    ["minimum take above the target", { total: 10n * UNIT, target: 10n * UNIT, minTake: 10n * UNIT + 1n }, "MinimumTakeAboveTarget"],
    ["fee differs from expected", { total: 10n * UNIT, target: 10n * UNIT, feeBps: 999 }, "FeeChanged"],
  ])("rejects %s", async (_, o, name) => {
    const contract = await w.contract();
    await unchanged(async () => expectError((await w.createOffer(alice, contract, o)).r, name));
  });

  it("accepts the exact odds bounds 1:10 and 10:1", async () => {
    const contract = await w.contract();
    expectOk((await w.createOffer(alice, contract, { total: 10n * UNIT, target: 100n * UNIT })).r);
    expectOk((await w.createOffer(alice, contract, { total: 10n * UNIT, target: UNIT })).r);
  });

  it("rejects an invalid side", async () => {
    const contract = await w.contract();
    await unchanged(async () =>
      expectError((await w.createOffer(alice, contract, { side: 3 as never, total: 2n * UNIT, target: 2n * UNIT })).r, "InvalidSide"),
    );
  });

  it("rejects a stake the creator's balance does not cover, saying needed and available", async () => {
    const contract = await w.contract();
    const { r } = await w.createOffer(poor, contract, { total: 4n * UNIT, target: 4n * UNIT });
    expectError(r, "InsufficientBalance");
    expect(r.logs.join("\n")).toContain("insufficient balance: needed, available");
    expect(r.logs.join("\n")).toContain("0x3d0900, 0x2dc6c0"); // 4_000_000 needed, 3_000_000 there
  });

  it("rejects a replayed create (same creator and nonce) without taking a second stake", async () => {
    const contract = await w.contract();
    const nonce = w.nextNonce();
    expectOk((await w.createOffer(alice, contract, { total: 5n * UNIT, target: 5n * UNIT, nonce })).r);
    await w.chain.advance(1n); // new blockhash: a genuinely new transaction with the same nonce
    await unchanged(async () => expect((await w.createOffer(alice, contract, { total: 5n * UNIT, target: 5n * UNIT, nonce })).r.ok).toBe(false));
  });

  it("rejects after the cutoff and on a contract that is not open", async () => {
    const contract = await w.contract({ cutoffIn: 60n });
    await w.chain.advance(60n);
    await unchanged(async () => expectError((await w.createOffer(alice, contract, { total: 2n * UNIT, target: 2n * UNIT })).r, "CutoffPassed"));
    const voided = await w.contract();
    expectOk(await w.resolve(voided, "void"));
    await unchanged(async () => expectError((await w.createOffer(alice, voided, { total: 2n * UNIT, target: 2n * UNIT })).r, "ContractNotOpen"));
  });

  it("rejects creates and takes while offers are switched off; close still works", async () => {
    const contract = await w.contract();
    const { offer } = await w.createOffer(alice, contract, { total: 4n * UNIT, target: 4n * UNIT });
    const off = await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: LAUNCH_FEE_BPS, offersEnabled: false, limits: LAUNCH_LIMITS });
    expectOk(await w.send([off], [w.authority]));
    await unchanged(async () => {
      expectError((await w.createOffer(alice, contract, { total: 2n * UNIT, target: 2n * UNIT })).r, "OffersDisabled");
      expectError(await w.take(bob, offer, 2n * UNIT), "OffersDisabled");
    });
    expectOk(await w.close(alice.key, offer));
    const on = await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: LAUNCH_FEE_BPS, offersEnabled: true, limits: LAUNCH_LIMITS });
    expectOk(await w.send([on], [w.authority]));
  });
});

describe("take_offer", () => {
  it("enforces self-take, revision, minimum take, remainder and the position cap", async () => {
    const contract = await w.contract();
    const { offer } = await w.createOffer(alice, contract, { total: 300n * UNIT, target: 600n * UNIT, minTake: 10n * UNIT });
    await unchanged(async () => {
      expectError(await w.take(alice, offer, 10n * UNIT), "SelfTake");
      expectError(await w.take(bob, offer, 10n * UNIT, 7n), "RevisionMismatch");
      expectError(await w.take(bob, offer, 10n * UNIT - 1n), "TakeBelowMinimum");
      expectError(await w.take(bob, offer, 0n), "ZeroAmount");
      expectError(await w.take(bob, offer, 600n * UNIT + 1n), "AmountExceedsRemaining");
      expectError(await w.take(bob, offer, 500n * UNIT + 1n), "PositionAboveMaximum");
    });
    expectOk(await w.take(bob, offer, 400n * UNIT));
    // Repeat takes add to one position, and the cap counts the total.
    await unchanged(async () => expectError(await w.take(bob, offer, 100n * UNIT + 1n), "PositionAboveMaximum"));
    expectOk(await w.take(bob, offer, 100n * UNIT));
    const p = await w.position(w.positionOf(offer, bob));
    expect(p).toMatchObject({ takerAmount: 500n * UNIT, creatorMatched: 250n * UNIT, fillCount: 2, status: "Open" });
    const o = await w.offer(offer);
    expect(o).toMatchObject({ takerFilled: 500n * UNIT, creatorAllocated: 250n * UNIT, fillCount: 2, positionCount: 1, revision: 3n });
  });

  it("lets a take below the minimum through only when it is exactly the remainder, which fills the offer", async () => {
    const contract = await w.contract();
    const { offer } = await w.createOffer(alice, contract, { total: 10n * UNIT, target: 3n * UNIT + 1n, minTake: 3n * UNIT });
    expectOk(await w.take(bob, offer, 3n * UNIT));
    expectError(await w.take(carol, offer, 2n), "AmountExceedsRemaining");
    expectOk(await w.take(carol, offer, 1n));
    const o = await w.offer(offer);
    expect(o.status).toBe("Filled");
    expect(o.creatorAllocated).toBe(o.creatorTotal); // the last take gets the rest of the stake
    expectError(await w.take(carol, offer, 1n), "OfferNotOpen");
  });

  it("rejects a take too small to be matched with any creator stake", async () => {
    const limits = { ...LAUNCH_LIMITS, minimumTakeMicros: 1n, minimumCreatorMicros: 1n };
    const w2 = await OffersWorld.create({ limits });
    const [a, b] = [await w2.user(100n * UNIT), await w2.user(100n * UNIT)];
    const contract = await w2.contract();
    const { offer } = await w2.createOffer(a, contract, { total: 1n, target: 10n, minTake: 1n });
    expectError(await w2.take(b, offer, 1n), "TakeTooSmallToMatch");
  });

  it("rejects takes after the cutoff and on a voided contract", async () => {
    const contract = await w.contract({ cutoffIn: 100n });
    const { offer } = await w.createOffer(alice, contract, { total: 5n * UNIT, target: 5n * UNIT });
    await w.chain.advance(100n);
    await unchanged(async () => expectError(await w.take(bob, offer, 5n * UNIT), "CutoffPassed"));
    const c2 = await w.contract();
    const { offer: o2 } = await w.createOffer(alice, c2, { total: 5n * UNIT, target: 5n * UNIT });
    expectOk(await w.resolve(c2, "void"));
    await unchanged(async () => expectError(await w.take(bob, o2, 5n * UNIT), "ContractNotOpen"));
  });
});

describe("close_offer", () => {
  it("lets the creator close any time, refunding only the unmatched stake, and blocks others before the cutoff", async () => {
    const contract = await w.contract();
    const { offer } = await w.createOffer(alice, contract, { total: 8n * UNIT, target: 10n * UNIT });
    expectOk(await w.take(bob, offer, 5n * UNIT));
    await unchanged(async () => expectError(await w.close(bob.key, offer), "CloseNotAllowed"));
    await unchanged(async () => expectError(await w.close(alice.key, offer, 1n), "RevisionMismatch"));
    const before = await w.mint.balance(alice.token);
    expectOk(await w.close(alice.key, offer));
    expect(await w.mint.balance(alice.token)).toBe(before + 4n * UNIT);
    const o = await w.offer(offer);
    expect(o).toMatchObject({ status: "Closed", revision: 3n, creatorRefunded: 4n * UNIT });
    expect(o.closedAt).toBe(await w.chain.now());
    expectError(await w.close(alice.key, offer), "OfferNotOpen");
    expectError(await w.take(carol, offer, 2n * UNIT), "OfferNotOpen");
  });

  it("lets anyone close after the cutoff", async () => {
    const contract = await w.contract({ cutoffIn: 50n });
    const { offer } = await w.createOffer(alice, contract, { total: 8n * UNIT, target: 10n * UNIT });
    await w.chain.advance(50n);
    const stranger = await w.chain.fundedKeypair();
    expectOk(await w.close(stranger, offer));
  });
});

describe("contracts and settlement", () => {
  it("only the authority creates and resolves; a side wins only after the cutoff; void any time", async () => {
    const contract = await w.contract({ cutoffIn: 100n });
    const mallory = await w.chain.fundedKeypair();
    const ix = await w.client.resolveContract({ authority: mallory.publicKey, contract, result: "sideA" });
    expectError(await w.send([ix], [mallory]), "Unauthorized");
    expectError(await w.resolve(contract, "sideA"), "ResolveBeforeCutoff");
    const bad = await w.client.resolveContract({ authority: w.authority.publicKey, contract, result: 4 });
    expectError(await w.send([bad], [w.authority]), "InvalidResult");
    await w.chain.advance(100n);
    expectOk(await w.resolve(contract, "sideA"));
    expectError(await w.resolve(contract, "sideB"), "ContractNotOpen");
    const c = await w.contractAccount(contract);
    expect(c).toMatchObject({ status: "Resolved", result: "sideA" });
    const now = await w.chain.now();
    const ixc = await w.client.createContract({
      authority: mallory.publicKey,
      payer: mallory.publicKey,
      templateId: crypto.randomUUID(),
      eventId: crypto.randomUUID(),
      cutoffAt: now + 100n,
      resolutionDeadline: now + 200n,
    });
    expectError(await w.send([ixc], [mallory]), "Unauthorized");
    const past = await w.client.createContract({
      authority: w.authority.publicKey,
      payer: w.authority.publicKey,
      templateId: crypto.randomUUID(),
      eventId: crypto.randomUUID(),
      cutoffAt: now - 1n,
      resolutionDeadline: now + 200n,
    });
    expectError(await w.send([past], [w.authority]), "InvalidSchedule");
  });

  it("lets anyone void a contract left unresolved past its deadline, not before", async () => {
    const contract = await w.contract({ cutoffIn: 10n, deadlineAfterCutoff: 100n });
    const ix = await w.client.voidExpiredContract({ contract });
    expectError(await w.send([ix]), "DeadlineNotPassed");
    // The same transaction after the clock moved runs again (a new blockhash), it is not a replay.
    await w.chain.advance(1n);
    expectError(await w.send([ix]), "DeadlineNotPassed");
    await w.chain.advance(110n);
    expectOk(await w.send([await w.client.voidExpiredContract({ contract })]));
    expect((await w.contractAccount(contract)).status).toBe("Voided");
  });

  it("pays the settlement table to the micro-unit for creator win, taker win and void", async () => {
    for (const [result, creatorSide] of [
      ["sideA", "sideA"],
      ["sideB", "sideA"],
      ["void", "sideA"],
    ] as const) {
      const contract = await w.contract({ cutoffIn: 100n });
      const { offer } = await w.createOffer(alice, contract, { side: creatorSide, total: 7n * UNIT + 3n, target: 9n * UNIT + 1n, minTake: UNIT });
      expectOk(await w.take(bob, offer, 3n * UNIT + 7n));
      expectOk(await w.take(carol, offer, 6n * UNIT - 6n));
      const o = await w.offer(offer);
      expect(o.status).toBe("Filled");
      expect(o.creatorAllocated).toBe(o.creatorTotal);
      const pb = await w.position(w.positionOf(offer, bob));
      const pc = await w.position(w.positionOf(offer, carol));
      expect(pb.creatorMatched).toBe(((3n * UNIT + 7n) * (7n * UNIT + 3n)) / (9n * UNIT + 1n));
      expect(pc.creatorMatched).toBe(7n * UNIT + 3n - pb.creatorMatched);
      expectError(await w.settle(w.positionOf(offer, bob)), "ContractNotResolved");
      await w.chain.advance(100n);
      expectOk(await w.resolve(contract, result));
      for (const [u, p] of [
        [bob, pb],
        [carol, pc],
      ] as const) {
        const [a0, u0, t0] = [await w.mint.balance(alice.token), await w.mint.balance(u.token), await w.mint.balance(w.treasury)];
        expectOk(await w.settle(w.positionOf(offer, u)));
        const [a1, u1, t1] = [await w.mint.balance(alice.token), await w.mint.balance(u.token), await w.mint.balance(w.treasury)];
        if (result === "void") {
          expect([a1 - a0, u1 - u0, t1 - t0]).toEqual([p.creatorMatched, p.takerAmount, 0n]);
        } else if (result === creatorSide) {
          const fee = (1000n * p.takerAmount) / 10_000n;
          expect([a1 - a0, u1 - u0, t1 - t0]).toEqual([p.creatorMatched + p.takerAmount - fee, 0n, fee]);
        } else {
          const fee = (1000n * p.creatorMatched) / 10_000n;
          expect([a1 - a0, u1 - u0, t1 - t0]).toEqual([0n, p.takerAmount + p.creatorMatched - fee, fee]);
        }
        expectError(await w.settle(w.positionOf(offer, u)), "PositionAlreadySettled");
      }
      const status = { sideA: "SettledCreatorWin", sideB: "SettledTakerWin", void: "Refunded" }[result];
      expect((await w.position(w.positionOf(offer, bob))).status).toBe(status);
      expect((await w.offer(offer)).status).toBe("Settled");
      expect(await w.offer(offer)).toMatchObject({ settledPositionCount: 2, positionCount: 2 });
    }
  });

  it("settles only after the offer is filled or closed", async () => {
    const contract = await w.contract({ cutoffIn: 100n });
    const { offer } = await w.createOffer(alice, contract, { total: 8n * UNIT, target: 10n * UNIT });
    expectOk(await w.take(bob, offer, 5n * UNIT));
    await w.chain.advance(100n);
    expectOk(await w.resolve(contract, "sideB"));
    expectError(await w.settle(w.positionOf(offer, bob)), "OfferStillOpen");
    expectOk(await w.close(carol.key, offer));
    expectOk(await w.settle(w.positionOf(offer, bob)));
  });

  it("returns rent of settled positions and finished offers to the payer, and only then", async () => {
    const contract = await w.contract({ cutoffIn: 100n });
    const { offer } = await w.createOffer(alice, contract, { total: 5n * UNIT, target: 5n * UNIT });
    expectOk(await w.take(bob, offer, 5n * UNIT));
    const position = w.positionOf(offer, bob);
    const payer = w.chain.payer.publicKey;
    expectError(await w.send([await w.client.closePosition({ position, rentPayer: payer })]), "PositionNotSettled");
    expectError(await w.send([await w.client.closeOfferAccount({ offer, rentPayer: payer, contract })]), "OfferNotFinished");
    await w.chain.advance(100n);
    expectOk(await w.resolve(contract, "sideA"));
    expectOk(await w.settle(position));
    const stranger = await w.chain.fundedKeypair();
    expectError(await w.send([await w.client.closePosition({ position, rentPayer: stranger.publicKey })]), "AccountMismatch");
    expectError(await w.send([await w.client.closeOfferAccount({ offer, rentPayer: stranger.publicKey, contract })]), "AccountMismatch");
    expectError(await w.send([await w.client.closeOfferAccount({ offer, rentPayer: payer, contract: await w.contract() })]), "AccountMismatch");
    const rent = (await w.chain.account(position))!.lamports + (await w.chain.account(offer))!.lamports;
    const before = await w.chain.lamports(payer);
    expectOk(
      await w.send([await w.client.closePosition({ position, rentPayer: payer }), await w.client.closeOfferAccount({ offer, rentPayer: payer, contract })]),
    );
    expect(await w.chain.account(position)).toBeNull();
    expect(await w.chain.account(offer)).toBeNull();
    expect((await w.chain.lamports(payer)) - before).toBe(BigInt(rent) - 5000n); // minus the tx fee
  });

  it("keeps a closed offer without positions until its contract is resolved or voided", async () => {
    const contract = await w.contract();
    const { offer } = await w.createOffer(alice, contract, { total: 5n * UNIT, target: 5n * UNIT });
    expectOk(await w.close(alice.key, offer));
    expectError(await w.closeOfferAccount(offer), "ContractNotResolved");
    expectOk(await w.resolve(contract, "void"));
    expectOk(await w.closeOfferAccount(offer));
    expect(await w.chain.account(offer)).toBeNull();
  });
});

describe("config", () => {
  it("only the authority updates settings; inconsistent settings are refused; offers keep their fee", async () => {
    const contract = await w.contract();
    const { offer } = await w.createOffer(alice, contract, { total: 5n * UNIT, target: 5n * UNIT });
    const mallory = Keypair.generate();
    const bad = await w.client.updateConfig({ authority: mallory.publicKey, feeBps: 0, offersEnabled: true, limits: LAUNCH_LIMITS });
    expectError(await w.send([bad], [mallory]), "Unauthorized");
    for (const [feeBps, limits] of [
      [10_001, LAUNCH_LIMITS],
      [100, { ...LAUNCH_LIMITS, minimumOddsDenominator: 0n }],
      [100, { ...LAUNCH_LIMITS, minimumCreatorMicros: 600n * UNIT }],
      [100, { ...LAUNCH_LIMITS, minimumOddsNumerator: 20n, minimumOddsDenominator: 1n }],
    ] as const) {
      const ix = await w.client.updateConfig({ authority: w.authority.publicKey, feeBps, offersEnabled: true, limits });
      expectError(await w.send([ix], [w.authority]), "InvalidConfig");
    }
    const ix = await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: 500, offersEnabled: true, limits: LAUNCH_LIMITS });
    expectOk(await w.send([ix], [w.authority]));
    expect((await w.config()).feeBps).toBe(500);
    expect((await w.offer(offer)).feeBps).toBe(LAUNCH_FEE_BPS);
    const back = await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: LAUNCH_FEE_BPS, offersEnabled: true, limits: LAUNCH_LIMITS });
    expectOk(await w.send([back], [w.authority]));
  });
});
