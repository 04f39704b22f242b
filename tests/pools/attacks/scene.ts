/**
 * The world every pools attack suite starts from (`beforeAll(setUp)`), and the helpers they share.
 * Each suite is its own module graph (vitest isolates files), so these bindings are per suite.
 *
 * The world: a 5 % fee, four users (alice, bob, carol, mallory), and three pools of carol's where
 * alice backs outcome 0 with 20 and bob outcome 1 with 10: `open` (closes in 10 000 s), `canceled`
 * by carol, and `resolved` to outcome 0 (the clock then stands at its close). `rejected` checks
 * that nothing of these moved; `refused` that no token balance (and nothing `extra` reads) moved.
 */
import { expect } from "vitest";
import { Keypair, PublicKey, type TransactionInstruction } from "@solana/web3.js";
import { DISPUTE_WINDOW_SECONDS, POOLS_ERRORS, POOLS_PROGRAM_ID } from "../../../idl/client/pools";
import { PoolsWorld, UNIT, type User } from "../../../harness/pools-world";
import type { TxResult } from "../../../harness/chain";
import { expectError as expectErr, expectOk, outcome } from "../../support/expect";

export const FEE_BPS = 500n;
export const I64_MAX = (1n << 63n) - 1n;

export let w: PoolsWorld;
export let alice: User, bob: User, carol: User, mallory: User;
export let open: PublicKey, resolved: PublicKey, canceled: PublicKey;

export async function setUp(): Promise<void> {
  w = await PoolsWorld.create({ feeBps: Number(FEE_BPS) });
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
}

/** The pools program's error named `name`. */
export const expectError = (r: TxResult, name: string) => expectErr(r, name, POOLS_ERRORS);

export const ui = (u: User) => w.users.indexOf(u);
export const part = (pool: PublicKey, u: User) => w.participantOf(pool, u.key.publicKey);

/** What a winner with `stake` receives from a pot `total` whose winning side holds `winners`. */
export const payout = (stake: bigint, total: bigint, winners: bigint) => {
  const gross = (stake * total) / winners;
  return gross - ((gross - stake) * FEE_BPS) / 10_000n;
};

/** The three pools, their records, every balance and the Config. */
export async function snapshot() {
  const pools = await Promise.all([open, resolved, canceled].map((p) => w.pool(p)));
  const parts = await Promise.all([open, resolved, canceled].flatMap((p) => [alice, bob].map((u) => w.participant(part(p, u)))));
  return { balances: await w.balances(), pools, parts, config: await w.config() };
}

/** Sends `ix`, expects it refused (with `expected` when given), and the three pools, their records and every balance unchanged. */
export async function rejected(ix: TransactionInstruction | Promise<TransactionInstruction>, signers: Keypair[], expected?: string) {
  const before = await snapshot();
  const r = await w.send([await ix], signers);
  expect(r.ok, r.logs.join("\n")).toBe(false);
  if (expected) expectError(r, expected);
  expect(await snapshot()).toEqual(before);
  return outcome(r, POOLS_ERRORS);
}

/** Sends `ix`, expects `name`, and checks that no token balance (and nothing `extra` reads) changed. */
export async function refused(
  ix: TransactionInstruction | Promise<TransactionInstruction>,
  signers: Keypair[],
  name: string,
  extra: () => Promise<unknown> = async () => null,
) {
  const before = { balances: await w.balances(), extra: await extra() };
  expectError(await w.send([await ix], signers), name);
  expect({ balances: await w.balances(), extra: await extra() }).toEqual(before);
}

/** Alice's pick of 5 on `open`'s outcome 0; `o` bends it. */
export const pickIx = (u: User, o: Partial<Parameters<typeof w.client.placePick>[0]> = {}) =>
  w.client.placePick({ payer: w.chain.payer.publicKey, user: u.key.publicKey, userToken: u.token, pool: open, outcome: 0, amount: 5n * UNIT, ...o });
