/**
 * The offers list by price (issue 23, `sort=bestOdds`): the taker's odds best first, as exact
 * ratios, the oldest offer first among equal odds, then the address (the order a taker meets them
 * in a book level). Decisions (docs/api-guide.md, "Browse by price"):
 *
 * - The order is made in TypeScript over the list's terms (one query selecting four columns of
 *   the list's offers, no joins): a ratio of two u64 amounts is compared exactly by
 *   cross-multiplication in bigint, which SQL does in floating point (SQLite) or needs numeric
 *   arithmetic for (PostgreSQL). The sorted keys of a list are kept like its total (ReadCache:
 *   dropped with every applied write, at most countTtlMs).
 * - An Open offer past its expiry (offers-rules.ts `offerExpired`, at the read's chain time) is
 *   left out: nobody can take it at its odds any more.
 * - A key (and a GraphQL cursor) names an item by its sort key: the reduced ratio, the creation
 *   time and the address. A page after a key holds the items that sort after it in the list as it
 *   is now, so an offer added or taken between two pages is neither repeated nor makes another skip.
 */
import { gcd } from "../../idl/client/odds";
import { offerExpired } from "../../idl/client/offers-rules";
import type { OfferQueries, OfferTerms } from "./offer-queries";
import type { BrowseParams, MineRole } from "./params";
import type { ReadCache } from "./read-cache";
import type { KeysetPage } from "./read-model";

/** An offer's place in the bestOdds order: taker odds numerator:denominator (reduced, decimal strings: a key travels in JSON), creation time, address. */
export interface OddsKey {
  numerator: string;
  denominator: string;
  createdAt: number;
  address: string;
}

/** A key with its ratio parsed once (a sort compares each item many times). */
interface Entry {
  n: bigint;
  d: bigint;
  key: OddsKey;
}

const entryOf = (key: OddsKey): Entry => ({ n: BigInt(key.numerator), d: BigInt(key.denominator), key });

/** Negative when `a` comes first: higher taker odds, then older, then the smaller address. */
function compareEntries(a: Entry, b: Entry): number {
  const l = a.n * b.d;
  const r = b.n * a.d;
  if (l !== r) return l > r ? -1 : 1;
  if (a.key.createdAt !== b.key.createdAt) return a.key.createdAt - b.key.createdAt;
  return a.key.address < b.key.address ? -1 : a.key.address > b.key.address ? 1 : 0;
}

/** bestOdds order of two keys (negative when `a` comes first). */
export const compareOddsKeys = (a: OddsKey, b: OddsKey): number => compareEntries(entryOf(a), entryOf(b));

/** The taker's odds (T + S) : T of an offer's terms, reduced, with its tie keys. */
function entryOfTerms(t: OfferTerms): Entry {
  const target = BigInt(t.taker_target_micros);
  const n = BigInt(t.creator_total_micros) + target;
  const g = gcd(n, target) || 1n;
  const [num, den] = [n / g, target / g];
  return { n: num, d: den, key: { numerator: num.toString(), denominator: den.toString(), createdAt: Number(t.created_at), address: t.address } };
}

/** The first index of `sorted` whose entry sorts after `e` (strict) or not before it. */
function search(sorted: readonly Entry[], e: Entry, strict: boolean): number {
  let lo = 0,
    hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareEntries(sorted[mid], e);
    if (c < 0 || (strict && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class OddsOrder {
  constructor(
    private readonly queries: OfferQueries,
    private readonly cache: ReadCache,
    private readonly ttlMs: number,
    /** Chain time in unix seconds. */
    private readonly now: () => Promise<number>,
  ) {}

  /** Every offer of the list `p` selects (narrowed to `mineOf`'s when given), in bestOdds order. */
  private sorted(p: Partial<BrowseParams> & { role?: MineRole }, mineOf?: string): Promise<Entry[]> {
    const key = `odds:${JSON.stringify([p.status ?? "", p.view ?? "", p.sport ?? "", p.query ?? "", p.role ?? "", mineOf ?? ""])}`;
    return this.cache.get(key, this.ttlMs, async () => {
      const [terms, now] = await Promise.all([this.queries.terms(p, mineOf), this.now()]);
      const live = terms.filter((t) => t.status !== "Open" || !offerExpired({ expiresAt: t.expires_at === null ? null : BigInt(t.expires_at) }, now));
      return live.map(entryOfTerms).sort(compareEntries);
    });
  }

  /** A numbered page (offset, size) of the list in bestOdds order, and the list's total. */
  async page(p: BrowseParams, offset: number): Promise<{ keys: OddsKey[]; total: number }> {
    const all = await this.sorted(p);
    return { keys: all.slice(offset, offset + p.pageSize).map((e) => e.key), total: all.length };
  }

  /** The keys after `page.key` (forward) or before it (backward, returned in list order); `more` when the list goes on. */
  async keyset(
    p: Partial<BrowseParams> & { role?: MineRole },
    page: KeysetPage<OddsKey>,
    mineOf?: string,
  ): Promise<{ keys: OddsKey[]; more: boolean; total: number }> {
    const all = await this.sorted(p, mineOf);
    const at = page.key ? entryOf(page.key) : null;
    if (page.forward) {
      const from = at ? search(all, at, true) : 0;
      return { keys: all.slice(from, from + page.limit).map((e) => e.key), more: from + page.limit < all.length, total: all.length };
    }
    const to = at ? search(all, at, false) : all.length;
    const from = Math.max(0, to - page.limit);
    return { keys: all.slice(from, to).map((e) => e.key), more: from > 0, total: all.length };
  }
}
