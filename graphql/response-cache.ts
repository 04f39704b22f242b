/**
 * The GraphQL response cache: yoga's response-cache plugin, keyed so an answer is never served
 * after the data under it moved, nor to another caller.
 *
 * - Key: the document, variables and operation name, the session (the caller's wallet; none for
 *   anonymous callers, who share one entry), the indexer's position (checkpoint slot and write
 *   version) and the chain second. Any committed indexer write makes a new key, so lists gain new offers at once too, which
 *   invalidation by entity cannot see (a new offer is in no cached answer yet); the chain second
 *   because viewer fields (canTake, open contracts) depend on chain time.
 * - The position is read from the store at most every 100 ms; with a change feed, each announced
 *   write moves it at once and drops the entries that hold a changed offer, position, pool or
 *   contract (entity invalidation by the global ids the plugin records).
 * - Entries live `ttlMs` (default 1 s). Mutations are never cached; answers with errors are never
 *   cached (the plugin's defaults). A cached answer carries an ETag; a client sending it back in
 *   If-None-Match gets 304 while it is current.
 */
import { createInMemoryCache, hashSHA256, useResponseCache } from "@graphql-yoga/plugin-response-cache";
import type { Plugin } from "graphql-yoga";
import type { ChangeFeed } from "../indexer";
import type { ReadService } from "../service/read/read-service";
import type { ReadViewer } from "../service/read/viewer";

const SLOT_POLL_MS = 100;

/**
 * Where the indexer is: the highest checkpoint slot and write version (a local chain may apply
 * many writes in one slot), read at most every SLOT_POLL_MS, plus the writes a change feed announced.
 */
class IndexedPosition {
  private seen: { at: number; value: string } | null = null;
  private reading: Promise<string> | null = null;
  private announced = 0;

  constructor(private readonly read: ReadService) {}

  moved(): void {
    this.announced++;
    this.seen = null;
  }

  async current(): Promise<string> {
    if (this.seen && Date.now() - this.seen.at <= SLOT_POLL_MS) return this.seen.value;
    this.reading ??= this.read.db
      .selectFrom("checkpoints")
      .select((eb) => [eb.fn.max<number>("slot").as("slot"), eb.fn.max<number>("write_version").as("wv")])
      .executeTakeFirst()
      .then((r) => {
        const value = `${r?.slot ?? 0}.${r?.wv ?? 0}.${this.announced}`;
        this.seen = { at: Date.now(), value };
        return value;
      })
      .finally(() => (this.reading = null));
    return this.reading;
  }
}

export interface ResponseCacheOptions {
  read: ReadService;
  ttlMs: number;
  changes?: ChangeFeed | null;
  /** The Relay global id of a node (entity invalidation uses the ids the answers carry). */
  globalId: (typename: string, id: string) => string;
}

export function graphqlResponseCache(o: ResponseCacheOptions): { plugin: Plugin; close(): void } {
  const indexed = new IndexedPosition(o.read);
  const cache = createInMemoryCache({ max: 10_000 });
  const unsubscribe = o.changes?.subscribe((c) => {
    indexed.moved();
    const entities = [
      ...c.offers.flatMap((a) => [
        { typename: "Offer", id: o.globalId("Offer", a) },
        { typename: "ShareableOffer", id: o.globalId("ShareableOffer", a) },
      ]),
      ...c.positions.map((a) => ({ typename: "ViewerPosition", id: o.globalId("ViewerPosition", a) })),
      ...c.contracts.map((a) => ({ typename: "Contract", id: o.globalId("Contract", a) })),
      ...c.pools.map((a) => ({ typename: "PoolAggregate", id: o.globalId("PoolAggregate", a) })),
    ];
    if (entities.length) void cache.invalidate(entities);
  });
  const plugin = useResponseCache<{ viewer?: Promise<ReadViewer | null> }>({
    cache,
    ttl: o.ttlMs,
    enabled: () => o.ttlMs > 0,
    // Per viewer: the server resolved the token before yoga ran (an invalid one never gets here).
    session: async (_request, ctx) => {
      const v = await ctx.viewer;
      return v ? `wallet:${v.wallet}` : null;
    },
    buildResponseCacheKey: async (p) =>
      hashSHA256(
        JSON.stringify([p.documentString, p.variableValues ?? null, p.operationName ?? null, p.sessionId ?? null, await indexed.current(), await o.read.now()]),
      ),
  });
  return { plugin, close: () => unsubscribe?.() };
}
