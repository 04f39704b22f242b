/**
 * Regression tests of issue #10 (the offers program could be drained) and #15 part 1 (a payee's
 * token account could block the other side's payout), one named test per attack. Each attack is
 * refused with its named error, and token balances (vault, treasury, every user's accounts, every
 * claim) show that nothing moved; each legitimate path that the fixes keep open is exercised too.
 * See programs/SECURITY.md for the account-by-account table these tests prove.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { Keypair, PublicKey, SystemProgram, TransactionInstruction } from "@solana/web3.js";
import { LAUNCH_LIMITS, OffersClient, decodeConfig, offersAccountsCoder, parseOffersEvents, uuidBytes } from "../../idl/client/offers";
import { programDataAddress, LOADER_V3, u64le } from "../../idl/client/common";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import { TestChain, type TxResult } from "../../harness/chain";
import { TestMint } from "../../harness/token";
import { expectError, expectOk } from "../support/expect";
import { nonCanonical, patch, rekey, unsigned } from "../support/bent-ix";

let w: OffersWorld;
let pid: PublicKey;
let alice: User, bob: User, carol: User, mallory: User;
/** Users whose token accounts the tests close or hand away: kept out of `w.users`. */
const loose: User[] = [];
/** Every token account a loose user ever had (closed ones count 0). */
const looseAccounts: PublicKey[] = [];

const SIZE = {
  contract: offersAccountsCoder.size("contract"),
  offer: offersAccountsCoder.size("offer"),
  position: offersAccountsCoder.size("position"),
  claim: offersAccountsCoder.size("claim"),
};

beforeAll(async () => {
  w = await OffersWorld.create({ freezableMint: true });
  pid = w.client.program.programId;
  alice = await w.user(2_000n * UNIT);
  bob = await w.user(2_000n * UNIT);
  carol = await w.user(2_000n * UNIT);
  mallory = await w.user(2_000n * UNIT);
});

/** A user whose token account a test will close, freeze or hand away. */
async function looseUser(balance = 1_000n * UNIT): Promise<User> {
  const key = await w.chain.fundedKeypair();
  const u = { key, token: await w.mint.account(key.publicKey, balance) };
  loose.push(u);
  looseAccounts.push(u.token);
  return u;
}

/** `u` empties its token account into a new one and closes the old one (its recorded payout account). */
async function closeTokenAccount(u: User): Promise<PublicKey> {
  const old = u.token;
  u.token = await w.mint.closeAccount(old, u.key);
  looseAccounts.push(u.token);
  expect(await w.chain.account(old)).toBeNull();
  return old;
}

/** Every token balance the tests can see, and the claims of every user. */
async function ledger() {
  const b = await w.balances();
  const looseBalances = await Promise.all(looseAccounts.map((a) => w.mint.balanceOrZero(a)));
  const owners = [...w.users, ...loose].map((u) => u.key.publicKey);
  const claims = await Promise.all(owners.map(async (o) => (await w.claim(o))?.amount ?? 0n));
  const total = b.total + looseBalances.reduce((a, x) => a + x, 0n);
  return { ...b, loose: looseBalances, claims, total };
}

