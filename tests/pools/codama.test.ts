/**
 * The Codama client rendered from the pools IDL (idl/codama/pools): its account decoders read the
 * compiled program's real accounts as the project's decoder does, its PDA finders give the
 * client's addresses and bumps, and its instruction builders derive the PDAs themselves (the
 * participant from `user` and, in cast_vote, from `voter`) into instructions the program
 * accepts, identical to the project's. (tests/offers/codama.test.ts checks both rendered
 * clients are current.)
 */
import { describe, expect, it } from "vitest";
import { address, createNoopSigner } from "@solana/kit";
import * as codama from "../../idl/codama/pools";
import { PoolState, decodeClaim, decodeParticipant, decodePool, decodePoolsConfig, poolsAccountsCoder } from "../../idl/client/pools";
import { asPda, expectDecodersAgree, shape, web3Instruction } from "../support/codama";
import { expectOk } from "../support/expect";
import { PoolsWorld, UNIT } from "../../harness/pools-world";

const addr = (k: { toBase58(): string }) => address(k.toBase58());
const text = (bytes: ArrayLike<number>, len: number) => Buffer.from(Array.from(bytes).slice(0, len)).toString("utf8");

describe("pools Codama client", () => {
  it("decodes the program's accounts as the project does, derives its PDAs, and builds instructions it accepts", async () => {
    const w = await PoolsWorld.create();
    const pda = w.client.pda;
    const [c, a, b] = [await w.user(), await w.user(5n * UNIT), await w.user(5n * UNIT)];
    const nonce = 0x0abc_def0_1234_5678n;
    const { r, pool } = await w.createPool(c, {
      nonce,
      labels: ["Ja", "Nein", "Vielleicht ✓"],
      criteria: "Amtliche Quelle",
      coverUrl: "https://x.example/c.png",
    });
    expectOk(r);

    // place_pick from Codama's builder, given no PDA: it derives config, participant and vault.
    const [participant, bump] = pda.participant(pool, a.key.publicKey);
    const pick = { outcome: 2, amount: 3n * UNIT, participantBump: bump };
    const kitPick = web3Instruction(
      await codama.getPlacePickInstructionAsync({
        payer: createNoopSigner(addr(w.chain.payer.publicKey)),
        user: createNoopSigner(addr(a.key.publicKey)),
        userToken: addr(a.token),
        pool: addr(pool),
        ...pick,
      }),
    );
    expect(shape(kitPick)).toEqual(
      shape(await w.client.placePick({ payer: w.chain.payer.publicKey, user: a.key.publicKey, userToken: a.token, pool, ...pick })),
    );
    expectOk(await w.send([kitPick], [a.key]));
    expectOk(await w.pick(b, pool, 0, 2n * UNIT));

    // cast_vote: the same participant PDA, from the voter.
    await w.chain.setTime((await w.pool(pool)).closesAt + 1n);
    expectOk(await w.propose(c.key, pool, 2));
    const kitVote = web3Instruction(await codama.getCastVoteInstructionAsync({ voter: createNoopSigner(addr(a.key.publicKey)), pool: addr(pool), outcome: 2 }));
    expect(shape(kitVote)).toEqual(shape(await w.client.castVote({ voter: a.key.publicKey, pool, outcome: 2 })));
    expectOk(await w.send([kitVote], [a.key]));
    expectOk(await w.vote(b, pool, 2));
    expectOk(await w.resolve(c.key, pool));
    // A claim: the winner's token account is gone before its payout.
    await w.closeTokenAccount(a, await w.mint.account(a.key.publicKey));
    expectOk(await w.settle(pool, a.key.publicKey));

    const claim = pda.claim(a.key.publicKey)[0];
    const data = async (k: typeof pool) => (await w.chain.account(k))!.data;
    const cases = [
      ["config", pda.config()[0], codama.getConfigDecoder()],
      ["pool", pool, codama.getPoolDecoder()],
      ["participant", participant, codama.getParticipantDecoder()],
      ["claim", claim, codama.getClaimDecoder()],
    ] as const;
    await expectDecodersAgree(cases, data, poolsAccountsCoder);

    // What the project's decoders make of the same bytes: texts, states, flags.
    const cfg = codama.getConfigDecoder().decode(await data(pda.config()[0]));
    const ourCfg = decodePoolsConfig(await data(pda.config()[0]));
    expect([cfg.authority, cfg.treasury, cfg.vault, cfg.feeBps]).toEqual([
      ourCfg.authority.toBase58(),
      ourCfg.treasury.toBase58(),
      ourCfg.vault.toBase58(),
      ourCfg.feeBps,
    ]);
    const p = codama.getPoolDecoder().decode(await data(pool));
    const ourP = decodePool(await data(pool));
    expect({
      question: text(p.question, p.questionLen),
      criteria: text(p.criteria, p.criteriaLen),
      coverUrl: text(p.coverUrl, p.coverUrlLen),
      state: PoolState[p.state],
      labels: p.outcomes.slice(0, p.outcomeCount).map((o) => text(o.label, o.labelLen)),
      totals: p.outcomes.slice(0, p.outcomeCount).map((o) => o.totalOi),
      winningOutcome: p.winningOutcome,
      paidOut: p.paidOut,
      feesPaid: p.feesPaid,
    }).toEqual({
      question: ourP.question,
      criteria: ourP.criteria,
      coverUrl: ourP.coverUrl,
      state: ourP.state,
      labels: ourP.outcomes.map((o) => o.label),
      totals: ourP.outcomes.map((o) => o.totalOi),
      winningOutcome: ourP.winningOutcome,
      paidOut: ourP.paidOut,
      feesPaid: ourP.feesPaid,
    });
    expect(ourP.outcomes.map((o) => o.label)).toEqual(["Ja", "Nein", "Vielleicht ✓"]);
    const part = codama.getParticipantDecoder().decode(await data(participant));
    const ourPart = decodeParticipant(await data(participant));
    expect([part.user, part.voted === 1, part.settled === 1, part.stakes, part.payout, part.fee]).toEqual([
      ourPart.user.toBase58(),
      ourPart.voted,
      ourPart.settled,
      ourPart.stakes,
      ourPart.payout,
      ourPart.fee,
    ]);
    expect([ourPart.voted, ourPart.settled, ourPart.stakes[2]]).toEqual([true, true, 3n * UNIT]);
    const cl = codama.getClaimDecoder().decode(await data(claim));
    const ourCl = decodeClaim(await data(claim));
    expect([cl.owner, cl.amount, cl.rentPayer]).toEqual([ourCl.owner.toBase58(), ourCl.amount, ourCl.rentPayer.toBase58()]);
    expect(ourCl.amount).toBe(ourPart.payout);

    // The PDA finders rendered from the IDL's seeds, bumps included.
    expect(await codama.findConfigPda()).toEqual(asPda(pda.config()));
    expect(await codama.findVaultPda()).toEqual(asPda(pda.vault()));
    expect(await codama.findPoolPda({ creator: addr(c.key.publicKey), nonce })).toEqual(asPda(pda.pool(c.key.publicKey, nonce)));
    expect(await codama.findParticipantPda({ pool: addr(pool), user: addr(a.key.publicKey) })).toEqual(asPda([participant, bump]));
    expect(await codama.findClaimPda({ owner: addr(a.key.publicKey) })).toEqual(asPda(pda.claim(a.key.publicKey)));
  });
});
