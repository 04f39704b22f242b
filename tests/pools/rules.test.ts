/** Every transition of a pool and every rejection, each with its named error, through the generated client. */
import { beforeAll, describe, expect, it } from "vitest";
import { PublicKey } from "@solana/web3.js";
import { PoolsWorld, UNIT, type User } from "../../harness/pools-world";
import { expectError as expectErr, expectOk } from "../support/expect";
import { POOLS_ERRORS, parsePoolsEvents, poolResolutionAt } from "../../idl/client/pools";
import { pickPayout, poolState, shareBps } from "../../idl/client/pools-rules";
import type { TxResult } from "../../harness/chain";

const expectError = (r: TxResult, name: string) => expectErr(r, name, POOLS_ERRORS);

let w: PoolsWorld;
let creator: User, a: User, b: User, c: User, outsider: User;
beforeAll(async () => {
  w = await PoolsWorld.create({ feeBps: 1000 });
  creator = await w.user();
  [a, b, c, outsider] = [await w.user(), await w.user(), await w.user(), await w.user()];
});

/** A pool with a 10 / b 30 on outcome 0/1 (and c 20 on 2 when three outcomes), moved past close. */
async function pickedPool(opts: { labels?: string[]; closed?: boolean } = {}): Promise<PublicKey> {
  const { r, pool } = await w.createPool(creator, { labels: opts.labels });
  expectOk(r);
  expectOk(await w.pick(a, pool, 0, 10n * UNIT));
  expectOk(await w.pick(b, pool, 1, 30n * UNIT));
  if (opts.labels && opts.labels.length > 2) expectOk(await w.pick(c, pool, 2, 20n * UNIT));
  if (opts.closed !== false) await w.chain.setTime((await w.pool(pool)).closesAt);
  return pool;
}

describe("create", () => {
  it("two-outcome pool is version 3 with default labels For / Against", async () => {
    const { r, pool } = await w.createPool(creator, {
      criteria: "Met office report",
      coverUrl: "https://img.example/a.png",
      resolutionAt: (await w.chain.now()) + 7_200n,
    });
    expectOk(r);
    const p = await w.pool(pool);
    expect(p.version).toBe(3);
    expect(p.state).toBe("OPEN");
    expect(p.outcomes.map((o) => o.label)).toEqual(["For", "Against"]);
    expect(p.criteria).toBe("Met office report");
    expect(p.coverUrl).toBe("https://img.example/a.png");
    expect(p.feeBps).toBe(1000);
    expect(p.winningOutcome).toBeNull();
    expect(parsePoolsEvents(r.logs).map((e) => e.name)).toEqual(["poolStateChanged"]);
  });
  it("custom labels on two outcomes (version 3) and 8 outcomes (version 4)", async () => {
    const two = await w.createPool(creator, { labels: ["Yes", "No"] });
    expectOk(two.r);
    expect((await w.pool(two.pool)).outcomes.map((o) => o.label)).toEqual(["Yes", "No"]);
    const labels = ["A", "B", "C", "D", "E", "F", "G", "Ünïcødé ✓"];
    const many = await w.createPool(creator, { labels });
    expectOk(many.r);
    const p = await w.pool(many.pool);
    expect(p.version).toBe(4);
    expect(p.outcomes.map((o) => o.label)).toEqual(labels);
  });
  it("rejects every limit with its named error", async () => {
    const now = await w.chain.now();
    expectError((await w.createPool(creator, { question: "" })).r, "QuestionEmpty");
    expectError((await w.createPool(creator, { question: "q".repeat(161) })).r, "QuestionTooLong");
    expectOk((await w.createPool(creator, { question: "q".repeat(160) })).r);
    expectError((await w.createPool(creator, { criteria: "c".repeat(281) })).r, "CriteriaTooLong");
    expectError((await w.createPool(creator, { coverUrl: "u".repeat(129) })).r, "CoverUrlTooLong");
    expectError((await w.createPool(creator, { labels: ["x".repeat(25), "y"] })).r, "LabelTooLong");
    expectError((await w.createPool(creator, { labels: ["Yes", ""] })).r, "LabelEmpty");
    expectError((await w.createPool(creator, { labels: ["A", "B", ""] })).r, "LabelEmpty");
    expectError((await w.createPool(creator, { labels: ["only"] })).r, "InvalidOutcomeCount");
    expectError((await w.createPool(creator, { labels: ["1", "2", "3", "4", "5", "6", "7", "8", "9"] })).r, "InvalidOutcomeCount");
    expectError((await w.createPool(creator, { question: "\u00e9", rawLens: { question: 1 } })).r, "InvalidText");
    expectError((await w.createPool(creator, { closesAt: now })).r, "ClosesAtInPast");
    expectError((await w.createPool(creator, { closesAt: now + 100n, resolutionAt: now + 99n })).r, "InvalidResolutionTime");
  });
  it("a replayed create (same creator and nonce) cannot make a second pool", async () => {
    const { r } = await w.createPool(creator, { nonce: 9_999n });
    expectOk(r);
    expectError((await w.createPool(creator, { nonce: 9_999n, question: "another" })).r, "AlreadyInitialized");
  });
});

