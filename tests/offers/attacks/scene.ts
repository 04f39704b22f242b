/**
 * The world every offers attack suite starts from (`beforeAll(setUp)`), and the helpers they share.
 * Each suite is its own module graph (vitest isolates files), so these bindings are per suite.
 *
 * The world: a freezable mint, four users (alice, bob, carol, mallory, 2 000 units each), and a
 * shared contract (cutoff in 1 000 s) with alice's 50-for-100 offer that bob took 20 of.
 * Every refusal is checked with `rejected` (no token moved, the shared offer unchanged) or
 * `refused` (no token and no claim moved, loose users' accounts included).
 */
import { expect } from "vitest";
import { Keypair, type PublicKey, type TransactionInstruction } from "@solana/web3.js";
import { LAUNCH_FEE_BPS, offersAccountsCoder } from "../../../idl/client/offers";
import { OffersWorld, UNIT, type User } from "../../../harness/offers-world";
import type { TxResult } from "../../../harness/chain";
import { expectError, expectOk, outcome } from "../../support/expect";

export let w: OffersWorld;
export let pid: PublicKey;
export let alice: User, bob: User, carol: User, mallory: User;
/** The shared contract and offer (alice's, bob took 20 units). */
export let contract: PublicKey, offer: PublicKey;
/** Users whose token accounts the tests close or hand away: kept out of `w.users`. */
const loose: User[] = [];
/** Every token account a loose user ever had (closed ones count 0). */
export const looseAccounts: PublicKey[] = [];

export const I64_MAX = (1n << 63n) - 1n;
export const U64_MAX = (1n << 64n) - 1n;

export const SIZE = {
  contract: offersAccountsCoder.size("contract"),
  offer: offersAccountsCoder.size("offer"),
  position: offersAccountsCoder.size("position"),
  claim: offersAccountsCoder.size("claim"),
};

export async function setUp(): Promise<void> {
  w = await OffersWorld.create({ freezableMint: true });
  pid = w.client.program.programId;
  alice = await w.user(2_000n * UNIT);
  bob = await w.user(2_000n * UNIT);
  carol = await w.user(2_000n * UNIT);
  mallory = await w.user(2_000n * UNIT);
  contract = await w.contract({ cutoffIn: 1_000n });
  ({ offer } = await w.createOffer(alice, contract, { total: 50n * UNIT, target: 100n * UNIT }));
  expectOk(await w.take(bob, offer, 20n * UNIT));
}

/** `n` fresh users of the world (1 000 units each). */
export async function users(n: number): Promise<User[]> {
  const out: User[] = [];
  for (let i = 0; i < n; i++) out.push(await w.user());
  return out;
}

/** Sends `ix`, expects it refused (with `expected` when given), no token moved and the shared offer unchanged. */
export async function rejected(ix: TransactionInstruction | Promise<TransactionInstruction>, signers: Keypair[], expected?: string) {
  const before = await w.balances();
  const offerBefore = await w.offer(offer);
  const r = await w.send([await ix], signers);
  expect(r.ok, r.logs.join("\n")).toBe(false);
  if (expected) expectError(r, expected);
  expect(await w.balances()).toEqual(before);
  expect(await w.offer(offer)).toEqual(offerBefore);
  return outcome(r);
}

type CloseArgs = Parameters<OffersWorld["client"]["closeOffer"]>[0];

/** A take of 10 units of the shared offer at `revision`, by Bob unless `o.taker`; `o` bends it. */
export const takeIx = (revision: bigint, o: { taker?: User; offer?: PublicKey; contract?: PublicKey; overrides?: Record<string, PublicKey> } = {}) =>
  w.takeIx(o.taker ?? bob, o.offer ?? offer, 10n * UNIT, { expectedRevision: revision, contract: o.contract ?? contract, overrides: o.overrides });

/** Alice closing the shared offer `o` (its refund to its recorded token account); `over` bends it. */
export const closeIx = (o: { creatorToken: PublicKey; revision: bigint }, over: Partial<CloseArgs> = {}) =>
  w.client.closeOffer({ caller: alice.key.publicKey, contract, offer, creatorToken: o.creatorToken, expectedRevision: o.revision, ...over });

