/**
 * Findings of the attacker fuzzer (tests/offers/attacker-fuzz.test.ts), each reduced to a minimal
 * named test that asserts the secure behaviour (so it fails while the hole is open).
 *
 * F1 — "canonical" accounts created at any address whose key signs (kit::cpi::create_canonical:
 * see tests/pools/attacker-findings.test.ts for the mechanism and the one-line fix). In offers:
 *   - take_offer: a second Position of the same (offer, taker) at a signing keypair: the
 *     per-position cap `maximum_wager_micros` no longer bounds what one taker stakes on an offer;
 *   - create_offer: an Offer outside its PDA ["offer", contract, creator, nonce]; once closed
 *     (close_offer_account), its address can be created again: the "no revival" rule (4) rests
 *     on the address being the PDA;
 *   - settle_position / close_offer (anyone may call them): when a payee's recorded token account
 *     cannot receive, the caller passes its own keypair as `creator_claim` / `taker_claim` and the
 *     payout is credited to a Claim at that address; the payee's canonical claim does not exist,
 *     so its withdraw_claim fails: the money is hidden from its owner.
 * Status: fixed in the working tree (kit::cpi::create_pda refuses a signing `new` with
 * `AccountMismatch`); these tests failed before it (F1a: one taker held 1,000 units against a
 * 500-unit cap through two positions) and pass after it, on both engines.
 */
import { describe, expect, it } from "vitest";
import { Keypair, PublicKey } from "@solana/web3.js";
import { randomUUID } from "node:crypto";
import { LAUNCH_FEE_BPS, LAUNCH_LIMITS, OFFERS_ERRORS, OffersClient, offersAccountsCoder, uuidBytes } from "../../idl/client/offers";
import type { Idl, Program } from "../../idl/client/anchor";
import { type AccountsCoder, AttackerWorld, attackerWorldOf, SYSTEM_PROGRAM, TOKEN_PROGRAM, buildIx, decodeAs, errorName, u64le } from "../support/attacker";

const UNIT = 1_000_000n;
const coder = offersAccountsCoder as unknown as AccountsCoder;
const program = OffersClient.fromProvider({ publicKey: PublicKey.default } as never).program as unknown as Program<Idl>;

const world = () =>
  attackerWorldOf("offers", {
    seed: 7,
    actions: 0,
    label: "offers findings",
    honestCount: 2,
    honestFunds: [3_000n * UNIT, 3_000n * UNIT],
    attackerFunds: 3_000n * UNIT,
  });

function helpers(w: AttackerWorld) {
  const offerPda = (contract: PublicKey, creator: PublicKey, nonce: bigint) =>
    w.pda([Buffer.from("offer"), contract.toBuffer(), creator.toBuffer(), u64le(nonce)]);
  const positionPda = (offer: PublicKey, taker: PublicKey) => w.pda([Buffer.from("position"), offer.toBuffer(), taker.toBuffer()]);
  const contract = async (cutoffIn = 3_600n) => {
    const [t, e] = [randomUUID(), randomUUID()];
    const addr = w.pda([Buffer.from("contract"), Buffer.from(uuidBytes(t)), Buffer.from(uuidBytes(e))]);
    const cutoffAt = (await w.chain.now()) + cutoffIn;
    const r = await w.chain.send(
      [
        buildIx(
          program,
          "createContract",
          { templateId: uuidBytes(t), eventId: uuidBytes(e), cutoffAt, resolutionDeadline: cutoffAt + 3_600n, bump: w.bumpOf(addr) },
          { authority: w.service.publicKey, payer: w.service.publicKey, config: w.CONFIG, contract: addr, systemProgram: SYSTEM_PROGRAM },
        ),
      ],
      [w.service],
    );
    expect(r.error).toBeNull();
    return { addr, cutoffAt };
  };
  const createOffer = (creator: PublicKey, token: PublicKey, c: PublicKey, nonce: bigint, total: bigint, target: bigint, offer = offerPda(c, creator, nonce)) =>
    buildIx(
      program,
      "createOffer",
      {
        nonce,
        bump: w.bumpOf(offerPda(c, creator, nonce)),
        side: 1,
        creatorTotal: total,
        takerTarget: target,
        minimumTake: UNIT,
        expectedFeeBps: LAUNCH_FEE_BPS,
      },
      {
        payer: creator,
        creator,
        creatorToken: token,
        config: w.CONFIG,
        contract: c,
        offer,
        vault: w.VAULT,
        tokenProgram: TOKEN_PROGRAM,
        systemProgram: SYSTEM_PROGRAM,
      },
    );
  const take = (taker: PublicKey, token: PublicKey, c: PublicKey, offer: PublicKey, amount: bigint, revision: bigint, position = positionPda(offer, taker)) =>
    buildIx(
      program,
      "takeOffer",
      { amount, expectedRevision: revision, positionBump: w.bumpOf(positionPda(offer, taker)) },
      {
        payer: taker,
        taker,
        takerToken: token,
        config: w.CONFIG,
        contract: c,
        offer,
        position,
        vault: w.VAULT,
        tokenProgram: TOKEN_PROGRAM,
        systemProgram: SYSTEM_PROGRAM,
      },
    );
  const read = async <T>(k: PublicKey, name: string) => decodeAs<T>(coder, name, (await w.chain.account(k))?.data);
  return { offerPda, positionPda, contract, createOffer, take, read };
}

