/**
 * Steal review of the offers program (independent audit). Every test asserts the SAFE behaviour:
 * it passes when the program holds and fails when the attack works.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import { createThawAccountInstruction } from "@solana/spl-token";
import { LAUNCH_LIMITS, OFFERS_ERRORS } from "../../idl/client/offers";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import type { TxResult } from "../../harness/chain";
import { TestMint } from "../../harness/token";
import { expectError as expectErr, expectOk } from "../support/expect";
import { deployProgramAt, drain } from "../support/loader";

const expectError = (r: TxResult, name: string) => expectErr(r, name, OFFERS_ERRORS);

const I64_MAX = (1n << 63n) - 1n;
const U64_MAX = (1n << 64n) - 1n;

let w: OffersWorld;
beforeAll(async () => {
  w = await OffersWorld.create({ freezableMint: true });
});

async function users(n: number): Promise<User[]> {
  const out: User[] = [];
  for (let i = 0; i < n; i++) out.push(await w.user());
  return out;
}

/** carol offers 8 on sideA against 10; alice takes `take`. Returns offer, contract, alice's position. */
async function matched(carol: User, alice: User, take = 5n * UNIT, cutoffIn = 3_600n) {
  const contract = await w.contract({ cutoffIn });
  const { r, offer } = await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT });
  expectOk(r);
  expectOk(await w.take(alice, offer, take));
  return { contract, offer, position: w.positionOf(offer, alice) };
}

describe("offers steal review: findings, fixed", () => {
  it("claim hostage: a settler that pays a Claim's rent cannot later make withdraw_claim fail (rent_payer turned executable)", async () => {
    const [carol, alice, mallory] = await users(3);
    const { contract, offer, position } = await matched(carol, alice);
    await w.chain.advance(3_601n);
    expectOk(await w.resolve(contract, "sideB")); // alice (taker) wins
    expectOk(await w.close(mallory.key, offer));
    const aliceNew = await w.mint.closeAccount(alice.token, alice.key);
    const k = await w.chain.fundedKeypair(1_000_000_000n);
    const ix = await w.settleIx(position, { payer: k.publicKey });
    expectOk(await w.chain.send([ix], [k, mallory.key], mallory.key));
    const c = await w.claim(alice.key.publicKey);
    expect(c?.rentPayer.toBase58()).toBe(k.publicKey.toBase58());
    await drain(w.chain, k, mallory.key.publicKey);
    await deployProgramAt(w.chain, k, mallory.key);
    const before = await w.mint.balance(aliceNew);
    expectOk(await w.withdrawClaim(alice.key, aliceNew));
    expect((await w.mint.balance(aliceNew)) - before).toBe(c!.amount);
  });

  it("treasury frozen: winners are blocked only until the authority names a new treasury (set_treasury), which only it can, and only to a sound account", async () => {
    const [carol, alice, mallory] = await users(3);
    const { contract, offer, position } = await matched(carol, alice);
    await w.chain.advance(3_601n);
    expectOk(await w.resolve(contract, "sideB"));
    expectOk(await w.close(carol.key, offer));
    const old = w.treasury;
    await w.mint.freeze(old);
    const before = await w.mint.balance(alice.token);
    expect((await w.settle(position)).ok).toBe(false); // the fee cannot reach a frozen treasury
    const fresh = await w.mint.account(w.authority.publicKey);
    const set = (treasury: PublicKey, signer = w.authority) => w.client.setTreasury({ authority: signer.publicKey, treasury });
    expectError(await w.send([await set(fresh, mallory.key)], [mallory.key]), "Unauthorized");
    expectError(await w.send([await set(w.client.pda.vault()[0])], [w.authority]), "AccountMismatch");
    expect((await w.send([await set(old)], [w.authority])).ok).toBe(false); // frozen
    const foreign = await (await TestMint.create(w.chain)).account(w.authority.publicKey);
    expectError(await w.send([await set(foreign)], [w.authority]), "AccountMismatch");
    expectOk(await w.send([await set(fresh)], [w.authority]));
    w.treasury = fresh;
    expectOk(await w.settle(position));
    expect(await w.mint.balance(alice.token)).toBeGreaterThan(before);
    expect(await w.mint.balance(fresh)).toBeGreaterThan(0n);
    // Back to the world's treasury for the other tests.
    expectOk(await w.send([createThawAccountInstruction(old, w.mint.mint, w.mint.authority.publicKey)]));
    expectOk(await w.send([await set(old)], [w.authority]));
    w.treasury = old;
  });

  it("unbounded contract schedule: create_contract refuses a resolution deadline of i64::MAX (void_expired could never run)", async () => {
    const now = await w.chain.now();
    const r = await w.send(
      [
        await w.client.createContract({
          authority: w.authority.publicKey,
          payer: w.authority.publicKey,
          templateId: randomUUID(),
          eventId: randomUUID(),
          cutoffAt: I64_MAX - 1n,
          resolutionDeadline: I64_MAX,
        }),
      ],
      [w.authority],
    );
    expectError(r, "InvalidSchedule");
    // The bounds: cutoff at most 366 days ahead, deadline at most 30 days after the cutoff.
    const DAY = 86_400n;
    const create = (cutoffAt: bigint, resolutionDeadline: bigint) =>
      w.client.createContract({
        authority: w.authority.publicKey,
        payer: w.authority.publicKey,
        templateId: randomUUID(),
        eventId: randomUUID(),
        cutoffAt,
        resolutionDeadline,
      });
    expectError(await w.send([await create(now + 366n * DAY + 1n, now + 367n * DAY)], [w.authority]), "InvalidSchedule");
    expectError(await w.send([await create(now + 100n, now + 100n + 30n * DAY + 1n)], [w.authority]), "InvalidSchedule");
    expectOk(await w.send([await create(now + 366n * DAY, now + 396n * DAY)], [w.authority]));
  });
});

