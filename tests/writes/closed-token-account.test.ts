/**
 * Issue #15.1 through the service: a creator outside the service posts an offer from a token
 * account holding exactly the stake, the service's users take it over REST, then the creator
 * closes that token account and keeps its key. Before the claims rework the refund at cutoff
 * failed forever, the offer never left Open, every position of it was refused settlement and the
 * worker reported `skipped` on every pass. Now the worker closes and settles as usual: the takers
 * are paid to the micro-unit, and the creator's share waits in its Claim.
 */
import { describe, expect, it } from "vitest";
import { Keypair, SystemProgram } from "@solana/web3.js";
import { ACCOUNT_SIZE, createCloseAccountInstruction, createInitializeAccount3Instruction } from "@solana/spl-token";
import { mintTo } from "../../service/chain/service-chain";
import { sendAndConfirm } from "../../service/chain/submitter";
import { TOKEN_PROGRAM, decodeClaim } from "../../idl/client/offers";
import { until } from "../support/wait";
import { UNIT, balance, contract, key, makeUser, writeSuite } from "../support/stack";
import { get, post } from "../support/http";

describe("a counterparty who closes its token account (#15.1) over the API", () => {
  const w = writeSuite();

  it("cannot lock the takers' money nor stall the worker: takes, close at cutoff and settlement go through; the creator's share waits in its claim", async () => {
    const gw = w.s.chain.gateway;
    const k = await contract(w.s, 3_600n, 3_600n);
    // The outside creator: its own SOL, a token account holding exactly the stake.
    const creator = Keypair.generate();
    const tokenAcc = Keypair.generate();
    gw.engine.setAccount(creator.publicKey, {
      lamports: 10_000_000_000,
      data: Buffer.alloc(0),
      owner: SystemProgram.programId,
      executable: false,
      rentEpoch: 0,
    });
    const rent = Number(await gw.rentExempt(ACCOUNT_SIZE));
    await sendAndConfirm(
      gw,
      [
        SystemProgram.createAccount({
          fromPubkey: creator.publicKey,
          newAccountPubkey: tokenAcc.publicKey,
          lamports: rent,
          space: ACCOUNT_SIZE,
          programId: TOKEN_PROGRAM,
        }),
        createInitializeAccount3Instruction(tokenAcc.publicKey, w.s.chain.mint, creator.publicKey),
      ],
      [creator, tokenAcc],
    );
    const stake = 8n * UNIT;
    await mintTo(gw, w.s.chain.service, w.s.chain.mint, tokenAcc.publicKey, stake);
    const nonce = 77n;
    const client = w.s.chain.client;
    await sendAndConfirm(
      gw,
      [
        await client.createOffer({
          payer: creator.publicKey,
          creator: creator.publicKey,
          creatorToken: tokenAcc.publicKey,
          contract: k,
          nonce,
          side: "sideA",
          creatorTotal: stake,
          takerTarget: 10n * UNIT,
          minimumTake: UNIT,
          expectedFeeBps: 1000,
        }),
      ],
      [creator],
    );
    const offer = client.pda.offer(k, creator.publicKey, nonce)[0].toBase58();

    // Two of the service's users take 5 of 10 (matched 4 of the 8) over REST.
    const START = 100n * UNIT;
    const takers = [await makeUser(w.s, START), await makeUser(w.s, START)];
    for (const [i, t] of takers.entries()) {
      const cur = await until(async () => {
        const r = await get(w.s, `/${offer}`);
        return r.status === 200 && r.body.revision === String(i + 1) ? r : null;
      });
      const r = await post(
        w.s,
        `/${offer}/take`,
        { takeAmountMicros: String((5n * UNIT) / 2n), expectedRevision: String(cur.body.revision), idempotencyKey: key() },
        t.token,
      );
      expect(r.status, r.text).toBe(200);
    }
    await until(async () => ((await get(w.s, `/${offer}`)).body.fillCount === 2 ? true : null));

    // The creator empties nothing (the stake is in the vault already) and closes its account.
    expect(await balance(w.s, tokenAcc.publicKey)).toBe(0n);
    await sendAndConfirm(gw, [createCloseAccountInstruction(tokenAcc.publicKey, creator.publicKey, creator.publicKey)], [creator]);
    expect(await gw.getAccount(tokenAcc.publicKey)).toBeNull();

    // Past the cutoff the taker side wins; the worker drains with nothing held back.
    await gw.advance(3_601n);
    await w.s.admin.resolveContract(k, "sideB");
    const report = await w.s.worker.drain();
    expect(report.closed).toBe(1);
    expect(report.settled).toBe(2);
    const settled = await until(async () => {
      const r = await get(w.s, `/${offer}`);
      return r.body.status === "Settled" ? r : null;
    });
    expect(settled.body).toMatchObject({ status: "Settled", settledPositionCount: 2 });

    // Takers: stake back + matched 2 - 10% fee on the 2 won, each.
    for (const t of takers) expect(await balance(w.s, t.user.tokenAccount)).toBe(START + 2n * UNIT - 200_000n);
    // The creator's unmatched 4 units were refunded into its claim, withdrawable by its key alone.
    const claim = await gw.getAccount(client.pda.claim(creator.publicKey)[0]);
    expect(claim).not.toBeNull();
    expect(decodeClaim(claim!.data).amount).toBe(4n * UNIT);
    expect(await balance(w.s, client.pda.vault()[0])).toBe(4n * UNIT);
  });
});
