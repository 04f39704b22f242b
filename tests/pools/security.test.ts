/**
 * The attacks of issues #10 (the programs can be drained) and #15 (value locked or taken) against
 * the pools program, each a named regression with token balances asserted: a second or planted
 * Config (the rogue-pool-config attack), a front-run deployment, duplicate participants and
 * non-canonical PDAs, pre-funded addresses, a late whale voting itself the pot, a creator that
 * never proposes, an authority that never decides, a payee whose token account cannot receive;
 * then the remaining attack classes of programs/SECURITY.md (missing signers on the new
 * instructions, type cosplay, arbitrary CPI, duplicate accounts, claim revival, sysvars,
 * arithmetic at the top of u64).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey, SystemProgram, TransactionInstruction } from "@solana/web3.js";
import { AuthorityType, createCloseAccountInstruction, createSetAuthorityInstruction } from "@solana/spl-token";
import {
  MAX_OPEN_SECONDS,
  MAX_RESOLUTION_DELAY_SECONDS,
  PROPOSAL_DEADLINE_SECONDS,
  AUTHORITY_DEADLINE_SECONDS,
  POOLS_ERRORS,
  POOLS_IDL,
  POOLS_PROGRAM_ID,
  PoolsClient,
  SYSTEM_PROGRAM,
  TOKEN_PROGRAM,
  decodePool,
  decodePoolsConfig,
  parsePoolsEvents,
} from "../../idl/client/pools";
import { LOADER_V3, programDataAddress } from "../../idl/client/common";
import { PoolsWorld, UNIT, type User } from "../../harness/pools-world";
import { TestChain, type TxResult } from "../../harness/chain";
import { TestMint } from "../../harness/token";
import { expectError as expectErr, expectOk } from "../support/expect";
import { nonCanonical, unsigned } from "../support/bent-ix";

const expectError = (r: TxResult, name: string) => expectErr(r, name, POOLS_ERRORS);
const FEE_BPS = 500n;

let w: PoolsWorld;
let carol: User, alice: User, bob: User, mallory: User;
beforeAll(async () => {
  w = await PoolsWorld.create({ feeBps: Number(FEE_BPS) });
  [carol, alice, bob, mallory] = [await w.user(), await w.user(), await w.user(), await w.user()];
});

const ui = (u: User) => w.users.indexOf(u);
/** What a winner with `stake` receives from a pot `total` whose winning side holds `winners`. */
const payout = (stake: bigint, total: bigint, winners: bigint) => {
  const gross = (stake * total) / winners;
  return gross - ((gross - stake) * FEE_BPS) / 10_000n;
};
/** Sends `ix`, expects `name`, and checks that no token balance (and nothing `extra` reads) changed. */
async function refused(
  ix: TransactionInstruction | Promise<TransactionInstruction>,
  signers: Keypair[],
  name: string,
  extra: () => Promise<unknown> = async () => null,
) {
  const before = { balances: await w.balances(), extra: await extra() };
  expectError(await w.send([await ix], signers), name);
  expect({ balances: await w.balances(), extra: await extra() }).toEqual(before);
}
/** A pool by `creator` closing in `closesIn` s with the given picks. */
async function poolWith(creator: User, picks: [User, number, bigint][], closesIn = 100n): Promise<PublicKey> {
  const { r, pool } = await w.createPool(creator, { closesIn });
  expectOk(r);
  for (const [u, o, amount] of picks) expectOk(await w.pick(u, pool, o, amount));
  return pool;
}
const toClose = async (pool: PublicKey) => w.chain.setTime((await w.pool(pool)).closesAt);
/**
 * mallory (no part in `pool`) cancels it and refunds alice and bob, who staked 10 and 20: each
 * gets exactly its stake back and the pool ends REFUNDED. Returns the balances around it.
 */
