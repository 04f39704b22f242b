/**
 * Review of the kit-scaffold refactor (be47c22) for the pools program: every path the refactor
 * moved into kit (kit::setup::{update, set_treasury, authorised}, kit::claim::{credit, withdraw},
 * kit::setup::send, kit::dispatch!) still pins every account with the same check and the same
 * (program-specific where it was) error. Every test asserts the SAFE behaviour.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import { POOLS_ERRORS, POOLS_PROGRAM_ID, PROPOSAL_DEADLINE_SECONDS } from "../../idl/client/pools";
import { OFFERS_PROGRAM_ID } from "../../idl/client/offers";
import { PoolsWorld, UNIT } from "../../harness/pools-world";
import { TestMint } from "../../harness/token";
import { expectOk } from "../support/expect";
import { forgedClaim } from "../support/forged-claim";
import { cast4, expectError, resolvedPool } from "./review-fixture";

let w: PoolsWorld;
beforeAll(async () => {
  w = await PoolsWorld.create({ feeBps: 500 });
});

/** A copy of the canonical Config, with `authority` as its authority, at a fresh address owned by pools. */
async function forgedConfig(authority: PublicKey): Promise<PublicKey> {
  const real = (await w.chain.account(w.client.pda.config()[0]))!;
  const data = Buffer.from(real.data);
  authority.toBuffer().copy(data, 8); // authority is the Config's first field
  const fake = Keypair.generate().publicKey;
  w.chain.setAccount(fake, { ...real, data });
  return fake;
}

/** A non-canonical (lower, off-curve) bump of `["claim", owner]` and its address. */
function nonCanonicalClaim(owner: PublicKey): [PublicKey, number] {
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

describe("pools kit review: Config instructions (kit::setup::update / set_treasury / authorised)", () => {
  it("a forged Config naming the attacker as authority, at another address, is refused before it is read (update_config, set_treasury, authority_resolve)", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const fake = await forgedConfig(mallory.key.publicKey);
    const upd = await w.client.updateConfig({ authority: mallory.key.publicKey, feeBps: 10_000, config: fake });
    expectError(await w.send([upd], [mallory.key]), "AccountMismatch");
    const st = await w.client.setTreasury({ authority: mallory.key.publicKey, treasury: mallory.token, config: fake });
    expectError(await w.send([st], [mallory.key]), "AccountMismatch");
    // An escalated pool (the creator never proposed).
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, UNIT));
    expectOk(await w.pick(bob, pool, 1, UNIT));
    await w.chain.advance(101n + PROPOSAL_DEADLINE_SECONDS);
    expectOk(await w.resolve(mallory.key, pool));
    expect((await w.pool(pool)).escalated).toBe(true);
    const ar = await w.client.authorityResolve({ authority: mallory.key.publicKey, pool, outcome: 1, config: fake });
    expectError(await w.send([ar], [mallory.key]), "AccountMismatch");
    expectError(await w.authorityResolve(pool, 1, mallory.key), "Unauthorized");
    const cfg = await w.config();
    expect(cfg.feeBps).toBe(500);
    expect(cfg.treasury.toBase58()).toBe(w.treasury.toBase58());
    expect(cfg.authority.toBase58()).toBe(w.authority.publicKey.toBase58());
    expect((await w.pool(pool)).escalated).toBe(true);
    expectOk(await w.authorityResolve(pool, 0));
  });

  it("the program's own Unauthorized (not a kit error), MissingSignature and AccountNotWritable are kept", async () => {
    const [mallory] = await cast4(w);
    expectError(await w.send([await w.client.updateConfig({ authority: mallory.key.publicKey, feeBps: 0 })], [mallory.key]), "Unauthorized");
    expectError(await w.send([await w.client.setTreasury({ authority: mallory.key.publicKey, treasury: mallory.token })], [mallory.key]), "Unauthorized");
    // The real authority named but not signing.
    const unsigned = await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: 0 });
    unsigned.keys[0].isSigner = false;
    expectError(await w.send([unsigned]), "MissingSignature");
    const unsignedT = await w.client.setTreasury({ authority: w.authority.publicKey, treasury: mallory.token });
    unsignedT.keys[0].isSigner = false;
    expectError(await w.send([unsignedT]), "MissingSignature");
    // The config passed read-only.
    const ro = await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: 0 });
    ro.keys[1].isWritable = false;
    expectError(await w.send([ro], [w.authority]), "AccountNotWritable");
    expect((await w.config()).feeBps).toBe(500);
  });

  it("set_treasury refuses a token account of another mint, the vault, and a non-token account", async () => {
    const other = await TestMint.create(w.chain);
    const foreign = await other.account(w.authority.publicKey);
    const set = async (t: PublicKey) => w.send([await w.client.setTreasury({ authority: w.authority.publicKey, treasury: t })], [w.authority]);
    expectError(await set(foreign), "AccountMismatch");
    expectError(await set(w.client.pda.vault()[0]), "AccountMismatch");
    expectError(await set(w.client.pda.config()[0]), "WrongAccountOwner");
    expect((await w.config()).treasury.toBase58()).toBe(w.treasury.toBase58());
  });
});