describe("picks", () => {
  it("add to one outcome; distinct participants counted once; shares in bps", async () => {
    const { pool } = await w.createPool(creator, { labels: ["A", "B", "C"] });
    const before = await w.balances();
    expectOk(await w.pick(a, pool, 0, 10n * UNIT));
    expectOk(await w.pick(a, pool, 0, 5n * UNIT));
    expectOk(await w.pick(a, pool, 2, 5n * UNIT));
    const r = await w.pick(b, pool, 1, 10n * UNIT);
    expectOk(r);
    const ev = parsePoolsEvents(r.logs)[0];
    expect(ev.name).toBe("pickPlaced");
    expect(ev.data.participantCount).toBe(2);
    const p = await w.pool(pool);
    expect(p.outcomes.map((o) => o.totalOi)).toEqual([15n * UNIT, 10n * UNIT, 5n * UNIT]);
    expect(p.outcomes.map((o) => o.wagerCount)).toEqual([2, 1, 1]);
    expect(p.totalOi).toBe(30n * UNIT);
    expect(p.participantCount).toBe(2);
    // 15:10:5 floors to 5000 + 3333 + 1666; the bps left goes to the largest remainder (2/3 of 5).
    expect(shareBps(p.outcomes.map((o) => o.totalOi))).toEqual([5000, 3333, 1667]);
    const pa = await w.participant(w.participantOf(pool, a.key.publicKey));
    expect(pa.stakes.slice(0, 3)).toEqual([15n * UNIT, 0n, 5n * UNIT]);
    expect(pa.pickCount).toBe(3);
    const after = await w.balances();
    expect(after.vault - before.vault).toBe(30n * UNIT);
    expect(after.total).toBe(before.total);
  });
  it("rejects bad picks with named errors, funds unchanged", async () => {
    const { pool } = await w.createPool(creator, { closesIn: 100n });
    const before = await w.balances();
    expectError(await w.pick(a, pool, 2, UNIT), "InvalidOutcome");
    expectError(await w.pick(a, pool, 0, 0n), "ZeroAmount");
    expectError(await w.pick(a, pool, 0, 10_000n * UNIT), "InsufficientBalance");
    const other = await w.mint.account(b.key.publicKey, 5n * UNIT);
    const ix = await w.client.placePick({ payer: w.chain.payer.publicKey, user: a.key.publicKey, userToken: other, pool, outcome: 0, amount: UNIT });
    expectError(await w.send([ix], [a.key]), "NotTokenOwner");
    await w.chain.advance(100n);
    const locked = await w.pool(pool);
    expect(poolState(locked.state, locked.closesAt, await w.chain.now())).toBe("LOCKED");
    expectError(await w.pick(a, pool, 0, UNIT), "PoolClosed");
    expect((await w.balances()).vault).toBe(before.vault);
  });
});

