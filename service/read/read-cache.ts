/**
 * What ReadService keeps between requests, and when it lets go. Everything held belongs to one
 * "generation" of the store: a write the indexer applies starts a new one and drops it all.
 *
 * - When writes are heard (ReadService given the store writer's announcements, in this process or
 *   relayed from another): each applied write drops everything at once, exactly when it commits.
 * - Without (the writer runs elsewhere and nothing relays it): the indexer's position (highest
 *   checkpoint slot and write version: a local chain may apply many writes in one slot) is read at
 *   most every `pollMs` (default 100 ms) and a new one drops everything, so a change is seen within
 *   that bound.
 *
 * The generation is also the position other response caches of the process key on (the GraphQL
 * one: graphql/response-cache.ts), through ReadService.generation().
 *
 * A load that began in an older generation is answered but not kept, so a value read before a
 * write never outlives it. Entries also expire after their TTL (values derived with the chain
 * clock, such as canTake, must not outlive the second they were derived in) and are swept when
 * they do (lru-cache's ttlAutopurge), not kept until a count cap pushes them out: the cache is
 * bounded by bytes (`maxBytes`, default READ_CACHE_MAX_BYTES, each value's size estimated by
 * approximateBytes), least recently used first out. 20,000 entries of 50-offer pages had grown
 * RSS by 200 MiB and kept it.
 */
import { LRUCache } from "lru-cache";
import type { ChangeSet } from "../../indexer";

/** 32 MiB of cached reads (estimated): some 600 pages of 50 offers with viewer blocks, or thousands of single offers. */
export const READ_CACHE_MAX_BYTES = 32 * 1024 * 1024;

/**
 * A value's size in memory, estimated without recursion and without serialising it: strings at
 * two bytes a character, numbers 8, bigints 16, each object or array 40 plus 16 per slot. The
 * figure is for bounding, not accounting; a value shared by two entries counts twice.
 */
export function approximateBytes(value: unknown): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const v = stack.pop();
    switch (typeof v) {
      case "string":
        bytes += 16 + 2 * v.length;
        break;
      case "number":
      case "boolean":
        bytes += 8;
        break;
      case "bigint":
        bytes += 16;
        break;
      case "object":
        if (v === null || seen.has(v)) break;
        seen.add(v);
        if (Array.isArray(v)) {
          bytes += 40 + 16 * v.length;
          for (const x of v) stack.push(x);
        } else {
          for (const [k, x] of Object.entries(v)) {
            bytes += 16 + 2 * k.length;
            stack.push(x);
          }
          bytes += 40;
        }
        break;
      default:
        bytes += 8;
    }
  }
  return bytes;
}

/** What a cache holds and how well it serves, for /metrics. */
export interface CacheStats {
  entries: number;
  bytes: number;
  hits: number;
  misses: number;
}

/** Where applied writes are heard: StoreWriter.onApplied or a ChangeFeed (in-process or shared). */
export interface StoreChanges {
  /** Returns the unsubscribe function. */
  subscribe(listener: (change: ChangeSet) => void): () => void;
}

export interface ReadCacheOptions {
  /** The indexer's position as a comparable string (slot and write version). */
  indexedPosition: () => Promise<string>;
  /** Writes are heard (the owner calls drop() on each): no polling. */
  heard: boolean;
  pollMs?: number;
  /** Ceiling of the values kept, estimated (approximateBytes); default READ_CACHE_MAX_BYTES. */
  maxBytes?: number;
}

interface Entry {
  at: number;
  value: unknown;
}

export class ReadCache {
  private generation = 0;
  private readonly entries: LRUCache<string, Entry>;
  private hits = 0;
  private misses = 0;
  private seen: { at: number; position: string } | null = null;
  private reading: Promise<string> | null = null;

  constructor(private readonly o: ReadCacheOptions) {
    this.entries = new LRUCache<string, Entry>({
      maxSize: o.maxBytes ?? READ_CACHE_MAX_BYTES,
      sizeCalculation: (e) => Math.max(1, approximateBytes(e.value)),
      ttlAutopurge: true,
      // Timers check staleness against a clock lru-cache caches for ttlResolution: at 0 an expiry timer never finds its entry still fresh and leaves it.
      ttlResolution: 0,
    });
  }

  stats(): CacheStats {
    return { entries: this.entries.size, bytes: this.entries.calculatedSize, hits: this.hits, misses: this.misses };
  }

  drop(): void {
    this.generation++;
    this.entries.clear();
  }

  /**
   * Brings the generation up to date: nothing to do when writes are heard, else a position read at
   * most every pollMs (callers arriving during one share it).
   */
  async sync(): Promise<number> {
    if (this.o.heard) return this.generation;
    if (!this.seen || Date.now() - this.seen.at > (this.o.pollMs ?? 100)) {
      this.reading ??= this.o
        .indexedPosition()
        .then((position) => {
          if (this.seen && position !== this.seen.position) this.drop();
          this.seen = { at: Date.now(), position };
          return position;
        })
        .finally(() => (this.reading = null));
      await this.reading;
    }
    return this.generation;
  }

  /** Whether `get(key, ttlMs, …)` would answer from what is held now, without a load. */
  holds(key: string, ttlMs: number): boolean {
    if (ttlMs <= 0) return false;
    const hit = this.entries.get(key);
    return !!hit && Date.now() - hit.at <= ttlMs;
  }

  /**
   * The value under `key` if younger than ttlMs and of this generation, else `load`'s (kept unless
   * a write came in meanwhile). Callers that miss the same key in the same generation share one
   * load: ten requests arriving as a page expires would otherwise each run its queries, one after
   * another on the one thread, and the last would wait for all of them.
   */
  async get<T>(key: string, ttlMs: number, load: () => Promise<T>, keep: (value: T) => boolean = () => true): Promise<T> {
    if (ttlMs <= 0) return load();
    const gen = await this.sync();
    const t = Date.now();
    const hit = this.entries.get(key);
    if (hit && t - hit.at <= ttlMs) {
      this.hits++;
      return hit.value as T;
    }
    this.misses++;
    const running = this.loading.get(key);
    if (running && running.generation === gen) return running.value as Promise<T>;
    const value = load();
    this.loading.set(key, { generation: gen, value });
    try {
      const v = await value;
      if (gen === this.generation && keep(v)) {
        this.entries.set(key, { at: t, value: v }, { ttl: ttlMs });
      }
      return v;
    } finally {
      if (this.loading.get(key)?.value === value) this.loading.delete(key);
    }
  }

  private readonly loading = new Map<string, { generation: number; value: Promise<unknown> }>();
}

/** A store writer's announcements (StoreWriter.onApplied) as StoreChanges. */
export function writerChanges(writer: { onApplied(listener: (change: ChangeSet) => void): () => void }): StoreChanges {
  return { subscribe: (listener) => writer.onApplied(listener) };
}
