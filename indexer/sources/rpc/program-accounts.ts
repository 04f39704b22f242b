/**
 * Every account of the programs as the node has them now (getProgramAccounts with its context
 * slot, one call per program), as snapshot rows: write version 0 at that slot, so a live update
 * of the same slot wins over them (it is at least as new) and a later slot always does.
 */
import type { Commitment, Connection, PublicKey } from "@solana/web3.js";
import type { AccountUpdate } from "../types";

export async function programAccounts(
  connection: Connection,
  programs: PublicKey[],
  commitment: Commitment,
): Promise<{ slot: number; accounts: AccountUpdate[] }[]> {
  const out: { slot: number; accounts: AccountUpdate[] }[] = [];
  for (const program of programs) {
    const res = await connection.getProgramAccounts(program, { commitment, withContext: true, encoding: "base64" });
    const slot = res.context.slot;
    out.push({
      slot,
      accounts: res.value.map((v) => ({
        slot,
        writeVersion: 0,
        pubkey: v.pubkey.toBase58(),
        owner: v.account.owner.toBase58(),
        data: Buffer.from(v.account.data),
      })),
    });
  }
  return out;
}
