/**
 * Pre-funding (programs/SECURITY.md): lamports sent to a future address never block its creation.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PublicKey, SystemProgram } from "@solana/web3.js";
import { UNIT } from "../../../harness/pools-world";
import { expectOk } from "../../support/expect";
import { setUp, carol, mallory, w } from "./scene";

beforeAll(setUp);

describe("pools: pre-funded addresses", () => {
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
