/**
 * One Config per program (programs/SECURITY.md, "a second Config", "front-running the
 * deployment", the Config's re-initialisation): only the canonical Config counts, planted or forged
 * Configs are refused before they are read, only the upgrade authority initialises, once, and only
 * the Config's authority changes it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import { LOADER_V3, programDataAddress } from "../../../idl/client/common";
import { POOLS_PROGRAM_ID, PROPOSAL_DEADLINE_SECONDS, PoolsClient, SYSTEM_PROGRAM, TOKEN_PROGRAM, decodePoolsConfig } from "../../../idl/client/pools";
import { TestChain } from "../../../harness/chain";
import { TestMint } from "../../../harness/token";
import { UNIT, type User } from "../../../harness/pools-world";
import { createCloseAccountInstruction } from "@solana/spl-token";
import { expectOk } from "../../support/expect";
import { nonCanonical } from "../../support/bent-ix";
import {
  setUp,
  FEE_BPS,
  alice,
  bob,
  carol,
  cast4,
  expectError,
  forgedConfig,
  mallory,
  open,
  payout,
  pickIx,
  poolWith,
  refused,
  rejected,
  settleIx,
  toClose,
  ui,
  w,
} from "./scene";

beforeAll(setUp);

describe("pools: one Config", () => {
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
      expectError(await w.send([await pickIx(alice)], [alice.key]), "WrongAccountType");
      expectError(await w.send([await settleIx(alice)]), "WrongAccountType");
      expect(await w.balances()).toEqual(before);
    } finally {
      w.chain.setAccount(cfgAddress, cfg);
    }
  });

  it("re-initialising the config is refused", async () => {
    await rejected(w.client.initializeConfig({ authority: mallory.key.publicKey, mint: w.mint.mint, treasury: mallory.token, feeBps: 10_000 }), [mallory.key]);
  });

  it("a second Config cannot be created", async () => {
    const deployer = w.chain.upgradeAuthority;
    const c = w.client;
    const init = (o: Partial<Parameters<typeof c.initializeConfig>[0]>) =>
      c.initializeConfig({ authority: mallory.key.publicKey, mint: w.mint.mint, treasury: mallory.token, feeBps: 0, deployer: deployer.publicKey, ...o });
    const config = async () => (await w.chain.account(c.pda.config()[0]))!.data;
    // Another address (a plain keypair's) for config and vault, even signed by the upgrade authority.
    const [otherConfig, otherVault] = [Keypair.generate().publicKey, Keypair.generate().publicKey];
    await refused(init({ overrides: { config: otherConfig, vault: otherVault } }), [deployer], "AccountMismatch", config);
    // The ["config"] seed with another (valid, non-canonical) bump.
    const [configBump2] = nonCanonical([Buffer.from("config")], POOLS_PROGRAM_ID);
    const [vaultBump2] = nonCanonical([Buffer.from("vault")], POOLS_PROGRAM_ID);
    await refused(init({ overrides: { config: configBump2, vault: vaultBump2 } }), [deployer], "AccountMismatch", config);
    expect(await w.chain.account(configBump2)).toBeNull();
    // Anyone but the upgrade authority, at the canonical addresses.
    await refused(init({ deployer: mallory.key.publicKey }), [mallory.key], "MissingSignature", config);
    // Re-initialisation, even by the upgrade authority.
    await refused(init({}), [deployer], "AlreadyInitialized", config);
    const cfg = await w.config();
    expect([cfg.authority, cfg.mint, cfg.treasury, cfg.feeBps]).toEqual([w.authority.publicKey, w.mint.mint, w.treasury, Number(FEE_BPS)]);
  });

  it("a Config planted at another address is refused by every instruction: the rogue-pool-config attack fails", async () => {
    // The attacker's own mint, plenty of it, a fake vault, and a Config-shaped account owned by the
    // program at another address that names the attacker as authority, its mint, treasury and vault.
    const fakeMint = await TestMint.create(w.chain);
    const fakeStake = await fakeMint.account(mallory.key.publicKey, 1_000_000n * UNIT);
    const fakeVault = await fakeMint.account(mallory.key.publicKey);
    const rogue = Keypair.generate().publicKey;
    const real = (await w.chain.account(w.client.pda.config()[0]))!;
    const data = Buffer.from(real.data);
    mallory.key.publicKey.toBuffer().copy(data, 8);
    fakeMint.mint.toBuffer().copy(data, 40);
    fakeStake.toBuffer().copy(data, 72);
    fakeVault.toBuffer().copy(data, 104);
    data.writeUInt16LE(0, 136);
    w.chain.setAccount(rogue, { ...real, data });
    expect(decodePoolsConfig(data).authority.equals(mallory.key.publicKey)).toBe(true);

    // The honest pool: alice stakes 100 on the truth (0), mallory a little real money on 1.
    const pool = await poolWith(carol, [
      [alice, 0, 100n * UNIT],
      [mallory, 1, UNIT],
    ]);
    // A pool to be canceled, where mallory holds a claim (its side token account is closed).
    const side = await w.mint.account(mallory.key.publicKey, UNIT);
    const canceled = await poolWith(carol, [[alice, 0, 5n * UNIT]]);
    expectOk(
      await w.send(
        [await w.client.placePick({ payer: w.chain.payer.publicKey, user: mallory.key.publicKey, userToken: side, pool: canceled, outcome: 1, amount: UNIT })],
        [mallory.key],
      ),
    );
    expectOk(await w.cancel(carol.key, canceled));
    expectOk(await w.send([createCloseAccountInstruction(side, mallory.key.publicKey, mallory.key.publicKey)], [mallory.key]));
    expectOk(await w.refund(canceled, mallory.key.publicKey));
    expect((await w.claim(mallory.key.publicKey))!.amount).toBe(UNIT);
    // A pool to be escalated (mallory disputes).
    const escalated = await poolWith(carol, [
      [alice, 0, 3n * UNIT],
      [mallory, 1, 2n * UNIT],
    ]);
    const fake = async () => ({
      stake: await fakeMint.balance(fakeStake),
      fakeVault: await fakeMint.balance(fakeVault),
      rogue: (await w.chain.account(rogue))!.data,
      pools: await Promise.all([pool, canceled, escalated].map((p) => w.pool(p))),
      claim: await w.claim(mallory.key.publicKey),
    });
    const m = mallory.key.publicKey;
    // While picks are open: a large fake stake through the rogue config (with the fake vault, or the real one).
    const fakePick = (overrides: { config: PublicKey; vault?: PublicKey }) =>
      w.client.placePick({ payer: w.chain.payer.publicKey, user: m, userToken: fakeStake, pool, outcome: 1, amount: 1_000_000n * UNIT, overrides });
    await refused(fakePick({ config: rogue, vault: fakeVault }), [mallory.key], "AccountMismatch", fake);
    await refused(fakePick({ config: rogue }), [mallory.key], "AccountMismatch", fake);
    await refused(
      w.client.placePick({ payer: w.chain.payer.publicKey, user: m, userToken: mallory.token, pool, outcome: 1, amount: UNIT, overrides: { config: rogue } }),
      [mallory.key],
      "AccountMismatch",
      fake,
    );
    await toClose(escalated); // created last: the later close
    expectOk(await w.propose(carol.key, pool, 0));
    expectOk(await w.propose(carol.key, escalated, 0));
    expectOk(await w.vote(mallory, escalated, 1));

    // A pool created under the rogue config (fee 0).
    await refused(
      w.client.createPool({
        payer: w.chain.payer.publicKey,
        creator: m,
        nonce: 31_337n,
        question: "rogue?",
        closesAt: (await w.chain.now()) + 1_000n,
        overrides: { config: rogue },
      }),
      [mallory.key],
      "AccountMismatch",
      fake,
    );
    // The rogue authority decides the escalated pool, changes "its" fee.
    await w.chain.advance(86_400n);
    expectOk(await w.resolve(bob.key, pool));
    expectOk(await w.resolve(bob.key, escalated));
    expect((await w.pool(escalated)).escalated).toBe(true);
    await refused(w.client.authorityResolve({ authority: m, pool: escalated, outcome: 1, config: rogue }), [mallory.key], "AccountMismatch", fake);
    await refused(w.client.authorityResolve({ authority: m, pool: escalated, outcome: 1 }), [mallory.key], "Unauthorized", fake);
    await refused(w.client.updateConfig({ authority: m, feeBps: 10_000, config: rogue }), [mallory.key], "AccountMismatch", fake);
    // Payouts through the rogue config: to the real vault's winner, from the real vault, to the rogue treasury.
    const settle = (u: User, o: Record<string, PublicKey>) =>
      w.client.settleParticipant({
        pool,
        participant: w.participantOf(pool, u.key.publicKey),
        user: u.key.publicKey,
        userToken: u.token,
        treasury: w.treasury,
        payer: w.chain.payer.publicKey,
        overrides: o,
      });
    await refused(settle(mallory, { config: rogue }), [], "AccountMismatch", fake);
    await refused(settle(alice, { config: rogue, vault: fakeVault }), [], "AccountMismatch", fake);
    await refused(
      w.client.settleParticipant({
        pool,
        participant: w.participantOf(pool, m),
        user: m,
        userToken: mallory.token,
        treasury: fakeStake,
        payer: w.chain.payer.publicKey,
        overrides: { config: rogue },
      }),
      [],
      "AccountMismatch",
      fake,
    );
    expectOk(await w.refund(canceled, alice.key.publicKey));
    await refused(
      w.client.withdrawClaim({ owner: m, destination: mallory.token, rentPayer: w.chain.payer.publicKey, overrides: { config: rogue } }),
      [mallory.key],
      "AccountMismatch",
      fake,
    );
    await refused(
      w.client.withdrawClaim({ owner: m, destination: mallory.token, rentPayer: w.chain.payer.publicKey, overrides: { config: rogue, vault: fakeVault } }),
      [mallory.key],
      "AccountMismatch",
      fake,
    );
    // Nothing inflated: the pool still holds 101 real units, 100 on the truth.
    const p = await w.pool(pool);
    expect([p.state, p.winningOutcome, p.totalOi, p.outcomes.map((o) => o.totalOi), p.participantCount]).toEqual([
      "RESOLVED",
      0,
      101n * UNIT,
      [100n * UNIT, UNIT],
      2,
    ]);
    // The honest outcome: alice takes the pot less the fee; mallory gets nothing back but its claim.
    const before = await w.balances();
    expectOk(await w.settle(pool, alice.key.publicKey));
    expectOk(await w.settle(pool, m));
    expectOk(await w.withdrawClaim(mallory));
    const after = await w.balances();
    expect(after.users[ui(alice)] - before.users[ui(alice)]).toBe(payout(100n * UNIT, 101n * UNIT, 100n * UNIT));
    expect(after.users[ui(mallory)] - before.users[ui(mallory)]).toBe(UNIT); // its canceled-pool refund, from the claim
    expect(before.vault - after.vault).toBe(101n * UNIT + UNIT);
    expect(await fakeMint.balance(fakeStake)).toBe(1_000_000n * UNIT);
  });

  it("the deployment cannot be front-run", async () => {
    const chain = await TestChain.start([{ name: "pools", programId: POOLS_PROGRAM_ID }]);
    const client = PoolsClient.fromProvider(chain.anchorProvider);
    const mint = await TestMint.create(chain);
    const attacker = await chain.fundedKeypair();
    const attackerToken = await mint.account(attacker.publicKey);
    const [config, vault] = [client.pda.config()[0], client.pda.vault()[0]];
    const grab = (deployer: PublicKey, o: { programData?: PublicKey } = {}) =>
      client.initializeConfig({ authority: attacker.publicKey, mint: mint.mint, treasury: attackerToken, feeBps: 10_000, deployer, overrides: o });
    // The attacker, first after the deploy, names itself: it is not the upgrade authority.
    expectError(await chain.send([await grab(attacker.publicKey)], [attacker]), "MissingSignature");
    // A ProgramData look-alike at another address that names the attacker.
    const fakeProgramData = Keypair.generate().publicKey;
    const pd = Buffer.alloc(45);
    pd.writeUInt32LE(3, 0);
    pd[12] = 1;
    attacker.publicKey.toBuffer().copy(pd, 13);
    chain.setAccount(fakeProgramData, { lamports: 1_000_000_000, data: pd, owner: LOADER_V3, executable: false, rentEpoch: 0 });
    expectError(await chain.send([await grab(attacker.publicKey, { programData: fakeProgramData })], [attacker]), "AccountMismatch");
    expect(programDataAddress(POOLS_PROGRAM_ID).equals(fakeProgramData)).toBe(false);
    // Pre-funding the config and vault addresses (to make CreateAccount fail) blocks nothing.
    expectOk(
      await chain.send(
        [
          SystemProgram.transfer({ fromPubkey: attacker.publicKey, toPubkey: config, lamports: 1_000_000 }),
          SystemProgram.transfer({ fromPubkey: attacker.publicKey, toPubkey: vault, lamports: 1_000_000 }),
        ],
        [attacker],
      ),
    );
    expect(await chain.account(config)).not.toBeNull();
    // The upgrade authority initialises, naming the real authority.
    const authority = await chain.fundedKeypair();
    const treasury = await mint.account(authority.publicKey);
    const ix = await client.initializeConfig({
      authority: authority.publicKey,
      mint: mint.mint,
      treasury,
      feeBps: 500,
      deployer: chain.upgradeAuthority.publicKey,
    });
    expectOk(await chain.send([ix], [chain.upgradeAuthority]));
    const cfg = decodePoolsConfig((await chain.account(config))!.data);
    expect([cfg.authority, cfg.treasury, cfg.vault, cfg.feeBps]).toEqual([authority.publicKey, treasury, vault, 500]);
    const v = (await chain.account(vault))!;
    expect(v.owner.equals(TOKEN_PROGRAM)).toBe(true);
    expect(v.data.subarray(32, 64).equals(config.toBuffer())).toBe(true); // the vault's token owner is the config PDA
    // Topped up from the attacker's 1,000,000 lamports to exactly the rent-exempt minimum.
    expect(await chain.lamports(config)).toBe(await chain.rentExempt((await chain.account(config))!.data.length));
    expect(await chain.lamports(vault)).toBe(await chain.rentExempt(165));
    // Too late for anyone now, the upgrade authority included.
    expectError(await chain.send([await grab(attacker.publicKey)], [attacker]), "MissingSignature");
    expectError(await chain.send([await grab(chain.upgradeAuthority.publicKey)], [chain.upgradeAuthority]), "AlreadyInitialized");
    expect([await mint.balance(vault), await mint.balance(attackerToken)]).toEqual([0n, 0n]);
  });

  it("rogue config: a program-shaped Config at another address is refused", async () => {
    const [carol, alice] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 1_000n });
    const real = await w.chain.account(w.client.pda.config()[0]);
    const fake = Keypair.generate().publicKey;
    const data = Buffer.from(real!.data);
    w.chain.setAccount(fake, { ...real!, data });
    const ix = await w.pickIx(alice, pool, 0, UNIT, { overrides: { config: fake } });
    expectError(await w.send([ix], [alice.key]), "AccountMismatch");
  });

  it("config takeover: initialize_config again with a forged ProgramData, or update_config by a non-authority, is refused", async () => {
    const [mallory] = await cast4(w);
    const fakePd = Keypair.generate().publicKey;
    const data = Buffer.alloc(45);
    data.writeUInt32LE(3, 0);
    data[12] = 1;
    mallory.key.publicKey.toBuffer().copy(data, 13);
    w.chain.setAccount(fakePd, { lamports: 10_000_000, data, owner: LOADER_V3, executable: false, rentEpoch: 0 });
    const init = await w.client.initializeConfig({
      authority: mallory.key.publicKey,
      mint: w.mint.mint,
      treasury: mallory.token,
      feeBps: 10_000,
      deployer: mallory.key.publicKey,
      overrides: { programData: fakePd },
    });
    expectError(await w.send([init], [mallory.key]), "AccountMismatch");
    const init2 = await w.client.initializeConfig({
      authority: mallory.key.publicKey,
      mint: w.mint.mint,
      treasury: mallory.token,
      feeBps: 10_000,
      deployer: mallory.key.publicKey,
    });
    expectError(await w.send([init2], [mallory.key]), "MissingSignature");
    const upd = await w.client.updateConfig({ authority: mallory.key.publicKey, feeBps: 10_000 });
    expectError(await w.send([upd], [mallory.key]), "Unauthorized");
    expect((await w.config()).feeBps).toBe(500);
  });

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
