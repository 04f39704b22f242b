/**
 * Hostile transactions against the pools program: wrong or missing signers, substituted vault /
 * config / pool / participant / token accounts, redirected payouts, forged and foreign-owned
 * accounts, replays of settled actions and of identical transactions, re-initialisation and
 * garbage data. Every one is rejected, no token moves and no pool or participant changes. The
 * attacks of issues #10 and #15 have their own suite, security.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import { POOLS_ERRORS, TOKEN_PROGRAM, SYSTEM_PROGRAM } from "../../idl/client/pools";
import { PoolsWorld, UNIT, type User } from "../../harness/pools-world";
import { expectError as expectErr, expectOk, outcome } from "../support/expect";
import { unsigned } from "../support/bent-ix";

let w: PoolsWorld;
let alice: User, bob: User, carol: User, mallory: User;
let open: PublicKey, resolved: PublicKey, canceled: PublicKey;

beforeAll(async () => {
  w = await PoolsWorld.create({ feeBps: 500 });
  [alice, bob, carol, mallory] = [await w.user(), await w.user(), await w.user(), await w.user()];
  const now = await w.chain.now();
  resolved = (await w.createPool(carol, { closesAt: now + 100n })).pool;
  canceled = (await w.createPool(carol, { closesAt: now + 100n })).pool;
  open = (await w.createPool(carol, { closesAt: now + 10_000n })).pool;
  for (const p of [resolved, canceled, open]) {
    expectOk(await w.pick(alice, p, 0, 20n * UNIT));
    expectOk(await w.pick(bob, p, 1, 10n * UNIT));
  }
  expectOk(await w.cancel(carol.key, canceled)); // the creator, while picks are open
  await w.chain.setTime(now + 100n);
  expectOk(await w.propose(carol.key, resolved, 0));
  expectOk(await w.vote(alice, resolved, 0));
  expectOk(await w.vote(bob, resolved, 0)); // every participant confirmed: resolvable at once
  expectOk(await w.resolve(carol.key, resolved));
});

const part = (pool: PublicKey, u: User) => w.participantOf(pool, u.key.publicKey);

async function snapshot() {
  const pools = await Promise.all([open, resolved, canceled].map((p) => w.pool(p)));
  const parts = await Promise.all([open, resolved, canceled].flatMap((p) => [alice, bob].map((u) => w.participant(part(p, u)))));
  return { balances: await w.balances(), pools, parts, config: await w.config() };
}

async function rejected(ix: TransactionInstruction | Promise<TransactionInstruction>, signers: Keypair[], expected?: string) {
  const before = await snapshot();
  const r = await w.send([await ix], signers);
  expect(r.ok, r.logs.join("\n")).toBe(false);
  if (expected) expectErr(r, expected, POOLS_ERRORS);
  expect(await snapshot()).toEqual(before);
  return outcome(r, POOLS_ERRORS);
}

const pickIx = (u: User, o: Partial<Parameters<typeof w.client.placePick>[0]> = {}) =>
  w.client.placePick({ payer: w.chain.payer.publicKey, user: u.key.publicKey, userToken: u.token, pool: open, outcome: 0, amount: 5n * UNIT, ...o });
const settleIx = (u: User, o: Partial<Parameters<typeof w.client.settleParticipant>[0]> = {}) =>
  w.client.settleParticipant({
    pool: resolved,
    participant: part(resolved, u),
    user: u.key.publicKey,
    userToken: u.token,
    treasury: w.treasury,
    payer: w.chain.payer.publicKey,
    ...o,
  });
const refundIx = (u: User, o: Partial<Parameters<typeof w.client.refundParticipant>[0]> = {}) =>
  w.client.refundParticipant({
    pool: canceled,
    participant: part(canceled, u),
    user: u.key.publicKey,
    userToken: u.token,
    payer: w.chain.payer.publicKey,
    ...o,
  });

describe("signers and authorities", () => {
  it("a pick whose user did not sign, and one paid from someone else's token account", async () => {
    await rejected(unsigned(await pickIx(alice), alice.key.publicKey), [], "MissingSignature");
    await rejected(pickIx(mallory, { userToken: alice.token }), [mallory.key], "NotTokenOwner");
  });
  it("a create whose creator did not sign", async () => {
    const ix = await w.client.createPool({
      payer: w.chain.payer.publicKey,
      creator: alice.key.publicKey,
      nonce: 77n,
      question: "q",
      closesAt: (await w.chain.now()) + 1_000n,
    });
    await rejected(unsigned(ix, alice.key.publicKey), [], "MissingSignature");
  });
  it("a vote with someone else's participant record, and a vote not signed by the participant", async () => {
    const now = await w.chain.now();
    const { pool } = await w.createPool(carol, { closesAt: now + 10n });
    expectOk(await w.pick(alice, pool, 0, UNIT));
    await w.chain.setTime(now + 10n);
    expectOk(await w.propose(carol.key, pool, 0));
    const before = await w.pool(pool);
    await rejected(w.client.castVote({ voter: mallory.key.publicKey, pool, outcome: 1, participant: part(pool, alice) }), [mallory.key], "NotParticipant");
    await rejected(unsigned(await w.client.castVote({ voter: alice.key.publicKey, pool, outcome: 1 }), alice.key.publicKey), [], "MissingSignature");
    // a participant record of another pool
    await rejected(w.client.castVote({ voter: alice.key.publicKey, pool, outcome: 1, participant: part(open, alice) }), [alice.key], "NotParticipant");
    expect(await w.pool(pool)).toEqual(before);
  });
  it("a stranger cannot cancel; the creator's key must sign; only the authority changes the fee", async () => {
    await rejected(w.client.cancelPool({ caller: mallory.key.publicKey, pool: open }), [mallory.key], "CancelNotAllowed");
    await rejected(unsigned(await w.client.cancelPool({ caller: carol.key.publicKey, pool: open }), carol.key.publicKey), [], "MissingSignature");
    await rejected(w.client.updateConfig({ authority: mallory.key.publicKey, feeBps: 10_000 }), [mallory.key], "Unauthorized");
  });
});

describe("substituted accounts", () => {
  it("a fake vault (attacker's token account) on pick, settle and refund", async () => {
    const fake = await w.mint.account(mallory.key.publicKey);
    await rejected(pickIx(alice, { overrides: { vault: fake } }), [alice.key], "AccountMismatch");
    await rejected(settleIx(alice, { overrides: { vault: fake } }), [], "AccountMismatch");
    await rejected(refundIx(alice, { overrides: { vault: fake } }), [], "AccountMismatch");
  });
  it("payouts cannot be redirected: another token account or treasury on settle, another token account on refund", async () => {
    await rejected(settleIx(alice, { userToken: mallory.token }), [], "AccountMismatch");
    await rejected(settleIx(alice, { treasury: mallory.token }), [], "AccountMismatch");
    await rejected(refundIx(bob, { userToken: mallory.token }), [], "AccountMismatch");
  });
  it("a participant record of another pool on settle and refund", async () => {
    await rejected(settleIx(alice, { participant: part(open, alice) }), [], "AccountMismatch");
    await rejected(refundIx(alice, { participant: part(resolved, alice) }), [], "AccountMismatch");
  });
  it("another user's participant record on pick", async () => {
    await rejected(pickIx(mallory, { overrides: { participant: part(open, alice) } }), [mallory.key], "AccountMismatch");
  });
  it("a participant address that is not the PDA of (pool, user), and a pool address that is not the PDA of (creator, nonce)", async () => {
    await rejected(pickIx(mallory, { overrides: { participant: Keypair.generate().publicKey } }), [mallory.key]);
    const ix = w.client.createPool({
      payer: w.chain.payer.publicKey,
      creator: alice.key.publicKey,
      nonce: 78n,
      question: "q",
      closesAt: (await w.chain.now()) + 1_000n,
      overrides: { pool: w.client.pda.pool(alice.key.publicKey, 79n)[0] },
    });
    await rejected(ix, [alice.key]);
  });
  it("a config copied to another address, a pool passed as config; at the config's own address: its bytes under another owner, another account type", async () => {
    const cfgAddress = w.client.pda.config()[0];
    const cfg = (await w.chain.account(cfgAddress))!;
    const forged = Keypair.generate().publicKey;
    w.chain.setAccount(forged, { ...cfg, owner: TOKEN_PROGRAM });
    await rejected(pickIx(alice, { overrides: { config: forged } }), [alice.key], "AccountMismatch");
    await rejected(pickIx(alice, { overrides: { config: open } }), [alice.key], "AccountMismatch");
    await rejected(settleIx(alice, { overrides: { config: forged } }), [], "AccountMismatch");
    // Behind the address pin, the owner and type checks still hold (the canonical address rewritten in the test engine).
    try {
      w.chain.setAccount(cfgAddress, { ...cfg, owner: SYSTEM_PROGRAM });
      await rejected(pickIx(alice), [alice.key], "WrongAccountOwner");
      await rejected(settleIx(alice), [], "WrongAccountOwner");
      w.chain.setAccount(cfgAddress, { ...(await w.chain.account(open))!, lamports: cfg.lamports });
      const before = await w.balances();
      expectErr(await w.send([await pickIx(alice)], [alice.key]), "WrongAccountType", POOLS_ERRORS);
      expectErr(await w.send([await settleIx(alice)]), "WrongAccountType", POOLS_ERRORS);
      expect(await w.balances()).toEqual(before);
    } finally {
      w.chain.setAccount(cfgAddress, cfg);
    }
  });
  it("a forged pool (a resolved pool's bytes under another owner) cannot be settled", async () => {
    const fake = Keypair.generate().publicKey;
    w.chain.setAccount(fake, { ...(await w.chain.account(resolved))!, owner: SYSTEM_PROGRAM });
    await rejected(settleIx(alice, { pool: fake }), [], "WrongAccountOwner");
  });
  it("a token account of another mint as the source of a pick", async () => {
    const { TestMint } = await import("../../harness/token");
    const other = await TestMint.create(w.chain);
    const tok = await other.account(alice.key.publicKey, 100n * UNIT);
    await rejected(pickIx(alice, { userToken: tok }), [alice.key], "WrongMint");
  });
  it("a fake token program and a fake system program", async () => {
    await rejected(pickIx(alice, { overrides: { tokenProgram: SYSTEM_PROGRAM } }), [alice.key], "WrongProgram");
    await rejected(pickIx(alice, { overrides: { systemProgram: TOKEN_PROGRAM } }), [alice.key], "WrongProgram");
    await rejected(settleIx(alice, { overrides: { tokenProgram: SYSTEM_PROGRAM } }), [], "WrongProgram");
  });
});

describe("replays and lifecycle abuse", () => {
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
  it("re-initialising the config is refused", async () => {
    await rejected(w.client.initializeConfig({ authority: mallory.key.publicKey, mint: w.mint.mint, treasury: mallory.token, feeBps: 10_000 }), [mallory.key]);
  });
  it("garbage instruction data, unknown instructions and missing accounts are refused", async () => {
    const pid = w.client.program.programId;
    const disc = (n: string) => Buffer.from(w.client.program.idl.instructions.find((i) => i.name === n)!.discriminator);
    for (const data of [Buffer.alloc(0), Buffer.from([1, 2, 3]), Buffer.alloc(8, 7), Buffer.concat([disc("placePick"), Buffer.alloc(3)])]) {
      await rejected(new TransactionInstruction({ programId: pid, keys: [], data }), [], "InvalidInstructionData");
    }
    await rejected(new TransactionInstruction({ programId: pid, keys: [], data: disc("resolvePool") }), [], "NotEnoughAccounts");
  });
});
