/**
 * Pools, refund_participant for every participant of a CANCELED pool until the pool is
 * REFUNDED; by the participant's creation.
 */
import type { PoolsClient } from "../../../idl/client/pools";
import type { Pass, Phase } from "../phase";
import { payout, unpaidParticipants } from "./pool-reads";

export function refundParticipant(pass: Pass, pools: PoolsClient): Phase {
  return {
    kind: "refund-participant",
    count: "participantsRefunded",
    keys: ["pool_participants.created_at", "pool_participants.address"],
    query: unpaidParticipants(pass, "CANCELED"),
    act: async (address) => {
      const a = await payout(pass, pools, address, "CANCELED");
      return a ? [await pools.refundParticipant(a)] : null;
    },
  };
}
