/**
 * A wallet's pool picks, any wallet's (participants are public on chain): for a taker who keeps
 * their own keys, the list the custodial `mine` gives a signed-in user. One participant record a
 * pool; newest first, at most WALLET_PICKS_LIMIT.
 */
import type { Kysely } from "kysely";
import { poolState, type Database } from "../../indexer";
import type { PoolStateName } from "../../idl/client/pools-rules";

export const WALLET_PICKS_LIMIT = 100;

export interface WalletPick {
  poolAddress: string;
  participantAddress: string;
  question: string;
  state: PoolStateName;
  /** Micro-units the wallet has on the pool, all outcomes together. */
  totalMicros: string;
  /** Paid (a winner), marked a loser, or refunded. */
  settled: boolean;
  /** The winning outcome's index once resolved, else null. */
  winningOutcome: number | null;
}

export async function walletPicks(db: Kysely<Database>, wallet: string, now: number): Promise<WalletPick[]> {
  const rows = await db
    .selectFrom("pool_participants as p")
    .innerJoin("pools", "pools.address", "p.pool")
    .select(["p.address", "p.pool", "p.total_micros", "p.settled", "p.created_at", "pools.question", "pools.state", "pools.closes_at", "pools.winning_outcome"])
    .where("p.user", "=", wallet)
    .orderBy("p.created_at", "desc")
    .orderBy("p.address")
    .limit(WALLET_PICKS_LIMIT)
    .execute();
  return rows.map((r) => ({
    poolAddress: r.pool,
    participantAddress: r.address,
    question: r.question,
    state: poolState(r.state, r.closes_at, now),
    totalMicros: String(r.total_micros),
    settled: Number(r.settled) === 1,
    winningOutcome: r.winning_outcome,
  }));
}
