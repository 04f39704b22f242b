/**
 * The pools IDL cannot drift from the Rust source (regenerated and compared), and every account
 * kind the compiled program writes round-trips byte for byte through the IDL's Borsh coder.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { POOLS_IDL, poolsAccountKind, poolsAccountsCoder } from "../../idl/client/pools";
import { PoolsWorld, UNIT } from "../harness/pools-world";
import { expectOk } from "../harness/expect";

const root = join(import.meta.dirname, "..", "..");

describe("pools IDL", () => {
  it("matches what scripts/gen-idl.ts derives from the Rust sources", () => {
    expect(() => execFileSync("npx", ["tsx", "scripts/gen-idl.ts", "--check"], { cwd: root, stdio: "pipe" })).not.toThrow();
  });

  it("lists every instruction, account, event and error of the program", () => {
    expect(POOLS_IDL.instructions.map((i) => i.name)).toEqual([
      "initializeConfig", "updateConfig", "createPool", "placePick", "startVote", "castVote", "resolvePool", "cancelPool", "settleParticipant", "refundParticipant",
    ]);
    expect(POOLS_IDL.accounts.map((a) => a.name)).toEqual(["config", "pool", "participant"]);
    expect(POOLS_IDL.events.map((e) => e.name)).toEqual(["pickPlaced", "voteCast", "poolStateChanged", "participantSettled"]);
    expect(POOLS_IDL.errors.length).toBe(47);
  });

  it("decodes and re-encodes every account kind the program writes, byte for byte", async () => {
    const w = await PoolsWorld.create();
    const [c, a] = [await w.user(), await w.user()];
    const { pool } = await w.createPool(c, { labels: ["Ja", "Nein", "Vielleicht ✓"], criteria: "Amtliche Quelle", coverUrl: "https://x.example/c.png" });
    expectOk(await w.pick(a, pool, 2, 3n * UNIT));
    const cases = [["config", w.client.pda.config()[0]], ["pool", pool], ["participant", w.participantOf(pool, a.key.publicKey)]] as const;
    for (const [name, address] of cases) {
      const data = (await w.chain.account(address))!.data;
      expect(poolsAccountKind(data)).toBe(name);
      const decoded = poolsAccountsCoder.decode(name, data);
      // Anchor's encode() writes into a fixed 1,000-byte buffer (a Pool is larger): use the layout.
      const layout = (poolsAccountsCoder as unknown as { accountLayouts: Map<string, { discriminator: number[]; layout: { encode(v: unknown, b: Buffer): number } }> }).accountLayouts.get(name)!;
      const buf = Buffer.alloc(data.length * 2);
      const len = layout.layout.encode(decoded, buf);
      expect(Buffer.concat([Buffer.from(layout.discriminator), buf.subarray(0, len)]).equals(data), name).toBe(true);
    }
  });
});