describe("pools kit review: withdraw_claim (kit::claim::withdraw)", () => {
  it("every account is pinned: owner signs, token program, canonical config, its vault, the claim's owner and rent payer, a token account of the mint held by the owner", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const pool = await resolvedPool(w, carol, alice, bob, 0);
    const aliceNew = await w.mint.closeAccount(alice.token, alice.key);
    expectOk(await w.settle(pool, alice.key.publicKey));
    const c = (await w.claim(alice.key.publicKey))!;
    expect(c.amount).toBeGreaterThan(0n);
    const vault = w.client.pda.vault()[0];
    const vaultBefore = await w.mint.balance(vault);
    const wd = (o: {
      owner?: PublicKey;
      destination?: PublicKey;
      rentPayer?: PublicKey;
      overrides?: Parameters<typeof w.client.withdrawClaim>[0]["overrides"];
    }) =>
      w.client.withdrawClaim({
        owner: o.owner ?? alice.key.publicKey,
        destination: o.destination ?? aliceNew,
        rentPayer: o.rentPayer ?? c.rentPayer,
        overrides: o.overrides,
      });

    // The owner named but not signing (mallory sends).
    const unsigned = await wd({});
    unsigned.keys[0].isSigner = false;
    expectError(await w.send([unsigned]), "MissingSignature");
    // A fake token program.
    expectError(await w.send([await wd({ overrides: { tokenProgram: Keypair.generate().publicKey } })], [alice.key]), "WrongProgram");
    // A Config copy elsewhere (its vault field pointing at mallory's account).
    const fake = await forgedConfig(alice.key.publicKey);
    const fakeAcc = (await w.chain.account(fake))!;
    const fd = Buffer.from(fakeAcc.data);
    mallory.token.toBuffer().copy(fd, 8 + 96); // vault field
    w.chain.setAccount(fake, { ...fakeAcc, data: fd });
    expectError(await w.send([await wd({ overrides: { config: fake, vault: mallory.token } })], [alice.key]), "AccountMismatch");
    // Another vault.
    expectError(await w.send([await wd({ overrides: { vault: mallory.token } })], [alice.key]), "AccountMismatch");
    // Another rent payer.
    expectError(await w.send([await wd({ rentPayer: mallory.key.publicKey })], [alice.key]), "AccountMismatch");
    // A token account of another mint (the program's own WrongMint, not a kit error).
    const other = await TestMint.create(w.chain);
    const foreign = await other.account(alice.key.publicKey);
    expectError(await w.send([await wd({ destination: foreign })], [alice.key]), "WrongMint");
    // A token account of the mint held by someone else: mallory's, and the vault itself.
    expectError(await w.send([await wd({ destination: mallory.token })], [alice.key]), "NotTokenOwner");
    expectError(await w.send([await wd({ destination: vault })], [alice.key]), "NotTokenOwner");
    // The claim passed read-only.
    const ro = await wd({});
    ro.keys[2].isWritable = false;
    expectError(await w.send([ro], [alice.key]), "AccountNotWritable");

    expect(await w.mint.balance(vault)).toBe(vaultBefore);
    expect((await w.claim(alice.key.publicKey))!.amount).toBe(c.amount);
    const destBefore = await w.mint.balance(aliceNew);
    expectOk(await w.withdrawClaim({ key: alice.key, token: aliceNew }, aliceNew));
    expect((await w.mint.balance(aliceNew)) - destBefore).toBe(c.amount);
    expect(await w.mint.balance(vault)).toBe(vaultBefore - c.amount);
  });

  it("the claim must be this program's Claim: another program's Claim (same kit layout and discriminator) and other pools accounts are refused", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const pool = await resolvedPool(w, carol, alice, bob, 0);
    await w.mint.closeAccount(alice.token, alice.key);
    expectOk(await w.settle(pool, alice.key.publicKey)); // alice has a Claim (the template for the forgery)
    const vault = w.client.pda.vault()[0];
    const vaultBefore = await w.mint.balance(vault);
    // An offers-owned Claim naming mallory as owner, with a huge amount.
    const offersClaim = await forgedClaim(w.chain, OFFERS_PROGRAM_ID, mallory.key.publicKey, vaultBefore, mallory.key.publicKey);
    const ix = await w.substitutedClaimIx(mallory, offersClaim);
    expectError(await w.send([ix], [mallory.key]), "WrongAccountOwner");
    // A Participant, a Pool and the Config in the claim's place.
    for (const acct of [w.participantOf(pool, mallory.key.publicKey), w.participantOf(pool, alice.key.publicKey), pool, w.client.pda.config()[0]]) {
      const r = await w.send([await w.substitutedClaimIx(mallory, acct)], [mallory.key]);
      expect(["WrongAccountType", "WrongAccountOwner"]).toContain(r.ok ? "ok" : (POOLS_ERRORS.get(r.code ?? -1)?.name ?? r.error));
    }
    expect(await w.mint.balance(vault)).toBe(vaultBefore);
  });
});

