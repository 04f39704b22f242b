/** Waiting for something asynchronous (an indexer, a child process) in tests. */

import type { ChildProcess } from "node:child_process";

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

/** What a child process has printed so far: both streams as they arrived, and stdout alone. */
export interface Printed {
  readonly all: string;
  readonly stdout: string;
}

/** Starts keeping what `child` prints; call it right after spawn, before any output is read. */
export function printedBy(child: ChildProcess): Printed {
  const p = { all: "", stdout: "" };
  child.stdout!.on("data", (b: Buffer) => {
    p.all += b.toString();
    p.stdout += b.toString();
  });
  child.stderr!.on("data", (b: Buffer) => (p.all += b.toString()));
  return p;
}

/**
 * Waits until the server `child` runs says it is up: `ready` is a line it prints (on either
 * stream), or a check polled (a throw counts as "not yet"). If the child exits first (a refused
 * flag, a port taken), fails at once with what it printed (`printed`, from printedBy); `until`
 * would wait out its deadline, 120 s for a server.
 */
export async function untilUp(child: ChildProcess, printed: Printed, ready: string | (() => boolean | Promise<boolean>), ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    let up = false;
    try {
      up = typeof ready === "string" ? printed.all.includes(ready) : await ready();
    } catch {
      /* not yet: the port may refuse connections until the server listens */
    }
    if (up) return;
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the server exited (${child.signalCode ?? child.exitCode}) before it was up:\n${printed.all}`);
    if (Date.now() > end) throw new Error(`the server was not up in ${ms / 1000} s:\n${printed.all}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
