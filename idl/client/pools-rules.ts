/**
 * The pools program's rules as the API shows them, for the indexer's aggregate
 * (indexer/derive/pools.ts), the client and the tests alike: the states a pool is shown in
 * (LOCKED derived), and each outcome's share of the pot. Pure functions over plain values, so a
 * chain account and a store row go through the same rule.
 */

/**
 * The states of the spec's embed, in the program's order (state.rs: OPEN = 0 .. REFUNDED = 5)
 * with LOCKED after OPEN. LOCKED is never stored: it is OPEN once closesAt has passed.
 */
export const POOL_STATES = ["OPEN", "LOCKED", "RESOLVING", "RESOLVED", "DISTRIBUTED", "CANCELED", "REFUNDED"] as const;
export type PoolStateName = (typeof POOL_STATES)[number];
export type StoredPoolState = Exclude<PoolStateName, "LOCKED">;
/** The stored states by their on-chain code. */
export const STORED_POOL_STATES: readonly StoredPoolState[] = POOL_STATES.filter((s): s is StoredPoolState => s !== "LOCKED");

/**
 * The shown state at `now` (unix seconds): OPEN becomes LOCKED once closesAt has passed (the
 * program refuses picks from that second on, `PoolClosed`), until a proposal or a cancel moves
 * it on; every other state as stored. RESOLVING is stored for a proposal in or after its dispute
 * window, a disputed proposal and an escalated pool alike.
 */
export function poolState(state: string, closesAt: bigint | number | null, now: bigint | number): PoolStateName {
  if (state === "OPEN" && closesAt !== null && BigInt(now) >= BigInt(closesAt)) return "LOCKED";
  return state as PoolStateName;
}

/**
 * Each outcome's share of the pot in bps, by largest remainder: each gets
 * floor(total * 10000 / pot), and the bps left over go one each to the outcomes with the largest
 * remainders (ties: lower index first). The shares sum to exactly 10000 when the pot is
 * non-zero (so a page's bars add up); all 0 when it is zero. Exact in bigint.
 */
export function shareBps(totals: readonly bigint[]): number[] {
  const pot = totals.reduce((a, b) => a + b, 0n);
  if (pot === 0n) return totals.map(() => 0);
  const base = totals.map((t) => (t * 10_000n) / pot);
  const rem = totals.map((t, i) => ({ i, r: (t * 10_000n) % pot }));
  let left = 10_000n - base.reduce((a, b) => a + b, 0n);
  rem.sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1));
  for (const { i } of rem) {
    if (left === 0n) break;
    base[i] += 1n;
    left -= 1n;
  }
  return base.map(Number);
}

/** Why a pick is refused: the pools program's error names, in the order place_pick (pick.rs) checks them. */
export type PickRefusalName = "PoolNotOpen" | "PoolClosed" | "InvalidOutcome" | "ZeroAmount";

/**
 * place_pick: the pool must be stored OPEN and before closesAt (the closing second itself is
 * past), the outcome one of its outcomes, the amount positive. Mint, owner and balance are the
 * token account's checks, made by the caller on the account it reads.
 */
export function pickRefusal(
  p: { state: string; closesAt: bigint | number; outcomeCount: number },
  outcome: number,
  amount: bigint,
  now: bigint | number,
): PickRefusalName | null {
  if (p.state !== "OPEN") return "PoolNotOpen";
  if (BigInt(now) >= BigInt(p.closesAt)) return "PoolClosed";
  if (!Number.isInteger(outcome) || outcome < 0 || outcome >= p.outcomeCount) return "InvalidOutcome";
  if (amount <= 0n) return "ZeroAmount";
  return null;
}

/**
 * settle_participant (programs/pools/src/instructions/payout.rs): what one participant of a
 * resolved pool is paid, and the fee taken from it. A winner gets its stake on the winning
 * outcome's share of the pot, floor(stake * pot / winnerTotal), less feeBps of the profit
 * (floored); a loser gets 0; nobody on the winner refunds every stake with no fee. Returns
 * [payout, fee]. The last settle's rounding dust goes to the treasury, never to a participant.
 */
export function pickPayout(
  p: { pot: bigint; winnerTotal: bigint; feeBps: number | bigint },
  participant: { stakeOnWinner: bigint; total: bigint },
): [bigint, bigint] {
  if (p.winnerTotal === 0n) return [participant.total, 0n];
  const gross = (participant.stakeOnWinner * p.pot) / p.winnerTotal;
  const fee = ((gross - participant.stakeOnWinner) * BigInt(p.feeBps)) / 10_000n;
  return [gross - fee, fee];
}
