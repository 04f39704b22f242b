/**
 * A TEST fail point: stops the service process with SIGKILL at one step of a write, so a test can
 * reproduce a crash in the window between sending a transaction and seeing it confirmed
 * (tests/rpc/kill-window.test.ts). Inert unless the process was started with
 * `OFFERS_TEST_FAIL_POINT` in its environment; nothing in the API, the GraphQL schema or the
 * operator endpoint can arm it. An armed process says so on stderr when its write service is built.
 *
 * Points (in a write's order; the idempotency row's state a kill leaves in brackets):
 * - `write-before-record`: the transaction is signed, not yet recorded nor sent [reserved];
 * - `write-before-send`: recorded with its signature, not sent [submitted, not on chain];
 * - `write-after-send`: accepted by the chain, before the answer and before any confirmation is
 *   seen [submitted, lands on chain].
 */
import { writeSync } from "node:fs";

export const FAIL_POINT_ENV = "OFFERS_TEST_FAIL_POINT";

export const WRITE_FAIL_POINTS = ["write-before-record", "write-before-send", "write-after-send"] as const;
export type WriteFailPoint = (typeof WRITE_FAIL_POINTS)[number];

/** The fail point armed in `env`, or null; any other value is refused (a typo must not run unarmed). */
export function armedFailPoint(env: NodeJS.ProcessEnv = process.env): WriteFailPoint | null {
  const v = env[FAIL_POINT_ENV];
  if (v === undefined || v === "") return null;
  if (!(WRITE_FAIL_POINTS as readonly string[]).includes(v))
    throw new Error(`${FAIL_POINT_ENV}: unknown fail point ${JSON.stringify(v)} (${WRITE_FAIL_POINTS.join(" | ")})`);
  writeSync(2, `${FAIL_POINT_ENV}=${v}: TEST fail point armed, the first write to reach it kills this process\n`);
  return v as WriteFailPoint;
}

/** Kills the process at once (no cleanup, like a crash) when `point` is the armed one. */
export function reachFailPoint(armed: WriteFailPoint | null, point: WriteFailPoint): void {
  if (armed !== point) return;
  writeSync(2, `${FAIL_POINT_ENV}: reached ${point}, SIGKILL\n`);
  process.kill(process.pid, "SIGKILL");
}
