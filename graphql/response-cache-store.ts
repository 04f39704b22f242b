/**
 * Where the GraphQL response cache (./response-cache.ts) keeps its answers: the plugin's Cache
 * interface over lru-cache bounded by bytes (`maxBytes`, default RESPONSE_CACHE_MAX_BYTES; each
 * answer's size estimated as the REST cache estimates its values), expired answers swept when
 * they expire (ttlAutopurge), with the entity index (which answers hold which offer, position,
 * contract, pool) that invalidation follows. The plugin's own in-memory cache is bounded by count
 * only (10,000 answers of 50 offers each had taken RSS to 984 MiB) and kept expired answers until
 * evicted.
 */
import { LRUCache } from "lru-cache";
import type { ExecutionResult } from "graphql";
import { approximateBytes, type CacheStats } from "../service/read/read-cache";

/** 32 MiB of answers (estimated): some 600 pages of 50 offers with viewer fields. */
export const RESPONSE_CACHE_MAX_BYTES = 32 * 1024 * 1024;

interface EntityRecord {
  typename: string;
  id?: string | number;
}

export class ResponseCacheStore {
  private readonly answers: LRUCache<string, ExecutionResult>;
  /** Entity ("Type" or "Type:id") -> answers holding it, and back. */
  private readonly byEntity = new Map<string, Set<string>>();
  private readonly entitiesOf = new Map<string, Set<string>>();
  private hits = 0;
  private misses = 0;

  constructor(maxBytes: number = RESPONSE_CACHE_MAX_BYTES) {
    this.answers = new LRUCache<string, ExecutionResult>({
      maxSize: maxBytes,
      sizeCalculation: (r) => Math.max(1, approximateBytes(r)),
      ttlAutopurge: true,
      // Timers check staleness against a clock lru-cache caches for ttlResolution: at 0 an expiry timer never finds its entry still fresh and leaves it.
      ttlResolution: 0,
      // An answer gone (evicted, expired, replaced or invalidated) leaves the entity index with it.
      dispose: (_r, id) => this.unindex(id),
    });
  }

  set(id: string, data: ExecutionResult, entities: Iterable<EntityRecord>, ttl: number): void {
    this.answers.set(id, data, { ttl });
    if (!this.answers.has(id)) return; // larger than the whole cache
    const held = new Set<string>();
    for (const { typename, id: entityId } of entities) {
      held.add(typename);
      if (entityId !== undefined) held.add(`${typename}:${entityId}`);
    }
    this.entitiesOf.set(id, held);
    for (const e of held) {
      let ids = this.byEntity.get(e);
      if (!ids) this.byEntity.set(e, (ids = new Set()));
      ids.add(id);
    }
  }

  get(id: string): ExecutionResult | null {
    const r = this.answers.get(id);
    if (r) this.hits++;
    else this.misses++;
    return r ?? null;
  }

  /** Whether an answer is held (no hit counted: for the plugin's own look-ahead). */
  peek(id: string): ExecutionResult | undefined {
    return this.answers.get(id, { updateAgeOnGet: false });
  }

  invalidate(entities: Iterable<EntityRecord>): void {
    for (const { typename, id } of entities)
      for (const answer of [...(this.byEntity.get(id == null ? typename : `${typename}:${id}`) ?? [])]) this.answers.delete(answer);
  }

  stats(): CacheStats {
    return { entries: this.answers.size, bytes: this.answers.calculatedSize, hits: this.hits, misses: this.misses };
  }

  private unindex(id: string): void {
    const held = this.entitiesOf.get(id);
    if (!held) return;
    this.entitiesOf.delete(id);
    for (const e of held) {
      const ids = this.byEntity.get(e);
      ids?.delete(id);
      if (ids?.size === 0) this.byEntity.delete(e);
    }
  }
}
