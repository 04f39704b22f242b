/**
 * The IDL-compiled decoders (indexer/idl-decoder.ts) give the same values as Anchor's Borsh
 * coder (idl/client/offers.ts decoders) on real accounts of every type, and reject others.
 */
import { describe, expect, it } from "vitest";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { decodeConfig, decodeContract, decodeOffer, decodePosition } from "../../idl/client/offers";
import { OFFERS_DECODERS, offersAccountRow, programDataLines, OFFERS_PROGRAM, OFFERS_CONFIG, decodeAccount } from "../../indexer/decode";
import { Keypair } from "@solana/web3.js";
import { accountKind } from "../../indexer/idl-decoder";

const norm = (v: unknown): unknown => {
  if (v && typeof v === "object" && "toBase58" in v) return (v as { toBase58(): string }).toBase58();
  if (Array.isArray(v)) return v.map(norm);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x)]));
  return v;
};

describe("IDL-compiled decoders", () => {
  it("match Anchor's decoding on config, contract, offer and position accounts", async () => {
    const w = await OffersWorld.create();
    const a = await w.user(),
      b = await w.user();
    const contract = await w.contract();
    const { offer } = await w.createOffer(a, contract, { total: 8n * UNIT, target: 10n * UNIT, side: "sideB" });
    await w.take(b, offer, 5n * UNIT);
    const position = w.positionOf(offer, b);
    const data = async (k: Parameters<typeof w.chain.account>[0]) => (await w.chain.account(k))!.data;

    const cfg = await data(w.client.pda.config()[0]);
    const fast = OFFERS_DECODERS.get("config")!.decode(cfg);
    const anchorCfg = decodeConfig(cfg);
    expect(norm({ ...fast, offersEnabled: fast.offersEnabled === 1 })).toMatchObject(norm(anchorCfg) as object);

    const o = await data(offer);
    expect(norm(OFFERS_DECODERS.get("offer")!.decode(o))).toMatchObject(norm({ ...decodeOffer(o), side: 2, status: 0 }) as object);
    const p = await data(position);
    expect(norm(OFFERS_DECODERS.get("position")!.decode(p))).toMatchObject(norm({ ...decodePosition(p), status: 0 }) as object);
    const c = await data(contract);
    const fc = OFFERS_DECODERS.get("contract")!.decode(c);
    const ac = decodeContract(c);
    expect([fc.cutoffAt, fc.resolutionDeadline, fc.createdAt]).toEqual([ac.cutoffAt, ac.resolutionDeadline, ac.createdAt]);
    expect(offersAccountRow(c)?.row).toMatchObject({ template_id: ac.templateId, event_id: ac.eventId, status: "Open", result: "none" });

    expect(accountKind(OFFERS_DECODERS, Buffer.alloc(200))).toBeNull();
    expect(offersAccountRow(Buffer.from("short"))).toBeNull();
  });

  it("stores a Config only at the canonical address", async () => {
    // The programs refuse to create a second Config; should a Config-shaped account owned by the
    // program ever exist elsewhere, the indexer still must not take its settings.
    const w = await OffersWorld.create();
    const [canonical] = w.client.pda.config();
    expect(canonical.toBase58()).toBe(OFFERS_CONFIG);
    const data = (await w.chain.account(canonical))!.data;
    const update = (pubkey: string) => ({ slot: 1, writeVersion: 1, pubkey, owner: OFFERS_PROGRAM, data });
    expect(decodeAccount(update(OFFERS_CONFIG))?.table).toBe("config");
    expect(decodeAccount(update(Keypair.generate().publicKey.toBase58()))).toBeNull();
  });

  it("takes events only from the program's own frames", () => {
    const other = "Other111111111111111111111111111111111111111";
    const logs = [
      `Program ${other} invoke [1]`,
      "Program data: FORGED",
      `Program ${OFFERS_PROGRAM} invoke [2]`,
      "Program data: REAL",
      `Program ${OFFERS_PROGRAM} success`,
      "Program data: FORGED2",
      `Program ${other} success`,
    ];
    expect(programDataLines(logs, OFFERS_PROGRAM)).toEqual(["Program data: REAL"]);
  });
});
