/**
 * The bound on what one user can make the service's wallet spend or lock (issue #15): the
 * service pays every fee and all rent, so without a bound a create-then-close loop (free for the
 * user: the stake comes back) drains fees, and many offers or positions lock rent.
 *
 * What one user's write costs the service at most (lamports; `S` = lamports per signature, 5,000):
 * - create: its transaction (2 signatures: service + user) and later the worker's close of the
 *   offer past cutoff and the offer account's reclaim (1 signature each): 4S = 20,000; the
 *   Offer account's rent (`rentOffer`: 2,512,560 at 233 bytes) is locked until it is reclaimed.
 * - take: its transaction (2S) and, for a new position, the worker's settlement and the position
 *   account's reclaim (1S each): 4S; a new Position's rent (`rentPosition`: 2,268,960 at 198
 *   bytes) is locked until it is settled and reclaimed.
 * - close: its transaction, 2S.
 * A transaction the chain refuses in preflight costs nothing, and a write whose checks fail is
 * never signed, so `F = 4S = 20,000` lamports bounds the fees of any one write. (Once the
 * program's claim fallback lands, a payout the user's token account cannot receive opens the
 * user's one Claim account, rent paid by the service until the user withdraws: `rentClaim`.)
 *
 * Enforced here, per user (decisions):
 * 1. Write rate: GCRA (a token bucket: `writeBurst` writes at once, refilled at `writesPerHour`),
 *    one token per create, take or close that passed every check, taken just before it is signed.
 *    The bucket is a row of `write_rate` in the store (its theoretical arrival time in ms,
 *    updated by one conditional UPDATE, atomic on SQLite and PostgreSQL), so it is shared by
 *    every service process on one store and survives restarts. Refused: 429 with `Retry-After`.
 *    (Chosen over rate-limiter-flexible: its stores would be a memory one, per process, with
 *    SQLite, and a second table layout with PostgreSQL; one SQL statement on the store we
 *    already have does the same on both.)
 * 2. Holdings: a create needs fewer than `maxOpenOffers` offers of the user whose accounts the
 *    service still pays rent for (open, filled or closed: an offer account can be reclaimed only
 *    once its contract is resolved and the offer settled); a
 *    take that opens a new position needs fewer than `maxOpenPositions` such positions. Counted
 *    from the indexed store plus the user's submitted (or just confirmed) creates, takes and
 *    take-bests the indexer has not shown yet (their idempotency rows); checked and submitted under a per-user lock
 *    in this process. Refused: 409 with a message a client can show (not 429: retrying after a
 *    delay does not help, a settlement does).
 * Bound, per user: fees `<= (writeBurst + writesPerHour * hours) * F` over any window of `hours`;
 * rent locked `<= maxOpenOffers * rentOffer + maxOpenPositions * rentPosition (+ rentClaim)` at
 * any time. Defaults (60, 60/h, 20, 100): at most 2,400,000 lamports (0.0024 SOL) of fees in any
 * one hour (60 * F at once, then 1,200,000 per hour sustained) and 277,147,200 lamports
 * (0.277 SOL) of rent locked per user. With k service processes on one PostgreSQL store the
 * holdings count can race by up to k - 1 writes (the rate limit is exact across processes).
 * Rejected alternatives: a minimum economic size does not stop a loop whose stake comes back;
 * rent paid from the user's deposit needs the user to hold SOL (custodial users hold only the
 * stablecoin) and a program change.
 */
import type { Kysely } from "kysely";
import { PublicKey } from "@solana/web3.js";
import type { Database } from "../../indexer/store/schema";
import type { CustodyDatabase } from "../custody/schema";
import type { User } from "../custody/custody";
import { OffersClient } from "../../idl/client/offers";
import { ApiError } from "../api-error";
import { takeFromBucket } from "../rate/gcra";
import { DEFAULT_WALLET_LIMITS, type WalletLimits } from "./wallet-limits";
import type { TakeBestResponse } from "./take-best";

// The bound's numbers live apart (./wallet-limits.ts) so the entry points read them without loading this.
export { DEFAULT_WALLET_LIMITS, type WalletLimits } from "./wallet-limits";

/** Lamports one write can cost the service in fees at most: 4 signatures (see above). */
export const FEE_BOUND_SIGNATURES_PER_WRITE = 4;

/** How long a confirmed create/take counts while the indexer has not shown it (it lags seconds). */
const CONFIRMED_PENDING_SECONDS = 300;

type Db = Kysely<Database & CustodyDatabase>;

/** The idempotency operation of a take-best (./write-service.ts). */
export const TAKE_BEST_OPERATION = "take-best";

/** The offers a take-best's recorded answer (./take-best.ts TakeBestResponse) plans to take: the sent parts'. */
function sweptOffers(responseJson: string | null): string[] {
  if (responseJson === null) return [];
  const r = JSON.parse(responseJson) as Partial<Pick<TakeBestResponse, "plan">>;
  return r.plan?.fills.map((f) => f.offer) ?? [];
}

export class WalletGuard {
  readonly limits: WalletLimits;
  private readonly db: Db;
  private readonly locks = new Map<string, Promise<void>>();

  constructor(
    db: Kysely<unknown> | Kysely<CustodyDatabase>,
    /** The service's wallet: rent payer of the accounts counted. */
    readonly service: PublicKey,
    limits: Partial<WalletLimits> = {},
    private readonly client: OffersClient,
    private readonly clockMs: () => number = Date.now,
  ) {
    this.db = db as unknown as Db;
    this.limits = { ...DEFAULT_WALLET_LIMITS, ...limits };
    for (const [k, v] of Object.entries(this.limits)) if (!Number.isInteger(v) || v < 0) throw new Error(`${k} must be a non-negative integer`);
  }

