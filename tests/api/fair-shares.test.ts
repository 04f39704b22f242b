/**
 * Fair shares of live capacity, with the default limits (service/read/live-shares.ts), over real
 * WebSockets and SSE from many loopback addresses (127.0.0.0/8: a client binds 127.0.0.X as its
 * local address). 10,000 anonymous subscriptions attempted from 50 addresses used to fill the
 * process-wide cap, and a legitimate subscriber from a fresh address then got 503 (issue 21,
 * finding 1). Now each attacking address gets its anonymous share and no more, refused with
 * TOO_MANY_REQUESTS (HTTP 429 with Retry-After over SSE), and fresh callers are served.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { LocalStack } from "../../stack/local-stack";
import { liveOf } from "../../graphql/live-ws";
import { LIVE_SHARES } from "../../service/read/live-shares";
import { addressGroup } from "../../service/rate/caller-key";
import { liveStack, type Result } from "./live-clients";
import { until } from "../support/wait";
import { makeUser } from "../support/stack";

let s: LocalStack;
beforeAll(async () => {
  s = await liveStack();
});
afterAll(async () => s?.stop());

/** A raw graphql-ws connection bound to `localAddress`: subscribes and tallies what each subscription got first. */
class RawLive {
  readonly ws: WebSocket;
  readonly first = new Map<string, Result>();
  closed: { code: number; reason: string } | null = null;
  private ack!: Promise<void>;
  private waiters: (() => void)[] = [];

