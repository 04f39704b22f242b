/**
 * One Config per program (programs/SECURITY.md, "a second Config", "front-running the
 * deployment", the Config's re-initialisation): only the canonical Config counts, planted or forged
 * Configs are refused before they are read, only the upgrade authority initialises, once, and only
 * the Config's authority changes it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey } from "@solana/web3.js";
import { LAUNCH_LIMITS, OffersClient, TOKEN_PROGRAM, decodeConfig } from "../../../idl/client/offers";
import { LOADER_V3, programDataAddress } from "../../../idl/client/common";
import { TestChain } from "../../../harness/chain";
import { TestMint } from "../../../harness/token";
import { UNIT } from "../../../harness/offers-world";
import { expectError, expectOk } from "../../support/expect";
import { nonCanonical, rekey, unsigned } from "../../support/bent-ix";
import { randomUUID } from "node:crypto";
import {
  setUp,
  alice,
  bob,
  carol,
  closeTokenAccount,
  forgedConfig,
  looseUser,
  mallory,
  offer,
  pid,
  refused,
  rejected,
  resolvedOffer,
  takeIx,
  users,
  w,
} from "./scene";

beforeAll(setUp);

describe("offers: one Config", () => {
  it("a config account forged by another owner, and the offer passed as config: the config address is pinned", async () => {
    const forged = Keypair.generate().publicKey;
    w.chain.setAccount(forged, { ...(await w.chain.account(w.client.pda.config()[0]))!, owner: TOKEN_PROGRAM });
    const o = await w.offer(offer);
    await rejected(takeIx(o.revision, { overrides: { config: forged } }), [bob.key], "AccountMismatch");
    await rejected(takeIx(o.revision, { overrides: { config: offer } }), [bob.key], "AccountMismatch");
  });

  it("re-initialising the config is refused: a stranger is not the upgrade authority, and the upgrade authority finds it initialised", async () => {
    const cfgBefore = (await w.chain.account(w.client.pda.config()[0]))!.data;
    const init = { authority: mallory.key.publicKey, mint: w.mint.mint, treasury: mallory.token, feeBps: 0, offersEnabled: true, limits: LAUNCH_LIMITS };
    await rejected(w.client.initializeConfig(init), [mallory.key], "MissingSignature");
    const deployer = w.chain.upgradeAuthority;
    const again = w.client.initializeConfig({ ...init, deployer: deployer.publicKey });
    await rejected(again, [mallory.key, deployer], "AlreadyInitialized");
    expect((await w.chain.account(w.client.pda.config()[0]))!.data.equals(cfgBefore)).toBe(true);
  });

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

  it("rogue config / non-authority admin: refused (create_offer with a copied Config, update_config, create_contract, resolve)", async () => {
    const [carol, mallory] = await users(2);
    const contract = await w.contract();
    const real = (await w.chain.account(w.client.pda.config()[0]))!;
    const fake = Keypair.generate().publicKey;
    w.chain.setAccount(fake, { ...real, data: Buffer.from(real.data) });
    const ix = await w.client.createOffer({
      payer: w.chain.payer.publicKey,
      creator: carol.key.publicKey,
      creatorToken: carol.token,
      contract,
      nonce: w.nextNonce(),
      side: "sideA",
      creatorTotal: 8n * UNIT,
      takerTarget: 10n * UNIT,
      minimumTake: UNIT,
      expectedFeeBps: (await w.config()).feeBps,
      overrides: { config: fake },
    });
    expectError(await w.send([ix], [carol.key]), "AccountMismatch");
    expectError(
      await w.send(
        [await w.client.updateConfig({ authority: mallory.key.publicKey, feeBps: 10_000, offersEnabled: true, limits: LAUNCH_LIMITS })],
        [mallory.key],
      ),
      "Unauthorized",
    );
    const now = await w.chain.now();
    expectError(
      await w.send([await w.contractIx(now, { by: mallory.key.publicKey, cutoffIn: 100n, deadlineAfterCutoff: 100n })], [mallory.key]),
      "Unauthorized",
    );
    expectError(await w.send([await w.client.resolveContract({ authority: mallory.key.publicKey, contract, result: "void" })], [mallory.key]), "Unauthorized");
    const init = await w.client.initializeConfig({
      authority: mallory.key.publicKey,
      mint: w.mint.mint,
      treasury: mallory.token,
      feeBps: 10_000,
      offersEnabled: true,
      limits: LAUNCH_LIMITS,
      deployer: mallory.key.publicKey,
    });
    expectError(await w.send([init], [mallory.key]), "MissingSignature");
  });

  it("a forged Config naming the attacker as authority is refused before it is read; a non-authority gets the program's Unauthorized", async () => {
    const [mallory] = await users(1);
    const before = await w.config();
    const fake = await forgedConfig(mallory.key.publicKey);
    const upd = (authority: PublicKey, config?: PublicKey) =>
      w.client.updateConfig({ authority, feeBps: 10_000, offersEnabled: true, limits: LAUNCH_LIMITS, config });
    expectError(await w.send([await upd(mallory.key.publicKey, fake)], [mallory.key]), "AccountMismatch");
    expectError(await w.send([await upd(mallory.key.publicKey)], [mallory.key]), "Unauthorized");
    const st = (authority: PublicKey, config?: PublicKey) => w.client.setTreasury({ authority, treasury: mallory.token, config });
    expectError(await w.send([await st(mallory.key.publicKey, fake)], [mallory.key]), "AccountMismatch");
    expectError(await w.send([await st(mallory.key.publicKey)], [mallory.key]), "Unauthorized");
    // create_contract (kit::setup::authorised) with the forged Config, and by a non-authority.
    const now = await w.chain.now();
    const cc = (config?: PublicKey) => w.contractIx(now, { by: mallory.key.publicKey, cutoffIn: 100n, deadlineAfterCutoff: 100n, config });
    expectError(await w.send([await cc(fake)], [mallory.key]), "AccountMismatch");
    expectError(await w.send([await cc()], [mallory.key]), "Unauthorized");
    // Unsigned real authority; read-only config.
    const unsigned = await upd(w.authority.publicKey);
    unsigned.keys[0].isSigner = false;
    expectError(await w.send([unsigned]), "MissingSignature");
    const ro = await upd(w.authority.publicKey);
    ro.keys[1].isWritable = false;
    expectError(await w.send([ro], [w.authority]), "AccountNotWritable");
    // set_treasury: another mint's account, the vault.
    const other = await TestMint.create(w.chain);
    const foreign = await other.account(w.authority.publicKey);
    expectError(await w.send([await w.client.setTreasury({ authority: w.authority.publicKey, treasury: foreign })], [w.authority]), "AccountMismatch");
    expectError(
      await w.send([await w.client.setTreasury({ authority: w.authority.publicKey, treasury: w.client.pda.vault()[0] })], [w.authority]),
      "AccountMismatch",
    );
    const after = await w.config();
    expect(after.feeBps).toBe(before.feeBps);
    expect(after.treasury.toBase58()).toBe(before.treasury.toBase58());
  });
});