describe("pools kit review: crediting a Claim (kit::claim::credit, kit::claim::create)", () => {
  it("settle_participant credits only the payee's canonical Claim: another owner's Claim, a non-canonical PDA, another program's Claim and other accounts are refused", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    // Mallory gets a Claim of her own (a refunded pick to a closed account).
    const m = await resolvedPool(w, carol, mallory, bob, 0);
    await w.mint.closeAccount(mallory.token, mallory.key);
    expectOk(await w.settle(m, mallory.key.publicKey));
    const malloryClaim = w.client.pda.claim(mallory.key.publicKey)[0];
    const mBefore = (await w.claim(mallory.key.publicKey))!.amount;

    const pool = await resolvedPool(w, carol, alice, bob, 0);
    await w.mint.closeAccount(alice.token, alice.key);
    const participant = w.participantOf(pool, alice.key.publicKey);
    const settle = (overrides: { userClaim?: PublicKey }, claimBump?: number) =>
      w.client.settleParticipant({
        pool,
        participant,
        user: alice.key.publicKey,
        userToken: alice.token,
        treasury: w.treasury,
        payer: w.chain.payer.publicKey,
        claimBump,
        overrides,
      });
    // Mallory's own (existing) Claim in alice's place.
    expectError(await w.send([await settle({ userClaim: malloryClaim })]), "AccountMismatch");
    // A non-canonical PDA of ["claim", alice].
    const [nc, ncBump] = nonCanonicalClaim(alice.key.publicKey);
    expectError(await w.send([await settle({ userClaim: nc }, ncBump)]), "AccountMismatch");
    // The canonical address with a wrong bump.
    const [canon, canonBump] = w.client.pda.claim(alice.key.publicKey);
    expectError(await w.send([await settle({ userClaim: canon }, ncBump)]), "AccountMismatch");
    // A Claim of another program naming alice (not ours: never loaded, and not creatable).
    const offersClaim = await forgedClaim(w.chain, OFFERS_PROGRAM_ID, alice.key.publicKey, 0n, mallory.key.publicKey);
    expectError(await w.send([await settle({ userClaim: offersClaim })]), "AlreadyInitialized");
    // Other pools accounts in the claim's place.
    expectError(await w.send([await settle({ userClaim: w.participantOf(pool, bob.key.publicKey) })]), "WrongAccountType");
    expectError(await w.send([await settle({ userClaim: w.client.pda.config()[0] })]), "WrongAccountType");
    // A keypair address that signs (F1): refused.
    const kp = Keypair.generate();
    const withKp = await settle({ userClaim: kp.publicKey }, canonBump);
    expectError(await w.send([withKp], [kp]), "AccountMismatch");

    expect((await w.participant(participant)).settled).toBeFalsy();
    expect((await w.claim(mallory.key.publicKey))!.amount).toBe(mBefore);
    expect(await w.claim(alice.key.publicKey)).toBeNull();
    // The honest settle credits alice's canonical Claim, rent payer recorded.
    expectOk(await w.settle(pool, alice.key.publicKey));
    const c = (await w.claim(alice.key.publicKey))!;
    expect(c.owner.toBase58()).toBe(alice.key.publicKey.toBase58());
    expect(c.rentPayer.toBase58()).toBe(w.chain.payer.publicKey.toBase58());
    expect(c.amount).toBeGreaterThan(0n);
  });

  it("refund_participant (kit::setup::send signed by the Config's bump; credit on a closed account) pays exactly the stake", async () => {
    const [carol, alice, bob] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, 3n * UNIT));
    expectOk(await w.pick(bob, pool, 1, 4n * UNIT));
    expectOk(await w.cancel(carol.key, pool));
    const b0 = await w.balanceOf(bob.token);
    expectOk(await w.refund(pool, bob.key.publicKey));
    expect((await w.balanceOf(bob.token)) - b0).toBe(4n * UNIT);
    await w.mint.closeAccount(alice.token, alice.key);
    // A Participant in the claim's place is refused; then alice's own Claim is created.
    const participant = w.participantOf(pool, alice.key.publicKey);
    const ix = await w.client.refundParticipant({
      pool,
      participant,
      user: alice.key.publicKey,
      userToken: alice.token,
      payer: w.chain.payer.publicKey,
      overrides: { userClaim: w.participantOf(pool, bob.key.publicKey) },
    });
    expectError(await w.send([ix]), "WrongAccountType");
    expectOk(await w.refund(pool, alice.key.publicKey));
    expect((await w.claim(alice.key.publicKey))!.amount).toBe(3n * UNIT);
  });
});

