/**
 * A CPU profile of this process while `run` runs, written to `<dir>/<name>.cpuprofile` (open it in
 * Chrome's DevTools or speedscope, or summarise it with scripts/profile-summary.ts). The HTTP
 * benchmarks serve from this process, so the profile is the server's.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

/** `run` under the V8 profiler when `dir` is given; as it is otherwise. */
export async function profiled<T>(dir: string | undefined, name: string, run: () => Promise<T>): Promise<T> {
  if (!dir) return run();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  try {
    return await run();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}
