/**
 * The pools IDL cannot drift from the Rust source (regenerated and compared), and every account
 * kind the compiled program writes round-trips byte for byte through the IDL's Borsh coder.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { POOLS_IDL, poolsAccountKind, poolsAccountsCoder } from "../../idl/client/pools";
import { PoolsWorld, UNIT } from "../../harness/pools-world";
import { expectOk } from "../support/expect";

const root = join(import.meta.dirname, "..", "..");

describe("pools IDL", () => {
  it("matches what scripts/gen-idl.ts derives from the Rust sources", () => {
    expect(() => execFileSync("npx", ["tsx", "scripts/gen-idl.ts", "--check"], { cwd: root, stdio: "pipe" })).not.toThrow();
  });

  it("lists every instruction, account, event and error of the program", () => {
    expect(POOLS_IDL.instructions.map((i) => i.name)).toEqual([
      "initializeConfig",
      "updateConfig",
      "setTreasury",
      "createPool",
      "placePick",
      "proposeOutcome",
      "castVote",
      "resolvePool",
      "authorityResolve",
      "cancelPool",
      "settleParticipant",
      "refundParticipant",
      "withdrawClaim",
    ]);
    expect(POOLS_IDL.accounts.map((a) => a.name)).toEqual(["config", "pool", "participant", "claim"]);
    expect(POOLS_IDL.events.map((e) => e.name)).toEqual([
      "pickPlaced",
      "voteCast",
      "outcomeProposed",
      "poolEscalated",
      "poolStateChanged",
      "participantSettled",
      "claimCredited",
      "claimWithdrawn",
    ]);
    // 6000-6009 shared, 6010-6055 the program's, consecutive (new ones are appended, never renumbered).
    expect(POOLS_IDL.errors.map((e) => e.code)).toEqual(Array.from({ length: 56 }, (_, i) => 6000 + i));
    const settle = POOLS_IDL.instructions.find((i) => i.name === "settleParticipant")!;
    expect(settle.accounts.slice(-3).map((a) => a.name)).toEqual(["payer", "userClaim", "systemProgram"]);
  });

  it("decodes and re-encodes every account kind the program writes, byte for byte", async () => {
    const w = await PoolsWorld.create();
    const [c, a] = [await w.user(), await w.user(3n * UNIT)];
    const { pool } = await w.createPool(c, { labels: ["Ja", "Nein", "Vielleicht ✓"], criteria: "Amtliche Quelle", coverUrl: "https://x.example/c.png" });
    expectOk(await w.pick(a, pool, 2, 3n * UNIT));
    // A Claim: the pool is canceled and the participant's token account closed before its refund.
    expectOk(await w.cancel(c.key, pool));
    await w.closeTokenAccount(a);
    expectOk(await w.refund(pool, a.key.publicKey));
    const cases = [
      ["config", w.client.pda.config()[0]],
      ["pool", pool],
      ["participant", w.participantOf(pool, a.key.publicKey)],
      ["claim", w.client.pda.claim(a.key.publicKey)[0]],
    ] as const;
    for (const [name, address] of cases) {
      const data = (await w.chain.account(address))!.data;
      expect(poolsAccountKind(data)).toBe(name);
      const decoded = poolsAccountsCoder.decode(name, data);
      // Anchor's encode() writes into a fixed 1,000-byte buffer (a Pool is larger): use the layout.
      const layout = (
        poolsAccountsCoder as unknown as { accountLayouts: Map<string, { discriminator: number[]; layout: { encode(v: unknown, b: Buffer): number } }> }
      ).accountLayouts.get(name)!;
      const buf = Buffer.alloc(data.length * 2);
      const len = layout.layout.encode(decoded, buf);
      expect(Buffer.concat([Buffer.from(layout.discriminator), buf.subarray(0, len)]).equals(data), name).toBe(true);
    }
  });
});
