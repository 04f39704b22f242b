/**
 * Canonical, unique PDAs (programs/SECURITY.md, "bump canonicalisation", "a PDA at a keypair the
 * caller signs with", "PDA sharing", re-initialisation of records): each seed tuple names one
 * account, at its canonical bump, never another user's; the attacker fuzzer's findings F1 are here.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey } from "@solana/web3.js";
import { LAUNCH_LIMITS, OFFERS_ERRORS, TOKEN_PROGRAM, uuidBytes } from "../../../idl/client/offers";
import { SYSTEM_PROGRAM, buildIx, errorName } from "../../support/attacker";
import { UNIT } from "../../../harness/offers-world";
import { expectError, expectOk } from "../../support/expect";
import { nonCanonical, patch, rekey } from "../../support/bent-ix";
import { randomUUID } from "node:crypto";
import { u64le } from "../../../idl/client/common";
import { setUp, alice, bob, createIx, mallory, offer, pid, refused, rejected, takeIx, users, w } from "./scene";
import { helpers, program, world } from "./fuzzer-findings";

beforeAll(setUp);

describe("offers: canonical, unique PDAs", () => {
  it("another user's position PDA on take", async () => {
    const o = await w.offer(offer);
    const bobsPosition = w.positionOf(offer, bob);
    const ix = takeIx(o.revision, { taker: mallory, overrides: { position: bobsPosition } });
    await rejected(ix, [mallory.key], "AccountMismatch");
  });

  it("an offer PDA that does not match creator and nonce", async () => {
    const ix = createIx(999_002n, { overrides: { offer: Keypair.generate().publicKey } });
    await rejected(ix, [alice.key]); // the runtime refuses the PDA signature
  });

  it("a position exists once per (offer, taker)", async () => {
    const contract = await w.contract({ cutoffIn: 10_000n });
    const { offer } = await w.createOffer(alice, contract, { total: 500n * UNIT, target: 1_000n * UNIT });
    const seeds = [Buffer.from("position"), offer.toBuffer(), bob.key.publicKey.toBuffer()];
    const [canonical] = w.client.pda.position(offer, bob.key.publicKey);
    const [alt, altBump] = nonCanonical(seeds, pid);
    const take = async (amount: bigint, position?: [PublicKey, number]) => {
      const ix = await w.takeIx(bob, offer, amount, { contract });
      // TakeOfferArgs: amount u64, expected_revision u64, position_bump u8.
      return position ? patch(rekey(ix, canonical, position[0]), 16, position[1]) : ix;
    };
    // A second position at another bump is refused before and after the canonical one exists.
    await refused(take(10n * UNIT, [alt, altBump]), [bob.key], "AccountMismatch");
    // The canonical address with a lower bump in the arguments is refused as well.
    await refused(take(10n * UNIT, [canonical, altBump]), [bob.key], "AccountMismatch");
    // And so is a keypair the caller signs with (CreateAccount would accept its signature
    // whatever the seeds: found by the attacker fuzzer, refused in kit::cpi::create_pda).
    const signing = Keypair.generate();
    await refused(rekey(await take(10n * UNIT), canonical, signing.publicKey), [bob.key, signing], "AccountMismatch");
    expect(await w.chain.account(signing.publicKey)).toBeNull();
    expectOk(await w.send([await take(500n * UNIT)], [bob.key]));
    await refused(take(UNIT, [alt, altBump]), [bob.key], "AccountMismatch");
    expect(await w.chain.account(alt)).toBeNull();
    // So the per-taker cap (500 units) holds.
    await refused(take(UNIT), [bob.key], "PositionAboveMaximum");
    expect(await w.position(canonical)).toMatchObject({ takerAmount: 500n * UNIT });
    expect(await w.offer(offer)).toMatchObject({ positionCount: 1, takerFilled: 500n * UNIT });

    // The same for an offer: ["offer", contract, creator, nonce] at a lower bump.
    const nonce = w.nextNonce();
    const [offerAddr] = w.client.pda.offer(contract, alice.key.publicKey, nonce);
    const [altOffer, altOfferBump] = nonCanonical([Buffer.from("offer"), contract.toBuffer(), alice.key.publicKey.toBuffer(), u64le(nonce)], pid);
    const create = await w.createOfferIx(alice, contract, { nonce, total: 5n * UNIT, target: 5n * UNIT });
    // CreateOfferArgs: nonce u64, bump u8, ...
    await refused(patch(rekey(create, offerAddr, altOffer), 8, altOfferBump), [alice.key], "AccountMismatch");
    expect(await w.chain.account(altOffer)).toBeNull();
    const offerKey = Keypair.generate();
    await refused(rekey(create, offerAddr, offerKey.publicKey), [alice.key, offerKey], "AccountMismatch");
    expect(await w.chain.account(offerKey.publicKey)).toBeNull();

    // And for a contract: ["contract", template_id, event_id] at a lower bump.
    const [templateId, eventId] = [randomUUID(), randomUUID()];
    const [contractAddr] = w.client.pda.contract(templateId, eventId);
    const [altContract, altContractBump] = nonCanonical([Buffer.from("contract"), Buffer.from(uuidBytes(templateId)), Buffer.from(uuidBytes(eventId))], pid);
    const now = await w.chain.now();
    const createContract = () => w.contractIx(now, { templateId, eventId, cutoffIn: 100n, deadlineAfterCutoff: 100n });
    const cc = await createContract();
    // CreateContractArgs: template_id [16], event_id [16], cutoff_at i64, resolution_deadline i64, bump u8.
    await refused(patch(rekey(cc, contractAddr, altContract), 48, altContractBump), [w.authority], "AccountMismatch");
    expect(await w.chain.account(altContract)).toBeNull();
    const contractKey = Keypair.generate();
    await refused(rekey(cc, contractAddr, contractKey.publicKey), [w.authority, contractKey], "AccountMismatch");
    expectOk(await w.send([cc], [w.authority]));
    // A second contract for the same (template, event) is refused.
    await w.chain.advance(1n);
    await refused(createContract(), [w.authority], "AlreadyInitialized");
  });

  it("non-canonical position PDA and a keypair-signed position are refused", async () => {
    const [carol, alice] = await users(2);
    const contract = await w.contract();
    const { offer } = await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT });
    const seeds = [Buffer.from("position"), offer.toBuffer(), alice.key.publicKey.toBuffer()];
    const pid = w.client.program.programId;
    const [, canon] = PublicKey.findProgramAddressSync(seeds, pid);
    let addr: PublicKey | null = null;
    let bump = canon - 1;
    for (; bump >= 0; bump--) {
      try {
        addr = PublicKey.createProgramAddressSync([...seeds, Buffer.from([bump])], pid);
        break;
      } catch {
        /* on curve */
      }
    }
    const mk = async (position: PublicKey, positionBump: number) => {
      const ix = await w.takeIx(alice, offer, UNIT, { contract, expectedRevision: 1n, overrides: { position } });
      ix.data[ix.data.length - 1] = positionBump;
      return ix;
    };
    expectError(await w.send([await mk(addr!, bump)], [alice.key]), "AccountMismatch");
    const kp = Keypair.generate();
    const ix = await mk(kp.publicKey, canon);
    ix.keys.find((k) => k.pubkey.equals(kp.publicKey))!.isSigner = true;
    expectError(await w.send([ix], [alice.key, kp]), "AccountMismatch");
  });

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
