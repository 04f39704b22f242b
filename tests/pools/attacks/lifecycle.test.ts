/**
 * Closing, revival and replays (programs/SECURITY.md, "closing and revival"): a settled, closed
 * or withdrawn account never comes back, nothing is paid twice, steps out of order are refused.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { UNIT } from "../../../harness/pools-world";
import { expectOk } from "../../support/expect";
import { setUp, alice, bob, carol, expectError, pickIx, poolWith, refundIx, rejected, settleIx, snapshot, w } from "./scene";

beforeAll(setUp);

describe("pools: closing, revival and replays", () => {
  it("settle, refund and vote replayed after they happened", async () => {
    const now = await w.chain.now();
    const { pool } = await w.createPool(carol, { closesAt: now + 10n });
    expectOk(await w.pick(alice, pool, 0, 3n * UNIT));
    expectOk(await w.pick(bob, pool, 1, UNIT));
    await w.chain.setTime(now + 10n);
    expectOk(await w.propose(carol.key, pool, 0));
    expectOk(await w.vote(alice, pool, 0));
    const vote = await w.pool(pool);
    await rejected(w.client.castVote({ voter: alice.key.publicKey, pool, outcome: 1 }), [alice.key], "AlreadyVoted");
    expect(await w.pool(pool)).toEqual(vote);
    expectOk(await w.send([await settleIx(bob)]));
    await rejected(settleIx(bob), [], "AlreadySettled");
    expectOk(await w.send([await refundIx(bob)]));
    await rejected(refundIx(bob), [], "AlreadySettled");
  });

  it("the identical signed transaction sent twice is processed once (runtime's duplicate check)", async () => {
    const { Transaction } = await import("@solana/web3.js");
    const tx = new Transaction();
    tx.feePayer = w.chain.payer.publicKey;
    tx.recentBlockhash = await w.chain.engine.blockhash();
    tx.add(await pickIx(alice, { amount: 1n }));
    tx.sign(w.chain.payer, alice.key);
    const first = await w.chain.engine.process(tx);
    expect(first.error).toBeNull();
    const before = await snapshot();
    const again = await w.chain.engine.process(tx);
    expect(again.error).not.toBeNull();
    expect(await snapshot()).toEqual(before);
  });

  it("closing and revival: a withdrawn claim starts again from zero and cannot be withdrawn again", async () => {
    const c = await w.user(3n * UNIT);
    const [p1, p2] = [await poolWith(carol, [[c, 0, UNIT]]), await poolWith(carol, [[c, 1, 2n * UNIT]])];
    for (const p of [p1, p2]) expectOk(await w.cancel(carol.key, p));
    await w.closeTokenAccount(c);
    expectOk(await w.refund(p1, c.key.publicKey));
    const dest = await w.mint.account(c.key.publicKey);
    expectOk(await w.withdrawClaim(c, dest));
    expectError(await w.withdrawClaim(c, dest), "WrongAccountOwner");
    // Zeroed and given back to the system program: a new credit creates a fresh claim.
    expectOk(await w.refund(p2, c.key.publicKey));
    expect((await w.claim(c.key.publicKey))!.amount).toBe(2n * UNIT);
    expectOk(await w.withdrawClaim(c, dest));
    expect(await w.mint.balance(dest)).toBe(3n * UNIT);
  });
});