  constructor(url: string, localAddress: string, authorization?: string) {
    this.ws = new WebSocket(`${url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws", { localAddress });
    this.ack = new Promise((resolve, reject) => {
      this.ws.on("open", () => this.ws.send(JSON.stringify({ type: "connection_init", payload: authorization ? { authorization } : {} })));
      this.ws.on("message", (m) => {
        const msg = JSON.parse(String(m));
        if (msg.type === "connection_ack") resolve();
        else if ((msg.type === "next" || msg.type === "error") && !this.first.has(msg.id)) {
          this.first.set(msg.id, msg.type === "next" ? msg.payload : { errors: msg.payload });
          this.wake();
        }
      });
      this.ws.on("unexpected-response", (_req, res) => reject(new Error(`upgrade refused ${res.statusCode}`)));
      this.ws.on("error", reject);
      this.ws.on("close", (code, reason) => {
        this.closed = { code, reason: String(reason) };
        reject(new Error(`closed ${code} ${reason}`));
        this.wake();
      });
    });
  }

  ready(): Promise<void> {
    return this.ack;
  }

  /** Sends `n` subscriptions to indexedSlot; resolves when each got its first answer. */
  async subscribe(n: number): Promise<Result[]> {
    const ids = Array.from({ length: n }, (_, i) => `s${this.first.size + i}`);
    for (const id of ids) this.ws.send(JSON.stringify({ id, type: "subscribe", payload: { query: "subscription { indexedSlot }" } }));
    while (!ids.every((id) => this.first.has(id))) {
      if (this.closed) throw new Error(`closed ${this.closed.code}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
    return ids.map((id) => this.first.get(id)!);
  }

  close(): void {
    this.ws.close();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

const served = (r: Result) => !r.errors && /^\d+$/.test(r.data?.indexedSlot);
const code = (r: Result) => r.errors?.[0]?.extensions?.code;

async function sse(localAddress: string, token?: string): Promise<{ status: number; retryAfter: string | null; first: Result }> {
  // fetch cannot bind a local address: node:http can.
  const http = await import("node:http");
  return new Promise((resolve, reject) => {
    const u = new URL(`${s.url}/graphql`);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: "/graphql",
        method: "POST",
        localAddress,
        headers: { "content-type": "application/json", accept: "text/event-stream", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      },
      (res) => {
        let buf = "";
        res.on("data", (c) => {
          buf += c;
          const m = /(?:^|\n)data: (\{.*\})\n/.exec(buf);
          if (m) {
            resolve({ status: res.statusCode!, retryAfter: (res.headers["retry-after"] as string) ?? null, first: JSON.parse(m[1]) });
            req.destroy();
          }
        });
        res.on("end", () => {
          if (res.headers["content-type"]?.includes("json"))
            resolve({ status: res.statusCode!, retryAfter: (res.headers["retry-after"] as string) ?? null, first: JSON.parse(buf) });
        });
      },
    );
    req.on("error", (e) => (e.message.includes("socket hang up") ? undefined : reject(e)));
    req.end(JSON.stringify({ query: "subscription { indexedSlot }" }));
  });
}

describe("fair shares of live capacity (default limits)", () => {
  it("10,000 anonymous subscriptions from 50 addresses get 50 per address; fresh callers, signed in and anonymous, are served", async () => {
    const live = liveOf(s.app)!;
    const attackers = Array.from({ length: 50 }, (_, i) => `127.0.0.${10 + i}`);
    // 8 connections per address (400), 25 subscriptions each (the per-connection cap): 10,000 attempts.
    const conns = attackers.flatMap((a) => Array.from({ length: 8 }, () => ({ address: a, live: new RawLive(s.url, a) })));
    await Promise.all(conns.map((c) => c.live.ready()));
    const results = await Promise.all(conns.map(async (c) => ({ address: c.address, answers: await c.live.subscribe(25) })));
    const byAddress = new Map<string, { served: number; refused: number }>();
    for (const { address, answers } of results) {
      const t = byAddress.get(address) ?? { served: 0, refused: 0 };
      for (const r of answers) {
        if (served(r)) t.served++;
        else {
          expect(code(r)).toBe("TOO_MANY_REQUESTS");
          expect(r.errors![0].message).toMatch(/anonymous subscriptions per address/);
          t.refused++;
        }
      }
      byAddress.set(address, t);
    }
    expect([...byAddress.values()].reduce((n, t) => n + t.served + t.refused, 0)).toBe(10_000);
    for (const [address, t] of byAddress)
      expect({ address, ...t }).toEqual({ address, served: LIVE_SHARES.anonymousSubscriptionsPerAddress, refused: 200 - 50 });
    expect(live.stats().subscriptions).toBe(50 * LIVE_SHARES.anonymousSubscriptionsPerAddress);

    // An attacking address is refused over SSE too: 429 with Retry-After.
    const again = await sse(attackers[0]);
    expect(again.status).toBe(429);
    expect(again.retryAfter).toBe(String(LIVE_SHARES.shareRetryAfterSeconds));
    expect(code(again.first)).toBe("TOO_MANY_REQUESTS");
    // And gets no more anonymous connections than its share.
    const extra = Array.from({ length: LIVE_SHARES.anonymousConnectionsPerAddress }, () => new RawLive(s.url, attackers[0]));
    const opened = await Promise.allSettled(extra.map((c) => c.ready()));
    expect(opened.filter((o) => o.status === "fulfilled")).toHaveLength(LIVE_SHARES.anonymousConnectionsPerAddress - 8);
    for (const c of extra.filter((c) => c.closed))
      expect(c.closed).toMatchObject({ code: 4429, reason: expect.stringMatching(/anonymous connections per address/) });
    for (const c of extra) c.close();

    // A fresh signed-in subscriber and a fresh anonymous one are served, over WebSocket and SSE.
    const { token } = await makeUser(s, 0n);
    const signedIn = new RawLive(s.url, "127.0.0.200", `BeARer  ${token}`);
    await signedIn.ready();
    expect((await signedIn.subscribe(1)).every(served)).toBe(true);
    const anonymous = new RawLive(s.url, "127.0.0.201");
    await anonymous.ready();
    expect((await anonymous.subscribe(1)).every(served)).toBe(true);
    expect(served((await sse("127.0.0.202", token)).first)).toBe(true);
    expect(served((await sse("127.0.0.203")).first)).toBe(true);
    signedIn.close();
    anonymous.close();
    for (const c of conns) c.live.close();
    await until(async () => live.stats().subscriptions === 0, 20_000);
  });

  it("one token holds at most its share, from any address and whatever its spelling", async () => {
    const { token } = await makeUser(s, 0n);
    const spellings = [`Bearer ${token}`, `bearer  ${token}`];
    const conns = Array.from({ length: 9 }, (_, i) => new RawLive(s.url, `127.0.1.${i + 1}`, spellings[i % 2]));
    await Promise.all(conns.map((c) => c.ready()));
    const answers = (await Promise.all(conns.map((c) => c.subscribe(25)))).flat();
    expect(answers.filter(served)).toHaveLength(LIVE_SHARES.subscriptionsPerToken);
    for (const r of answers.filter((r) => !served(r))) expect(r.errors?.[0].message).toMatch(/subscriptions per token/);
    for (const c of conns) c.close();
  });

  it("IPv6 addresses count by /64", () => {
    expect(addressGroup("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressGroup("::1")).toBe("0:0:0:0::/64");
    expect(addressGroup("::ffff:127.0.0.9")).toBe("127.0.0.9");
    expect(addressGroup("127.0.0.9")).toBe("127.0.0.9");
  });
});
