/**
 * What ReadService keeps between requests, and when it lets go. Everything held belongs to one
 * "generation" of the store: a write the indexer applies starts a new one and drops it all.
 *
 * - With `changes` (the store writer's announcements, in this process or relayed from another):
 *   each applied write drops everything at once, exactly when it commits.
 * - Without (the writer runs elsewhere and nothing relays it): the indexed slot is read at most
 *   every `pollMs` (default 100 ms) and a new slot drops everything, so a change is seen within
 *   that bound.
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
  indexedSlot: () => Promise<number>;
  changes?: StoreChanges;
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
  private slotSeen: { at: number; slot: number } | null = null;
  private readonly unsubscribe: (() => void) | null;

  constructor(private readonly o: ReadCacheOptions) {
    this.unsubscribe = o.changes ? o.changes.subscribe(() => this.drop()) : null;
  }

  /** Stops hearing the writer (the cache then polls the slot). */
  close(): void {
    this.unsubscribe?.();
  }

  drop(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Brings the generation up to date: nothing to do when writes are heard, else a slot read at most every pollMs. */
  async sync(): Promise<number> {
    if (this.o.changes) return this.generation;
    const t = Date.now();
    if (!this.slotSeen || t - this.slotSeen.at > (this.o.pollMs ?? 100)) {
      const slot = await this.o.indexedSlot();
      if (this.slotSeen && slot !== this.slotSeen.slot) this.drop();
      this.slotSeen = { at: t, slot };
    }
    return this.generation;
  }

  /** The value under `key` if younger than ttlMs and of this generation, else `load`'s (kept unless a write came in meanwhile). */
  async get<T>(key: string, ttlMs: number, load: () => Promise<T>, keep: (value: T) => boolean = () => true): Promise<T> {
    if (ttlMs <= 0) return load();
    const gen = await this.sync();
    const t = Date.now();
    const hit = this.entries.get(key);
    if (hit && t - hit.at <= ttlMs) return hit.value as T;
    const value = await load();
    if (gen === this.generation && keep(value)) {
      this.entries.delete(key);
      this.entries.set(key, { at: t, value });
      if (this.entries.size > (this.o.maxEntries ?? 20_000)) this.entries.delete(this.entries.keys().next().value!);
    }
    return value;
  }
}

/** A store writer's announcements (StoreWriter.onApplied) as StoreChanges. */
export function writerChanges(writer: { onApplied(listener: (change: ChangeSet) => void): () => void }): StoreChanges {
  return { subscribe: (listener) => writer.onApplied(listener) };
}
