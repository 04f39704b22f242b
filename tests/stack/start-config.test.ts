/**
 * `scripts/start.ts` configured through its environment, as an operator behind a load balancer
 * runs it: HOST=0.0.0.0 answers on an interface other than loopback, TRUST_PROXY=true takes the
 * client address from X-Forwarded-For (each forwarded address its own request budget), and the
 * callers' shares of live capacity come from the environment too (LIVE_CONNECTIONS_PER_ADDRESS,
 * LIVE_SHARE_RETRY_AFTER_SECONDS).
 */
import { afterAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { freePorts } from "../support/ports";
import { printedBy, untilUp } from "../support/wait";

const root = join(import.meta.dirname, "..", "..");
let child: ChildProcess | null = null;
let data = "";
afterAll(() => {
  child?.kill("SIGKILL");
  if (data) rmSync(data, { recursive: true, force: true });
});

/** An IPv4 address of this machine other than loopback (null on a machine with none). */
const outside = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

describe("start.ts: HOST, TRUST_PROXY and the live shares from the environment", () => {
  it("binds every interface, trusts X-Forwarded-For and holds each address to its configured share of WebSockets", async () => {
    const [port] = await freePorts(2);
    data = mkdtempSync(join(tmpdir(), "start-config-"));
    child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--no-seed", "--port", String(port), "--admin-port", String(port + 1)], {
      cwd: root,
      env: {
        ...process.env,
        DATA_DIR: data,
        HOST: "0.0.0.0",
        TRUST_PROXY: "true",
        IP_BURST: "1",
        IP_PER_MINUTE: "1",
        LIVE_CONNECTIONS_PER_ADDRESS: "1",
        LIVE_SHARE_RETRY_AFTER_SECONDS: "7",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const printed = printedBy(child);
    await untilUp(child, printed, "Local stack up");
    // On a non-loopback address of this machine (where it has one: CI machines do), which a
    // server bound to 127.0.0.1 never answers.
    const host = outside ?? "127.0.0.1";
    const contracts = (from: string) => fetch(`http://${host}:${port}/api/bets-usdc/offers/contracts`, { headers: { "x-forwarded-for": from } });
    // One request per forwarded address: the budget is the forwarded client's, not the proxy's.
    expect((await contracts("203.0.113.1")).status).toBe(200);
    expect((await contracts("203.0.113.2")).status).toBe(200);
    expect((await contracts("203.0.113.1")).status).toBe(429);

    // One WebSocket per forwarded address (the default is 64): the second upgrade is answered 429
    // with the configured Retry-After, before any socket exists.
    const upgrade = (from: string) =>
      new Promise<{ socket: WebSocket } | { status?: number; retryAfter?: string | string[] }>((resolve, reject) => {
        const ws = new WebSocket(`ws://${host}:${port}/graphql`, "graphql-transport-ws", { headers: { "x-forwarded-for": from } });
        ws.once("open", () => resolve({ socket: ws }));
        ws.once("unexpected-response", (req, res) => {
          resolve({ status: res.statusCode, retryAfter: res.headers["retry-after"] });
          req.destroy();
        });
        ws.once("error", reject);
      });
    const first = await upgrade("203.0.113.9");
    expect("socket" in first).toBe(true);
    expect(await upgrade("203.0.113.9")).toEqual({ status: 429, retryAfter: "7" });
    const other = await upgrade("203.0.113.10");
    expect("socket" in other).toBe(true);
    for (const u of [first, other]) if ("socket" in u) u.socket.close();
  });
});
