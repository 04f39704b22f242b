/**
 * Pools, cancel_pool: once the authority left an escalation undecided for 7 days (CANCELED), and
 * for a pool that closed without a single pick (REFUNDED at once); by the pool's close time. The
 * worker never decides an escalated pool: only the config's authority does.
 */
import { PublicKey } from "@solana/web3.js";
import { AUTHORITY_DEADLINE_SECONDS, type PoolsClient } from "../../../idl/client/pools";
import type { Pass, Phase } from "../phase";
import { livePools, poolIs } from "./pool-reads";

export function cancelPool(pass: Pass, pools: PoolsClient): Phase {
  const { now } = pass;
  return {
    kind: "cancel-pool",
    count: "poolsCanceled",
    keys: ["pools.closes_at", "pools.address"],
    query: () =>
      livePools(pass).where((eb) =>
        eb.or([
          // The authority left the escalation undecided for 7 days.
          eb.and([eb("pools.state", "=", "RESOLVING"), eb("pools.escalated_at", "<=", Number(now - AUTHORITY_DEADLINE_SECONDS))]),
          // Closed without a single pick: retired (REFUNDED at once).
          eb.and([eb("pools.state", "=", "OPEN"), eb("pools.participant_count", "=", 0), eb("pools.closes_at", "<=", Number(now))]),
        ]),
      ),
    act: async (address) =>
      (await poolIs(pass, pools, address, "cancelable")) ? [await pools.cancelPool({ caller: pass.payer.publicKey, pool: new PublicKey(address) })] : null,
  };
}