describe("offers steal review: resisted attacks (regressions)", () => {
  it("self-take and u64::MAX amounts: refused, no token moves", async () => {
    const [carol, alice] = await users(2);
    const contract = await w.contract();
    expectError((await w.createOffer(carol, contract, { total: U64_MAX, target: U64_MAX })).r, "StakeAboveMaximum");
    const { offer } = await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT });
    const vault = w.client.pda.vault()[0];
    const before = await w.mint.balance(vault);
    expectError(await w.take(carol, offer, UNIT), "SelfTake");
    expectError(await w.take(alice, offer, U64_MAX), "AmountExceedsRemaining");
    expect(await w.mint.balance(vault)).toBe(before);
  });

  it("payout redirection: settle with a substituted creator/taker token or treasury is refused; settle twice is refused", async () => {
    const [carol, alice, mallory] = await users(3);
    const { contract, offer, position } = await matched(carol, alice, 10n * UNIT);
    await w.chain.advance(3_601n);
    expectOk(await w.resolve(contract, "sideB"));
    const o = await w.offer(offer);
    const p = await w.position(position);
    expectError(await w.send([await w.settleIx(position, { takerToken: mallory.token })]), "AccountMismatch");
    expectError(await w.send([await w.settleIx(position, { creatorToken: mallory.token })]), "AccountMismatch");
    expectError(await w.send([await w.settleIx(position, { treasury: mallory.token })]), "AccountMismatch");
    // swapped claims: the creator's claim slot given the taker's claim address
    await w.mint.closeAccount(alice.token, alice.key);
    const swapped = await w.settleIx(position, { creator: p.taker, taker: o.creator });
    expect(outcomeOf(await w.send([swapped]))).not.toBe("ok");
    expectOk(await w.settle(position));
    expectError(await w.settle(position), "PositionAlreadySettled");
  });

  it("close-offer theft: a stranger cannot close before cutoff; after cutoff the refund goes to the creator, not the caller", async () => {
    const [carol, alice, mallory] = await users(3);
    const { offer } = await matched(carol, alice, 5n * UNIT, 100n);
    expectError(await w.close(mallory.key, offer), "CloseNotAllowed");
    await w.chain.advance(101n);
    const [c0, m0] = [await w.mint.balance(carol.token), await w.mint.balance(mallory.token)];
    expectOk(await w.close(mallory.key, offer));
    expect((await w.mint.balance(carol.token)) - c0).toBe(4n * UNIT);
    expect(await w.mint.balance(mallory.token)).toBe(m0);
    expectError(await w.close(mallory.key, offer), "OfferNotOpen");
  });

  it("revival: a closed position / offer account cannot be re-created or re-settled", async () => {
    const [carol, alice] = await users(2);
    const contract = await w.contract({ cutoffIn: 100n });
    const nonce = w.nextNonce();
    const { offer } = await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT, nonce });
    expectOk(await w.take(alice, offer, 10n * UNIT));
    const position = w.positionOf(offer, alice);
    await w.chain.advance(101n);
    expectOk(await w.resolve(contract, "sideA"));
    expectOk(await w.settle(position));
    const p = await w.position(position);
    expectOk(await w.send([await w.client.closePosition({ position, rentPayer: p.rentPayer })]));
    expectOk(await w.closeOfferAccount(offer));
    // Settling or taking again, and re-creating the offer at the same address, all fail.
    const take = await w.takeIx(alice, offer, UNIT, { contract, expectedRevision: 1n });
    expectError(await w.send([take], [alice.key]), "WrongAccountOwner");
    expectError((await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT, nonce })).r, "ContractNotOpen");
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

  it("rogue config / non-authority admin: refused (create_offer with a copied Config, update_config, create_contract, resolve)", async () => {
    const [carol, mallory] = await users(2);
    const contract = await w.contract();
    const real = (await w.chain.account(w.client.pda.config()[0]))!;
    const fake = Keypair.generate().publicKey;
    w.chain.setAccount(fake, { ...real, data: Buffer.from(real.data) });
    const ix = await w.client.createOffer({
      payer: w.chain.payer.publicKey,
      creator: carol.key.publicKey,
      creatorToken: carol.token,
      contract,
      nonce: w.nextNonce(),
      side: "sideA",
      creatorTotal: 8n * UNIT,
      takerTarget: 10n * UNIT,
      minimumTake: UNIT,
      expectedFeeBps: (await w.config()).feeBps,
      overrides: { config: fake },
    });
    expectError(await w.send([ix], [carol.key]), "AccountMismatch");
    expectError(
      await w.send(
        [await w.client.updateConfig({ authority: mallory.key.publicKey, feeBps: 10_000, offersEnabled: true, limits: LAUNCH_LIMITS })],
        [mallory.key],
      ),
      "Unauthorized",
    );
    const now = await w.chain.now();
    expectError(
      await w.send([await w.contractIx(now, { by: mallory.key.publicKey, cutoffIn: 100n, deadlineAfterCutoff: 100n })], [mallory.key]),
      "Unauthorized",
    );
    expectError(await w.send([await w.client.resolveContract({ authority: mallory.key.publicKey, contract, result: "void" })], [mallory.key]), "Unauthorized");
    const init = await w.client.initializeConfig({
      authority: mallory.key.publicKey,
      mint: w.mint.mint,
      treasury: mallory.token,
      feeBps: 10_000,
      offersEnabled: true,
      limits: LAUNCH_LIMITS,
      deployer: mallory.key.publicKey,
    });
    expectError(await w.send([init], [mallory.key]), "MissingSignature");
  });

  it("early void / early resolve: void_expired before the deadline and a side result before cutoff are refused", async () => {
    const contract = await w.contract({ cutoffIn: 100n, deadlineAfterCutoff: 100n });
    expectError(await w.resolve(contract, "sideA"), "ResolveBeforeCutoff");
    expectError(await w.send([await w.client.voidExpiredContract({ contract })]), "DeadlineNotPassed");
    await w.chain.advance(200n);
    expectError(await w.send([await w.client.voidExpiredContract({ contract })]), "DeadlineNotPassed");
    await w.chain.advance(1n);
    expectOk(await w.send([await w.client.voidExpiredContract({ contract })]));
  });

  it("claim theft: another signer, or a destination the owner does not hold, cannot withdraw a claim", async () => {
    const [carol, alice, mallory] = await users(3);
    const { contract, offer, position } = await matched(carol, alice);
    expectOk(await w.resolve(contract, "void"));
    expectOk(await w.close(carol.key, offer));
    const aliceNew = await w.mint.closeAccount(alice.token, alice.key);
    expectOk(await w.settle(position));
    const c = (await w.claim(alice.key.publicKey))!;
    const claim = w.client.pda.claim(alice.key.publicKey)[0];
    expectError(
      await w.send(
        [await w.client.withdrawClaim({ owner: mallory.key.publicKey, destination: mallory.token, rentPayer: c.rentPayer, overrides: { claim } })],
        [mallory.key],
      ),
      "AccountMismatch",
    );
    expectError(
      await w.send([await w.client.withdrawClaim({ owner: alice.key.publicKey, destination: mallory.token, rentPayer: c.rentPayer })], [alice.key]),
      "NotTokenOwner",
    );
    expectError(
      await w.send([await w.client.withdrawClaim({ owner: alice.key.publicKey, destination: aliceNew, rentPayer: mallory.key.publicKey })], [alice.key]),
      "AccountMismatch",
    );
    const before = await w.mint.balance(aliceNew);
    expectOk(await w.withdrawClaim(alice.key, aliceNew));
    expect((await w.mint.balance(aliceNew)) - before).toBe(c.amount);
    expectError(await w.withdrawClaim(alice.key, aliceNew), "WrongAccountOwner");
  });

  it("pre-funded offer address does not block creation", async () => {
    const [carol] = await users(1);
    const contract = await w.contract();
    const nonce = w.nextNonce();
    const offer = w.client.pda.offer(contract, carol.key.publicKey, nonce)[0];
    expectOk(await w.send([SystemProgram.transfer({ fromPubkey: w.chain.payer.publicKey, toPubkey: offer, lamports: 1_000_000 })]));
    expectOk((await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT, nonce })).r);
  });
});

function outcomeOf(r: TxResult): string {
  return r.ok ? "ok" : (r.error ?? "err");
}