describe("propose, dispute and resolve", () => {
  it("propose: only the creator, after the close and the resolution time, within 72 h of the later, with a participant and a valid outcome", async () => {
    const now = await w.chain.now();
    const { pool } = await w.createPool(creator, { closesAt: now + 100n, resolutionAt: now + 200n });
    expectOk(await w.pick(a, pool, 0, UNIT));
    expect(poolResolutionAt(await w.pool(pool), now)).toBe("picks-open");
    expect(poolResolutionAt(await w.pool(pool), now + 200n)).toBe("awaiting-proposal");
    expect(poolResolutionAt(await w.pool(pool), now + 200n + 259_200n)).toBe("escalatable");
    expectError(await w.propose(outsider.key, pool, 0), "NotCreator");
    expectError(await w.propose(creator.key, pool, 0), "PoolStillOpen");
    await w.chain.setTime(now + 100n);
    expectError(await w.propose(creator.key, pool, 0), "ResolutionTimeNotReached");
    await w.chain.setTime(now + 200n);
    expectError(await w.propose(a.key, pool, 0), "NotCreator");
    expectError(await w.propose(creator.key, pool, 2), "InvalidOutcome");
    const r = await w.propose(creator.key, pool, 1);
    expectOk(r);
    expect(parsePoolsEvents(r.logs).map((e) => [e.name, e.data.outcome ?? e.data.state])).toEqual([
      ["outcomeProposed", 1],
      ["poolStateChanged", 1],
    ]);
    const p = await w.pool(pool);
    expect([p.state, p.proposedOutcome, p.voteEndsAt, p.escalated, p.winningOutcome]).toEqual(["RESOLVING", 1, now + 200n + 86_400n, false, null]);
    expect(poolState(p.state, p.closesAt, now + 200n)).toBe("RESOLVING");
    expect([poolResolutionAt(p, now + 200n), poolResolutionAt(p, now + 200n + 86_400n)]).toEqual(["dispute-window", "resolvable"]);
    expectError(await w.propose(creator.key, pool, 0), "AlreadyProposed");
    expectError(await w.pick(a, pool, 0, UNIT), "PoolNotOpen");
    const empty = await w.createPool(creator, { closesIn: 10n });
    await w.chain.advance(10n);
    expectError(await w.propose(creator.key, empty.pool, 0), "NoParticipants");
    // The 72 h count from the later of closesAt and resolutionAt.
    const t = await w.chain.now();
    const late = await w.createPool(creator, { closesAt: t + 10n, resolutionAt: t + 1_000n });
    expectOk(await w.pick(a, late.pool, 0, UNIT));
    await w.chain.setTime(t + 1_000n + 259_200n);
    expectError(await w.propose(creator.key, late.pool, 0), "ProposalDeadlinePassed");
    await w.chain.setTime(t + 1_000n + 259_199n);
    expectOk(await w.propose(creator.key, late.pool, 0));
  });
  it("vote: non-participant, double vote, bad outcome, before RESOLVING, after the window; a vote for another outcome is a dispute", async () => {
    const pool = await pickedPool({ labels: ["A", "B", "C"], closed: false });
    expectError(await w.vote(a, pool, 0), "NotResolving");
    await w.chain.setTime((await w.pool(pool)).closesAt);
    expectOk(await w.propose(creator.key, pool, 1));
    expectError(await w.vote(outsider, pool, 0), "NotParticipant");
    // someone else's participant record
    const ix = await w.client.castVote({ voter: outsider.key.publicKey, pool, outcome: 0, participant: w.participantOf(pool, a.key.publicKey) });
    expectError(await w.send([ix], [outsider.key]), "NotParticipant");
    expectError(await w.vote(a, pool, 5), "InvalidOutcome");
    const r = await w.vote(a, pool, 0);
    expectOk(r);
    expect(parsePoolsEvents(r.logs)[0].data).toMatchObject({ outcome: 0, dispute: 1, weight: 10n * UNIT });
    expectError(await w.vote(a, pool, 1), "AlreadyVoted");
    const support = await w.vote(b, pool, 1);
    expect(parsePoolsEvents(support.logs)[0].data).toMatchObject({ outcome: 1, dispute: 0, weight: 30n * UNIT });
    const p = await w.pool(pool);
    expect([p.disputeCount, p.voterCount, p.voteWeightTotal, p.outcomes.map((o) => o.voteWeight)]).toEqual([1, 2, 40n * UNIT, [10n * UNIT, 30n * UNIT, 0n]]);
    await w.chain.advance(86_400n);
    expectError(await w.vote(c, pool, 1), "VoteWindowClosed");
  });
  it("an undisputed proposal resolves after the window, or as soon as every participant has voted for it; not before", async () => {
    const pool = await pickedPool();
    expectError(await w.resolve(outsider.key, pool), "ProposalDeadlineNotPassed");
    expectOk(await w.propose(creator.key, pool, 1));
    expectError(await w.resolve(outsider.key, pool), "DisputeWindowOpen");
    expectOk(await w.vote(b, pool, 1));
    expectError(await w.resolve(outsider.key, pool), "DisputeWindowOpen"); // a has not voted yet
    expectOk(await w.vote(a, pool, 1)); // the loser concedes: every participant has voted
    const r = await w.resolve(outsider.key, pool);
    expectOk(r);
    expect(parsePoolsEvents(r.logs).map((e) => [e.name, e.data.state, e.data.winningOutcome])).toEqual([["poolStateChanged", 2, 1]]);
    const p = await w.pool(pool);
    expect([p.state, p.winningOutcome, p.escalated]).toEqual(["RESOLVED", 1, false]);
    expectError(await w.resolve(outsider.key, pool), "AlreadyResolved");
    expectError(await w.cancel(creator.key, pool), "AlreadyResolved");
    expectError(await w.authorityResolve(pool, 0), "NotEscalated");
    expectError(await w.refund(pool, a.key.publicKey), "NotCanceled");

    const quiet = await pickedPool();
    expectOk(await w.propose(creator.key, quiet, 0)); // nobody votes: the proposal stands after 24 h
    await w.chain.advance(86_399n);
    expectError(await w.resolve(outsider.key, quiet), "DisputeWindowOpen");
    await w.chain.advance(1n);
    expectOk(await w.resolve(outsider.key, quiet));
    expect((await w.pool(quiet)).winningOutcome).toBe(0);
  });
  it("a disputed proposal is escalated, whatever the stake behind it; only the config's authority decides", async () => {
    const pool = await pickedPool();
    expectOk(await w.propose(creator.key, pool, 1));
    expectOk(await w.vote(b, pool, 1)); // 30 of 40 support
    expectOk(await w.vote(a, pool, 0)); // 10 dispute
    expectOk(await w.resolve(outsider.key, pool)); // every participant voted: decided now
    const at = await w.chain.now();
    let p = await w.pool(pool);
    expect([p.state, p.escalated, p.escalatedAt, p.proposedOutcome, p.winningOutcome]).toEqual(["RESOLVING", true, at, 1, null]);
    expect(poolState(p.state, p.closesAt, at)).toBe("RESOLVING");
    expect([poolResolutionAt(p, at), poolResolutionAt(p, at + 604_800n)]).toEqual(["awaiting-authority", "cancelable"]);
    expectError(await w.resolve(outsider.key, pool), "EscalationPending");
    expectError(await w.propose(creator.key, pool, 0), "AlreadyProposed");
    expectError(await w.cancel(outsider.key, pool), "EscalationPending");
    expectError(await w.cancel(creator.key, pool), "EscalationPending");
    expectError(await w.authorityResolve(pool, 0, outsider.key), "Unauthorized");
    expectError(await w.authorityResolve(pool, 0, creator.key), "Unauthorized");
    expectError(await w.authorityResolve(pool, 2), "InvalidOutcome");
    const r = await w.authorityResolve(pool, 0);
    expectOk(r);
    expect(parsePoolsEvents(r.logs)[0].data).toMatchObject({ state: 2, winningOutcome: 0 });
    p = await w.pool(pool);
    expect([p.state, p.winningOutcome, poolResolutionAt(p, at)]).toEqual(["RESOLVED", 0, "final"]);
    expectError(await w.authorityResolve(pool, 1), "NotEscalated");
    const before = await w.balances();
    expectOk(await w.settle(pool, a.key.publicKey));
    expectOk(await w.settle(pool, b.key.publicKey));
    const after = await w.balances();
    const fee = (30n * UNIT * 1000n) / 10_000n;
    expect(after.users[w.users.indexOf(a)] - before.users[w.users.indexOf(a)]).toBe(40n * UNIT - fee);
    expect(after.users[w.users.indexOf(b)]).toBe(before.users[w.users.indexOf(b)]);
    expect(after.treasury - before.treasury).toBe(fee);
  });
  it("the authority may cancel an escalated pool (255): every stake is refunded, no fee", async () => {
    const pool = await pickedPool();
    expectOk(await w.propose(creator.key, pool, 0));
    expectOk(await w.vote(b, pool, 1));
    await w.chain.advance(86_400n);
    expectOk(await w.resolve(outsider.key, pool));
    expectOk(await w.authorityResolve(pool, 255));
    expect((await w.pool(pool)).state).toBe("CANCELED");
    const before = await w.balances();
    expectOk(await w.refund(pool, a.key.publicKey));
    expectOk(await w.refund(pool, b.key.publicKey));
    const after = await w.balances();
    expect(before.vault - after.vault).toBe(40n * UNIT);
    expect(after.treasury).toBe(before.treasury);
    expect((await w.pool(pool)).state).toBe("REFUNDED");
  });
  it("nobody proposes within 72 h: anyone escalates the pool; the authority decides", async () => {
    const pool = await pickedPool();
    const closesAt = (await w.pool(pool)).closesAt;
    await w.chain.setTime(closesAt + 259_199n);
    expectError(await w.resolve(outsider.key, pool), "ProposalDeadlineNotPassed");
    expectError(await w.authorityResolve(pool, 1), "NotEscalated");
    await w.chain.setTime(closesAt + 259_200n);
    const r = await w.resolve(outsider.key, pool);
    expectOk(r);
    expect(parsePoolsEvents(r.logs).map((e) => e.name)).toEqual(["poolEscalated", "poolStateChanged"]);
    const p = await w.pool(pool);
    expect([p.state, p.escalated, p.proposedOutcome, p.voteEndsAt]).toEqual(["RESOLVING", true, null, 0n]);
    expectError(await w.vote(a, pool, 0), "VoteWindowClosed");
    expectError(await w.propose(creator.key, pool, 1), "AlreadyProposed");
    expectOk(await w.authorityResolve(pool, 1));
    expect((await w.pool(pool)).winningOutcome).toBe(1);
  });
  it("an escalation unanswered for 7 days: the authority can no longer decide, anyone cancels, every stake is refunded", async () => {
    const pool = await pickedPool();
    const closesAt = (await w.pool(pool)).closesAt;
    await w.chain.setTime(closesAt + 259_200n);
    expectOk(await w.resolve(outsider.key, pool));
    await w.chain.advance(604_799n);
    expectError(await w.cancel(outsider.key, pool), "EscalationPending");
    await w.chain.advance(1n);
    expectError(await w.authorityResolve(pool, 1), "AuthorityDeadlinePassed");
    expectOk(await w.cancel(outsider.key, pool));
    const before = await w.balances();
    expectOk(await w.refund(pool, a.key.publicKey));
    expectOk(await w.refund(pool, b.key.publicKey));
    const after = await w.balances();
    expect(after.users[w.users.indexOf(a)] - before.users[w.users.indexOf(a)]).toBe(10n * UNIT);
    expect(after.users[w.users.indexOf(b)] - before.users[w.users.indexOf(b)]).toBe(30n * UNIT);
    expect((await w.pool(pool)).state).toBe("REFUNDED");
  });
});

