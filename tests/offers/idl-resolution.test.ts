/**
 * The IDL's PDA seeds are the program's: Anchor's `Program`, given only the accounts that are
 * not PDAs, derives every PDA account by itself (const, account, account-data and argument
 * seeds), the addresses equal the client's helpers, and the compiled program accepts them.
 */
import { describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { Program } from "../../idl/client/anchor";
import { bn } from "../../idl/client/common";
import { LAUNCH_FEE_BPS, LAUNCH_LIMITS, OFFERS_IDL, OffersPda, Side, uuidBytes } from "../../idl/client/offers";
import type { Offers } from "../../idl/offers";
import { b58, expectConfigAccountsResolved, readingProvider } from "../support/anchor-provider";
import { TestChain } from "../../harness/chain";
import { expectOk } from "../support/expect";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { deploymentParts } from "../../harness/program-world";

/** Resolved accounts as base58, to compare with the helpers' addresses. */
const limits = Object.fromEntries(Object.entries(LAUNCH_LIMITS).map(([k, v]) => [k, bn(v)])) as never;

describe("offers IDL: Anchor resolves the PDA accounts", () => {
  it("initialize_config: config, vault and the ProgramData under the upgradeable loader", async () => {
    const chain = await TestChain.start();
    const { mint, authority, treasury } = await deploymentParts(chain);
    const program = new Program<Offers>(OFFERS_IDL, readingProvider(chain));
    const pda = new OffersPda();
    const call = program.methods
      .initializeConfig(LAUNCH_FEE_BPS, 1, limits)
      .accountsPartial({ deployer: chain.upgradeAuthority.publicKey, authority: authority.publicKey, mint: mint.mint, treasury });
    expectConfigAccountsResolved(await call.pubkeys(), pda);
    expectOk(await chain.send([await call.instruction()], [chain.upgradeAuthority]));
  });

  it("a whole offer, from contract to withdrawn claim, with only the non-PDA accounts given", async () => {
    const w = await OffersWorld.create();
    const program = new Program<Offers>(OFFERS_IDL, readingProvider(w.chain));
    const pda = w.client.pda;
    const [config, vault] = [pda.config()[0].toBase58(), pda.vault()[0].toBase58()];
    const payer = w.chain.payer.publicKey;
    const [a, b] = [await w.user(100n * UNIT), await w.user(100n * UNIT)];

    // Argument seeds: the contract's two UUIDs (16 bytes each).
    const [templateId, eventId] = [randomUUID(), randomUUID()];
    const [contract, contractBump] = pda.contract(templateId, eventId);
    const cutoff = (await w.chain.now()) + 3_600n;
    const create = program.methods
      .createContract(uuidBytes(templateId), uuidBytes(eventId), bn(cutoff), bn(cutoff + 86_400n), contractBump)
      .accountsPartial({ authority: w.authority.publicKey, payer });
    expect(b58(await create.pubkeys())).toMatchObject({ config, contract: contract.toBase58() });
    expectOk(await w.send([await create.instruction()], [w.authority]));
    expect((await w.contractAccount(contract)).templateId).toBe(templateId);

    // Account seeds (contract, creator) and a u64 argument seed (the nonce, 8 bytes LE).
    const nonce = 0x0102_0304_0506_0708n;
    const [offer, offerBump] = pda.offer(contract, a.key.publicKey, nonce);
    const post = program.methods
      .createOffer(bn(nonce), offerBump, Side.sideA, bn(8n * UNIT), bn(10n * UNIT), bn(UNIT), LAUNCH_FEE_BPS, bn(0n))
      .accountsPartial({ payer, creator: a.key.publicKey, creatorToken: a.token, contract });
    expect(b58(await post.pubkeys())).toMatchObject({ config, vault, offer: offer.toBase58() });
    expectOk(await w.send([await post.instruction()], [a.key]));
    expect((await w.offer(offer)).nonce).toBe(nonce);

    const [position, positionBump] = pda.position(offer, b.key.publicKey);
    const take = program.methods
      .takeOffer(bn(5n * UNIT), bn((await w.offer(offer)).revision), positionBump)
      .accountsPartial({ payer, taker: b.key.publicKey, takerToken: b.token, contract, offer });
    expect(b58(await take.pubkeys())).toMatchObject({ config, vault, position: position.toBase58() });
    expectOk(await w.send([await take.instruction()], [b.key]));

    // Account-data seeds: the creator's claim is ["claim", offer.creator]; Anchor reads the offer.
    // The creator's recorded token account is gone, so the refund lands in that claim.
    a.token = await w.mint.closeAccount(a.token, a.key);
    const [creatorClaim, creatorClaimBump] = pda.claim(a.key.publicKey);
    const close = program.methods
      .closeOffer(bn((await w.offer(offer)).revision), creatorClaimBump)
      .accountsPartial({ caller: a.key.publicKey, contract, offer, creatorToken: (await w.offer(offer)).creatorToken, payer });
    expect(b58(await close.pubkeys())).toMatchObject({ config, vault, creatorClaim: creatorClaim.toBase58() });
    expectOk(await w.send([await close.instruction()], [a.key]));
    const refunded = (await w.claim(a.key.publicKey))!.amount;
    expect(refunded).toBe(4n * UNIT);

    // ["claim", offer.creator] and ["claim", position.taker]: two accounts read for one instruction.
    await w.chain.setTime(cutoff + 1n);
    expectOk(await w.resolve(contract, "sideA"));
    const [takerClaim, takerClaimBump] = pda.claim(b.key.publicKey);
    const o = await w.offer(offer);
    const settle = program.methods
      .settlePosition(creatorClaimBump, takerClaimBump)
      .accountsPartial({ contract, offer, position, creatorToken: o.creatorToken, takerToken: b.token, treasury: w.treasury, payer });
    expect(b58(await settle.pubkeys())).toMatchObject({ config, vault, creatorClaim: creatorClaim.toBase58(), takerClaim: takerClaim.toBase58() });
    expectOk(await w.send([await settle.instruction()]));
    const won = (await w.claim(a.key.publicKey))!.amount;
    expect(won).toBeGreaterThan(refunded);

    // The owner's claim from the owner's key.
    const withdraw = program.methods.withdrawClaim().accountsPartial({ owner: a.key.publicKey, destination: a.token, rentPayer: payer });
    expect(b58(await withdraw.pubkeys())).toMatchObject({ config, vault, claim: creatorClaim.toBase58() });
    const before = await w.mint.balance(a.token);
    expectOk(await w.send([await withdraw.instruction()], [a.key]));
    expect(await w.mint.balance(a.token)).toBe(before + won);
    expect(await w.claim(a.key.publicKey)).toBeNull();
  });
});
