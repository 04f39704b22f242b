/**
 * The attacker fuzzer's world for its findings (F1...), replayed as named tests in pdas.test.ts.
 *
 * Findings of the attacker fuzzer (tests/offers/attacks/attacker-fuzz.test.ts), each reduced to a minimal
 * named test that asserts the secure behaviour (so it fails while the hole is open).
 *
 * F1 — "canonical" accounts created at any address whose key signs (kit::cpi::create_canonical:
 * see tests/pools/attacks/fuzzer-findings.ts for the mechanism and the one-line fix). In offers:
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
import { expect } from "vitest";
import { PublicKey } from "@solana/web3.js";
import { randomUUID } from "node:crypto";
import { LAUNCH_FEE_BPS, OffersClient, offersAccountsCoder, uuidBytes } from "../../../idl/client/offers";
import type { Idl, Program } from "../../../idl/client/anchor";
import { type AccountsCoder, AttackerWorld, attackerWorldOf, SYSTEM_PROGRAM, TOKEN_PROGRAM, buildIx, decodeAs, u64le } from "../../support/attacker";

export const UNIT = 1_000_000n;
export const coder = offersAccountsCoder as unknown as AccountsCoder;
export const program = OffersClient.fromProvider({ publicKey: PublicKey.default } as never).program as unknown as Program<Idl>;

export const world = () =>
  attackerWorldOf("offers", {
    seed: 7,
    actions: 0,
    label: "offers findings",
    honestCount: 2,
    honestFunds: [3_000n * UNIT, 3_000n * UNIT],
    attackerFunds: 3_000n * UNIT,
  });

export function helpers(w: AttackerWorld) {
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
        expiresAt: 0n,
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
