/**
 * Phase 3: settle every Open position of a Filled/Closed offer whose contract is Resolved or
 * Voided (settle_position: payouts and fee by the program, exactly the spec's table), by the
 * position's creation. The program refuses a second settlement (PositionAlreadySettled).
 */
import { PublicKey } from "@solana/web3.js";
import { decodeConfig, decodeOffer, decodePosition, offersAccountKind, type OffersClient } from "../../../idl/client/offers";
import { configTreasury, offersAccount, type Pass, type Phase } from "../phase";

export function settlePosition(pass: Pass, client: OffersClient): Phase {
  const { db } = pass;
  const treasury = configTreasury(pass, client.pda.config()[0], client.program.programId, (d) => offersAccountKind(d) === "config", decodeConfig);
  return {
    kind: "settle-position",
    count: "settled",
    keys: ["positions.created_at", "positions.address"],
    query: () =>
      db
        .selectFrom("positions")
        .innerJoin("offers", "offers.address", "positions.offer")
        .innerJoin("contracts", "contracts.address", "offers.contract")
        .where("positions.status", "=", "Open")
        .where("positions.deleted", "=", 0)
        .where("offers.status", "in", ["Filled", "Closed"])
        .where("contracts.status", "in", ["Resolved", "Voided"]),
    act: async (address) => {
      const pd = await offersAccount(pass, client, new PublicKey(address), "position");
      if (!pd) return null;
      const p = decodePosition(pd);
      if (p.status !== "Open") return null;
      const od = await offersAccount(pass, client, p.offer, "offer");
      if (!od) return null;
      const o = decodeOffer(od);
      return [
        await client.settlePosition({
          contract: o.contract,
          offer: p.offer,
          position: new PublicKey(address),
          creatorToken: o.creatorToken,
          takerToken: p.takerToken,
          treasury: await treasury(),
          creator: o.creator,
          taker: p.taker,
        }),
      ];
    },
  };
}
