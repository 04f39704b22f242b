/**
 * Missing owner checks and type cosplay (programs/SECURITY.md): accounts forged under another
 * owner, another program's accounts, one account type passed as another, token accounts not owned
 * by the token program.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair } from "@solana/web3.js";
import { OFFERS_PROGRAM_ID } from "../../../idl/client/offers";
import { POOLS_ERRORS, SYSTEM_PROGRAM } from "../../../idl/client/pools";
import { UNIT } from "../../../harness/pools-world";
import { expectOk } from "../../support/expect";
import { forgedClaim } from "../../support/forged-claim";
import { setUp, alice, carol, cast4, expectError, poolWith, refused, rejected, resolved, resolvedPool, settleIx, w } from "./scene";

beforeAll(setUp);

describe("pools: owner checks and type cosplay", () => {
  it("a forged pool (a resolved pool's bytes under another owner) cannot be settled", async () => {
    const fake = Keypair.generate().publicKey;
    w.chain.setAccount(fake, { ...(await w.chain.account(resolved))!, owner: SYSTEM_PROGRAM });
    await rejected(settleIx(alice, { pool: fake }), [], "WrongAccountOwner");
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
