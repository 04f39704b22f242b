/**
 * Hostile transactions: wrong signers and owners, substituted vault / mint / PDA / config /
 * token accounts, another program's accounts, double settlement, settlement before resolution,
 * late takes, re-initialisation. Every one is rejected and no token moves.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import { LAUNCH_FEE_BPS, LAUNCH_LIMITS, TOKEN_PROGRAM } from "../../idl/client/offers";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import { expectError, expectOk, outcome } from "../support/expect";
import { unsigned } from "../support/bent-ix";

let w: OffersWorld;
let alice: User, bob: User, mallory: User;
let contract: PublicKey, offer: PublicKey;

beforeAll(async () => {
  w = await OffersWorld.create();
  alice = await w.user(1_000n * UNIT);
  bob = await w.user(1_000n * UNIT);
  mallory = await w.user(1_000n * UNIT);
  contract = await w.contract({ cutoffIn: 1_000n });
  ({ offer } = await w.createOffer(alice, contract, { total: 50n * UNIT, target: 100n * UNIT }));
  expectOk(await w.take(bob, offer, 20n * UNIT));
});

async function rejected(ix: TransactionInstruction | Promise<TransactionInstruction>, signers: Keypair[], expected?: string) {
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
const takeIx = (revision: bigint, o: { taker?: User; offer?: PublicKey; contract?: PublicKey; overrides?: Record<string, PublicKey> } = {}) =>
  w.takeIx(o.taker ?? bob, o.offer ?? offer, 10n * UNIT, { expectedRevision: revision, contract: o.contract ?? contract, overrides: o.overrides });

/** Alice closing the shared offer `o` (its refund to its recorded token account); `over` bends it. */
const closeIx = (o: { creatorToken: PublicKey; revision: bigint }, over: Partial<CloseArgs> = {}) =>
  w.client.closeOffer({ caller: alice.key.publicKey, contract, offer, creatorToken: o.creatorToken, expectedRevision: o.revision, ...over });

/** A 5-for-5 offer with `nonce` on the shared contract, by Alice unless `o.creator`; `o` bends it. */
const createIx = (nonce: bigint, o: { creator?: User; overrides?: Record<string, PublicKey> } = {}) =>
  w.createOfferIx(o.creator ?? alice, contract, { nonce, total: 5n * UNIT, target: 5n * UNIT, feeBps: LAUNCH_FEE_BPS, overrides: o.overrides });

describe("signers and authorities", () => {
  it("a take signed by someone else than the owner of the paying token account moves nothing", async () => {
    // Mallory names Bob's token account as the source and signs as taker herself.
    const ix = takeIx((await w.offer(offer)).revision, { taker: { key: mallory.key, token: bob.token } });
    await rejected(ix, [mallory.key], "NotTokenOwner");
  });

  it("a take whose taker did not sign is refused by the program", async () => {
    const ix = await takeIx((await w.offer(offer)).revision);
    await rejected(unsigned(ix, bob.key.publicKey), [], "MissingSignature");
  });

  it("a create whose creator did not sign is refused", async () => {
    const ix = await createIx(999_001n);
    await rejected(unsigned(ix, alice.key.publicKey), [], "MissingSignature");
  });

  it("a stranger cannot close an offer before the cutoff, nor settle or resolve", async () => {
    const o = await w.offer(offer);
    await rejected(closeIx(o, { caller: mallory.key.publicKey }), [mallory.key], "CloseNotAllowed");
    await rejected(w.client.resolveContract({ authority: mallory.key.publicKey, contract, result: "sideB" }), [mallory.key], "Unauthorized");
    const upd = w.client.updateConfig({ authority: mallory.key.publicKey, feeBps: 0, offersEnabled: true, limits: LAUNCH_LIMITS });
    await rejected(upd, [mallory.key], "Unauthorized");
  });
});