/** `u` settling on `resolved`; `o` bends it. */
export const settleIx = (u: User, o: Partial<Parameters<typeof w.client.settleParticipant>[0]> = {}) =>
  w.client.settleParticipant({
    pool: resolved,
    participant: part(resolved, u),
    user: u.key.publicKey,
    userToken: u.token,
    treasury: w.treasury,
    payer: w.chain.payer.publicKey,
    ...o,
  });
/** `u` refunded from `canceled`; `o` bends it. */
export const refundIx = (u: User, o: Partial<Parameters<typeof w.client.refundParticipant>[0]> = {}) =>
  w.client.refundParticipant({
    pool: canceled,
    participant: part(canceled, u),
    user: u.key.publicKey,
    userToken: u.token,
    payer: w.chain.payer.publicKey,
    ...o,
  });

/** A pool by `creator` closing in `closesIn` s with the given picks. */
export async function poolWith(creator: User, picks: [User, number, bigint][], closesIn = 100n): Promise<PublicKey> {
  const { r, pool } = await w.createPool(creator, { closesIn });
  expectOk(r);
  for (const [u, o, amount] of picks) expectOk(await w.pick(u, pool, o, amount));
  return pool;
}
export const toClose = async (pool: PublicKey) => w.chain.setTime((await w.pool(pool)).closesAt);

/**
 * mallory (no part in `pool`) cancels it and refunds alice and bob, who staked 10 and 20: each
 * gets exactly its stake back and the pool ends REFUNDED. Returns the balances around it.
 */
export async function strangerCancelsAndRefunds(pool: PublicKey) {
  const start = await w.balances();
  expectOk(await w.cancel(mallory.key, pool));
  expectOk(await w.refund(pool, alice.key.publicKey));
  expectOk(await w.refund(pool, bob.key.publicKey));
  const end = await w.balances();
  expect(end.users[ui(alice)] - start.users[ui(alice)]).toBe(10n * UNIT);
  expect(end.users[ui(bob)] - start.users[ui(bob)]).toBe(20n * UNIT);
  expect((await w.pool(pool)).state).toBe("REFUNDED");
  return { start, end };
}

/** Four fresh users (creator, two honest participants, attacker). */
export async function cast4(w: PoolsWorld): Promise<[User, User, User, User]> {
  return [await w.user(), await w.user(), await w.user(), await w.user()];
}

/** A pool of `carol` where alice backs outcome 0 and bob outcome 1, resolved (undisputed) to `winner`. */
export async function resolvedPool(w: PoolsWorld, carol: User, alice: User, bob: User, winner: number, a = 10n * UNIT, b = 10n * UNIT): Promise<PublicKey> {
  const { r, pool } = await w.createPool(carol, { closesIn: 100n });
  expectOk(r);
  expectOk(await w.pick(alice, pool, 0, a));
  expectOk(await w.pick(bob, pool, 1, b));
  await w.chain.advance(101n);
  expectOk(await w.propose(carol.key, pool, winner));
  await w.chain.advance(DISPUTE_WINDOW_SECONDS + 1n);
  expectOk(await w.resolve(bob.key, pool));
  return pool;
}

/** A copy of the canonical Config, with `authority` as its authority, at a fresh address owned by pools. */
export async function forgedConfig(authority: PublicKey): Promise<PublicKey> {
  const real = (await w.chain.account(w.client.pda.config()[0]))!;
  const data = Buffer.from(real.data);
  authority.toBuffer().copy(data, 8); // authority is the Config's first field
  const fake = Keypair.generate().publicKey;
  w.chain.setAccount(fake, { ...real, data });
  return fake;
}

/** A non-canonical (lower, off-curve) bump of `["claim", owner]` and its address. */
export function nonCanonicalClaim(owner: PublicKey): [PublicKey, number] {
  const seeds = [Buffer.from("claim"), owner.toBuffer()];
  const [, canon] = PublicKey.findProgramAddressSync(seeds, POOLS_PROGRAM_ID);
  for (let bump = canon - 1; bump >= 0; bump--) {
    try {
      return [PublicKey.createProgramAddressSync([...seeds, Buffer.from([bump])], POOLS_PROGRAM_ID), bump];
    } catch {
      /* on curve */
    }
  }
  throw new Error("no lower bump");
}
