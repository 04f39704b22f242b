/**
 * Buying the result (programs/SECURITY.md, #15.3): stake never decides a pool; the creator
 * proposes, a dispute escalates to the authority, deadlines end in escalation or refunds.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AUTHORITY_DEADLINE_SECONDS, PROPOSAL_DEADLINE_SECONDS } from "../../../idl/client/pools";
import { PublicKey } from "@solana/web3.js";
import { UNIT, type User } from "../../../harness/pools-world";
import { expectOk } from "../../support/expect";
import { setUp, alice, bob, carol, cast4, expectError, mallory, payout, poolWith, strangerCancelsAndRefunds, toClose, ui, w } from "./scene";

beforeAll(setUp);

/**
 * The authority decides the escalated `pool` for the truth (outcome 0, three honest stakes of
 * 100) against the whale's 301, and everyone settles: each honest participant wins its share,
 * the whale gets nothing back and the vault pays out the whole 601.
 */
async function truthDecidedAndPaid(pool: PublicKey, honest: User[], whale: User, start: Awaited<ReturnType<typeof w.balances>>) {
  expectOk(await w.authorityResolve(pool, 0));
  for (const u of [...honest, whale]) expectOk(await w.settle(pool, u.key.publicKey));
  const end = await w.balances();
  const each = payout(100n * UNIT, 601n * UNIT, 300n * UNIT);
  for (const h of honest) expect(end.users[ui(h)] - start.users[ui(h)]).toBe(each);
  expect(end.users[ui(whale)]).toBe(start.users[ui(whale)]);
  expect(start.vault - end.vault).toBe(601n * UNIT);
  return { end, each };
}

