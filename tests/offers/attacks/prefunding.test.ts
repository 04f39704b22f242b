/**
 * Pre-funding (programs/SECURITY.md): lamports sent to a future address never block its creation.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PublicKey, SystemProgram } from "@solana/web3.js";
import type { TxResult } from "../../../harness/chain";
import { UNIT } from "../../../harness/offers-world";
import { expectOk } from "../../support/expect";
import { randomUUID } from "node:crypto";
import { setUp, SIZE, alice, bob, closeTokenAccount, ledger, looseUser, users, w } from "./scene";

beforeAll(setUp);

describe("offers: pre-funded addresses", () => {
  it("pre-funded addresses do not block creation", async () => {
    const funder = await w.chain.fundedKeypair();
    const prefund = async (to: PublicKey, lamports: bigint) =>
      expectOk(await w.send([SystemProgram.transfer({ fromPubkey: funder.publicKey, toPubkey: to, lamports })], [funder]));
    const rentPayer = await w.chain.fundedKeypair();
    /** What `fn` cost the rent payer (fees are the chain payer's). */
    const cost = async (fn: () => Promise<TxResult>) => {
      const before = await w.chain.lamports(rentPayer.publicKey);
      expectOk(await fn());
      return before - (await w.chain.lamports(rentPayer.publicKey));
    };
    const gift = 1_000_000n;

    // Contract.
    const [templateId, eventId] = [randomUUID(), randomUUID()];
    const [contract] = w.client.pda.contract(templateId, eventId);
    await prefund(contract, gift);
    const now = await w.chain.now();
    const cc = await w.client.createContract({
      authority: w.authority.publicKey,
      payer: rentPayer.publicKey,
      templateId,
      eventId,
      cutoffAt: now + 10_000n,
      resolutionDeadline: now + 20_000n,
    });
    expect(await cost(() => w.send([cc], [w.authority, rentPayer]))).toBe((await w.chain.rentExempt(SIZE.contract)) - gift);
    expect(await w.contractAccount(contract)).toMatchObject({ status: "Open" });
    expect(await w.chain.lamports(contract)).toBe(await w.chain.rentExempt(SIZE.contract));

    // Offer.
    const nonce = w.nextNonce();
    const [offer] = w.client.pda.offer(contract, alice.key.publicKey, nonce);
    await prefund(offer, gift);
    const before = await ledger();
    const co = await w.client.createOffer({
      payer: rentPayer.publicKey,
      creator: alice.key.publicKey,
      creatorToken: alice.token,
      contract,
      nonce,
      side: "sideA",
      creatorTotal: 20n * UNIT,
      takerTarget: 20n * UNIT,
      minimumTake: UNIT,
      expectedFeeBps: (await w.config()).feeBps,
    });
    expect(await cost(() => w.send([co], [alice.key, rentPayer]))).toBe((await w.chain.rentExempt(SIZE.offer)) - gift);
    const after = await ledger();
    expect(after.vault - before.vault).toBe(20n * UNIT);
    expect(after.total).toBe(before.total);
    expect(await w.offer(offer)).toMatchObject({ status: "Open", creatorTotal: 20n * UNIT, rentPayer: rentPayer.publicKey });

    // Position, pre-funded above its rent: the rent payer pays nothing.
    const [position] = w.client.pda.position(offer, bob.key.publicKey);
    await prefund(position, (await w.chain.rentExempt(SIZE.position)) + 1n);
    const tk = await w.client.takeOffer({
      payer: rentPayer.publicKey,
      taker: bob.key.publicKey,
      takerToken: bob.token,
      contract,
      offer,
      amount: 5n * UNIT,
      expectedRevision: 1n,
    });
    expect(await cost(() => w.send([tk], [bob.key, rentPayer]))).toBe(0n);
    expect(await w.position(position)).toMatchObject({ takerAmount: 5n * UNIT, status: "Open" });

    // Claim: the creator's token account is gone when its offer closes.
    const gina = await looseUser();
    const { offer: ginas } = await w.createOffer(gina, contract, { total: 7n * UNIT, target: 7n * UNIT });
    await closeTokenAccount(gina);
    const [claim] = w.client.pda.claim(gina.key.publicKey);
    await prefund(claim, gift);
    const o = await w.offer(ginas);
    const cl = await w.client.closeOffer({
      caller: gina.key.publicKey,
      contract,
      offer: ginas,
      creatorToken: o.creatorToken,
      creator: gina.key.publicKey,
      expectedRevision: o.revision,
      payer: rentPayer.publicKey,
    });
    const vaultBefore = (await ledger()).vault;
    expect(await cost(() => w.send([cl], [gina.key, rentPayer]))).toBe((await w.chain.rentExempt(SIZE.claim)) - gift);
    expect(await w.claim(gina.key.publicKey)).toMatchObject({ owner: gina.key.publicKey, amount: 7n * UNIT, rentPayer: rentPayer.publicKey });
    expect((await ledger()).vault).toBe(vaultBefore); // credited, not moved
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
