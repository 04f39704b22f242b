/**
 * A project script (`scripts/<name>.ts`) run in a child process without blocking the suite's
 * event loop. vitest's worker keeps answering its runner meanwhile: a spawnSync that outlasted the
 * worker's 60-second RPC timeout (a backfill against the validator on a loaded machine) failed
 * the whole run with `Timeout calling "onTaskUpdate"` although every test passed.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";

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

/**
 * The operator CLI (`scripts/admin.ts`) with `args`, its JSON answer parsed; a command that exits
 * other than 0 rejects with its stderr, as the operator would read it.
 */
export async function adminJson<T = Record<string, unknown>>(
  args: readonly string[],
  o: { cwd: string; env?: NodeJS.ProcessEnv; timeout: number },
): Promise<T> {
  const r = await runScript([join(o.cwd, "scripts", "admin.ts"), ...args], o);
  if (r.status !== 0) throw new Error(`admin ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
