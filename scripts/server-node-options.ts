/**
 * The node options of the service's process, kept in one place: package.json's
 * `config.serverNodeOptions`, which `npm start` passes to the server (npm exports it to its script
 * as `$npm_package_config_serverNodeOptions`); `admin.ts local` and the benchmarks that start
 * `scripts/start.ts` in a process of their own read it here, so they run the server as `npm start` does.
 *
 * Why `--max-old-space-size=512` (docs/service-guide.md "Memory"): the service's live heap is
 * about 140 MiB (the local stack with the demo seed, the read caches' 2 x 32 MiB ceilings on top
 * at most). On a host with more than 16 GiB of memory V8 lets the old generation grow 4x between
 * mark-compacts, up to a 4 GiB ceiling: under the distinct-query load it went from 136 to 550 MiB of
 * mostly garbage (promoted requests in flight) without a mark-compact, and kept it committed
 * after the load: V8's memory reducer starts its shrinking GC only when the allocation rate is
 * low (mutator utilisation over 99.3 %), and the idle service (settlement pass every 2 s, clock,
 * webhook pump) allocates ~600 KB/s, so it waited for its 100 s watchdog. With a 512 MiB
 * ceiling V8 grows the old generation 1.4x instead of 4x (its factor scales with the ceiling
 * below 2 GiB), so mark-compacts run every few seconds under load (~15-40 ms each, the live
 * heap ~140 MiB) and the heap stays near 200-230 MiB.
 */
import { readFileSync } from "node:fs";

export function serverNodeOptions(): string[] {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { config?: { serverNodeOptions?: unknown } };
  const options = pkg.config?.serverNodeOptions;
  if (typeof options !== "string") throw new Error("package.json: config.serverNodeOptions must be a string of node options");
  return options.split(/\s+/).filter(Boolean);
}
