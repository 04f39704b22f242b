/**
 * Malformed instruction data (programs/SECURITY.md): garbage, unknown discriminators, wrong
 * argument lengths and missing accounts are refused.
 */
import { beforeAll, describe, it } from "vitest";
import { TransactionInstruction } from "@solana/web3.js";
import { expectError } from "../../support/expect";
import { setUp, w } from "./scene";

beforeAll(setUp);

describe("offers: malformed instruction data", () => {
  it("garbage instruction data and unknown instructions are refused", async () => {
    const pid = w.client.program.programId;
    for (const data of [
      Buffer.alloc(0),
      Buffer.from([1, 2, 3]),
      Buffer.alloc(8, 7),
      Buffer.concat([Buffer.from(w.client.program.idl.instructions.find((i) => i.name === "takeOffer")!.discriminator), Buffer.alloc(3)]),
    ]) {
      const r = await w.send([new TransactionInstruction({ programId: pid, keys: [], data })]);
      expectError(r, "InvalidInstructionData");
    }
  });
});
