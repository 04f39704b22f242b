/**
 * `npm start` passes SIGTERM on: npm runs the script with `sh -c` and signals that shell, so the
 * script must exec the server (otherwise the shell dies and the server runs on, orphaned). The
 * script of package.json is run here the way npm runs it, with the setup step (which installs
 * and builds) replaced by `true`; SIGTERM to the shell must stop the server.
 */
import { afterAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../support/wait";
import { portFree } from "../../harness/validator";

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
  it("stops the server on SIGTERM to the process npm signals", async () => {
    const script = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start;
    expect(script).toContain("bash scripts/setup.sh");
    // Below the kernel's ephemeral range (32768 up, where outgoing connections take their ports)
    // and checked free: the validator suites run beside this file and take port ranges of their own.
    let port = 0;
    for (let i = 0; i < 50 && !port; i++) {
      const p = 20_000 + Math.floor(Math.random() * 12_000);
      if ((await portFree(p)) && (await portFree(p + 1))) port = p;
    }
    expect(port, "no free pair of ports below 32000").toBeGreaterThan(0);
    const data = mkdtempSync(join(tmpdir(), "npm-start-"));
    const args = ["--port", String(port), "--admin-port", String(port + 1), "--data", data, "--no-seed"];
    // npm: `sh -c "<script> <args>"`, with node_modules/.bin on PATH.
    child = spawn("sh", ["-c", `${script.replace("bash scripts/setup.sh", "true")} ${args.join(" ")}`], {
      cwd: root,
      env: { ...process.env, PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH}` },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    group = child.pid!;
    let out = "";
    child.stdout!.on("data", (b) => (out += b));
    child.stderr!.on("data", (b) => (out += b));
    let exited: number | null = null;
    child.on("exit", (code) => (exited = code ?? -1));
    // A server that exits (a refused flag or port) fails the test at once, with what it printed
    // (`until` would take the throw for "not yet" and wait out its deadline).
    const end = Date.now() + 120_000;
    while (!out.includes("Local stack up")) {
      if (exited !== null) throw new Error(`the server exited (${exited}) before it was up:\n${out}`);
      if (Date.now() > end) throw new Error(`the server was not up in 120 s:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    child.kill("SIGTERM");
    // The server stops: its port refuses connections.
    await until(async () => ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null)) === null ? true : null), 30_000);
    child = null;
  });
});
