/**
 * The IDL cannot drift from the Rust source: it is regenerated from the annotated sources and
 * compared with the committed files, and real accounts written by the compiled program
 * round-trip byte for byte through the IDL's Borsh coder.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { OFFERS_IDL, offersAccountsCoder } from "../../idl/client/offers";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { expectOk } from "../support/expect";

const root = join(import.meta.dirname, "..", "..");

describe("offers IDL", () => {
  it("lists every account kind and event the program writes", () => {
    expect(OFFERS_IDL.accounts.map((a) => a.name)).toEqual(["config", "contract", "offer", "position", "claim"]);
    expect(OFFERS_IDL.events.map((e) => e.name)).toEqual(["offerTaken", "offerClosed", "positionSettled", "claimCredited", "claimWithdrawn"]);
  });

  it("matches what scripts/gen-idl.ts derives from the Rust sources", () => {
    // Exits non-zero (and the call throws) when any generated file differs from the committed one.
    expect(() => execFileSync("npx", ["tsx", "scripts/gen-idl.ts", "--check"], { cwd: root, stdio: "pipe" })).not.toThrow();
  });

  it("decodes and re-encodes every account kind the program writes, byte for byte", async () => {
    const w = await OffersWorld.create();
    const [a, b] = [await w.user(100n * UNIT), await w.user(100n * UNIT)];
    const contract = await w.contract();
    const { offer } = await w.createOffer(a, contract, { total: 8n * UNIT, target: 10n * UNIT });
    expectOk(await w.take(b, offer, 5n * UNIT));
    // A claim: the creator's recorded token account is gone when its offer closes.
    a.token = await w.mint.closeAccount(a.token, a.key);
    expectOk(await w.close(a.key, offer));
    const cases = [
      ["config", w.client.pda.config()[0]],
      ["contract", contract],
      ["offer", offer],
      ["position", w.positionOf(offer, b)],
      ["claim", w.client.pda.claim(a.key.publicKey)[0]],
    ] as const;
    for (const [name, address] of cases) {
      const data = (await w.chain.account(address))!.data;
      const decoded = offersAccountsCoder.decode(name, data);
      const encoded = await offersAccountsCoder.encode(name, decoded);
      expect(encoded.equals(data), name).toBe(true);
    }
  });
});
