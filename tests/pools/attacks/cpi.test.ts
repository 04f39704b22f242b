/**
 * Arbitrary CPI targets (programs/SECURITY.md): the token and system programs are checked by
 * address before any call.
 */
import { beforeAll, describe, it } from "vitest";
import { PublicKey } from "@solana/web3.js";
import { SYSTEM_PROGRAM, TOKEN_PROGRAM } from "../../../idl/client/pools";
import { UNIT } from "../../../harness/pools-world";
import { expectOk } from "../../support/expect";
import { setUp, alice, carol, pickIx, poolWith, refused, rejected, settleIx, w } from "./scene";

beforeAll(setUp);

describe("pools: arbitrary CPI", () => {
  it("a fake token program and a fake system program", async () => {
    await rejected(pickIx(alice, { overrides: { tokenProgram: SYSTEM_PROGRAM } }), [alice.key], "WrongProgram");
    await rejected(pickIx(alice, { overrides: { systemProgram: TOKEN_PROGRAM } }), [alice.key], "WrongProgram");
    await rejected(settleIx(alice, { overrides: { tokenProgram: SYSTEM_PROGRAM } }), [], "WrongProgram");
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
});
