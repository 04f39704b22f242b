/**
 * What the pools' phases share (programs/pools/README.md): candidates come from the store's pool
 * rows (state, close time, dispute window, escalation time) and participant rows; the pool
 * account as the chain holds it decides, through `poolResolutionAt` (idl/client/pools.ts), so
 * the store only proposes.
 */
import { PublicKey } from "@solana/web3.js";
import { decodeParticipant, decodePool, poolResolutionAt, type PoolsClient } from "../../../idl/client/pools";
import { poolsAccount, type Pass } from "../phase";

export type PayoutState = "RESOLVED" | "CANCELED";

/** Pools not closed by the indexer's tombstone, for a phase's query. */
export const livePools = (pass: Pass) => pass.db.selectFrom("pools").where("pools.deleted", "=", 0);

/** Participants not yet paid out of a pool in `state`, for a phase's query. */
export const unpaidParticipants = (pass: Pass, state: PayoutState) => () =>
  pass.db
    .selectFrom("pool_participants")
    .innerJoin("pools", "pools.address", "pool_participants.pool")
    .where("pool_participants.settled", "=", 0)
    .where("pool_participants.deleted", "=", 0)
    .where("pools.state", "=", state);

async function pool(pass: Pass, pools: PoolsClient, address: PublicKey) {
  const d = await poolsAccount(pass, pools, address, "pool");
  return d ? decodePool(d) : null;
}

/** Whether what can happen next to the pool (read from the chain) is one of `next`. */
export async function poolIs(pass: Pass, pools: PoolsClient, address: string, ...next: ReturnType<typeof poolResolutionAt>[]): Promise<boolean> {
  const p = await pool(pass, pools, new PublicKey(address));
  return p !== null && p !== undefined && next.includes(poolResolutionAt(p, pass.now));
}

/** A participant still to pay out of a pool in `state`: its instruction's accounts, or null. */
export async function payout(pass: Pass, pools: PoolsClient, address: string, state: PayoutState) {
  const d = await poolsAccount(pass, pools, new PublicKey(address), "participant");
  if (!d) return null;
  const part = decodeParticipant(d);
  if (part.settled) return null;
  const p = await pool(pass, pools, part.pool);
  if (!p || p.state !== state) return null;
  return { pool: part.pool, participant: new PublicKey(address), user: part.user, userToken: part.userToken, payer: pass.payer.publicKey };
}
