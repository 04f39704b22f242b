/**
 * Rent reclaim, offers: close_offer_account for every finished offer (Settled, or Closed with
 * every position settled) whose rent the service paid, once its contract is resolved or voided;
 * by the offer's creation (only when the worker reclaims: `WorkerDeps.reclaim`).
 */
import { PublicKey } from "@solana/web3.js";
import { decodeContract, decodeOffer, type OffersClient } from "../../../idl/client/offers";
import { offersAccount, type Pass, type Phase } from "../phase";

export function reclaimOffer(pass: Pass, client: OffersClient): Phase {
  const { db, payer } = pass;
  return {
    kind: "reclaim-offer",
    count: "reclaimedOffers",
    keys: ["offers.created_at", "offers.address"],
    // The program closes an offer account only once its contract is resolved or voided (the
    // address can then never be created again), so earlier ones are not candidates.
    query: () =>
      db
        .selectFrom("offers")
        .innerJoin("contracts", "contracts.address", "offers.contract")
        .where("offers.deleted", "=", 0)
        .where("offers.rent_payer", "=", payer.publicKey.toBase58())
        .where("contracts.status", "in", ["Resolved", "Voided"])
        .where((eb) =>
          eb.or([
            eb("offers.status", "=", "Settled"),
            eb.and([eb("offers.status", "=", "Closed"), eb("offers.settled_position_count", "=", eb.ref("offers.position_count"))]),
          ]),
        ),
    act: async (address) => {
      const od = await offersAccount(pass, client, new PublicKey(address), "offer");
      if (!od) return null;
      const o = decodeOffer(od);
      const done = o.status === "Settled" || (o.status === "Closed" && o.settledPositionCount === o.positionCount);
      if (!done) return null;
      const kd = await offersAccount(pass, client, o.contract, "contract");
      if (!kd || decodeContract(kd).status === "Open") return null;
      return [await client.closeOfferAccount({ offer: new PublicKey(address), rentPayer: payer.publicKey, contract: o.contract })];
    },
  };
}
