/**
 * The pools IDL's PDA seeds are the program's: Anchor's `Program`, given only the accounts that
 * are not PDAs, derives every PDA account by itself (const, account, account-data and u64
 * argument seeds), the addresses equal the client's helpers, and the compiled program accepts them.
 */
import { describe, expect, it } from "vitest";
import { Program } from "../../idl/client/anchor";
import { bn } from "../../idl/client/common";
import { POOL_LIMITS, POOLS_IDL, POOLS_PROGRAM_ID, PoolsPda } from "../../idl/client/pools";
import type { Pools } from "../../idl/pools";
import { b58, expectConfigAccountsResolved, readingProvider } from "../support/anchor-provider";
import { TestChain } from "../../harness/chain";
import { expectOk } from "../support/expect";
import { PoolsWorld, UNIT } from "../../harness/pools-world";
import { deploymentParts } from "../../harness/program-world";

const zeros = (n: number) => Array<number>(n).fill(0);

describe("pools IDL: Anchor resolves the PDA accounts", () => {
  it("initialize_config: config, vault and the ProgramData under the upgradeable loader", async () => {
    const chain = await TestChain.start([{ name: "pools", programId: POOLS_PROGRAM_ID }]);
    const { mint, authority, treasury } = await deploymentParts(chain);
    const program = new Program<Pools>(POOLS_IDL, readingProvider(chain));
    const pda = new PoolsPda();
    const call = program.methods
      .initializeConfig(500)
      .accountsPartial({ deployer: chain.upgradeAuthority.publicKey, authority: authority.publicKey, mint: mint.mint, treasury });
    expectConfigAccountsResolved(await call.pubkeys(), pda);
    expectOk(await chain.send([await call.instruction()], [chain.upgradeAuthority]));
  });

  it("a whole pool, from creation to withdrawn claim, with only the non-PDA accounts given", async () => {
    const w = await PoolsWorld.create();
    const program = new Program<Pools>(POOLS_IDL, readingProvider(w.chain));
    const pda = w.client.pda;
    const [config, vault] = [pda.config()[0].toBase58(), pda.vault()[0].toBase58()];
    const payer = w.chain.payer.publicKey;
    const [c, a, b] = [await w.user(), await w.user(5n * UNIT), await w.user(5n * UNIT)];

    // Account seed (creator) and a u64 argument seed (the nonce, 8 bytes LE).
    const nonce = 0xfedc_ba98_7654_3210n;
    const [pool, poolBump] = pda.pool(c.key.publicKey, nonce);
    const closesAt = (await w.chain.now()) + 3_600n;
    const question = Buffer.alloc(POOL_LIMITS.question);
    const q = Buffer.from("Will the IDL carry its seeds?");
    q.copy(question);
    const create = program.methods
      .createPool(
        bn(nonce),
        poolBump,
        2,
        bn(closesAt),
        bn(0n),
        q.length,
        [...question],
        0,
        zeros(POOL_LIMITS.criteria),
        0,
        zeros(POOL_LIMITS.coverUrl),
        zeros(8),
        zeros(8 * POOL_LIMITS.label),
      )
      .accountsPartial({ payer, creator: c.key.publicKey });
    expect(b58(await create.pubkeys())).toMatchObject({ config, pool: pool.toBase58() });
    expectOk(await w.send([await create.instruction()], [c.key]));
    expect((await w.pool(pool)).nonce).toBe(nonce);

    // ["participant", pool, user] from two accounts of the instruction.
    for (const [user, outcome] of [
      [a, 0],
      [b, 1],
    ] as const) {
      const [participant, bump] = pda.participant(pool, user.key.publicKey);
      const pick = program.methods.placePick(outcome, bn(2n * UNIT), bump).accountsPartial({ payer, user: user.key.publicKey, userToken: user.token, pool });
      expect(b58(await pick.pubkeys())).toMatchObject({ config, vault, participant: participant.toBase58() });
      expectOk(await w.send([await pick.instruction()], [user.key]));
    }

    // The same PDA from cast_vote's `voter`.
    await w.chain.setTime(closesAt + 1n);
    expectOk(await w.propose(c.key, pool, 0));
    for (const user of [a, b]) {
      const vote = program.methods.castVote(0).accountsPartial({ voter: user.key.publicKey, pool });
      expect(b58(await vote.pubkeys())).toMatchObject({ participant: pda.participant(pool, user.key.publicKey)[0].toBase58() });
      expectOk(await w.send([await vote.instruction()], [user.key]));
    }
    expectOk(await w.resolve(c.key, pool));

    // Account-data seed: the claim is ["claim", participant.user]; Anchor reads the participant.
    // The winner's token account is gone, so the payout lands in that claim.
    const sweep = await w.mint.account(a.key.publicKey);
    await w.closeTokenAccount(a, sweep);
    const participant = pda.participant(pool, a.key.publicKey)[0];
    const [userClaim, claimBump] = pda.claim(a.key.publicKey);
    const settle = program.methods.settleParticipant(claimBump).accountsPartial({ pool, participant, userToken: a.token, treasury: w.treasury, payer });
    expect(b58(await settle.pubkeys())).toMatchObject({ config, vault, userClaim: userClaim.toBase58() });
    expectOk(await w.send([await settle.instruction()]));
    const owed = (await w.claim(a.key.publicKey))!.amount;
    expect(owed).toBe((await w.participant(participant)).payout);
    expect(owed).toBeGreaterThan(2n * UNIT);

    const withdraw = program.methods.withdrawClaim().accountsPartial({ owner: a.key.publicKey, destination: sweep, rentPayer: payer });
    expect(b58(await withdraw.pubkeys())).toMatchObject({ config, vault, claim: userClaim.toBase58() });
    const before = await w.mint.balance(sweep);
    expectOk(await w.send([await withdraw.instruction()], [a.key]));
    expect(await w.mint.balance(sweep)).toBe(before + owed);
    expect(await w.claim(a.key.publicKey)).toBeNull();
  });
});
