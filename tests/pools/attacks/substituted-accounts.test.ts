/**
 * Duplicate and substituted accounts (programs/SECURITY.md, "duplicate mutable accounts"): a
 * fake vault, another contract or pool, a token account of another mint, the same account twice,
 * and payouts or refunds redirected to an account the rules did not record.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PublicKey, TransactionInstruction } from "@solana/web3.js";

import { UNIT } from "../../../harness/pools-world";
import { expectOk } from "../../support/expect";
import {
  setUp,
  alice,
  bob,
  carol,
  cast4,
  expectError,
  mallory,
  open,
  part,
  pickIx,
  poolWith,
  refundIx,
  refused,
  rejected,
  resolved,
  resolvedPool,
  settleIx,
  w,
} from "./scene";

beforeAll(setUp);

describe("pools: duplicate and substituted accounts", () => {
  it("a fake vault (attacker's token account) on pick, settle and refund", async () => {
    const fake = await w.mint.account(mallory.key.publicKey);
    await rejected(pickIx(alice, { overrides: { vault: fake } }), [alice.key], "AccountMismatch");
    await rejected(settleIx(alice, { overrides: { vault: fake } }), [], "AccountMismatch");
    await rejected(refundIx(alice, { overrides: { vault: fake } }), [], "AccountMismatch");
  });

  it("payouts cannot be redirected: another token account or treasury on settle, another token account on refund", async () => {
    await rejected(settleIx(alice, { userToken: mallory.token }), [], "AccountMismatch");
    await rejected(settleIx(alice, { treasury: mallory.token }), [], "AccountMismatch");
    await rejected(refundIx(bob, { userToken: mallory.token }), [], "AccountMismatch");
  });

  it("a participant record of another pool on settle and refund", async () => {
    await rejected(settleIx(alice, { participant: part(open, alice) }), [], "AccountMismatch");
    await rejected(refundIx(alice, { participant: part(resolved, alice) }), [], "AccountMismatch");
  });

  it("a token account of another mint as the source of a pick", async () => {
    const { TestMint } = await import("../../../harness/token");
    const other = await TestMint.create(w.chain);
    const tok = await other.account(alice.key.publicKey, 100n * UNIT);
    await rejected(pickIx(alice, { userToken: tok }), [alice.key], "WrongMint");
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

  it("payout redirection: settling with a substituted user_token or treasury, or twice, is refused", async () => {
    const [carol, alice, bob, mallory] = await cast4(w);
    const pool = await resolvedPool(w, carol, alice, bob, 0);
    const participant = w.participantOf(pool, alice.key.publicKey);
    const steal = await w.client.settleParticipant({
      pool,
      participant,
      user: alice.key.publicKey,
      userToken: mallory.token,
      treasury: w.treasury,
      payer: w.chain.payer.publicKey,
    });
    expectError(await w.send([steal]), "AccountMismatch");
    const wrongTreasury = await w.client.settleParticipant({
      pool,
      participant,
      user: alice.key.publicKey,
      userToken: alice.token,
      treasury: mallory.token,
      payer: w.chain.payer.publicKey,
    });
    expectError(await w.send([wrongTreasury]), "AccountMismatch");
    expectOk(await w.settle(pool, alice.key.publicKey));
    expectError(await w.settle(pool, alice.key.publicKey), "AlreadySettled");
  });
});
