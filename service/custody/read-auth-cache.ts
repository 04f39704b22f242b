/**
 * What signed-in reads ask custody on every request (which user a token is, which wallets are
 * blocked), kept in memory so a read costs no token or users query.
 *
 * Correctness rests on the `auth_epoch` row: every revoke and every (un)block bumps it in the
 * same database, whichever process does it. This process drops everything at once when it bumps
 * the epoch itself (exact), and reads the epoch at most every `pollMs` otherwise, so a revoke or
 * block done by another process takes effect here within `pollMs` (default 250 ms) plus one
 * query. Entries also expire after `maxAgeMs` (default 60 s), which bounds what an edit made
 * outside custody (plain SQL) can leave behind, and a token's own expiry is checked on every hit.
 * Only valid tokens are kept: an unknown token is looked up every time (random tokens cannot fill
 * the map), and the map holds SHA-256 digests, never a clear token.
 */
import type { Kysely } from "kysely";
import type { CustodyDatabase } from "./schema";

export interface ReadAuthCacheOptions {
  /** How often the shared epoch is read (ms): the bound on a revoke or block done by another process. */
  pollMs?: number;
  /** How long an entry is used at most (ms). */
  maxAgeMs?: number;
  /** Entries kept at most; the oldest go first. */
  maxEntries?: number;
}

interface Entry<P> {
  at: number;
  principal: P;
  expiresAt: number | null;
}

export class ReadAuthCache<P> {
  private readonly tokens = new Map<string, Entry<P>>();
  private blocked: { at: number; wallets: Set<string> } | null = null;
  private epoch: { checkedAt: number; value: number } | null = null;
  /** Bumped on every drop: a lookup that started before a drop must not store its answer. */
  private generation = 0;
  private readonly pollMs: number;
  private readonly maxAgeMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly db: Kysely<CustodyDatabase>,
    o: ReadAuthCacheOptions = {},
  ) {
    this.pollMs = o.pollMs ?? 250;
    this.maxAgeMs = o.maxAgeMs ?? 60_000;
    this.maxEntries = o.maxEntries ?? 100_000;
  }

  /** Moves whenever what this cache answers may have changed (a drop): caches derived from blocks key on it. */
  get version(): number {
    return this.generation;
  }

  /** Drops everything this process holds (after its own revoke or block). */
  drop(): void {
    this.tokens.clear();
    this.blocked = null;
    this.generation++;
  }

  /** Whether the shared epoch was read less than pollMs ago (checked first: most reads need no await for it). */
  private get current(): boolean {
    return this.epoch !== null && Date.now() - this.epoch.checkedAt < this.pollMs;
  }

  /** Reads the shared epoch (callers check `current` first); a new value drops everything. */
  private async fresh(): Promise<void> {
    const t = Date.now();
    const r = await this.db.selectFrom("auth_epoch").select("epoch").where("id", "=", 1).executeTakeFirst();
    const value = Number(r?.epoch ?? 0);
    if (this.epoch && this.epoch.value !== value) this.drop();
    this.epoch = { checkedAt: t, value };
  }

  /** The principal of a token digest, from memory or from `load`; null (never cached) when invalid. */
  async principal(hash: string, nowSec: number, load: () => Promise<{ principal: P; expiresAt: number | null } | null>): Promise<P | null> {
    if (!this.current) await this.fresh();
    const hit = this.tokens.get(hash);
    if (hit && Date.now() - hit.at < this.maxAgeMs) return hit.expiresAt !== null && hit.expiresAt <= nowSec ? null : hit.principal;
    const gen = this.generation;
    const found = await load();
    if (!found) return null;
    if (gen === this.generation) {
      this.tokens.delete(hash);
      this.tokens.set(hash, { at: Date.now(), ...found });
      if (this.tokens.size > this.maxEntries) this.tokens.delete(this.tokens.keys().next().value!);
    }
    return found.principal;
  }

  /** Every blocked wallet (compliance blocks are few), from memory or from `load`. */
  async blockedWallets(load: () => Promise<Set<string>>): Promise<Set<string>> {
    if (!this.current) await this.fresh();
    if (this.blocked && Date.now() - this.blocked.at < this.maxAgeMs) return this.blocked.wallets;
    const gen = this.generation;
    const wallets = await load();
    if (gen === this.generation) this.blocked = { at: Date.now(), wallets };
    return wallets;
  }
}