  /** Runs `fn` after the user's previous guarded section in this process has finished. */
  async serial<T>(userId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(userId) ?? Promise.resolve();
    let release!: () => void;
    const mine = prev.then(() => new Promise<void>((r) => (release = r)));
    this.locks.set(userId, mine);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.locks.get(userId) === mine) this.locks.delete(userId);
    }
  }

  /** Create: the offers cap, then one token of the user's bucket. Call inside `serial`. */
  async admitCreate(user: User): Promise<void> {
    const cap = this.limits.maxOpenOffers;
    if (cap > 0) {
      const held = await this.openOffers(user);
      if (held >= cap) {
        throw new ApiError(
          409,
          `you have ${held} offers not yet settled (an offer counts until its contract is resolved and the offer settled, even after you close it); at most ${cap} per user. You can create again once one of them is settled`,
        );
      }
    }
    await this.consume(user.id);
  }

  /** Take: the positions cap when it opens new positions (a take-best may open several), then one token. Call inside `serial`. */
  async admitTake(user: User, newPosition: boolean | number): Promise<void> {
    const cap = this.limits.maxOpenPositions;
    const opens = Number(newPosition);
    if (cap > 0 && opens > 0) {
      const held = await this.openPositions(user);
      if (held + opens > cap) {
        throw new ApiError(
          409,
          `you have ${held} positions not yet settled; at most ${cap} per user. You can add to a position you already hold, or take a new offer once one of your positions settles`,
        );
      }
    }
    await this.consume(user.id);
  }

  /** Close: one token. */
  async admitClose(user: User): Promise<void> {
    await this.consume(user.id);
  }

  /** Offers of the user whose rent the service still holds, including submitted ones not yet indexed. */
  openOffers(user: User): Promise<number> {
    return this.openAccounts(user, "offers", "creator", "create");
  }

  /** Positions of the user whose rent the service still holds, including submitted ones not yet indexed. */
  openPositions(user: User): Promise<number> {
    return this.openAccounts(user, "positions", "taker", "take");
  }

  /** Indexed live `table` rows of the user (as `owner`) with the service as rent payer, plus the user's pending `kind` writes. */
  private async openAccounts(user: User, table: "offers" | "positions", owner: "creator" | "taker", kind: "create" | "take"): Promise<number> {
    // Both tables have the owner, deleted and rent_payer columns; the casts only give Kysely one table's row type.
    const r = await this.db
      .selectFrom(table as "offers")
      .select((eb) => eb.fn.countAll().as("n"))
      .where(owner as "creator", "=", user.wallet.toBase58())
      .where("deleted", "=", 0)
      .where("rent_payer", "=", this.service.toBase58())
      .executeTakeFirst();
    return Number(r?.n ?? 0) + (await this.pending(user, kind));
  }

  /**
   * Accounts the user's creates/takes open that the store does not know yet: submitted ones
   * (whatever their age: a transaction not seen to land may still be resent by a replay of its
   * key, until the key is pruned) and recently confirmed ones (the indexer lags). A take-best's
   * row names no one offer: the positions it may open are those of its recorded plan, so two quick
   * sweeps count each other's positions as two quick takes do.
   */
  private async pending(user: User, op: "create" | "take"): Promise<number> {
    const since = Math.floor(this.clockMs() / 1000) - CONFIRMED_PENDING_SECONDS;
    const rows = await this.db
      .selectFrom("idempotency")
      .select(["operation", "offer_address", "response_json"])
      .where("user_id", "=", user.id)
      .where("operation", "in", op === "create" ? ["create"] : ["take", TAKE_BEST_OPERATION])
      .where((eb) => eb.or([eb("state", "=", "submitted"), eb.and([eb("state", "=", "confirmed"), eb("updated_at", ">=", since)])]))
      .execute();
    const offers = rows.flatMap((r) => (r.operation === TAKE_BEST_OPERATION ? sweptOffers(r.response_json) : r.offer_address ? [r.offer_address] : []));
    if (offers.length === 0) return 0;
    const targets = offers.map((o) => (op === "create" ? o : this.client.pda.position(new PublicKey(o), user.wallet)[0].toBase58()));
    const table = op === "create" ? "offers" : "positions";
    const known = await this.db.selectFrom(table).select("address").where("address", "in", targets).execute();
    const seen = new Set(known.map((k) => k.address));
    return new Set(targets.filter((t) => !seen.has(t))).size;
  }

  /**
   * Takes one token from the user's bucket (service/rate/gcra.ts: `writeBurst` at once, one
   * more every 1 h / writesPerHour), or throws 429 with the seconds until one is there.
   */
  async consume(userId: string): Promise<void> {
    const { writeBurst, writesPerHour } = this.limits;
    if (writeBurst === 0 || writesPerHour === 0) return;
    const waitMs = await takeFromBucket(
      this.db as unknown as Kysely<unknown>,
      { table: "write_rate", keyColumn: "user_id", key: userId },
      writeBurst,
      Math.ceil(3_600_000 / writesPerHour),
      Math.floor(this.clockMs()),
    );
    if (waitMs === 0) return;
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    throw new ApiError(
      429,
      `too many writes: at most ${writeBurst} at once and ${writesPerHour} per hour per user; retry in ${retryAfter} s with the same idempotencyKey`,
      retryAfter,
    );
  }
}
