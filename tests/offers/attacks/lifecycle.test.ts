/**
 * Closing, revival and replays (programs/SECURITY.md, "closing and revival"): a settled, closed
 * or withdrawn account never comes back, nothing is paid twice, steps out of order are refused.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { UNIT } from "../../../harness/offers-world";
import { expectError, expectOk } from "../../support/expect";
import { setUp, alice, bob, carol, ledger, mallory, refused, users, w } from "./scene";

beforeAll(setUp);

describe("offers: closing, revival and replays", () => {
  it("settling before resolution, twice after it, and a late take are refused", async () => {
    const c = await w.contract({ cutoffIn: 100n });
    const { offer: o2 } = await w.createOffer(alice, c, { total: 10n * UNIT, target: 10n * UNIT });
    expectOk(await w.take(bob, o2, 10n * UNIT));
    const pos = w.positionOf(o2, bob);
    const before = await w.balances();
    expectError(await w.settle(pos), "ContractNotResolved");
    expect(await w.balances()).toEqual(before);
    await w.chain.advance(100n);
    expectError(await w.take(mallory, o2, 1n), "CutoffPassed");
    expectOk(await w.resolve(c, "sideB"));
    expectOk(await w.settle(pos));
    const after = await w.balances();
    expectError(await w.settle(pos), "PositionAlreadySettled");
    // The same settle again, packed twice into one transaction, is refused as a whole.
    const p = await w.position(pos);
    const ix = await w.client.settlePosition({
      contract: c,
      offer: o2,
      position: pos,
      creatorToken: alice.token,
      takerToken: p.takerToken,
      treasury: w.treasury,
    });
    expect((await w.send([ix, ix])).ok).toBe(false);
    expect(await w.balances()).toEqual(after);
  });

  it("a closed offer cannot come back", async () => {
    const contract = await w.contract({ cutoffIn: 100n });
    const nonce = w.nextNonce();
    const { offer } = await w.createOffer(alice, contract, { total: 10n * UNIT, target: 10n * UNIT, nonce });
    expectOk(await w.take(bob, offer, 4n * UNIT));
    const emptyNonce = w.nextNonce();
    const { offer: empty } = await w.createOffer(alice, contract, { total: 5n * UNIT, target: 5n * UNIT, nonce: emptyNonce });
    expectOk(await w.close(alice.key, empty));
    // Before the contract is resolved: not even a closed offer without positions.
    await refused(w.client.closeOfferAccount({ offer: empty, rentPayer: w.chain.payer.publicKey, contract }), [], "ContractNotResolved");
    await refused(w.client.closeOfferAccount({ offer, rentPayer: w.chain.payer.publicKey, contract }), [], "OfferNotFinished");
    expect(await w.chain.account(empty)).not.toBeNull();
    // Resolution, settlement, rent reclaim.
    await w.chain.advance(100n);
    expectOk(await w.resolve(contract, "sideA"));
    expectOk(await w.close(carol.key, offer));
    const position = w.positionOf(offer, bob);
    expectOk(await w.settle(position));
    expectOk(await w.send([await w.client.closePosition({ position, rentPayer: w.chain.payer.publicKey })]));
    expectOk(await w.closeOfferAccount(offer));
    expectOk(await w.closeOfferAccount(empty));
    expect(await w.chain.account(offer)).toBeNull();
    // The same creator and nonce on the same contract: the address is free again, but the
    // contract never takes offers again.
    for (const n of [nonce, emptyNonce]) {
      const before = await ledger();
      const { r, offer: again } = await w.createOffer(alice, contract, { total: 10n * UNIT, target: 10n * UNIT, nonce: n });
      expectError(r, "ContractNotOpen");
      expect(await w.chain.account(again)).toBeNull();
      expect(await ledger()).toEqual(before);
    }
    // The same nonce on another contract is another address.
    expect(w.client.pda.offer(await w.contract(), alice.key.publicKey, nonce)[0].equals(offer)).toBe(false);
    // A take on the settled (and closed) position of the gone offer.
    await refused(w.takeIx(bob, offer, UNIT, { contract, expectedRevision: 3n }), [bob.key], "WrongAccountOwner");

    // take_offer itself refuses a position that is not open. Unreachable through the program
    // (positions settle only once their offer can no longer be taken), so the state is planted.
    const open = await w.contract({ cutoffIn: 10_000n });
    const { offer: o2 } = await w.createOffer(alice, open, { total: 10n * UNIT, target: 10n * UNIT });
    expectOk(await w.take(bob, o2, 2n * UNIT));
    const p2 = w.positionOf(o2, bob);
    const acct = (await w.chain.account(p2))!;
    const data = Buffer.from(acct.data);
    data[8 + 32 * 4 + 16] = 2; // status: SettledTakerWin
    w.chain.setAccount(p2, { ...acct, data });
    expect((await w.position(p2)).status).toBe("SettledTakerWin");
    await refused(w.takeIx(bob, o2, 2n * UNIT, { contract: open, expectedRevision: 2n }), [bob.key], "PositionAlreadySettled");
  });

  it("revival: a closed position / offer account cannot be re-created or re-settled", async () => {
    const [carol, alice] = await users(2);
    const contract = await w.contract({ cutoffIn: 100n });
    const nonce = w.nextNonce();
    const { offer } = await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT, nonce });
    expectOk(await w.take(alice, offer, 10n * UNIT));
    const position = w.positionOf(offer, alice);
    await w.chain.advance(101n);
    expectOk(await w.resolve(contract, "sideA"));
    expectOk(await w.settle(position));
    const p = await w.position(position);
    expectOk(await w.send([await w.client.closePosition({ position, rentPayer: p.rentPayer })]));
    expectOk(await w.closeOfferAccount(offer));
    // Settling or taking again, and re-creating the offer at the same address, all fail.
    const take = await w.takeIx(alice, offer, UNIT, { contract, expectedRevision: 1n });
    expectError(await w.send([take], [alice.key]), "WrongAccountOwner");
    expectError((await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT, nonce })).r, "ContractNotOpen");
  });
});