/** Sends `ixs`, expects the named error, and that no token and no claim moved. */
async function refused(
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
async function resolvedOffer(creator: User, takers: [User, bigint][], result: "sideA" | "sideB" | "void", o = { total: 8n * UNIT, target: 10n * UNIT }) {
  const contract = await w.contract({ cutoffIn: 100n });
  const { r, offer } = await w.createOffer(creator, contract, { side: "sideA", ...o });
  expectOk(r);
  for (const [t, amount] of takers) expectOk(await w.take(t, offer, amount));
  await w.chain.advance(100n);
  expectOk(await w.resolve(contract, result));
  return { contract, offer };
}

describe("issue #10: the offers program holds against an attacker", () => {
  it("a second Config cannot be created", async () => {
    const config = w.client.pda.config()[0];
    const vault = w.client.pda.vault()[0];
    const realConfig = (await w.chain.account(config))!;
    const deployer = w.chain.upgradeAuthority;
    const base = { authority: mallory.key.publicKey, mint: w.mint.mint, treasury: mallory.token, feeBps: 0, offersEnabled: true, limits: LAUNCH_LIMITS };

    // At another bump of ["config"] (and of ["vault"]), even signed by the upgrade authority.
    const [altConfig] = nonCanonical([Buffer.from("config")], pid);
    await refused(rekey(await w.client.initializeConfig({ ...base, deployer: deployer.publicKey }), config, altConfig), [deployer], "AccountMismatch");
    expect(await w.chain.account(altConfig)).toBeNull();
    const [altVault] = nonCanonical([Buffer.from("vault")], pid);
    await refused(rekey(await w.client.initializeConfig({ ...base, deployer: deployer.publicKey }), vault, altVault), [deployer], "AccountMismatch");
    expect(await w.chain.account(altVault)).toBeNull();
    // By a signer who is not the upgrade authority: with the real ProgramData, and with a forged
    // ProgramData (naming the attacker) at another address.
    await refused(w.client.initializeConfig(base), [mallory.key], "MissingSignature");
    const programData = programDataAddress(pid);
    const forgedPd = Keypair.generate().publicKey;
    const pd = (await w.chain.account(programData))!;
    const forged = Buffer.from(pd.data.subarray(0, 45));
    mallory.key.publicKey.toBuffer().copy(forged, 13);
    w.chain.setAccount(forgedPd, { lamports: pd.lamports, data: forged, owner: LOADER_V3, executable: false, rentEpoch: 0 });
    await refused(rekey(await w.client.initializeConfig(base), programData, forgedPd), [mallory.key], "AccountMismatch");
    // Re-initialisation by the upgrade authority itself.
    await refused(w.client.initializeConfig({ ...base, deployer: deployer.publicKey }), [deployer], "AlreadyInitialized");
    expect((await w.chain.account(config))!.data.equals(realConfig.data)).toBe(true);

    // A Config-shaped account planted at another address (only a test can: the program never
    // creates one), naming the attacker as authority and an attacker mint and treasury.
    const evilMint = await TestMint.create(w.chain);
    const evilTreasury = await evilMint.account(mallory.key.publicKey);
    const evilToken = await evilMint.account(mallory.key.publicKey, 1_000n * UNIT);
    const fake = Keypair.generate().publicKey;
    const data = Buffer.from(realConfig.data);
    mallory.key.publicKey.toBuffer().copy(data, 8);
    evilMint.mint.toBuffer().copy(data, 40);
    evilTreasury.toBuffer().copy(data, 72);
    w.chain.setAccount(fake, { lamports: realConfig.lamports, data, owner: pid, executable: false, rentEpoch: 0 });
    expect(decodeConfig(data)).toMatchObject({ authority: mallory.key.publicKey, mint: evilMint.mint, treasury: evilTreasury });

    // Targets: an open offer with a position, a settleable position, and a claim.
    const open = await w.contract({ cutoffIn: 10_000n });
    const { offer } = await w.createOffer(alice, open, { total: 10n * UNIT, target: 10n * UNIT });
    expectOk(await w.take(bob, offer, 2n * UNIT));
    const settled = await resolvedOffer(alice, [[carol, 10n * UNIT]], "sideB");
    const claimant = await looseUser();
    const { offer: toClaim } = await w.createOffer(claimant, open, { total: 3n * UNIT, target: 3n * UNIT });
    await closeTokenAccount(claimant);
    expectOk(await w.close(claimant.key, toClaim));
    expect((await w.claim(claimant.key.publicKey))!.amount).toBe(3n * UNIT);
    const now = await w.chain.now();
    const m = mallory.key;
    const o = await w.offer(offer);
    const cfg = { config: fake };

    await refused(
      w.client.createContract({
        authority: m.publicKey,
        payer: m.publicKey,
        templateId: randomUUID(),
        eventId: randomUUID(),
        cutoffAt: now + 100n,
        resolutionDeadline: now + 200n,
        ...cfg,
      }),
      [m],
      "AccountMismatch",
    );
    await refused(w.client.resolveContract({ authority: m.publicKey, contract: open, result: "sideA", ...cfg }), [m], "AccountMismatch");
    await refused(
      w.client.updateConfig({ authority: m.publicKey, feeBps: 10_000, offersEnabled: true, limits: LAUNCH_LIMITS, ...cfg }),
      [m],
      "AccountMismatch",
    );
    await refused(
      w.client.createOffer({
        payer: m.publicKey,
        creator: m.publicKey,
        creatorToken: evilToken,
        contract: open,
        nonce: 77n,
        side: "sideA",
        creatorTotal: 5n * UNIT,
        takerTarget: 5n * UNIT,
        minimumTake: UNIT,
        expectedFeeBps: 0,
        overrides: cfg,
      }),
      [m],
      "AccountMismatch",
    );
    await refused(
      w.client.takeOffer({
        payer: m.publicKey,
        taker: m.publicKey,
        takerToken: evilToken,
        contract: open,
        offer,
        amount: 2n * UNIT,
        expectedRevision: o.revision,
        overrides: cfg,
      }),
      [m],
      "AccountMismatch",
    );
    await refused(
      w.client.closeOffer({
        caller: m.publicKey,
        contract: open,
        offer,
        creatorToken: o.creatorToken,
        creator: alice.key.publicKey,
        expectedRevision: o.revision,
        overrides: cfg,
      }),
      [m],
      "AccountMismatch",
    );
    const p = await w.position(w.positionOf(settled.offer, carol));
    await refused(
      w.client.settlePosition({
        contract: settled.contract,
        offer: settled.offer,
        position: w.positionOf(settled.offer, carol),
        creatorToken: alice.token,
        takerToken: p.takerToken,
        treasury: evilTreasury,
        creator: alice.key.publicKey,
        taker: carol.key.publicKey,
        overrides: cfg,
      }),
      [],
      "AccountMismatch",
    );
    const claim = (await w.claim(claimant.key.publicKey))!;
    await refused(
      w.client.withdrawClaim({ owner: claimant.key.publicKey, destination: claimant.token, rentPayer: claim.rentPayer, overrides: cfg }),
      [claimant.key],
      "AccountMismatch",
    );
    // The real config still works for everyone.
    expectOk(await w.settle(w.positionOf(settled.offer, carol)));
    expectOk(await w.withdrawClaim(claimant.key, claimant.token));
  });

  it("the deployment cannot be front-run", async () => {
    const chain = await TestChain.start();
    const client = OffersClient.fromProvider(chain.anchorProvider);
    const mint = await TestMint.create(chain);
    const stranger = await chain.fundedKeypair();
    const strangerTreasury = await mint.account(stranger.publicKey, 5n * UNIT);
    const [config] = client.pda.config();
    const [vault] = client.pda.vault();
    const args = { authority: stranger.publicKey, mint: mint.mint, treasury: strangerTreasury, feeBps: 10_000, offersEnabled: true, limits: LAUNCH_LIMITS };
    // The stranger signs as deployer, or names the real upgrade authority without its signature.
    expectError(await chain.send([await client.initializeConfig(args)], [stranger]), "MissingSignature");
    const named = await client.initializeConfig({ ...args, deployer: chain.upgradeAuthority.publicKey });
    expectError(await chain.send([unsigned(named, chain.upgradeAuthority.publicKey)], []), "MissingSignature");
    expect(await chain.account(config)).toBeNull();
    expect(await chain.account(vault)).toBeNull();
    expect(await mint.balance(strangerTreasury)).toBe(5n * UNIT);
    // The upgrade authority initialises, naming the service's authority.
    const authority = Keypair.generate();
    const treasury = await mint.account(authority.publicKey);
    expectOk(
      await chain.send(
        [await client.initializeConfig({ ...args, authority: authority.publicKey, treasury, feeBps: 1000, deployer: chain.upgradeAuthority.publicKey })],
        [chain.upgradeAuthority],
      ),
    );
    expect(decodeConfig((await chain.account(config))!.data)).toMatchObject({ authority: authority.publicKey, treasury, vault, feeBps: 1000 });
    expect(await mint.balance(vault)).toBe(0n);
    // And only once: the stranger's attempt now meets an initialised config.
    expectError(
      await chain.send([await client.initializeConfig({ ...args, deployer: chain.upgradeAuthority.publicKey })], [chain.upgradeAuthority]),
      "AlreadyInitialized",
    );
    expect(decodeConfig((await chain.account(config))!.data).authority).toEqual(authority.publicKey);
  });

  it("a position exists once per (offer, taker)", async () => {
    const contract = await w.contract({ cutoffIn: 10_000n });
    const { offer } = await w.createOffer(alice, contract, { total: 500n * UNIT, target: 1_000n * UNIT });
    const seeds = [Buffer.from("position"), offer.toBuffer(), bob.key.publicKey.toBuffer()];
    const [canonical] = w.client.pda.position(offer, bob.key.publicKey);
    const [alt, altBump] = nonCanonical(seeds, pid);
    const take = async (amount: bigint, position?: [PublicKey, number]) => {
      const ix = await w.takeIx(bob, offer, amount, { contract });
      // TakeOfferArgs: amount u64, expected_revision u64, position_bump u8.
      return position ? patch(rekey(ix, canonical, position[0]), 16, position[1]) : ix;
    };
    // A second position at another bump is refused before and after the canonical one exists.
    await refused(take(10n * UNIT, [alt, altBump]), [bob.key], "AccountMismatch");
    // The canonical address with a lower bump in the arguments is refused as well.
    await refused(take(10n * UNIT, [canonical, altBump]), [bob.key], "AccountMismatch");
    // And so is a keypair the caller signs with (CreateAccount would accept its signature
    // whatever the seeds: found by the attacker fuzzer, refused in kit::cpi::create_pda).
    const signing = Keypair.generate();
    await refused(rekey(await take(10n * UNIT), canonical, signing.publicKey), [bob.key, signing], "AccountMismatch");
    expect(await w.chain.account(signing.publicKey)).toBeNull();
    expectOk(await w.send([await take(500n * UNIT)], [bob.key]));
    await refused(take(UNIT, [alt, altBump]), [bob.key], "AccountMismatch");
    expect(await w.chain.account(alt)).toBeNull();
    // So the per-taker cap (500 units) holds.
    await refused(take(UNIT), [bob.key], "PositionAboveMaximum");
    expect(await w.position(canonical)).toMatchObject({ takerAmount: 500n * UNIT });
    expect(await w.offer(offer)).toMatchObject({ positionCount: 1, takerFilled: 500n * UNIT });

    // The same for an offer: ["offer", contract, creator, nonce] at a lower bump.
    const nonce = w.nextNonce();
    const [offerAddr] = w.client.pda.offer(contract, alice.key.publicKey, nonce);
    const [altOffer, altOfferBump] = nonCanonical([Buffer.from("offer"), contract.toBuffer(), alice.key.publicKey.toBuffer(), u64le(nonce)], pid);
    const create = await w.createOfferIx(alice, contract, { nonce, total: 5n * UNIT, target: 5n * UNIT });
    // CreateOfferArgs: nonce u64, bump u8, ...
    await refused(patch(rekey(create, offerAddr, altOffer), 8, altOfferBump), [alice.key], "AccountMismatch");
    expect(await w.chain.account(altOffer)).toBeNull();
    const offerKey = Keypair.generate();
    await refused(rekey(create, offerAddr, offerKey.publicKey), [alice.key, offerKey], "AccountMismatch");
    expect(await w.chain.account(offerKey.publicKey)).toBeNull();

    // And for a contract: ["contract", template_id, event_id] at a lower bump.
    const [templateId, eventId] = [randomUUID(), randomUUID()];
    const [contractAddr] = w.client.pda.contract(templateId, eventId);
    const [altContract, altContractBump] = nonCanonical([Buffer.from("contract"), Buffer.from(uuidBytes(templateId)), Buffer.from(uuidBytes(eventId))], pid);
    const now = await w.chain.now();
    const createContract = () => w.contractIx(now, { templateId, eventId, cutoffIn: 100n, deadlineAfterCutoff: 100n });
    const cc = await createContract();
    // CreateContractArgs: template_id [16], event_id [16], cutoff_at i64, resolution_deadline i64, bump u8.
    await refused(patch(rekey(cc, contractAddr, altContract), 48, altContractBump), [w.authority], "AccountMismatch");
    expect(await w.chain.account(altContract)).toBeNull();
    const contractKey = Keypair.generate();
    await refused(rekey(cc, contractAddr, contractKey.publicKey), [w.authority, contractKey], "AccountMismatch");
    expectOk(await w.send([cc], [w.authority]));
    // A second contract for the same (template, event) is refused.
    await w.chain.advance(1n);
    await refused(createContract(), [w.authority], "AlreadyInitialized");
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

  it("pre-funded addresses do not block creation", async () => {
    const funder = await w.chain.fundedKeypair();
    const prefund = async (to: PublicKey, lamports: bigint) =>
      expectOk(await w.send([SystemProgram.transfer({ fromPubkey: funder.publicKey, toPubkey: to, lamports })], [funder]));
    const rentPayer = await w.chain.fundedKeypair();
    /** What `fn` cost the rent payer (fees are the chain payer's). */
    const cost = async (fn: () => Promise<TxResult>) => {
      const before = await w.chain.lamports(rentPayer.publicKey);
      expectOk(await fn());
      return before - (await w.chain.lamports(rentPayer.publicKey));
    };
    const gift = 1_000_000n;

    // Contract.
    const [templateId, eventId] = [randomUUID(), randomUUID()];
    const [contract] = w.client.pda.contract(templateId, eventId);
    await prefund(contract, gift);
    const now = await w.chain.now();
    const cc = await w.client.createContract({
      authority: w.authority.publicKey,
      payer: rentPayer.publicKey,
      templateId,
      eventId,
      cutoffAt: now + 10_000n,
      resolutionDeadline: now + 20_000n,
    });
    expect(await cost(() => w.send([cc], [w.authority, rentPayer]))).toBe((await w.chain.rentExempt(SIZE.contract)) - gift);
    expect(await w.contractAccount(contract)).toMatchObject({ status: "Open" });
    expect(await w.chain.lamports(contract)).toBe(await w.chain.rentExempt(SIZE.contract));

    // Offer.
    const nonce = w.nextNonce();
    const [offer] = w.client.pda.offer(contract, alice.key.publicKey, nonce);
    await prefund(offer, gift);
    const before = await ledger();
    const co = await w.client.createOffer({
      payer: rentPayer.publicKey,
      creator: alice.key.publicKey,
      creatorToken: alice.token,
      contract,
      nonce,
      side: "sideA",
      creatorTotal: 20n * UNIT,
      takerTarget: 20n * UNIT,
      minimumTake: UNIT,
      expectedFeeBps: (await w.config()).feeBps,
    });
    expect(await cost(() => w.send([co], [alice.key, rentPayer]))).toBe((await w.chain.rentExempt(SIZE.offer)) - gift);
    const after = await ledger();
    expect(after.vault - before.vault).toBe(20n * UNIT);
    expect(after.total).toBe(before.total);
    expect(await w.offer(offer)).toMatchObject({ status: "Open", creatorTotal: 20n * UNIT, rentPayer: rentPayer.publicKey });

    // Position, pre-funded above its rent: the rent payer pays nothing.
    const [position] = w.client.pda.position(offer, bob.key.publicKey);
    await prefund(position, (await w.chain.rentExempt(SIZE.position)) + 1n);
    const tk = await w.client.takeOffer({
      payer: rentPayer.publicKey,
      taker: bob.key.publicKey,
      takerToken: bob.token,
      contract,
      offer,
      amount: 5n * UNIT,
      expectedRevision: 1n,
    });
    expect(await cost(() => w.send([tk], [bob.key, rentPayer]))).toBe(0n);
    expect(await w.position(position)).toMatchObject({ takerAmount: 5n * UNIT, status: "Open" });

    // Claim: the creator's token account is gone when its offer closes.
    const gina = await looseUser();
    const { offer: ginas } = await w.createOffer(gina, contract, { total: 7n * UNIT, target: 7n * UNIT });
    await closeTokenAccount(gina);
    const [claim] = w.client.pda.claim(gina.key.publicKey);
    await prefund(claim, gift);
    const o = await w.offer(ginas);
    const cl = await w.client.closeOffer({
      caller: gina.key.publicKey,
      contract,
      offer: ginas,
      creatorToken: o.creatorToken,
      creator: gina.key.publicKey,
      expectedRevision: o.revision,
      payer: rentPayer.publicKey,
    });
    const vaultBefore = (await ledger()).vault;
    expect(await cost(() => w.send([cl], [gina.key, rentPayer]))).toBe((await w.chain.rentExempt(SIZE.claim)) - gift);
    expect(await w.claim(gina.key.publicKey)).toMatchObject({ owner: gina.key.publicKey, amount: 7n * UNIT, rentPayer: rentPayer.publicKey });
    expect((await ledger()).vault).toBe(vaultBefore); // credited, not moved
  });

  it("a closed token account does not block the other side", async () => {
    // The creator closes its token account before close_offer and before settlement.
    const dave = await looseUser();
    const contract = await w.contract({ cutoffIn: 100n });
    const { offer } = await w.createOffer(dave, contract, { side: "sideA", total: 8n * UNIT, target: 10n * UNIT });
    expectOk(await w.take(bob, offer, 3n * UNIT));
    expectOk(await w.take(carol, offer, 2n * UNIT));
    const start = await ledger();
    await closeTokenAccount(dave);
    const daveKey = dave.key.publicKey;

    // close_offer: the refund (8 - 2.4 - 1.6 = 4 units) goes to dave's claim; a client that did
    // not name the creator gets a named error instead, and nothing moves.
    const o = await w.offer(offer);
    await refused(
      w.client.closeOffer({ caller: daveKey, contract, offer, creatorToken: o.creatorToken, expectedRevision: o.revision }),
      [dave.key],
      "ClaimAccountMissing",
    );
    const closed = await w.close(dave.key, offer);
    expectOk(closed);
    const events = parseOffersEvents(closed.logs);
    expect(events.map((e) => e.name)).toEqual(["claimCredited", "offerClosed"]);
    expect(events[0].data).toMatchObject({ owner: daveKey, amount: 4n * UNIT, total: 4n * UNIT });
    expect((await w.claim(daveKey))!.amount).toBe(4n * UNIT);
    const now = await ledger();
    expect([now.vault, now.total]).toEqual([start.vault, start.total]);

    // Settlement of a void contract: the takers are refunded into their accounts, the creator's
    // matched stake goes to its claim.
    await w.chain.advance(100n);
    expectOk(await w.resolve(contract, "void"));
    for (const [u, amount, matched] of [
      [bob, 3n * UNIT, 2_400_000n],
      [carol, 2n * UNIT, 1_600_000n],
    ] as const) {
      const before = await ledger();
      const claimBefore = (await w.claim(daveKey))!.amount;
      expectOk(await w.settle(w.positionOf(offer, u)));
      const after = await ledger();
      expect(after.users[w.users.indexOf(u)] - before.users[w.users.indexOf(u)]).toBe(amount);
      expect(after.vault - before.vault).toBe(-amount);
      expect((await w.claim(daveKey))!.amount - claimBefore).toBe(matched);
    }
    expect((await w.offer(offer)).status).toBe("Settled");

    // A creator win on another offer: the creator's payout is credited, the fee paid.
    const { offer: won } = await resolvedOffer(dave, [[bob, 10n * UNIT]], "sideA");
    await closeTokenAccount(dave);
    const before = await ledger();
    expectOk(await w.settle(w.positionOf(won, bob)));
    const after = await ledger();
    expect(after.treasury - before.treasury).toBe(UNIT); // 10% of the taker's 10 units
    expect(after.vault - before.vault).toBe(-UNIT);
    expect((await w.claim(daveKey))!.amount).toBe(8n * UNIT + 17n * UNIT); // + 8 matched + 10 taken - 1 fee

    // Withdrawal: every redirection is refused and moves nothing.
    const claim = (await w.claim(daveKey))!;
    const total = claim.amount;
    const otherMint = await TestMint.create(w.chain);
    const foreign = await otherMint.account(daveKey);
    const base = { owner: daveKey, destination: dave.token, rentPayer: claim.rentPayer };
    await refused(
      w.client.withdrawClaim({
        owner: mallory.key.publicKey,
        destination: mallory.token,
        rentPayer: claim.rentPayer,
        overrides: { claim: w.client.pda.claim(daveKey)[0] },
      }),
      [mallory.key],
      "AccountMismatch",
    );
    await refused(w.client.withdrawClaim({ ...base, destination: mallory.token }), [dave.key], "NotTokenOwner");
    await refused(w.client.withdrawClaim({ ...base, destination: foreign }), [dave.key], "WrongMint");
    await refused(w.client.withdrawClaim({ ...base, destination: w.client.pda.vault()[0] }), [dave.key], "NotTokenOwner");
    await refused(w.client.withdrawClaim({ ...base, rentPayer: mallory.key.publicKey }), [dave.key], "AccountMismatch");
    await refused(w.client.withdrawClaim({ ...base, overrides: { vault: mallory.token } }), [dave.key], "AccountMismatch");
    await refused(unsigned(await w.client.withdrawClaim(base), daveKey), [], "MissingSignature");
    // The owner takes the whole claim to a new token account; the claim's rent goes back.
    const fresh = await w.mint.account(daveKey);
    looseAccounts.push(fresh);
    const rent = BigInt((await w.chain.account(w.client.pda.claim(daveKey)[0]))!.lamports);
    const payerBefore = await w.chain.lamports(claim.rentPayer);
    const vaultBefore = (await ledger()).vault;
    const wd = await w.withdrawClaim(dave.key, fresh);
    expectOk(wd);
    expect(parseOffersEvents(wd.logs)).toMatchObject([{ name: "claimWithdrawn", data: { owner: daveKey, amount: total } }]);
    expect(await w.mint.balance(fresh)).toBe(total);
    expect((await ledger()).vault).toBe(vaultBefore - total);
    expect(await w.claim(daveKey)).toBeNull();
    expect((await w.chain.lamports(claim.rentPayer)) - payerBefore).toBe(rent - 10_000n); // the rent payer also paid this tx's fee (2 signatures)
    await refused(w.client.withdrawClaim({ ...base, destination: fresh }), [dave.key], "WrongAccountOwner");

    // The reverse: a taker closes its account before a void refund; the creator is refunded.
    const erin = await looseUser();
    const c3 = await w.contract({ cutoffIn: 100n });
    const { offer: o3 } = await w.createOffer(alice, c3, { total: 5n * UNIT, target: 5n * UNIT });
    expectOk(await w.take(erin, o3, 5n * UNIT));
    await closeTokenAccount(erin);
    await w.chain.advance(100n);
    expectOk(await w.resolve(c3, "void"));
    const b3 = await ledger();
    expectOk(await w.settle(w.positionOf(o3, erin)));
    const a3 = await ledger();
    expect(a3.users[w.users.indexOf(alice)] - b3.users[w.users.indexOf(alice)]).toBe(5n * UNIT);
    expect(a3.vault - b3.vault).toBe(-5n * UNIT);
    expect((await w.claim(erin.key.publicKey))!.amount).toBe(5n * UNIT);
    expectOk(await w.withdrawClaim(erin.key, erin.token));
    expect(await w.mint.balance(erin.token)).toBe(1_000n * UNIT);
    expect((await ledger()).total).toBe(a3.total);
  });

  it("a payout never follows a token account handed to someone else, nor fails on a frozen one", async () => {
    // The creator gives its recorded token account to the attacker; the taker's is frozen.
    const henry = await looseUser();
    const ivy = await looseUser();
    const { contract, offer } = await resolvedOffer(henry, [[ivy, 10n * UNIT]], "void");
    await w.mint.reown(henry.token, henry.key, mallory.key.publicKey);
    await w.mint.freeze(ivy.token);
    const handed = henry.token;
    const before = await ledger();
    const handedBefore = await w.mint.balance(handed);
    expectOk(await w.settle(w.positionOf(offer, ivy)));
    expect(await w.mint.balance(handed)).toBe(handedBefore); // the attacker's now: not paid
    expect((await w.claim(henry.key.publicKey))!.amount).toBe(8n * UNIT);
    expect((await w.claim(ivy.key.publicKey))!.amount).toBe(10n * UNIT);
    const after = await ledger();
    expect([after.vault, after.total]).toEqual([before.vault, before.total]);
    expect((await w.offer(offer)).status).toBe("Settled");
    expect((await w.contractAccount(contract)).status).toBe("Voided");
    // Both withdraw to accounts they hold.
    for (const u of [henry, ivy]) {
      const to = await w.mint.account(u.key.publicKey);
      looseAccounts.push(to);
      expectOk(await w.withdrawClaim(u.key, to));
    }
    expect((await ledger()).total).toBe(before.total);
  });

  it("duplicate and substituted mutable accounts are refused", async () => {
    const vault = w.client.pda.vault()[0];
    const contract = await w.contract({ cutoffIn: 100n });
    const fee = (await w.config()).feeBps;
    // The vault as the creator's source or the taker's source.
    await refused(
      w.client.createOffer({
        payer: w.chain.payer.publicKey,
        creator: alice.key.publicKey,
        creatorToken: vault,
        contract,
        nonce: w.nextNonce(),
        side: "sideA",
        creatorTotal: 5n * UNIT,
        takerTarget: 5n * UNIT,
        minimumTake: UNIT,
        expectedFeeBps: fee,
      }),
      [alice.key],
      "NotTokenOwner",
    );
    const { offer } = await w.createOffer(alice, contract, { total: 10n * UNIT, target: 10n * UNIT });
    await refused(w.takeIx({ key: bob.key, token: vault }, offer, 2n * UNIT, { contract, expectedRevision: 1n }), [bob.key], "NotTokenOwner");
    expectOk(await w.take(bob, offer, 4n * UNIT));
    // The vault as the refund account, the offer as the position.
    const o = await w.offer(offer);
    await refused(
      w.client.closeOffer({ caller: alice.key.publicKey, contract, offer, creatorToken: vault, creator: alice.key.publicKey, expectedRevision: o.revision }),
      [alice.key],
      "AccountMismatch",
    );
    await refused(w.takeIx(bob, offer, 2n * UNIT, { contract, expectedRevision: o.revision, overrides: { position: offer } }), [bob.key], "WrongAccountType");
    await w.chain.advance(100n);
    expectOk(await w.resolve(contract, "void"));
    expectOk(await w.close(carol.key, offer));
    const position = w.positionOf(offer, bob);
    const settle = (x: Partial<Parameters<OffersClient["settlePosition"]>[0]> = {}) =>
      w.client.settlePosition({
        contract,
        offer,
        position,
        creatorToken: alice.token,
        takerToken: bob.token,
        treasury: w.treasury,
        creator: alice.key.publicKey,
        taker: bob.key.publicKey,
        ...x,
      });
    // One account for both payouts, the vault or the treasury as a payout account, the vault as treasury.
    await refused(settle({ takerToken: alice.token }), [], "AccountMismatch");
    await refused(settle({ creatorToken: bob.token }), [], "AccountMismatch");
    await refused(settle({ takerToken: vault }), [], "AccountMismatch");
    await refused(settle({ creatorToken: w.treasury }), [], "AccountMismatch");
    await refused(settle({ treasury: vault }), [], "AccountMismatch");
    await refused(settle({ overrides: { vault: w.treasury } }), [], "AccountMismatch");
    // The position as the offer.
    await refused(settle({ offer: position }), [], "WrongAccountType");
    expectOk(await w.send([await settle()]));

    // One claim account for both sides when both must be credited.
    const jack = await looseUser();
    const kim = await looseUser();
    const { offer: o2 } = await resolvedOffer(jack, [[kim, 10n * UNIT]], "void");
    await closeTokenAccount(jack);
    await closeTokenAccount(kim);
    const p2 = w.positionOf(o2, kim);
    const pos = await w.position(p2);
    const o2a = await w.offer(o2);
    const [jackClaim] = w.client.pda.claim(jack.key.publicKey);
    const s2 = (x: Partial<Parameters<OffersClient["settlePosition"]>[0]> = {}) =>
      w.client.settlePosition({
        contract: o2a.contract,
        offer: o2,
        position: p2,
        creatorToken: o2a.creatorToken,
        takerToken: pos.takerToken,
        treasury: w.treasury,
        creator: jack.key.publicKey,
        taker: kim.key.publicKey,
        ...x,
      });
    await refused(s2({ overrides: { takerClaim: jackClaim } }), [], "AccountMismatch");
    // Another user's claim in place of the creator's (it is not the PDA of the creator's seeds).
    await refused(s2({ overrides: { creatorClaim: w.client.pda.claim(mallory.key.publicKey)[0] } }), []);
    // A keypair the caller signs with, as the taker's claim: the payout would sit where its owner
    // never looks (attacker fuzzer's finding F1c).
    const hideout = Keypair.generate();
    await refused(s2({ overrides: { takerClaim: hideout.publicKey } }), [hideout], "AccountMismatch");
    expect(await w.chain.account(hideout.publicKey)).toBeNull();
    // The claim's rent payer must sign when a claim is created.
    const stranger = await w.chain.fundedKeypair();
    await refused(unsigned(await s2({ payer: stranger.publicKey }), stranger.publicKey), [], "MissingSignature");
    expect(await w.claim(jack.key.publicKey)).toBeNull();
    expect(await w.claim(kim.key.publicKey)).toBeNull();
    expectOk(await w.send([await s2()]));
    expect((await w.claim(jack.key.publicKey))!.amount).toBe(8n * UNIT);
    expect((await w.claim(kim.key.publicKey))!.amount).toBe(10n * UNIT);
  });

  it("arbitrary CPI targets are refused", async () => {
    const fakeProgram = Keypair.generate().publicKey;
    const contract = await w.contract({ cutoffIn: 100n });
    const fee = (await w.config()).feeBps;
    const nonce = w.nextNonce();
    const create = (x: { tokenProgram?: PublicKey; systemProgram?: PublicKey }) =>
      w.createOfferIx(alice, contract, { nonce, total: 5n * UNIT, target: 5n * UNIT, feeBps: fee, overrides: x });
    await refused(create({ tokenProgram: fakeProgram }), [alice.key], "WrongProgram");
    await refused(create({ systemProgram: fakeProgram }), [alice.key], "WrongProgram");
    const { offer } = await w.createOffer(alice, contract, { total: 5n * UNIT, target: 5n * UNIT });
    const take = (x: { tokenProgram?: PublicKey; systemProgram?: PublicKey }) =>
      w.takeIx(bob, offer, 2n * UNIT, { contract, expectedRevision: 1n, overrides: x });
    await refused(take({ tokenProgram: fakeProgram }), [bob.key], "WrongProgram");
    await refused(take({ systemProgram: fakeProgram }), [bob.key], "WrongProgram");
    expectOk(await w.take(bob, offer, 2n * UNIT));
    await refused(
      w.client.closeOffer({
        caller: alice.key.publicKey,
        contract,
        offer,
        creatorToken: alice.token,
        creator: alice.key.publicKey,
        expectedRevision: 2n,
        overrides: { tokenProgram: fakeProgram },
      }),
      [alice.key],
      "WrongProgram",
    );
    // The system program is called only to create a claim: refused when that is needed.
    const lou = await looseUser();
    const { offer: o2 } = await resolvedOffer(lou, [[carol, 10n * UNIT]], "void");
    await closeTokenAccount(lou);
    const o2a = await w.offer(o2);
    const p2 = w.positionOf(o2, carol);
    const settle = (x: { tokenProgram?: PublicKey; systemProgram?: PublicKey }) =>
      w.client.settlePosition({
        contract: o2a.contract,
        offer: o2,
        position: p2,
        creatorToken: o2a.creatorToken,
        takerToken: carol.token,
        treasury: w.treasury,
        creator: lou.key.publicKey,
        taker: carol.key.publicKey,
        overrides: x,
      });
    await refused(settle({ tokenProgram: fakeProgram }), [], "WrongProgram");
    await refused(settle({ systemProgram: fakeProgram }), [], "WrongProgram");
    expectOk(await w.send([await settle({})]));
    const claim = (await w.claim(lou.key.publicKey))!;
    await refused(
      w.client.withdrawClaim({ owner: lou.key.publicKey, destination: lou.token, rentPayer: claim.rentPayer, overrides: { tokenProgram: fakeProgram } }),
      [lou.key],
      "WrongProgram",
    );
    expectOk(await w.withdrawClaim(lou.key, lou.token));
  });

  it("amounts near 2^64 neither wrap nor overflow (release builds have overflow checks off)", async () => {
    const max = (1n << 64n) - 1n;
    const w2 = await OffersWorld.create({ limits: { ...LAUNCH_LIMITS, maximumWagerMicros: max } });
    const creator = await w2.user(1n << 62n);
    const t1 = await w2.user(1n << 63n);
    const t2 = await w2.user(10n);
    const start = await w2.balances();
    const contract = await w2.contract({ cutoffIn: 100n });
    // A stake the balance cannot cover, at the extreme.
    expectError((await w2.createOffer(creator, contract, { total: max, target: max })).r, "InsufficientBalance");
    const { r, offer } = await w2.createOffer(creator, contract, { total: 1n << 62n, target: 1n << 63n });
    expectOk(r);
    expectError(await w2.take(t1, offer, max), "AmountExceedsRemaining");
    expectOk(await w2.take(t1, offer, (1n << 63n) - 3n));
    expectOk(await w2.take(t2, offer, 3n)); // the exact remainder, below the minimum take
    const p1 = await w2.position(w2.positionOf(offer, t1));
    const p2 = await w2.position(w2.positionOf(offer, t2));
    expect(p1.creatorMatched).toBe((((1n << 63n) - 3n) * (1n << 62n)) / (1n << 63n));
    expect(p1.creatorMatched + p2.creatorMatched).toBe(1n << 62n);
    await w2.chain.advance(100n);
    expectOk(await w2.resolve(contract, "sideA"));
    expectOk(await w2.settle(w2.positionOf(offer, t1)));
    expectOk(await w2.settle(w2.positionOf(offer, t2)));
    const end = await w2.balances();
    const fee1 = (1000n * ((1n << 63n) - 3n)) / 10_000n;
    const fee2 = (1000n * 3n) / 10_000n;
    expect(end.treasury).toBe(fee1 + fee2);
    expect(end.users[0]).toBe((1n << 62n) + (1n << 63n) - fee1 - fee2);
    expect([end.vault, end.total]).toEqual([0n, start.total]);
  });
});
