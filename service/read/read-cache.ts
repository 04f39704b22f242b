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
 * clock, such as canTake, must not outlive the second they were derived in).
 */
import type { ChangeSet } from "../../indexer";

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
  maxEntries?: number;
}

interface Entry {
  at: number;
  value: unknown;
}

export class ReadCache {
  private generation = 0;
  private readonly entries = new Map<string, Entry>();
  private seen: { at: number; position: string } | null = null;
  private reading: Promise<string> | null = null;

  constructor(private readonly o: ReadCacheOptions) {}

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
    if (hit && t - hit.at <= ttlMs) return hit.value as T;
    const running = this.loading.get(key);
    if (running && running.generation === gen) return running.value as Promise<T>;
    const value = load();
    this.loading.set(key, { generation: gen, value });
    try {
      const v = await value;
      if (gen === this.generation && keep(v)) {
        this.entries.delete(key);
        this.entries.set(key, { at: t, value: v });
        if (this.entries.size > (this.o.maxEntries ?? 20_000)) this.entries.delete(this.entries.keys().next().value!);
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
