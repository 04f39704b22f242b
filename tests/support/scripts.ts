/**
 * A project script (`scripts/<name>.ts`) run in a child process without blocking the suite's
 * event loop. vitest's worker keeps answering its runner meanwhile: a spawnSync that outlasted the
 * worker's 60-second RPC timeout (a backfill against the validator on a loaded machine) failed
 * the whole run with `Timeout calling "onTaskUpdate"` although every test passed.
 */
import { execFile } from "node:child_process";

export interface ScriptRun {
  /** The exit code; null when the process was killed (e.g. at `timeout`). */
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runScript(args: readonly string[], o: { cwd: string; env?: NodeJS.ProcessEnv; timeout: number }): Promise<ScriptRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", ...args], { ...o, encoding: "utf8", maxBuffer: 1 << 26 }, (error, stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code;
      resolve({ status: error ? (typeof code === "number" ? code : null) : 0, stdout, stderr });
    });
  });
}