async function strangerCancelsAndRefunds(pool: PublicKey) {
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

describe("one Config (#10)", () => {
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
});

describe("unique, canonical accounts (#10)", () => {
  it("a participant exists once per (pool, user)", async () => {
    const [pool] = [await poolWith(carol, [], 1_000n)];
    const seeds = [Buffer.from("participant"), pool.toBuffer(), alice.key.publicKey.toBuffer()];
    const [second, bump] = nonCanonical(seeds, POOLS_PROGRAM_ID);
    const pick = (o: { participant?: PublicKey; bump?: number } = {}) =>
      w.client.placePick({
        payer: w.chain.payer.publicKey,
        user: alice.key.publicKey,
        userToken: alice.token,
        pool,
        outcome: 0,
        amount: 7n * UNIT,
        participantBump: o.bump,
        overrides: o.participant ? { participant: o.participant } : {},
      });
    const poolState = () => w.pool(pool);
    // A second record at a non-canonical bump: before and after the canonical one exists.
    await refused(pick({ participant: second, bump }), [alice.key], "AccountMismatch", poolState);
    expectOk(await w.send([await pick()], [alice.key]));
    await refused(pick({ participant: second, bump }), [alice.key], "AccountMismatch", poolState);
    expectOk(await w.send([await pick()], [alice.key])); // existing: a second pick, same record
    expect(await w.chain.account(second)).toBeNull();
    // The canonical address declared with a lower bump is refused too.
    const [, bobBump] = nonCanonical([Buffer.from("participant"), pool.toBuffer(), bob.key.publicKey.toBuffer()], POOLS_PROGRAM_ID);
    await refused(
      w.client.placePick({
        payer: w.chain.payer.publicKey,
        user: bob.key.publicKey,
        userToken: bob.token,
        pool,
        outcome: 0,
        amount: UNIT,
        participantBump: bobBump,
      }),
      [bob.key],
      "AccountMismatch",
      poolState,
    );
    // Distinct people: alice 3 picks, bob 2, mallory 1 -> 3 participants.
    expectOk(await w.pick(alice, pool, 1, UNIT));
    expectOk(await w.pick(bob, pool, 0, UNIT));
    expectOk(await w.pick(bob, pool, 1, UNIT));
    expectOk(await w.pick(mallory, pool, 1, UNIT));
    const p = await w.pool(pool);
    expect([p.participantCount, p.outcomes.map((o) => o.wagerCount), p.totalOi]).toEqual([3, [3, 3], 18n * UNIT]);
    expect((await w.participant(w.participantOf(pool, alice.key.publicKey))).total).toBe(15n * UNIT);
  });

  it("a pool exists once per (creator, nonce): a non-canonical bump and a replay fail", async () => {
    const nonce = 900_001n;
    const seeds = [Buffer.from("pool"), carol.key.publicKey.toBuffer(), Buffer.from(new BigUint64Array([nonce]).buffer)];
    const [second, bump] = nonCanonical(seeds, POOLS_PROGRAM_ID);
    const closesAt = (await w.chain.now()) + 1_000n;
    const create = (o: { pool?: PublicKey; bump?: number }) =>
      w.client.createPool({
        payer: w.chain.payer.publicKey,
        creator: carol.key.publicKey,
        nonce,
        question: "once?",
        closesAt,
        bump: o.bump,
        overrides: o.pool ? { pool: o.pool } : {},
      });
    await refused(create({ pool: second, bump }), [carol.key], "AccountMismatch");
    expect(await w.chain.account(second)).toBeNull();
    expectOk(await w.send([await create({})], [carol.key]));
    await refused(create({}), [carol.key], "AlreadyInitialized");
    await refused(create({ pool: second, bump }), [carol.key], "AccountMismatch");
  });

  it("no record at a signing keypair's address: a second pool, participant or claim of the same seeds", async () => {
    // A keypair the caller holds can sign the system program's CreateAccount whatever the seeds
    // say; the program refuses a signing account where it creates a PDA.
    const K = Keypair.generate();
    const nonce = w.nextNonce();
    const closesAt = (await w.chain.now()) + 100n;
    // (carol pays her own fees here: a third signature would not fit create_pool's transaction)
    const make = (pool?: PublicKey) =>
      w.client.createPool({ payer: carol.key.publicKey, creator: carol.key.publicKey, nonce, question: "twice?", closesAt, overrides: pool ? { pool } : {} });
    expectOk(await w.chain.send([await make()], [], carol.key));
    const before = await w.balances();
    expectError(await w.chain.send([await make(K.publicKey)], [K], carol.key), "AccountMismatch");
    expect(await w.balances()).toEqual(before);
    expect(await w.chain.account(K.publicKey)).toBeNull();
    const pool = w.client.pda.pool(carol.key.publicKey, nonce)[0];
    const victim = await w.user(3n * UNIT);
    expectOk(await w.pick(victim, pool, 0, 2n * UNIT));
    const pickAt = (participant: PublicKey) =>
      w.client.placePick({
        payer: w.chain.payer.publicKey,
        user: victim.key.publicKey,
        userToken: victim.token,
        pool,
        outcome: 1,
        amount: UNIT,
        overrides: { participant },
      });
    await refused(pickAt(K.publicKey), [victim.key, K], "AccountMismatch", () => w.pool(pool));
    expect((await w.pool(pool)).participantCount).toBe(1);
    // The crank hides a payout in a Claim of its choosing: refused, and the canonical claim receives it.
    expectOk(await w.cancel(carol.key, pool));
    await w.closeTokenAccount(victim, carol.token);
    const refundTo = (userClaim?: PublicKey) =>
      w.client.refundParticipant({
        pool,
        participant: w.participantOf(pool, victim.key.publicKey),
        user: victim.key.publicKey,
        userToken: victim.token,
        payer: mallory.key.publicKey,
        overrides: userClaim ? { userClaim } : {},
      });
    await refused(refundTo(K.publicKey), [mallory.key, K], "AccountMismatch", () => w.claim(victim.key.publicKey));
    expect(await w.chain.account(K.publicKey)).toBeNull();
    expectOk(await w.send([await refundTo()], [mallory.key]));
    expect((await w.claim(victim.key.publicKey))!.amount).toBe(2n * UNIT);
  });

  it("pre-funded addresses do not block creation (pool, participant, claim)", async () => {
    const fund = (to: PublicKey, lamports: number) => SystemProgram.transfer({ fromPubkey: mallory.key.publicKey, toPubkey: to, lamports });
    const nonce = w.nextNonce();
    const poolAddress = w.client.pda.pool(carol.key.publicKey, nonce)[0];
    const victim = await w.user(4n * UNIT);
    const participant = w.participantOf(poolAddress, victim.key.publicKey);
    const claim = w.client.pda.claim(victim.key.publicKey)[0];
    // More than the rent of a Pool (no top-up needed), and less than the rent of a Participant / Claim.
    const poolRent = await w.chain.rentExempt((await w.chain.account(w.pools[0]))!.data.length);
    expectOk(await w.send([fund(poolAddress, Number(poolRent) + 5_000), fund(participant, 1_000_000), fund(claim, 1_000_000)], [mallory.key]));
    const { r, pool } = await w.createPool(carol, { nonce, closesIn: 100n });
    expectOk(r);
    expect(pool.equals(poolAddress)).toBe(true);
    expect((await w.pool(pool)).state).toBe("OPEN");
    expect(await w.chain.lamports(pool)).toBe(poolRent + 5_000n);
    const before = await w.balances();
    expectOk(await w.pick(victim, pool, 0, 4n * UNIT));
    const part = await w.participant(participant);
    expect([part.total, (await w.pool(pool)).participantCount]).toEqual([4n * UNIT, 1]);
    expect(await w.chain.lamports(participant)).toBe(await w.chain.rentExempt((await w.chain.account(participant))!.data.length));
    expect((await w.balances()).vault - before.vault).toBe(4n * UNIT);
    // The claim: the victim closes its (empty) token account, the pool is canceled, its refund goes to the pre-funded claim address.
    expectOk(await w.cancel(carol.key, pool));
    await w.closeTokenAccount(victim);
    expectOk(await w.refund(pool, victim.key.publicKey));
    const c = (await w.claim(victim.key.publicKey))!;
    expect([c.owner, c.amount, c.rentPayer]).toEqual([victim.key.publicKey, 4n * UNIT, w.chain.payer.publicKey]);
    expect(await w.chain.lamports(claim)).toBe(await w.chain.rentExempt((await w.chain.account(claim))!.data.length));
    const fresh = await w.mint.account(victim.key.publicKey);
    expectOk(await w.withdrawClaim(victim, fresh));
    expect(await w.mint.balance(fresh)).toBe(4n * UNIT);
    expect(await w.chain.account(claim)).toBeNull();
  });
});

describe("resolution cannot be bought (#15.3)", () => {
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
});

describe("a creator cannot lock stakes for ever", () => {
  it("closesAt and resolutionAt are bounded (i64::MAX refused), and a pool at both bounds is refunded by anyone within the bound", async () => {
    const now = await w.chain.now();
    const I64_MAX = 2n ** 63n - 1n;
    const before = await w.balances();
    expectError((await w.createPool(carol, { closesAt: now + MAX_OPEN_SECONDS + 1n })).r, "ClosesAtTooFar");
    expectError((await w.createPool(carol, { closesAt: I64_MAX })).r, "ClosesAtTooFar");
    expectError((await w.createPool(carol, { closesAt: now + 100n, resolutionAt: now + 100n + MAX_RESOLUTION_DELAY_SECONDS + 1n })).r, "ResolutionTooLate");
    expectError((await w.createPool(carol, { closesAt: now + 100n, resolutionAt: I64_MAX })).r, "ResolutionTooLate");
    expect(await w.balances()).toEqual(before);
    // At both bounds: the creator never proposes and the authority never decides. The last
    // moment anything depends on is closesAt + 30 d + 72 h + 7 d; then anyone refunds.
    const closesAt = now + MAX_OPEN_SECONDS;
    const { r, pool } = await w.createPool(carol, { closesAt, resolutionAt: closesAt + MAX_RESOLUTION_DELAY_SECONDS });
    expectOk(r);
    expectOk(await w.pick(alice, pool, 0, 10n * UNIT));
    expectOk(await w.pick(bob, pool, 1, 20n * UNIT));
    const escalatable = closesAt + MAX_RESOLUTION_DELAY_SECONDS + PROPOSAL_DEADLINE_SECONDS;
    await w.chain.setTime(escalatable);
    expectOk(await w.resolve(mallory.key, pool));
    await w.chain.setTime(escalatable + AUTHORITY_DEADLINE_SECONDS);
    await strangerCancelsAndRefunds(pool);
  });
});

describe("payouts do not depend on the payee's token account (#15.1)", () => {
  it("a closed token account does not block a payout", async () => {
    const winner = await w.user(14n * UNIT);
    const reowner = await w.user(5n * UNIT);
    const pool = await poolWith(carol, [
      [winner, 0, 10n * UNIT],
      [bob, 1, 30n * UNIT],
      [reowner, 0, 5n * UNIT],
    ]);
    const canceled = await poolWith(carol, [[winner, 0, 4n * UNIT]]);
    expectOk(await w.cancel(carol.key, canceled));
    // The winner closes its (now empty) token account; the other re-owns its account to mallory.
    await w.closeTokenAccount(winner);
    expectOk(
      await w.send([createSetAuthorityInstruction(reowner.token, reowner.key.publicKey, AuthorityType.AccountOwner, mallory.key.publicKey)], [reowner.key]),
    );
    const start = await w.balances();
    // The refund goes to the winner's claim, created with the rent of whoever cranks it (here a sponsor)...
    const sponsor = await w.chain.fundedKeypair();
    const refundIx = await w.client.refundParticipant({
      pool: canceled,
      participant: w.participantOf(canceled, winner.key.publicKey),
      user: winner.key.publicKey,
      userToken: winner.token,
      payer: sponsor.publicKey,
    });
    const sponsorBefore = await w.chain.lamports(sponsor.publicKey);
    const r = await w.send([refundIx], [sponsor]);
    expectOk(r);
    const claimAddress = w.client.pda.claim(winner.key.publicKey)[0];
    const rent = await w.chain.lamports(claimAddress);
    expect(sponsorBefore - (await w.chain.lamports(sponsor.publicKey))).toBe(rent);
    expect((await w.claim(winner.key.publicKey))!.rentPayer).toEqual(sponsor.publicKey);
    expect(parsePoolsEvents(r.logs).map((e) => [e.name, e.data.amount ?? e.data.payout, e.data.total])).toEqual([
      ["claimCredited", 4n * UNIT, 4n * UNIT],
      ["participantSettled", 4n * UNIT, undefined],
      ["poolStateChanged", undefined, undefined],
    ]);
    expect((await w.pool(canceled)).state).toBe("REFUNDED");
    // ...and so does the payout, added to it.
    await toClose(pool);
    expectOk(await w.propose(carol.key, pool, 0));
    await w.chain.advance(86_400n);
    expectOk(await w.resolve(mallory.key, pool));
    const mine = payout(10n * UNIT, 45n * UNIT, 15n * UNIT),
      theirs = payout(5n * UNIT, 45n * UNIT, 15n * UNIT);
    expectOk(await w.settle(pool, winner.key.publicKey));
    expectOk(await w.settle(pool, bob.key.publicKey));
    expectOk(await w.settle(pool, reowner.key.publicKey)); // its account, now mallory's, gets nothing
    expect((await w.pool(pool)).state).toBe("DISTRIBUTED");
    expect((await w.claim(winner.key.publicKey))!.amount).toBe(4n * UNIT + mine);
    expect((await w.claim(reowner.key.publicKey))!.amount).toBe(theirs);
    const mid = await w.balances();
    expect(mid.users[ui(reowner)]).toBe(start.users[ui(reowner)]); // the re-owned account received nothing
    expect(mid.users[ui(bob)]).toBe(start.users[ui(bob)]); // the loser
    expect(mid.treasury - start.treasury).toBe(45n * UNIT - mine - theirs);
    expect(start.vault - mid.vault).toBe(45n * UNIT - mine - theirs); // both claims stay in the vault

    // Withdrawal: only the owner, only to a token account of the mint it owns, rent back to the payer.
    const fresh = await w.mint.account(winner.key.publicKey);
    const otherMint = await TestMint.create(w.chain);
    const foreign = await otherMint.account(winner.key.publicKey);
    const claimState = async () => [await w.claim(winner.key.publicKey), await w.mint.balance(fresh)];
    await refused(
      w.client.withdrawClaim({ owner: mallory.key.publicKey, destination: mallory.token, rentPayer: sponsor.publicKey, overrides: { claim: claimAddress } }),
      [mallory.key],
      "AccountMismatch",
      claimState,
    );
    await refused(
      w.client.withdrawClaim({ owner: winner.key.publicKey, destination: mallory.token, rentPayer: sponsor.publicKey }),
      [winner.key],
      "NotTokenOwner",
      claimState,
    );
    await refused(
      w.client.withdrawClaim({ owner: winner.key.publicKey, destination: foreign, rentPayer: sponsor.publicKey }),
      [winner.key],
      "WrongMint",
      claimState,
    );
    await refused(
      w.client.withdrawClaim({ owner: winner.key.publicKey, destination: fresh, rentPayer: mallory.key.publicKey }),
      [winner.key],
      "AccountMismatch",
      claimState,
    );
    await refused(
      w.client.withdrawClaim({ owner: winner.key.publicKey, destination: fresh, rentPayer: w.chain.payer.publicKey }),
      [winner.key],
      "AccountMismatch",
      claimState,
    );
    await refused(
      w.client.withdrawClaim({ owner: winner.key.publicKey, destination: w.client.pda.vault()[0], rentPayer: sponsor.publicKey }),
      [winner.key],
      "NotTokenOwner",
      claimState,
    );
    const sponsorMid = await w.chain.lamports(sponsor.publicKey);
    const wr = await w.withdrawClaim(winner, fresh);
    expectOk(wr);
    expect(parsePoolsEvents(wr.logs).map((e) => [e.name, e.data.amount])).toEqual([["claimWithdrawn", 4n * UNIT + mine]]);
    expect(await w.mint.balance(fresh)).toBe(4n * UNIT + mine);
    expect(await w.chain.account(claimAddress)).toBeNull();
    expect((await w.chain.lamports(sponsor.publicKey)) - sponsorMid).toBe(rent); // the rent back to whoever paid it
    expectError(await w.withdrawClaim(winner, fresh), "WrongAccountOwner");
    expectOk(await w.withdrawClaim(reowner, await w.mint.account(reowner.key.publicKey)));
    expect((await w.balances()).vault).toBe(mid.vault - 4n * UNIT - mine - theirs);
  });

  it("a claim cannot be another user's or at a non-canonical address", async () => {
    const [a, b] = [await w.user(3n * UNIT), await w.user(2n * UNIT)];
    const pool = await poolWith(carol, [
      [a, 0, 3n * UNIT],
      [b, 1, 2n * UNIT],
    ]);
    expectOk(await w.cancel(carol.key, pool));
    await w.closeTokenAccount(a);
    await w.closeTokenAccount(b);
    expectOk(await w.refund(pool, a.key.publicKey)); // a's claim exists now
    const refundB = (o: { userClaim?: PublicKey; claimBump?: number }) =>
      w.client.refundParticipant({
        pool,
        participant: w.participantOf(pool, b.key.publicKey),
        user: b.key.publicKey,
        userToken: b.token,
        payer: w.chain.payer.publicKey,
        claimBump: o.claimBump,
        overrides: o.userClaim ? { userClaim: o.userClaim } : {},
      });
    const state = async () => [await w.claim(a.key.publicKey), await w.pool(pool)];
    await refused(refundB({ userClaim: w.client.pda.claim(a.key.publicKey)[0] }), [], "AccountMismatch", state);
    const [second, bump] = nonCanonical([Buffer.from("claim"), b.key.publicKey.toBuffer()], POOLS_PROGRAM_ID);
    await refused(refundB({ userClaim: second, claimBump: bump }), [], "AccountMismatch", state);
    // A participant record (program-owned, another type) as the claim.
    await refused(refundB({ userClaim: w.participantOf(pool, b.key.publicKey) }), [], "WrongAccountType", state);
    expectOk(await w.send([await refundB({})]));
    expect((await w.claim(b.key.publicKey))!.amount).toBe(2n * UNIT);
    expect((await w.claim(a.key.publicKey))!.amount).toBe(3n * UNIT);
  });
});

describe("the other attack classes (SECURITY.md)", () => {
  it("missing signers on the new instructions: propose, authority_resolve, settle's payer, withdraw_claim", async () => {
    const pool = await poolWith(carol, [
      [alice, 0, UNIT],
      [bob, 1, UNIT],
    ]);
    await toClose(pool);
    const state = () => w.pool(pool);
    await refused(
      unsigned(await w.client.proposeOutcome({ creator: carol.key.publicKey, pool, outcome: 0 }), carol.key.publicKey),
      [],
      "MissingSignature",
      state,
    );
    expectOk(await w.propose(carol.key, pool, 0));
    expectOk(await w.vote(bob, pool, 1));
    await w.chain.advance(86_400n);
    expectOk(await w.resolve(carol.key, pool));
    await refused(
      unsigned(await w.client.authorityResolve({ authority: w.authority.publicKey, pool, outcome: 1 }), w.authority.publicKey),
      [],
      "MissingSignature",
      state,
    );
    expectOk(await w.authorityResolve(pool, 0));
    const payer = Keypair.generate().publicKey;
    const settle = await w.client.settleParticipant({
      pool,
      participant: w.participantOf(pool, alice.key.publicKey),
      user: alice.key.publicKey,
      userToken: alice.token,
      treasury: w.treasury,
      payer,
    });
    await refused(unsigned(settle, payer), [], "MissingSignature", state);
    const c = await w.user(UNIT);
    const p2 = await poolWith(carol, [[c, 0, UNIT]]);
    expectOk(await w.cancel(carol.key, p2));
    await w.closeTokenAccount(c);
    expectOk(await w.refund(p2, c.key.publicKey));
    const dest = await w.mint.account(c.key.publicKey);
    await refused(
      unsigned(await w.client.withdrawClaim({ owner: c.key.publicKey, destination: dest, rentPayer: w.chain.payer.publicKey }), c.key.publicKey),
      [],
      "MissingSignature",
      () => w.claim(c.key.publicKey),
    );
  });

  it("type cosplay and forged owners: a Participant as a Pool, a Pool as a Claim, Claim bytes under another owner", async () => {
    const c = await w.user(UNIT);
    const pool = await poolWith(carol, [
      [c, 0, UNIT],
      [alice, 1, UNIT],
    ]);
    expectOk(await w.cancel(carol.key, pool));
    await w.closeTokenAccount(c);
    expectOk(await w.refund(pool, c.key.publicKey));
    const part = w.participantOf(pool, alice.key.publicKey);
    const state = async () => [await w.pool(pool), await w.claim(c.key.publicKey)];
    // A participant record passed as the pool of a vote / refund.
    await refused(w.client.castVote({ voter: alice.key.publicKey, pool: part, outcome: 0, participant: part }), [alice.key], "WrongAccountType", state);
    await refused(
      w.client.refundParticipant({ pool: part, participant: part, user: alice.key.publicKey, userToken: alice.token, payer: w.chain.payer.publicKey }),
      [],
      "WrongAccountType",
      state,
    );
    // A pool as the claim to withdraw, and the claim as a participant.
    const dest = await w.mint.account(c.key.publicKey);
    await refused(
      w.client.withdrawClaim({ owner: c.key.publicKey, destination: dest, rentPayer: w.chain.payer.publicKey, overrides: { claim: pool } }),
      [c.key],
      "WrongAccountType",
      state,
    );
    await refused(
      w.client.refundParticipant({
        pool,
        participant: w.client.pda.claim(c.key.publicKey)[0],
        user: c.key.publicKey,
        userToken: c.token,
        payer: w.chain.payer.publicKey,
      }),
      [],
      "WrongAccountType",
      state,
    );
    // The claim's exact bytes at another address under the system program (a forged claim).
    const forged = Keypair.generate().publicKey;
    w.chain.setAccount(forged, { ...(await w.chain.account(w.client.pda.claim(c.key.publicKey)[0]))!, owner: SYSTEM_PROGRAM });
    await refused(
      w.client.withdrawClaim({ owner: c.key.publicKey, destination: dest, rentPayer: w.chain.payer.publicKey, overrides: { claim: forged } }),
      [c.key],
      "WrongAccountOwner",
      state,
    );
    expectOk(await w.withdrawClaim(c, dest));
  });

  it("arbitrary CPI: a substituted token or system program is refused by every instruction that calls one", async () => {
    const c = await w.user(UNIT);
    const pool = await poolWith(carol, [[c, 0, UNIT]]);
    expectOk(await w.cancel(carol.key, pool));
    await w.closeTokenAccount(c);
    const refund = (o: Record<string, PublicKey>) =>
      w.client.refundParticipant({
        pool,
        participant: w.participantOf(pool, c.key.publicKey),
        user: c.key.publicKey,
        userToken: c.token,
        payer: w.chain.payer.publicKey,
        overrides: o,
      });
    const state = () => w.pool(pool);
    await refused(refund({ tokenProgram: SYSTEM_PROGRAM }), [], "WrongProgram", state);
    await refused(refund({ systemProgram: TOKEN_PROGRAM }), [], "WrongProgram", state);
    await refused(
      w.client.createPool({
        payer: w.chain.payer.publicKey,
        creator: carol.key.publicKey,
        nonce: 77_777n,
        question: "q",
        closesAt: (await w.chain.now()) + 1_000n,
        overrides: { systemProgram: TOKEN_PROGRAM },
      }),
      [carol.key],
      "WrongProgram",
    );
    expectOk(await w.send([await refund({})]));
    const dest = await w.mint.account(c.key.publicKey);
    await refused(
      w.client.withdrawClaim({ owner: c.key.publicKey, destination: dest, rentPayer: w.chain.payer.publicKey, overrides: { tokenProgram: SYSTEM_PROGRAM } }),
      [c.key],
      "WrongProgram",
      () => w.claim(c.key.publicKey),
    );
    expectOk(await w.withdrawClaim(c, dest));
  });

  it("duplicate accounts: the vault as the payee, the claim as its own rent payer, one claim withdrawn twice in one transaction", async () => {
    const c = await w.user(2n * UNIT);
    const pool = await poolWith(carol, [[c, 0, 2n * UNIT]]);
    expectOk(await w.cancel(carol.key, pool));
    const vault = w.client.pda.vault()[0];
    const refund = (userToken: PublicKey) =>
      w.client.refundParticipant({
        pool,
        participant: w.participantOf(pool, c.key.publicKey),
        user: c.key.publicKey,
        userToken,
        payer: w.chain.payer.publicKey,
      });
    await refused(refund(vault), [], "AccountMismatch", () => w.pool(pool));
    await w.closeTokenAccount(c);
    expectOk(await w.send([await refund(c.token)]));
    const claim = w.client.pda.claim(c.key.publicKey)[0];
    const dest = await w.mint.account(c.key.publicKey);
    await refused(w.client.withdrawClaim({ owner: c.key.publicKey, destination: dest, rentPayer: claim }), [c.key], "AccountMismatch", () =>
      w.claim(c.key.publicKey),
    );
    // Withdrawn twice in one transaction: the second finds a closed (system-owned) account, and the whole transaction fails.
    const ix = await w.client.withdrawClaim({ owner: c.key.publicKey, destination: dest, rentPayer: w.chain.payer.publicKey });
    const before = await w.balances();
    const r = await w.send([ix, new TransactionInstruction({ ...ix, data: ix.data })], [c.key]);
    expectError(r, "WrongAccountOwner");
    expect(await w.balances()).toEqual(before);
    expect((await w.claim(c.key.publicKey))!.amount).toBe(2n * UNIT);
    expectOk(await w.withdrawClaim(c, dest));
    expect(await w.mint.balance(dest)).toBe(2n * UNIT);
  });

  it("closing and revival: a withdrawn claim starts again from zero and cannot be withdrawn again", async () => {
    const c = await w.user(3n * UNIT);
    const [p1, p2] = [await poolWith(carol, [[c, 0, UNIT]]), await poolWith(carol, [[c, 1, 2n * UNIT]])];
    for (const p of [p1, p2]) expectOk(await w.cancel(carol.key, p));
    await w.closeTokenAccount(c);
    expectOk(await w.refund(p1, c.key.publicKey));
    const dest = await w.mint.account(c.key.publicKey);
    expectOk(await w.withdrawClaim(c, dest));
    expectError(await w.withdrawClaim(c, dest), "WrongAccountOwner");
    // Zeroed and given back to the system program: a new credit creates a fresh claim.
    expectOk(await w.refund(p2, c.key.publicKey));
    expect((await w.claim(c.key.publicKey))!.amount).toBe(2n * UNIT);
    expectOk(await w.withdrawClaim(c, dest));
    expect(await w.mint.balance(dest)).toBe(3n * UNIT);
  });

  it("sysvars: no instruction takes a sysvar account (the clock and rent come from syscalls)", () => {
    const names = POOLS_IDL.instructions.flatMap((i) => i.accounts.map((a) => a.name));
    expect(names.filter((n) => /clock|rent$|sysvar|instructions/i.test(n))).toEqual([]);
    const sysvars = POOLS_IDL.instructions.flatMap((i) =>
      i.accounts.filter((a) => "address" in a && String((a as { address?: string }).address).startsWith("Sysvar")),
    );
    expect(sysvars).toEqual([]);
  });

  it("arithmetic: stakes summing to u64::MAX settle exactly (128-bit products), and a pot cannot pay out more than it holds", async () => {
    const x = await PoolsWorld.create({ feeBps: 500 });
    const creator = await x.user(0n);
    const half = 2n ** 63n;
    const [a, b] = [await x.user(half), await x.user(half - 1n)];
    const { pool } = await x.createPool(creator, { closesIn: 100n });
    expectOk(await x.pick(a, pool, 0, half));
    expectOk(await x.pick(b, pool, 1, half - 1n));
    const total = 2n ** 64n - 1n;
    expect((await x.pool(pool)).totalOi).toBe(total);
    await x.chain.advance(100n);
    expectOk(await x.propose(creator.key, pool, 0));
    await x.chain.advance(86_400n);
    expectOk(await x.resolve(creator.key, pool));
    expectOk(await x.settle(pool, a.key.publicKey));
    expectOk(await x.settle(pool, b.key.publicKey));
    const gross = (half * total) / half;
    const fee = ((gross - half) * 500n) / 10_000n;
    const end = await x.balances();
    expect([end.users[0], end.users[1], end.users[2], end.vault, end.treasury]).toEqual([0n, gross - fee, 0n, 0n, fee]);
    expect(decodePool((await x.chain.account(pool))!.data)).toMatchObject({ state: "DISTRIBUTED", paidOut: gross - fee, feesPaid: fee });
    expect(end.total).toBe(total);
    expectError(await x.settle(pool, a.key.publicKey), "AlreadyDistributed");
  });
});