describe("offers attacker findings", () => {
  it("F1a: take_offer refuses a second Position of the same (offer, taker): one taker stays within maximum_wager_micros", async () => {
    const w = await world();
    const { contract, createOffer, take, offerPda, read } = helpers(w);
    const [H] = w.honest;
    const A = w.A;
    const max = LAUNCH_LIMITS.maximumWagerMicros; // 500 units
    const c = await contract();
    expect((await w.chain.send([createOffer(H.keys[0].publicKey, H.current.address, c.addr, 1n, max, 2n * max)], [H.keys[0]])).error).toBeNull();
    const offer = offerPda(c.addr, H.keys[0].publicKey, 1n);
    expect((await w.chain.send([take(A.publicKey, w.aMain.address, c.addr, offer, max, 1n)], [A], A)).error).toBeNull();
    // The cap holds at the canonical position...
    const capped = await w.chain.send([take(A.publicKey, w.aMain.address, c.addr, offer, UNIT, 2n)], [A], A);
    expect(errorName(capped, OFFERS_ERRORS)).toBe("PositionAboveMaximum");
    // ...and must hold when the attacker passes a keypair it signs with as the position.
    const K = Keypair.generate();
    const r = await w.chain.send([take(A.publicKey, w.aMain.address, c.addr, offer, max, 2n, K.publicKey)], [A, K], A);
    const o = (await read<{ takerFilled: bigint; positionCount: number }>(offer, "offer"))!;
    expect(o.takerFilled, `the attacker alone took ${o.takerFilled} (cap ${max}) through ${o.positionCount} positions (${errorName(r, OFFERS_ERRORS)})`).toBe(
      max,
    );
    expect(r.ok).toBe(false);
  });

  it("F1b: create_offer refuses an offer account that is not its canonical PDA (a closed offer's address cannot be created again)", async () => {
    const w = await world();
    const { contract, createOffer, read } = helpers(w);
    const A = w.A;
    const c = await contract();
    const K = Keypair.generate();
    const r = await w.chain.send([createOffer(A.publicKey, w.aMain.address, c.addr, 1n, 10n * UNIT, 10n * UNIT, K.publicKey)], [A, K], A);
    const o = await read<{ creator: PublicKey; nonce: bigint }>(K.publicKey, "offer");
    expect(o, `an Offer of (contract, creator, nonce 1) exists at ${K.publicKey.toBase58()} (${errorName(r, OFFERS_ERRORS)})`).toBeNull();
    expect(r.ok).toBe(false);
  });

  it("F1c: settle_position refuses to credit a payee's payout to a Claim at an address the caller chose", async () => {
    const w = await world();
    const { contract, createOffer, take, offerPda, positionPda, read } = helpers(w);
    const [H, T] = w.honest;
    const A = w.A;
    const c = await contract(600n);
    expect((await w.chain.send([createOffer(H.keys[0].publicKey, H.current.address, c.addr, 1n, 10n * UNIT, 10n * UNIT)], [H.keys[0]])).error).toBeNull();
    const offer = offerPda(c.addr, H.keys[0].publicKey, 1n);
    expect((await w.chain.send([take(T.keys[0].publicKey, T.current.address, c.addr, offer, 10n * UNIT, 1n)], [T.keys[0]])).error).toBeNull();
    // The taker closes its (emptied) token account, as wallets do: its payout must become its claim.
    const before = T.current.address;
    while (T.current.address.equals(before)) await w.honestRotate();
    await w.chain.setTime(c.cutoffAt + 1n);
    expect(
      (
        await w.chain.send(
          [buildIx(program, "resolveContract", { result: 2 }, { authority: w.service.publicKey, config: w.CONFIG, contract: c.addr })],
          [w.service],
        )
      ).error,
    ).toBeNull();
    // Anyone may settle: the attacker does, passing its own keypair as the taker's claim account.
    const K = Keypair.generate();
    const position = positionPda(offer, T.keys[0].publicKey);
    const canonical = w.claimOf(T.keys[0].publicKey);
    const recorded = (await read<{ creatorToken: PublicKey }>(offer, "offer"))!.creatorToken;
    const r = await w.chain.send(
      [
        buildIx(
          program,
          "settlePosition",
          { creatorClaimBump: w.bumpOf(w.claimOf(H.keys[0].publicKey)), takerClaimBump: w.bumpOf(canonical) },
          {
            config: w.CONFIG,
            contract: c.addr,
            offer,
            position,
            vault: w.VAULT,
            creatorToken: recorded,
            takerToken: before,
            treasury: w.treasury,
            tokenProgram: TOKEN_PROGRAM,
            payer: A.publicKey,
            creatorClaim: w.claimOf(H.keys[0].publicKey),
            takerClaim: K.publicKey,
            systemProgram: SYSTEM_PROGRAM,
          },
        ),
      ],
      [A, K],
      A,
    );
    const hidden = await read<{ owner: PublicKey; amount: bigint }>(K.publicKey, "claim");
    expect(
      hidden,
      `the taker's payout (${hidden?.amount}) sits in a Claim at ${K.publicKey.toBase58()}; its canonical claim ${canonical.toBase58()} ${(await w.chain.account(canonical)) ? "exists" : "does not exist"}`,
    ).toBeNull();
    expect(errorName(r, OFFERS_ERRORS)).not.toBe("ok");
  });
});