/** A 5-for-5 offer with `nonce` on the shared contract, by Alice unless `o.creator`; `o` bends it. */
export const createIx = (nonce: bigint, o: { creator?: User; overrides?: Record<string, PublicKey> } = {}) =>
  w.createOfferIx(o.creator ?? alice, contract, { nonce, total: 5n * UNIT, target: 5n * UNIT, feeBps: LAUNCH_FEE_BPS, overrides: o.overrides });

/** A user whose token account a test will close, freeze or hand away. */
export async function looseUser(balance = 1_000n * UNIT): Promise<User> {
  const key = await w.chain.fundedKeypair();
  const u = { key, token: await w.mint.account(key.publicKey, balance) };
  loose.push(u);
  looseAccounts.push(u.token);
  return u;
}

/** `u` empties its token account into a new one and closes the old one (its recorded payout account). */
export async function closeTokenAccount(u: User): Promise<PublicKey> {
  const old = u.token;
  u.token = await w.mint.closeAccount(old, u.key);
  looseAccounts.push(u.token);
  expect(await w.chain.account(old)).toBeNull();
  return old;
}

/** Every token balance the tests can see, and the claims of every user. */
export async function ledger() {
  const b = await w.balances();
  const looseBalances = await Promise.all(looseAccounts.map((a) => w.mint.balanceOrZero(a)));
  const owners = [...w.users, ...loose].map((u) => u.key.publicKey);
  const claims = await Promise.all(owners.map(async (o) => (await w.claim(o))?.amount ?? 0n));
  const total = b.total + looseBalances.reduce((a, x) => a + x, 0n);
  return { ...b, loose: looseBalances, claims, total };
}

/** Sends `ixs`, expects the named error, and that no token and no claim moved. */
export async function refused(
  ixs: TransactionInstruction | TransactionInstruction[] | Promise<TransactionInstruction>,
  signers: Keypair[],
  name?: string,
): Promise<TxResult> {
  const before = await ledger();
  const r = await w.send(Array.isArray(ixs) ? ixs : [await ixs], signers);
  expect(r.ok, r.logs.join("\n")).toBe(false);
  if (name) expectError(r, name);
  expect(await ledger()).toEqual(before);
  return r;
}

/** An offer with positions, past its cutoff, resolved as `result`. */
export async function resolvedOffer(creator: User, takers: [User, bigint][], result: "sideA" | "sideB" | "void", o = { total: 8n * UNIT, target: 10n * UNIT }) {
  const contract = await w.contract({ cutoffIn: 100n });
  const { r, offer } = await w.createOffer(creator, contract, { side: "sideA", ...o });
  expectOk(r);
  for (const [t, amount] of takers) expectOk(await w.take(t, offer, amount));
  await w.chain.advance(100n);
  expectOk(await w.resolve(contract, result));
  return { contract, offer };
}

/** carol offers 8 on sideA against 10; alice takes `take`. Returns offer, contract, alice's position. */
export async function matched(carol: User, alice: User, take = 5n * UNIT, cutoffIn = 3_600n) {
  const contract = await w.contract({ cutoffIn });
  const { r, offer } = await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT });
  expectOk(r);
  expectOk(await w.take(alice, offer, take));
  return { contract, offer, position: w.positionOf(offer, alice) };
}

/** A copy of the canonical Config with `authority` (and optionally `vault`) replaced, at a fresh address owned by offers. */
export async function forgedConfig(authority: PublicKey, vault?: PublicKey): Promise<PublicKey> {
  const real = (await w.chain.account(w.client.pda.config()[0]))!;
  const data = Buffer.from(real.data);
  authority.toBuffer().copy(data, 8);
  if (vault) vault.toBuffer().copy(data, 8 + 96);
  const fake = Keypair.generate().publicKey;
  w.chain.setAccount(fake, { ...real, data });
  return fake;
}

export function outcomeOf(r: TxResult): string {
  return r.ok ? "ok" : (r.error ?? "err");
}