describe("distribute", () => {
  it("pays pro rata on the winner, fee in bps on winnings only, floor rounding, dust to the treasury; distribute twice rejected", async () => {
    const { pool } = await w.createPool(creator, { labels: ["A", "B", "C"] });
    // winners on B: a 1 unit + 1 micro, b 2 units; losers c 7 units + 2 micros
    expectOk(await w.pick(a, pool, 1, UNIT + 1n));
    expectOk(await w.pick(b, pool, 1, 2n * UNIT));
    expectOk(await w.pick(c, pool, 0, 7n * UNIT + 2n));
    await w.chain.setTime((await w.pool(pool)).closesAt);
    expectOk(await w.propose(creator.key, pool, 1));
    for (const u of [a, b, c]) expectOk(await w.vote(u, pool, 1)); // c, the loser, concedes too
    expectOk(await w.resolve(outsider.key, pool));
    const before = await w.balances();
    const total = 10n * UNIT + 3n,
      winners = 3n * UNIT + 1n;
    const expected = (stake: bigint) => {
      const gross = (stake * total) / winners;
      const fee = ((gross - stake) * 1000n) / 10_000n;
      return { pay: gross - fee, fee };
    };
    // an outsider has no participant record to settle
    const none = await w.client.settleParticipant({
      pool,
      participant: w.participantOf(pool, outsider.key.publicKey),
      user: outsider.key.publicKey,
      userToken: outsider.token,
      treasury: w.treasury,
      payer: w.chain.payer.publicKey,
    });
    expectError(await w.send([none]), "WrongAccountOwner");
    const ra = await w.settle(pool, a.key.publicKey);
    expectOk(ra);
    expectError(await w.settle(pool, a.key.publicKey), "AlreadySettled");
    expectError(await w.refund(pool, a.key.publicKey), "NotCanceled");
    expectOk(await w.settle(pool, b.key.publicKey));
    expect((await w.pool(pool)).state).toBe("RESOLVED");
    expectOk(await w.settle(pool, c.key.publicKey)); // loser: 0, and the last one
    const after = await w.balances();
    const ea = expected(UNIT + 1n),
      eb = expected(2n * UNIT);
    const ui = (u: User) => w.users.indexOf(u);
    expect(after.users[ui(a)] - before.users[ui(a)]).toBe(ea.pay);
    expect(after.users[ui(b)] - before.users[ui(b)]).toBe(eb.pay);
    expect(after.users[ui(c)]).toBe(before.users[ui(c)]);
    // The named rule says the same as the chain, rounding and the loser included.
    const rule = { pot: total, winnerTotal: winners, feeBps: 1000 };
    expect(pickPayout(rule, { stakeOnWinner: UNIT + 1n, total: UNIT + 1n })).toEqual([ea.pay, ea.fee]);
    expect(pickPayout(rule, { stakeOnWinner: 2n * UNIT, total: 2n * UNIT })).toEqual([eb.pay, eb.fee]);
    expect(pickPayout(rule, { stakeOnWinner: 0n, total: 7n * UNIT + 2n })).toEqual([0n, 0n]);
    expect(after.treasury - before.treasury).toBe(total - ea.pay - eb.pay);
    expect(before.vault - after.vault).toBe(total);
    const p = await w.pool(pool);
    expect(p.state).toBe("DISTRIBUTED");
    expect(p.paidOut + p.feesPaid).toBe(total);
    expect((await w.participant(w.participantOf(pool, a.key.publicKey))).fee).toBe(ea.fee);
    expectError(await w.settle(pool, a.key.publicKey), "AlreadyDistributed");
    expectError(await w.cancel(creator.key, pool), "AlreadyResolved");
  });
  it("nobody backed the winner: every stake is refunded, no fee, pool ends REFUNDED", async () => {
    const { pool } = await w.createPool(creator, { labels: ["A", "B", "C"] });
    expectOk(await w.pick(a, pool, 0, 10n * UNIT));
    expectOk(await w.pick(b, pool, 1, 30n * UNIT));
    await w.chain.setTime((await w.pool(pool)).closesAt);
    expectOk(await w.propose(creator.key, pool, 2)); // an outcome nobody picked
    await w.chain.advance(86_400n);
    expectOk(await w.resolve(outsider.key, pool));
    const before = await w.balances();
    expectOk(await w.settle(pool, a.key.publicKey));
    expectOk(await w.settle(pool, b.key.publicKey));
    const after = await w.balances();
    expect(after.treasury).toBe(before.treasury);
    expect(before.vault - after.vault).toBe(40n * UNIT);
    expect((await w.pool(pool)).state).toBe("REFUNDED");
    expect(pickPayout({ pot: 40n * UNIT, winnerTotal: 0n, feeBps: 1000 }, { stakeOnWinner: 0n, total: 10n * UNIT })).toEqual([10n * UNIT, 0n]);
  });
  it("settle before resolution is rejected (NotResolved)", async () => {
    const pool = await pickedPool();
    expectError(await w.settle(pool, a.key.publicKey), "NotResolved");
  });
});

