/** Waiting for something asynchronous (an indexer, a child process) in tests. */

/** Retries `check` (assertions included) until it passes or `ms` have passed; rethrows the last failure. */
export async function eventually<T>(check: () => Promise<T>, ms = 30_000, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/**
 * Polls `fn` until it returns a truthy value, or `ms` have passed. A throw counts as "not yet" (the
 * thing may not exist yet); at the deadline the last throw is rethrown, else a timeout is raised.
 */
export async function until<T>(fn: () => Promise<T | null | undefined | false>, ms = 20_000, intervalMs = 50): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown = null;
  for (;;) {
    const v = await fn().catch((e: unknown) => ((last = e), null));
    if (v) return v;
    if (Date.now() > end) throw last ?? new Error(`condition not reached in ${ms} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
