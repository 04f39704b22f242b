/**
 * Missing signers and authorities (programs/SECURITY.md, "missing signer"): every actor signs and is
 * the one the accounts record; only the Config's authority administers.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair } from "@solana/web3.js";
import { UNIT } from "../../../harness/pools-world";
import { expectOk } from "../../support/expect";
import { unsigned } from "../../support/bent-ix";
import { setUp, alice, bob, carol, cast4, expectError, mallory, open, part, pickIx, poolWith, refused, rejected, toClose, w } from "./scene";

beforeAll(setUp);

describe("pools: signers and authorities", () => {
  it("a pick whose user did not sign, and one paid from someone else's token account", async () => {
    await rejected(unsigned(await pickIx(alice), alice.key.publicKey), [], "MissingSignature");
    await rejected(pickIx(mallory, { userToken: alice.token }), [mallory.key], "NotTokenOwner");
  });

  it("a create whose creator did not sign", async () => {
    const ix = await w.client.createPool({
      payer: w.chain.payer.publicKey,
      creator: alice.key.publicKey,
      nonce: 77n,
      question: "q",
      closesAt: (await w.chain.now()) + 1_000n,
    });
    await rejected(unsigned(ix, alice.key.publicKey), [], "MissingSignature");
  });

  it("a vote with someone else's participant record, and a vote not signed by the participant", async () => {
    const now = await w.chain.now();
    const { pool } = await w.createPool(carol, { closesAt: now + 10n });
    expectOk(await w.pick(alice, pool, 0, UNIT));
    await w.chain.setTime(now + 10n);
    expectOk(await w.propose(carol.key, pool, 0));
    const before = await w.pool(pool);
    await rejected(w.client.castVote({ voter: mallory.key.publicKey, pool, outcome: 1, participant: part(pool, alice) }), [mallory.key], "NotParticipant");
    await rejected(unsigned(await w.client.castVote({ voter: alice.key.publicKey, pool, outcome: 1 }), alice.key.publicKey), [], "MissingSignature");
    // a participant record of another pool
    await rejected(w.client.castVote({ voter: alice.key.publicKey, pool, outcome: 1, participant: part(open, alice) }), [alice.key], "NotParticipant");
    expect(await w.pool(pool)).toEqual(before);
  });

  it("a stranger cannot cancel; the creator's key must sign; only the authority changes the fee", async () => {
    await rejected(w.client.cancelPool({ caller: mallory.key.publicKey, pool: open }), [mallory.key], "CancelNotAllowed");
    await rejected(unsigned(await w.client.cancelPool({ caller: carol.key.publicKey, pool: open }), carol.key.publicKey), [], "MissingSignature");
    await rejected(w.client.updateConfig({ authority: mallory.key.publicKey, feeBps: 10_000 }), [mallory.key], "Unauthorized");
  });

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

  it("lifecycle bypass: non-creator cancel before close, non-creator propose, and picks after close are refused", async () => {
    const [carol, alice, , mallory] = await cast4(w);
    const { pool } = await w.createPool(carol, { closesIn: 100n });
    expectOk(await w.pick(alice, pool, 0, UNIT));
    expectError(await w.cancel(mallory.key, pool), "CancelNotAllowed");
    expectError(await w.propose(mallory.key, pool, 0), "NotCreator");
    await w.chain.advance(101n);
    expectError(await w.pick(mallory, pool, 1, UNIT), "PoolClosed");
    expectError(await w.cancel(carol.key, pool), "CancelNotAllowed");
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
});