describe("pools kit review: dispatch! and parse", () => {
  it("short data, an unknown discriminator and a wrong argument length are InvalidInstructionData", async () => {
    const [mallory] = await cast4(w);
    const upd = await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: 0 });
    const raw = (data: Buffer) => new TransactionInstruction({ programId: POOLS_PROGRAM_ID, keys: upd.keys, data });
    expectError(await w.send([raw(Buffer.alloc(0))], [w.authority]), "InvalidInstructionData");
    expectError(await w.send([raw(upd.data.subarray(0, 7))], [w.authority]), "InvalidInstructionData");
    expectError(await w.send([raw(Buffer.alloc(8, 0xab))], [w.authority]), "InvalidInstructionData");
    expectError(await w.send([raw(upd.data.subarray(0, 9))], [w.authority]), "InvalidInstructionData");
    expectError(await w.send([raw(Buffer.concat([upd.data, Buffer.from([0])]))], [w.authority]), "InvalidInstructionData");
    const wd = await w.client.withdrawClaim({ owner: mallory.key.publicKey, destination: mallory.token, rentPayer: mallory.key.publicKey });
    expectError(
      await w.send(
        [new TransactionInstruction({ programId: POOLS_PROGRAM_ID, keys: wd.keys, data: Buffer.concat([wd.data, Buffer.from([1])]) })],
        [mallory.key],
      ),
      "InvalidInstructionData",
    );
    expect((await w.config()).feeBps).toBe(500);
  });
});
