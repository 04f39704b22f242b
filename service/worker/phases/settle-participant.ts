/**
 * Pools, settle_participant for every participant of a RESOLVED pool (winners paid, losers
 * marked) until the pool is DISTRIBUTED; by the participant's creation. The fee goes to the
 * treasury the pools Config names at the pass.
 */
import { decodePoolsConfig, poolsAccountKind, type PoolsClient } from "../../../idl/client/pools";
import { configTreasury, type Pass, type Phase } from "../phase";
import { payout, unpaidParticipants } from "./pool-reads";

export function settleParticipant(pass: Pass, pools: PoolsClient): Phase {
  const treasury = configTreasury(pass, pools.pda.config()[0], pools.program.programId, (d) => poolsAccountKind(d) === "config", decodePoolsConfig);
  return {
    kind: "settle-participant",
    count: "participantsSettled",
    keys: ["pool_participants.created_at", "pool_participants.address"],
    query: unpaidParticipants(pass, "RESOLVED"),
    act: async (address) => {
      const a = await payout(pass, pools, address, "RESOLVED");
      return a ? [await pools.settleParticipant({ ...a, treasury: await treasury() })] : null;
    },
  };
}
