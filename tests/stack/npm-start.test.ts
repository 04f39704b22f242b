/**
 * `npm start` passes SIGTERM on: npm runs the script with `sh -c` and signals that shell, so the
 * script must exec the server (otherwise the shell dies and the server runs on, orphaned). The
 * script of package.json is run here the way npm runs it, with the setup step (which installs
 * and builds) replaced by `true`; SIGTERM to the shell must stop the server. The server runs with
 * the node options of package.json's `config.serverNodeOptions` (npm exports them to the script as
 * `npm_package_config_serverNodeOptions`): its heap ceiling is the one they set.
 */
import { afterAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until, printedBy, untilUp } from "../support/wait";
import { freePorts } from "../support/ports";

const root = join(import.meta.dirname, "..", "..");
let child: ChildProcess | null = null;
let group = 0;
afterAll(() => {
  // Whatever happened, leave no server behind: the shell leads its own process group, which an
  // orphaned server stays in.
  try {
    if (group) process.kill(-group, "SIGKILL");
  } catch {
    /* already gone */
  }
});

describe("npm start", () => {
  it("runs the server with package.json's node options and stops it on SIGTERM to the process npm signals", async () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: { start: string }; config: { serverNodeOptions: string } };
    const script = pkg.scripts.start;
    const oldSpaceMiB = Number(/--max-old-space-size=(\d+)/.exec(pkg.config.serverNodeOptions)?.[1]);
    expect(oldSpaceMiB).toBeGreaterThan(0);
    expect(script).toContain("bash scripts/setup.sh");
    const [port] = await freePorts(2);
    const data = mkdtempSync(join(tmpdir(), "npm-start-"));
    const args = ["--port", String(port), "--admin-port", String(port + 1), "--data", data, "--no-seed"];
    // npm: `sh -c "<script> <args>"`, with node_modules/.bin on PATH and package.json's config in the environment.
    child = spawn("sh", ["-c", `${script.replace("bash scripts/setup.sh", "true")} ${args.join(" ")}`], {
      cwd: root,
      env: {
        ...process.env,
        PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH}`,
        npm_package_config_serverNodeOptions: pkg.config.serverNodeOptions,
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    group = child.pid!;
    const printed = printedBy(child);
    await untilUp(child, printed, "Local stack up");
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    // The old generation's ceiling plus the young generation's (V8's default on this host would be some GiB).
    const ceilingMiB = Number(/V8 heap ceiling (\d+) MiB/.exec(printed.all)?.[1]);
    expect(ceilingMiB).toBeGreaterThanOrEqual(oldSpaceMiB);
    expect(ceilingMiB).toBeLessThanOrEqual(oldSpaceMiB + 64);
    child.kill("SIGTERM");
    // The server stops: its port refuses connections.
    await until(async () => ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null)) === null ? true : null), 30_000);
    child = null;
  });
});
