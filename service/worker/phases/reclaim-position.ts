/**
 * Rent reclaim, positions: close_position for every settled position whose rent the service
 * paid, by the position's creation (only when the worker reclaims: `WorkerDeps.reclaim`).
 */
import { PublicKey } from "@solana/web3.js";
import { decodePosition, type OffersClient } from "../../../idl/client/offers";
import { offersAccount, type Pass, type Phase } from "../phase";

export function reclaimPosition(pass: Pass, client: OffersClient): Phase {
  const { db, payer } = pass;
  return {
    kind: "reclaim-position",
    count: "reclaimedPositions",
    keys: ["positions.created_at", "positions.address"],
    query: () =>
      db
        .selectFrom("positions")
        .where("positions.status", "!=", "Open")
        .where("positions.deleted", "=", 0)
        .where("positions.rent_payer", "=", payer.publicKey.toBase58()),
    act: async (address) => {
      const pd = await offersAccount(pass, client, new PublicKey(address), "position");
      if (!pd || decodePosition(pd).status === "Open") return null;
      return [await client.closePosition({ position: new PublicKey(address), rentPayer: payer.publicKey })];
    },
  };
}
