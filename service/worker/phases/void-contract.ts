/**
 * Phase 1: void contracts still Open past their resolution deadline (void_expired_contract),
 * oldest deadline first. The program refuses a second void (ContractNotOpen).
 */
import { PublicKey } from "@solana/web3.js";
import { decodeContract, type OffersClient } from "../../../idl/client/offers";
import { offersAccount, type Pass, type Phase } from "../phase";

export function voidContract(pass: Pass, client: OffersClient): Phase {
  const { db, now } = pass;
  return {
    kind: "void-contract",
    count: "voided",
    keys: ["contracts.resolution_deadline", "contracts.address"],
    query: () =>
      db
        .selectFrom("contracts")
        .where("contracts.status", "=", "Open")
        .where("contracts.deleted", "=", 0)
        .where("contracts.resolution_deadline", "<", Number(now)),
    act: async (address) => {
      const d = await offersAccount(pass, client, new PublicKey(address), "contract");
      if (!d) return null;
      const k = decodeContract(d);
      if (k.status !== "Open" || now <= k.resolutionDeadline) return null;
      return [await client.voidExpiredContract({ contract: new PublicKey(address) })];
    },
  };
}
