/**
 * What the pools review suites (kit-review, steal-review) set up alike: the pools-flavoured
 * expectError, a cast of four fresh users and a pool resolved without dispute.
 */
import type { PublicKey } from "@solana/web3.js";
import { DISPUTE_WINDOW_SECONDS, POOLS_ERRORS } from "../../idl/client/pools";
import { UNIT, type PoolsWorld, type User } from "../../harness/pools-world";
import type { TxResult } from "../../harness/chain";
import { expectError as expectErr, expectOk } from "../support/expect";

export const expectError = (r: TxResult, name: string) => expectErr(r, name, POOLS_ERRORS);

/** Four fresh users (creator, two honest participants, attacker). */
export async function cast4(w: PoolsWorld): Promise<[User, User, User, User]> {
  return [await w.user(), await w.user(), await w.user(), await w.user()];
}

/** A pool of `carol` where alice backs outcome 0 and bob outcome 1, resolved (undisputed) to `winner`. */
export async function resolvedPool(w: PoolsWorld, carol: User, alice: User, bob: User, winner: number, a = 10n * UNIT, b = 10n * UNIT): Promise<PublicKey> {
  const { r, pool } = await w.createPool(carol, { closesIn: 100n });
  expectOk(r);
  expectOk(await w.pick(alice, pool, 0, a));
  expectOk(await w.pick(bob, pool, 1, b));
  await w.chain.advance(101n);
  expectOk(await w.propose(carol.key, pool, winner));
  await w.chain.advance(DISPUTE_WINDOW_SECONDS + 1n);
  expectOk(await w.resolve(bob.key, pool));
  return pool;
}
