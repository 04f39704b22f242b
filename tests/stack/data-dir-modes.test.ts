/**
 * The data directory as `npm start` leaves it: 0700, and every file in it 0600 (the store with
 * its -wal and -shm, the service key, the sealed service wallet), a pre-existing loose file
 * tightened too. It used to be 0755 with the store 0644 (issue 21, finding 6).
 */
import { afterAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { printedBy, untilUp } from "../support/wait";
import { freePorts } from "../support/ports";

const root = join(import.meta.dirname, "..", "..");
let child: ChildProcess | null = null;
afterAll(() => child?.kill("SIGKILL"));

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("data directory permissions", () => {
  it("npm start makes the data directory 0700 and every file in it 0600, existing ones included", async () => {
    const [port] = await freePorts(2);
    const data = mkdtempSync(join(tmpdir(), "modes-"));
    chmodSync(data, 0o755);
    writeFileSync(join(data, "left-behind.json"), "{}\n", { mode: 0o644 });
    chmodSync(join(data, "left-behind.json"), 0o644);
    child = spawn(
      process.execPath,
      ["--import", "tsx", "scripts/start.ts", "--no-seed", "--port", String(port), "--admin-port", String(port + 1), "--data", data],
      {
        cwd: root,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const printed = printedBy(child);
    await untilUp(child, printed, async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok);
    // A write, so the WAL and its index exist.
    await fetch(`http://127.0.0.1:${port}/api/bets-usdc/offers/contracts`);
    const files = readdirSync(data);
    expect(files).toEqual(expect.arrayContaining(["store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "left-behind.json"]));
    expect(mode(data), printed.all).toBe("700");
    for (const f of files) expect(`${f} ${mode(join(data, f))}`).toBe(`${f} 600`);
    expect(printed.all).not.toMatch(/warning: .*shared/);
    child.kill("SIGINT");
  });
});
