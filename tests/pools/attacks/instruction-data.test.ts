/**
 * Malformed instruction data (programs/SECURITY.md): garbage, unknown discriminators, wrong
 * argument lengths and missing accounts are refused.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { POOLS_PROGRAM_ID } from "../../../idl/client/pools";
import { TransactionInstruction } from "@solana/web3.js";
import { setUp, cast4, expectError, rejected, w } from "./scene";

beforeAll(setUp);

describe("pools: malformed instruction data", () => {
  it("garbage instruction data, unknown instructions and missing accounts are refused", async () => {
    const pid = w.client.program.programId;
    const disc = (n: string) => Buffer.from(w.client.program.idl.instructions.find((i) => i.name === n)!.discriminator);
    for (const data of [Buffer.alloc(0), Buffer.from([1, 2, 3]), Buffer.alloc(8, 7), Buffer.concat([disc("placePick"), Buffer.alloc(3)])]) {
      await rejected(new TransactionInstruction({ programId: pid, keys: [], data }), [], "InvalidInstructionData");
    }
    await rejected(new TransactionInstruction({ programId: pid, keys: [], data: disc("resolvePool") }), [], "NotEnoughAccounts");
  });

  it("short data, an unknown discriminator and a wrong argument length are InvalidInstructionData", async () => {
    const [mallory] = await cast4(w);
    const upd = await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: 0 });
    const raw = (data: Buffer) => new TransactionInstruction({ programId: POOLS_PROGRAM_ID, keys: upd.keys, data });
    expectError(await w.send([raw(Buffer.alloc(0))], [w.authority]), "InvalidInstructionData");
    expectError(await w.send([raw(upd.data.subarray(0, 7))], [w.authority]), "InvalidInstructionData");
    expectError(await w.send([raw(Buffer.alloc(8, 0xab))], [w.authority]), "InvalidInstructionData");
    expectError(await w.send([raw(upd.data.subarray(0, 9))], [w.authority]), "InvalidInstructionData");
    expectError(await w.send([raw(Buffer.concat([upd.data, Buffer.from([0])]))], [w.authority]), "InvalidInstructionData");
    const wd = await w.client.withdrawClaim({ owner: mallory.key.publicKey, destination: mallory.token, rentPayer: mallory.key.publicKey });
    expectError(
      await w.send(
        [new TransactionInstruction({ programId: POOLS_PROGRAM_ID, keys: wd.keys, data: Buffer.concat([wd.data, Buffer.from([1])]) })],
        [mallory.key],
      ),
      "InvalidInstructionData",
    );
    expect((await w.config()).feeBps).toBe(500);
  });
});
