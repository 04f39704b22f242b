/**
 * The read caches on /metrics, one label per cache (`rest`: ReadService's, `graphql`: the
 * response cache): entries held, estimated bytes held (against their ceilings, documented in
 * docs/service-guide.md), hits and misses since start and their ratio.
 */
import { Gauge, type Registry } from "prom-client";
import type { CacheStats } from "../service/read/read-cache";

export function registerCacheMetrics(registry: Registry, caches: Record<string, () => CacheStats>): void {
  const gauge = (name: string, help: string, value: (s: CacheStats) => number) => {
    // A second app on the same instance's registry reports its own caches instead.
    registry.removeSingleMetric(name);
    new Gauge({
      name,
      help,
      labelNames: ["cache"],
      registers: [registry],
      collect() {
        for (const [cache, stats] of Object.entries(caches)) this.set({ cache }, value(stats()));
      },
    });
  };
  gauge("offers_cache_entries", "Entries a read cache holds", (s) => s.entries);
  gauge("offers_cache_bytes", "Estimated bytes a read cache holds (bounded by its ceiling)", (s) => s.bytes);
  gauge("offers_cache_hits", "Look-ups a read cache answered since start", (s) => s.hits);
  gauge("offers_cache_misses", "Look-ups a read cache could not answer since start", (s) => s.misses);
  gauge("offers_cache_hit_ratio", "Hits over look-ups since start (0 before any)", (s) => (s.hits + s.misses > 0 ? s.hits / (s.hits + s.misses) : 0));
}