describe("substituted accounts", () => {
  it("a fake vault (attacker's token account) on take and close", async () => {
    const fakeVault = await w.mint.account(mallory.key.publicKey);
    const o = await w.offer(offer);
    await rejected(takeIx(o.revision, { overrides: { vault: fakeVault } }), [bob.key], "AccountMismatch");
    await rejected(closeIx(o, { overrides: { vault: fakeVault } }), [alice.key], "AccountMismatch");
  });

  it("a refund redirected to the attacker's token account on close", async () => {
    const o = await w.offer(offer);
    await rejected(closeIx(o, { creatorToken: mallory.token }), [alice.key], "AccountMismatch");
  });

  it("a config account forged by another owner, and the offer passed as config: the config address is pinned", async () => {
    const forged = Keypair.generate().publicKey;
    w.chain.setAccount(forged, { ...(await w.chain.account(w.client.pda.config()[0]))!, owner: TOKEN_PROGRAM });
    const o = await w.offer(offer);
    await rejected(takeIx(o.revision, { overrides: { config: forged } }), [bob.key], "AccountMismatch");
    await rejected(takeIx(o.revision, { overrides: { config: offer } }), [bob.key], "AccountMismatch");
  });

  it("an offer forged under another owner (missing owner check), and the contract passed as the offer (type cosplay)", async () => {
    const forged = Keypair.generate().publicKey;
    w.chain.setAccount(forged, { ...(await w.chain.account(offer))!, owner: TOKEN_PROGRAM });
    const o = await w.offer(offer);
    await rejected(takeIx(o.revision, { offer: forged }), [bob.key], "WrongAccountOwner");
    await rejected(takeIx(o.revision, { offer: contract }), [bob.key], "WrongAccountType");
    await rejected(closeIx(o, { offer: forged, creator: alice.key.publicKey }), [alice.key], "WrongAccountOwner");
  });

  it("a copy of the config data under an address this program does not own (another program's account)", async () => {
    const copy = Keypair.generate().publicKey;
    const cfg = (await w.chain.account(w.client.pda.config()[0]))!;
    w.chain.setAccount(copy, { ...cfg, owner: new PublicKey("11111111111111111111111111111111") });
    const o = await w.offer(offer);
    await rejected(closeIx(o, { overrides: { config: copy } }), [alice.key], "AccountMismatch");
  });

  it("a contract other than the offer's", async () => {
    const other = await w.contract();
    const o = await w.offer(offer);
    await rejected(takeIx(o.revision, { contract: other }), [bob.key], "AccountMismatch");
  });

  it("another user's position PDA on take", async () => {
    const o = await w.offer(offer);
    const bobsPosition = w.positionOf(offer, bob);
    const ix = takeIx(o.revision, { taker: mallory, overrides: { position: bobsPosition } });
    await rejected(ix, [mallory.key], "AccountMismatch");
  });

  it("an offer PDA that does not match creator and nonce", async () => {
    const ix = createIx(999_002n, { overrides: { offer: Keypair.generate().publicKey } });
    await rejected(ix, [alice.key]); // the runtime refuses the PDA signature
  });

  it("a token account of another mint as the creator's source", async () => {
    const { TestMint } = await import("../../harness/token");
    const fake = await TestMint.create(w.chain);
    const fakeToken = await fake.account(alice.key.publicKey, 100n * UNIT);
    const ix = createIx(999_003n, { creator: { key: alice.key, token: fakeToken } });
    await rejected(ix, [alice.key], "WrongMint");
  });

  it("a token account not owned by the token program (a copy of the taker's, owned by the system program)", async () => {
    const copy = Keypair.generate().publicKey;
    w.chain.setAccount(copy, { ...(await w.chain.account(bob.token))!, owner: new PublicKey("11111111111111111111111111111111") });
    const o = await w.offer(offer);
    await rejected(takeIx(o.revision, { taker: { key: bob.key, token: copy } }), [bob.key], "WrongAccountOwner");
  });

  it("a fake token program", async () => {
    const o = await w.offer(offer);
    const ix = takeIx(o.revision, { overrides: { tokenProgram: new PublicKey("11111111111111111111111111111111") } });
    await rejected(ix, [bob.key], "WrongProgram");
  });
});

describe("lifecycle abuse", () => {
  it("re-initialising the config is refused: a stranger is not the upgrade authority, and the upgrade authority finds it initialised", async () => {
    const cfgBefore = (await w.chain.account(w.client.pda.config()[0]))!.data;
    const init = { authority: mallory.key.publicKey, mint: w.mint.mint, treasury: mallory.token, feeBps: 0, offersEnabled: true, limits: LAUNCH_LIMITS };
    await rejected(w.client.initializeConfig(init), [mallory.key], "MissingSignature");
    const deployer = w.chain.upgradeAuthority;
    const again = w.client.initializeConfig({ ...init, deployer: deployer.publicKey });
    await rejected(again, [mallory.key, deployer], "AlreadyInitialized");
    expect((await w.chain.account(w.client.pda.config()[0]))!.data.equals(cfgBefore)).toBe(true);
  });

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

  it("payouts cannot be redirected: wrong taker token or treasury on settle", async () => {
    const c = await w.contract({ cutoffIn: 100n });
    const { offer: o3 } = await w.createOffer(alice, c, { total: 10n * UNIT, target: 10n * UNIT });
    expectOk(await w.take(bob, o3, 10n * UNIT));
    await w.chain.advance(100n);
    expectOk(await w.resolve(c, "sideB"));
    const pos = w.positionOf(o3, bob);
    const before = await w.balances();
    const settle = { contract: c, offer: o3, position: pos, creatorToken: alice.token, takerToken: bob.token, treasury: w.treasury };
    const bad1 = await w.client.settlePosition({ ...settle, takerToken: mallory.token });
    expectError(await w.send([bad1]), "AccountMismatch");
    const bad2 = await w.client.settlePosition({ ...settle, treasury: mallory.token });
    expectError(await w.send([bad2]), "AccountMismatch");
    expect(await w.balances()).toEqual(before);
  });

  it("garbage instruction data and unknown instructions are refused", async () => {
    const pid = w.client.program.programId;
    for (const data of [
      Buffer.alloc(0),
      Buffer.from([1, 2, 3]),
      Buffer.alloc(8, 7),
      Buffer.concat([Buffer.from(w.client.program.idl.instructions.find((i) => i.name === "takeOffer")!.discriminator), Buffer.alloc(3)]),
    ]) {
      const r = await w.send([new TransactionInstruction({ programId: pid, keys: [], data })]);
      expectError(r, "InvalidInstructionData");
    }
  });
});