describe("cancel and refund", () => {
  it("creator cancels an OPEN pool while picks are open; others may not; refund before cancel rejected; refund twice rejected", async () => {
    const pool = await pickedPool({ closed: false });
    expectError(await w.refund(pool, a.key.publicKey), "NotCanceled");
    expectError(await w.cancel(a.key, pool), "CancelNotAllowed");
    const r = await w.cancel(creator.key, pool);
    expectOk(r);
    expect(parsePoolsEvents(r.logs)[0].data.state).toBe(4);
    expectError(await w.cancel(creator.key, pool), "AlreadyCanceled");
    expectError(await w.pick(c, pool, 0, UNIT), "PoolNotOpen");
    expectError(await w.propose(creator.key, pool, 0), "AlreadyCanceled");
    expectError(await w.resolve(outsider.key, pool), "AlreadyCanceled");
    expectOk(await w.refund(pool, a.key.publicKey));
    expectError(await w.refund(pool, a.key.publicKey), "AlreadySettled");
    expect((await w.pool(pool)).state).toBe("CANCELED");
    expectOk(await w.refund(pool, b.key.publicKey));
    expect((await w.pool(pool)).state).toBe("REFUNDED");
    expectError(await w.refund(pool, b.key.publicKey), "AlreadyRefunded");
    expectError(await w.cancel(creator.key, pool), "AlreadyCanceled");
  });
  it("the creator cannot cancel once picks are closed (before or after proposing)", async () => {
    const pool = await pickedPool();
    expectError(await w.cancel(creator.key, pool), "CancelNotAllowed");
    expectError(await w.cancel(outsider.key, pool), "CancelNotAllowed");
    expectOk(await w.propose(creator.key, pool, 0));
    expectOk(await w.vote(a, pool, 0));
    expectError(await w.cancel(creator.key, pool), "CancelNotAllowed");
    await w.chain.advance(86_400n);
    expectError(await w.cancel(creator.key, pool), "CancelNotAllowed");
    expectOk(await w.resolve(outsider.key, pool));
    expect((await w.pool(pool)).state).toBe("RESOLVED");
  });
  it("a pool without picks goes straight to REFUNDED: by its creator before the close, by anyone after it", async () => {
    const empty = await w.createPool(creator, { closesIn: 100n });
    expectError(await w.cancel(outsider.key, empty.pool), "CancelNotAllowed");
    expectOk(await w.cancel(creator.key, empty.pool));
    expect((await w.pool(empty.pool)).state).toBe("REFUNDED");
    const closed = await w.createPool(creator, { closesIn: 100n });
    expectError(await w.resolve(outsider.key, closed.pool), "NoParticipants");
    await w.chain.advance(100n);
    expectError(await w.resolve(outsider.key, closed.pool), "NoParticipants");
    const r = await w.cancel(outsider.key, closed.pool);
    expectOk(r);
    expect(parsePoolsEvents(r.logs)[0].data.state).toBe(5);
    expect((await w.pool(closed.pool)).state).toBe("REFUNDED");
  });
});

describe("config", () => {
  it("fee changes only by the authority, at most 10000 bps; pools keep their fee", async () => {
    expectError(await w.send([await w.client.updateConfig({ authority: a.key.publicKey, feeBps: 0 })], [a.key]), "Unauthorized");
    expectError(await w.send([await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: 10_001 })], [w.authority]), "InvalidFee");
    const { pool } = await w.createPool(creator);
    expectOk(await w.send([await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: 250 })], [w.authority]));
    expect((await w.config()).feeBps).toBe(250);
    expect((await w.pool(pool)).feeBps).toBe(1000);
    expect((await w.pool((await w.createPool(creator)).pool)).feeBps).toBe(250);
    expectOk(await w.send([await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: 1000 })], [w.authority]));
  });
});
