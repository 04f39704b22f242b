/**
 * Phase 2: close offers still Open once they expired or their contract is past cutoff or no
 * longer Open (who may close: offers-rules.ts `closeRefusal`), refunding the unmatched creator stake (close_offer, the service as caller); by the contract's
 * cutoff, then the offer's creation. The program refuses a second close (OfferNotOpen).
 */
import { PublicKey } from "@solana/web3.js";
import { decodeOffer, type OffersClient } from "../../../idl/client/offers";
import { cutoffFilter, expiryFilter } from "../../../idl/client/offers-rules";
import { offersAccount, type Pass, type Phase } from "../phase";

export function closeOffer(pass: Pass, client: OffersClient): Phase {
  const { db, now, payer } = pass;
  return {
    kind: "close-offer",
    count: "closed",
    keys: ["contracts.cutoff_at", "offers.created_at", "offers.address"],
    query: () =>
      db
        .selectFrom("offers")
        .innerJoin("contracts", "contracts.address", "offers.contract")
        .where("offers.status", "=", "Open")
        .where("offers.deleted", "=", 0)
        .where((eb) =>
          eb.or([
            eb("contracts.cutoff_at", ...cutoffFilter("passed", now)),
            eb("contracts.status", "!=", "Open"),
            // expires_at null is none; SQL's comparison with null is never true.
            eb("offers.expires_at", ...expiryFilter(now)),
          ]),
        ),
    act: async (address) => {
      const d = await offersAccount(pass, client, new PublicKey(address), "offer");
      if (!d) return null;
      const o = decodeOffer(d);
      if (o.status !== "Open") return null;
      return [
        await client.closeOffer({
          caller: payer.publicKey,
          contract: o.contract,
          offer: new PublicKey(address),
          creatorToken: o.creatorToken,
          creator: o.creator,
          expectedRevision: o.revision,
        }),
      ];
    },
  };
}