describe("pools: resolution cannot be bought", () => {
  it("a late whale cannot vote itself the pot", async () => {
    const [h1, h2, h3, whale] = [await w.user(1_000n * UNIT), await w.user(1_000n * UNIT), await w.user(1_000n * UNIT), await w.user(1_000n * UNIT)];
    const honest = [h1, h2, h3];
    // Three honest participants on the truth (0); the whale, last second, 301 on the losing side.
    const pool = await poolWith(
      carol,
      honest.map((h) => [h, 0, 100n * UNIT] as [User, number, bigint]),
    );
    await w.chain.setTime((await w.pool(pool)).closesAt - 1n);
    expectOk(await w.pick(whale, pool, 1, 301n * UNIT));
    await toClose(pool);
    const start = await w.balances();
    expectOk(await w.propose(carol.key, pool, 0));
    expectOk(await w.vote(whale, pool, 1)); // a dispute
    const p = await w.pool(pool);
    expect(p.outcomes[1].voteWeight * 2n > p.totalOi).toBe(true); // an absolute stake majority: the old rule handed it the pot at once
    expectError(await w.resolve(whale.key, pool), "DisputeWindowOpen");
    expectError(await w.authorityResolve(pool, 1, whale.key), "Unauthorized");
    expectError(await w.cancel(whale.key, pool), "CancelNotAllowed");
    await w.chain.advance(86_400n);
    expectOk(await w.resolve(whale.key, pool));
    expect(await w.pool(pool)).toMatchObject({ state: "RESOLVING", escalated: true, winningOutcome: null });
    const { end, each } = await truthDecidedAndPaid(pool, honest, whale, start);
    expect(end.users[ui(whale)]).toBe(1_000n * UNIT - 301n * UNIT);
    expect(end.treasury - start.treasury).toBe(601n * UNIT - 3n * each);
    expect((await w.pool(pool)).state).toBe("DISTRIBUTED");
  });

  it("a late whale cannot vote itself the pot: the whale creates the pool and proposes its own outcome, one honest dispute is enough", async () => {
    const [h1, h2, h3, whale] = [await w.user(1_000n * UNIT), await w.user(1_000n * UNIT), await w.user(1_000n * UNIT), await w.user(1_000n * UNIT)];
    const honest = [h1, h2, h3];
    const pool = await poolWith(whale, [...honest.map((h) => [h, 0, 100n * UNIT] as [User, number, bigint]), [whale, 1, 301n * UNIT]]);
    await toClose(pool);
    const start = await w.balances();
    expectError(await w.cancel(whale.key, pool), "CancelNotAllowed"); // picks are closed: no escape by canceling
    expectOk(await w.propose(whale.key, pool, 1)); // false
    expectOk(await w.vote(whale, pool, 1));
    expectOk(await w.vote(h1, pool, 0)); // one dispute, 100 against 301
    await w.chain.advance(86_400n);
    expectOk(await w.resolve(bob.key, pool));
    expect(await w.pool(pool)).toMatchObject({ state: "RESOLVING", escalated: true, proposedOutcome: 1, disputeCount: 1 });
    expectError(await w.settle(pool, whale.key.publicKey), "NotResolved");
    await truthDecidedAndPaid(pool, honest, whale, start);
  });

  it("a creator who never proposes cannot hold the pot: after 72 h anyone escalates and the authority decides", async () => {
    const pool = await poolWith(carol, [
      [alice, 0, 10n * UNIT],
      [bob, 1, 20n * UNIT],
    ]);
    const closesAt = (await w.pool(pool)).closesAt;
    await w.chain.setTime(closesAt + 259_199n);
    expectError(await w.resolve(mallory.key, pool), "ProposalDeadlineNotPassed");
    await w.chain.setTime(closesAt + 259_200n);
    expectError(await w.propose(carol.key, pool, 1), "ProposalDeadlinePassed");
    expectOk(await w.resolve(mallory.key, pool));
    expect(await w.pool(pool)).toMatchObject({ state: "RESOLVING", escalated: true, proposedOutcome: null });
    expectOk(await w.authorityResolve(pool, 0));
    const start = await w.balances();
    expectOk(await w.settle(pool, alice.key.publicKey));
    expectOk(await w.settle(pool, bob.key.publicKey));
    const end = await w.balances();
    expect(end.users[ui(alice)] - start.users[ui(alice)]).toBe(payout(10n * UNIT, 30n * UNIT, 10n * UNIT));
    expect(end.users[ui(bob)]).toBe(start.users[ui(bob)]);
    expect(start.vault - end.vault).toBe(30n * UNIT);
  });

  it("an escalation unanswered for 7 days: anyone cancels and every stake is refunded", async () => {
    const pool = await poolWith(carol, [
      [alice, 0, 10n * UNIT],
      [bob, 1, 20n * UNIT],
    ]);
    await toClose(pool);
    expectOk(await w.propose(carol.key, pool, 1));
    expectOk(await w.vote(alice, pool, 0));
    await w.chain.advance(86_400n);
    expectOk(await w.resolve(mallory.key, pool));
    await w.chain.advance(604_799n);
    expectError(await w.cancel(mallory.key, pool), "EscalationPending");
    await w.chain.advance(1n);
    expectError(await w.authorityResolve(pool, 1), "AuthorityDeadlinePassed");
    const { start, end } = await strangerCancelsAndRefunds(pool);
    expect(end.treasury).toBe(start.treasury);
  });

  it("vote spoofing: voting with another user's participant record, or twice, is refused", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, UNIT));
    expectOk(await w.pick(mallory, pool, 1, UNIT));
    await w.chain.advance(101n);
    expectOk(await w.propose(carol.key, pool, 0));
    const ix = await w.client.castVote({ voter: bob.key.publicKey, pool, outcome: 1, participant: w.participantOf(pool, alice.key.publicKey) });
    expectError(await w.send([ix], [bob.key]), "NotParticipant");
    expectOk(await w.vote(mallory, pool, 1));
    expectError(await w.vote(mallory, pool, 1), "AlreadyVoted");
  });

  it("coalition early close: all participants but one voting cannot end the dispute window early", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, UNIT));
    expectOk(await w.pick(bob, pool, 1, 50n * UNIT));
    expectOk(await w.pick(mallory, pool, 1, 50n * UNIT));
    await w.chain.advance(101n);
    expectOk(await w.propose(carol.key, pool, 1)); // false
    expectOk(await w.vote(bob, pool, 1));
    expectOk(await w.vote(mallory, pool, 1));
    expectError(await w.resolve(mallory.key, pool), "DisputeWindowOpen");
    expectOk(await w.vote(alice, pool, 0)); // the honest dispute
    expectOk(await w.resolve(mallory.key, pool));
    expect((await w.pool(pool)).escalated).toBe(true);
  });

  it("silent creator and silent authority: stakes are never locked (escalate, cancel after 7 days, refund all)", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, 7n * UNIT));
    expectOk(await w.pick(bob, pool, 1, 3n * UNIT));
    await w.chain.advance(101n);
    expectError(await w.resolve(mallory.key, pool), "ProposalDeadlineNotPassed");
    await w.chain.advance(PROPOSAL_DEADLINE_SECONDS);
    expectOk(await w.resolve(mallory.key, pool));
    expectError(await w.cancel(mallory.key, pool), "EscalationPending");
    await w.chain.advance(AUTHORITY_DEADLINE_SECONDS);
    expectError(await w.authorityResolve(pool, 0), "AuthorityDeadlinePassed");
    expectOk(await w.cancel(mallory.key, pool));
    const [a0, b0] = [await w.balanceOf(alice.token), await w.balanceOf(bob.token)];
    expectOk(await w.refund(pool, alice.key.publicKey));
    expectOk(await w.refund(pool, bob.key.publicKey));
    expect((await w.balanceOf(alice.token)) - a0).toBe(7n * UNIT);
    expect((await w.balanceOf(bob.token)) - b0).toBe(3n * UNIT);
    expectError(await w.refund(pool, bob.key.publicKey), "AlreadyRefunded");
  });
});
