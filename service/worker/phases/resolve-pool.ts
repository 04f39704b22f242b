/**
 * Pools, resolve_pool: once a proposal's dispute window is over (or every participant voted) —
 * RESOLVED, or escalated to the authority when disputed — and once the creator let 72 h pass
 * after max(closes_at, resolution_at) without proposing (escalated); by the pool's close time.
 */
import { PublicKey } from "@solana/web3.js";
import { PROPOSAL_DEADLINE_SECONDS, type PoolsClient } from "../../../idl/client/pools";
import type { Pass, Phase } from "../phase";
import { livePools, poolIs } from "./pool-reads";

export function resolvePool(pass: Pass, pools: PoolsClient): Phase {
  const { now } = pass;
  return {
    kind: "resolve-pool",
    count: "poolsResolved",
    keys: ["pools.closes_at", "pools.address"],
    query: () =>
      livePools(pass).where((eb) =>
        eb.or([
          // A proposal whose dispute window is over, or on which every participant voted.
          eb.and([
            eb("pools.state", "=", "RESOLVING"),
            eb("pools.escalated_at", "is", null),
            eb.or([eb("pools.vote_ends_at", "<=", Number(now)), eb("pools.voter_count", ">=", eb.ref("pools.participant_count"))]),
          ]),
          // No proposal within 72 h of max(closes_at, resolution_at).
          eb.and([
            eb("pools.state", "=", "OPEN"),
            eb("pools.participant_count", ">", 0),
            eb("pools.closes_at", "<=", Number(now - PROPOSAL_DEADLINE_SECONDS)),
            eb.or([eb("pools.resolution_at", "is", null), eb("pools.resolution_at", "<=", Number(now - PROPOSAL_DEADLINE_SECONDS))]),
          ]),
        ]),
      ),
    act: async (address) =>
      (await poolIs(pass, pools, address, "resolvable", "escalatable"))
        ? [await pools.resolvePool({ caller: pass.payer.publicKey, pool: new PublicKey(address) })]
        : null,
  };
}
