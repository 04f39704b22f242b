/**
 * Fair shares of live capacity: how many connections and subscriptions one caller may hold at
 * once, so that no address or token can take the process-wide cap (LiveLimits.maxPerProcess) from
 * the others. Counted per address group (an IPv4 address, an IPv6 /64: service/rate/caller-key.ts)
 * and per token (the parsed token, whatever its spelling); anonymous callers get the smaller share,
 * and all anonymous callers together at most `anonymousSubscriptionsPerProcess`, so signed-in
 * callers always find room. Over a share: ApiError 429 with Retry-After (a GraphQL error coded
 * TOO_MANY_REQUESTS; HTTP 429 on SSE; a WebSocket over its connection share is refused 429 at the
 * upgrade or closed with 4429 at connection_init). The process-wide cap is checked last.
 *
 * All the numbers are in ./live-limits.ts (LIVE_SHARES), named; each is a setting of `npm start` (stack/config/settings.ts),
 * which LiveUpdates takes as overrides (AppDeps.live).
 */
import { ApiError } from "../api-error";
import type { LiveShareLimits } from "./live-limits";

// The numbers live in ./live-limits.ts, beside the process's bounds, so the entry points read them
// without loading this (and the GraphQL errors it raises).
export { LIVE_SHARES, type LiveShareLimits } from "./live-limits";

/** Who holds a share: the address group, and the token's key (null: anonymous). */
export interface ShareHolder {
  address: string;
  token: string | null;
}

/** Counts by key; a key at 0 is forgotten. */
class Tally {
  private readonly n = new Map<string, number>();
  get(k: string): number {
    return this.n.get(k) ?? 0;
  }
  add(k: string, d: 1 | -1): void {
    const v = this.get(k) + d;
    if (v > 0) this.n.set(k, v);
    else this.n.delete(k);
  }
}

export class LiveShares {
  private readonly subsByAddress = new Tally();
  private readonly anonSubsByAddress = new Tally();
  private readonly subsByToken = new Tally();
  private anonSubs = 0;
  private readonly connsByAddress = new Tally();
  private readonly anonConnsByAddress = new Tally();
  private readonly connsByToken = new Tally();

  constructor(readonly limits: LiveShareLimits) {}

  private refuse(what: string): never {
    throw new ApiError(429, `${what}; complete one first`, this.limits.shareRetryAfterSeconds);
  }

  /** Throws ApiError 429 when `h` holds its share of subscriptions, 503 when anonymous callers hold theirs. */
  checkSubscription(h: ShareHolder): void {
    const l = this.limits;
    if (h.token === null) {
      if (this.anonSubsByAddress.get(h.address) >= l.anonymousSubscriptionsPerAddress)
        this.refuse(`at most ${l.anonymousSubscriptionsPerAddress} anonymous subscriptions per address (sign in for more)`);
    } else if (this.subsByToken.get(h.token) >= l.subscriptionsPerToken) this.refuse(`at most ${l.subscriptionsPerToken} subscriptions per token`);
    if (this.subsByAddress.get(h.address) >= l.subscriptionsPerAddress) this.refuse(`at most ${l.subscriptionsPerAddress} subscriptions per address`);
    if (h.token === null && this.anonSubs >= l.anonymousSubscriptionsPerProcess)
      throw new ApiError(503, "this server holds as many anonymous subscriptions as it may; sign in or retry later");
  }

  /** Counts a subscription checked with checkSubscription; returns what gives it back. */
  takeSubscription(h: ShareHolder): () => void {
    this.countSubscription(h, 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.countSubscription(h, -1);
    };
  }

  private countSubscription(h: ShareHolder, d: 1 | -1): void {
    this.subsByAddress.add(h.address, d);
    if (h.token === null) {
      this.anonSubsByAddress.add(h.address, d);
      this.anonSubs += d;
    } else this.subsByToken.add(h.token, d);
  }

  /** Whether one more connection from `address` is refused at the upgrade (the exact count is taken by openConnection). */
  connectionRefused(address: string): string | null {
    return this.connsByAddress.get(address) >= this.limits.connectionsPerAddress
      ? `at most ${this.limits.connectionsPerAddress} connections per address`
      : null;
  }

  /** A WebSocket from `address` opened: counted until the returned release; ApiError 429 when over the address's share. */
  openConnection(address: string): LiveConnectionShare {
    const refused = this.connectionRefused(address);
    if (refused) this.refuse(refused);
    this.connsByAddress.add(address, 1);
    let holder: ShareHolder | null = null;
    let released = false;
    return {
      identify: (token) => {
        const l = this.limits;
        if (token === null && this.anonConnsByAddress.get(address) >= l.anonymousConnectionsPerAddress)
          this.refuse(`at most ${l.anonymousConnectionsPerAddress} anonymous connections per address (sign in for more)`);
        if (token !== null && this.connsByToken.get(token) >= l.connectionsPerToken) this.refuse(`at most ${l.connectionsPerToken} connections per token`);
        holder = { address, token };
        if (token === null) this.anonConnsByAddress.add(address, 1);
        else this.connsByToken.add(token, 1);
      },
      release: () => {
        if (released) return;
        released = true;
        this.connsByAddress.add(address, -1);
        if (holder?.token === null) this.anonConnsByAddress.add(address, -1);
        else if (holder) this.connsByToken.add(holder.token, -1);
      },
    };
  }
}

/** One WebSocket's share: `identify` once its caller is known (connection_init), `release` when it closes. */
export interface LiveConnectionShare {
  identify(token: string | null): void;
  release(): void;
}
