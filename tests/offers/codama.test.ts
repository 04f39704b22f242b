/**
 * The Codama client rendered from the offers IDL (idl/codama/offers): it is current, its account
 * decoders read the compiled program's real accounts as the project's decoder does, its PDA
 * finders give the client's addresses and bumps, and its instruction builder derives the PDAs
 * itself into an instruction the program accepts, identical to the project's.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { address, createNoopSigner } from "@solana/kit";
import * as codama from "../../idl/codama/offers";
import {
  ContractResult,
  ContractStatus,
  OfferStatus,
  PositionStatus,
  decodeClaim,
  decodeConfig,
  decodeContract,
  decodeOffer,
  decodePosition,
  offersAccountsCoder,
  uuidBytes,
} from "../../idl/client/offers";
import { asPda, expectDecodersAgree, shape, web3Instruction } from "../support/codama";
import { expectOk } from "../support/expect";
import { OffersWorld, UNIT } from "../../harness/offers-world";

const root = join(import.meta.dirname, "..", "..");
const addr = (k: { toBase58(): string }) => address(k.toBase58());

describe("offers Codama client", () => {
  it("is what scripts/gen-codama.ts renders from the committed IDLs", () => {
    expect(() => execFileSync("npx", ["tsx", "scripts/gen-codama.ts", "--check"], { cwd: root, stdio: "pipe" })).not.toThrow();
  });

  it("decodes the program's accounts as the project does, derives its PDAs, and builds an instruction it accepts", async () => {
    const w = await OffersWorld.create();
    const pda = w.client.pda;
    const [a, b] = [await w.user(100n * UNIT), await w.user(100n * UNIT)];
    const contract = await w.contract();
    const { templateId, eventId } = await w.contractAccount(contract);

    // create_offer from Codama's builder, given no PDA: it derives config, offer and vault.
    const nonce = 0x1122_3344_5566_7788n;
    const [offer, bump] = pda.offer(contract, a.key.publicKey, nonce);
    const args = {
      nonce,
      bump,
      side: 2,
      creatorTotal: 8n * UNIT,
      takerTarget: 10n * UNIT,
      minimumTake: UNIT,
      expectedFeeBps: (await w.config()).feeBps,
      expiresAt: 0n,
    };
    const kitIx = web3Instruction(
      await codama.getCreateOfferInstructionAsync({
        payer: createNoopSigner(addr(w.chain.payer.publicKey)),
        creator: createNoopSigner(addr(a.key.publicKey)),
        creatorToken: addr(a.token),
        contract: addr(contract),
        ...args,
      }),
    );
    const ours = await w.client.createOffer({
      payer: w.chain.payer.publicKey,
      creator: a.key.publicKey,
      creatorToken: a.token,
      contract,
      ...args,
      side: "sideB",
    });
    expect(shape(kitIx)).toEqual(shape(ours));
    expectOk(await w.send([kitIx], [a.key]));
    expectOk(await w.take(b, offer, 5n * UNIT));
    // A claim: the creator's recorded token account is gone when its offer closes.
    a.token = await w.mint.closeAccount(a.token, a.key);
    expectOk(await w.close(a.key, offer));
    const position = w.positionOf(offer, b);

    const data = async (k: Parameters<typeof w.chain.account>[0]) => (await w.chain.account(k))!.data;
    const cases = [
      ["config", pda.config()[0], codama.getConfigDecoder()],
      ["contract", contract, codama.getContractDecoder()],
      ["offer", offer, codama.getOfferDecoder()],
      ["position", position, codama.getPositionDecoder()],
      ["claim", pda.claim(a.key.publicKey)[0], codama.getClaimDecoder()],
    ] as const;
    await expectDecodersAgree(cases, data, offersAccountsCoder);

    // What the project's decoders make of the same bytes: names, UUIDs, flags.
    const cfg = codama.getConfigDecoder().decode(await data(pda.config()[0]));
    const ourCfg = decodeConfig(await data(pda.config()[0]));
    expect([cfg.mint, cfg.feeBps, cfg.offersEnabled === 1, cfg.limits.maximumWagerMicros]).toEqual([
      ourCfg.mint.toBase58(),
      ourCfg.feeBps,
      ourCfg.offersEnabled,
      ourCfg.limits.maximumWagerMicros,
    ]);
    const c = codama.getContractDecoder().decode(await data(contract));
    const ourC = decodeContract(await data(contract));
    expect([uuidBytes(templateId), ContractStatus[c.status], ContractResult[c.result], c.cutoffAt]).toEqual([
      [...c.templateId],
      ourC.status,
      ourC.result,
      ourC.cutoffAt,
    ]);
    const o = codama.getOfferDecoder().decode(await data(offer));
    const ourO = decodeOffer(await data(offer));
    expect([o.creator, OfferStatus[o.status], o.side, o.takerFilled, o.creatorRefunded, o.revision]).toEqual([
      ourO.creator.toBase58(),
      ourO.status,
      2,
      ourO.takerFilled,
      ourO.creatorRefunded,
      ourO.revision,
    ]);
    expect(ourO.status).toBe("Closed");
    const p = codama.getPositionDecoder().decode(await data(position));
    const ourP = decodePosition(await data(position));
    expect([p.taker, PositionStatus[p.status], p.takerAmount, p.creatorMatched]).toEqual([
      ourP.taker.toBase58(),
      ourP.status,
      ourP.takerAmount,
      ourP.creatorMatched,
    ]);
    const cl = codama.getClaimDecoder().decode(await data(pda.claim(a.key.publicKey)[0]));
    const ourCl = decodeClaim(await data(pda.claim(a.key.publicKey)[0]));
    expect([cl.owner, cl.amount]).toEqual([ourCl.owner.toBase58(), ourCl.amount]);
    expect(cl.amount).toBe(4n * UNIT);

    // The PDA finders rendered from the IDL's seeds, bumps included.
    expect(await codama.findConfigPda()).toEqual(asPda(pda.config()));
    expect(await codama.findVaultPda()).toEqual(asPda(pda.vault()));
    expect(await codama.findContractPda({ templateId: new Uint8Array(uuidBytes(templateId)), eventId: new Uint8Array(uuidBytes(eventId)) })).toEqual(
      asPda(pda.contract(templateId, eventId)),
    );
    expect(await codama.findOfferPda({ contract: addr(contract), creator: addr(a.key.publicKey), nonce })).toEqual(asPda([offer, bump]));
    expect(await codama.findPositionPda({ offer: addr(offer), taker: addr(b.key.publicKey) })).toEqual(asPda(pda.position(offer, b.key.publicKey)));
    expect(await codama.findClaimPda({ owner: addr(a.key.publicKey) })).toEqual(asPda(pda.claim(a.key.publicKey)));
  });
});
