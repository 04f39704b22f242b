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

/** Polls `fn` until it returns a value other than null (errors count as null), or times out. */
export async function until<T>(fn: () => Promise<T | null>, ms = 20_000, intervalMs = 100): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
