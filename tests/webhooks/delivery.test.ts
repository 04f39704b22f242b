/**
 * Webhooks over real HTTP (issue #26), with a real receiver: a node:http server on loopback that
 * answers 500 to the first deliveries, is then down (closed), then accepts. Every event of the
 * users' offers and positions arrives at least once, each signature verifies with the
 * `standardwebhooks` verifier (a timestamp outside its tolerance is refused), a replay re-sends with
 * the same id, one user can neither see nor replay another's deliveries, a refund a closed token
 * account could not receive arrives as claim.credited to its owner, and bad input and the limits
 * are refused with their statuses.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import type { LocalStack } from "../../stack/local-stack";
import { UNIT, contract, createBody, key, makeUser, stack, type TestUser } from "../support/stack";
import { get, getJson, gql, post } from "../support/http";
import { eventually, until } from "../support/wait";
import { checkWebhookUrl } from "../../service/webhooks/url-policy";
import { WEBHOOK_LIMITS } from "../../service/webhooks/limits";
import { createCloseAccountInstruction } from "@solana/spl-token";
import { sendAndConfirm } from "../../service/chain/submitter";
import { OFFERS_PROGRAM } from "../../indexer/decode";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** The receiver: `mode` says how it answers; every request that reached it is kept. */
class Receiver {
  mode: "fail" | "accept" = "fail";
  readonly got: Received[] = [];
  private server: Server | null = null;
  port = 0;

  async up(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        this.got.push({ headers: req.headers, body });
        res.writeHead(this.mode === "accept" ? 200 : 500).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async down(): Promise<void> {
    const s = this.server!;
    this.server = null;
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }

  get url() {
    return `http://127.0.0.1:${this.port}/hook`;
  }
}

const limits = {
  allowLocalTargets: true,
  firstRetryMs: 20,
  maxRetryDelayMs: 100,
  retryForMs: 120_000,
  timeoutMs: 2_000,
  replayBurst: 3,
  replaysPerMinute: 1,
  maxEndpointsPerUser: 3,
};

describe("webhooks", () => {
  let s: LocalStack;
  const rx = new Receiver();
  let alice: TestUser;
  let bob: TestUser;
  const secrets = new Map<string, string>();
  beforeAll(async () => {
    s = await stack({ webhookLimits: limits });
    await rx.up();
    [alice, bob] = [await makeUser(s, 1_000n * UNIT), await makeUser(s, 1_000n * UNIT)];
  });
  afterAll(async () => {
    await rx.down().catch(() => undefined);
    await s?.stop();
  });

  const register = async (u: TestUser, events: string[]) => {
    const r = await post(s, "/webhooks", { url: rx.url, events }, u.token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.secret).toMatch(/^whsec_/);
    secrets.set(r.body.id, r.body.secret);
    return r.body.id as string;
  };
  const deliveries = async (u: TestUser, q = "") => {
    const r = await get(s, `/webhooks/deliveries${q}`, u.token);
    expect(r.status, r.text).toBe(200);
    return r.body.deliveries as {
      id: string;
      endpointId: string;
      eventId: string;
      eventType: string;
      state: string;
      attempts: number;
      attemptLog: { status: number | null; error: string | null }[];
      payload: Record<string, unknown>;
    }[];
  };
  /** Dispatches until `u` has a delivered delivery of `eventType`, and returns it. */
  const deliveredOf = (u: TestUser, eventType: string) =>
    until(
      async () => {
        await s.webhookDispatcher.runOnce();
        return (await deliveries(u)).find((d) => d.eventType === eventType && d.state === "delivered") ?? null;
      },
      10_000,
      30,
    );
  const take = async (u: TestUser, offer: string, amount: bigint, revision: string) => {
    const r = await post(s, `/${offer}/take`, { takeAmountMicros: String(amount), expectedRevision: revision, idempotencyKey: key() }, u.token);
    expect(r.status, r.text).toBe(200);
  };
  const indexedRevision = async (offer: string) => {
    const row = await s.db.selectFrom("offers").select(["revision", "status"]).where("address", "=", offer).executeTakeFirst();
    return row;
  };

  it("every event arrives at least once through failures and an outage, signed; a replay re-sends the same id", async () => {
    const aliceHook = await register(alice, ["offer.taken", "offer.filled", "offer.closed", "position.settled", "position.refunded"]);
    const bobHook = await register(bob, ["offer.taken", "position.settled", "position.refunded"]);

    // Alice's offer taken twice by Bob (the second take fills it), another closed by her, a third
    // on a contract that is voided (refund); the first contract resolves for Bob's side.
    const [k1, k2] = [await contract(s, 60n), await contract(s, 60n)];
    const o1 = (await post(s, "/", createBody(k1), alice.token)).body.offerAddress as string;
    const o2 = (await post(s, "/", createBody(k1), alice.token)).body.offerAddress as string;
    const o3 = (await post(s, "/", createBody(k2), alice.token)).body.offerAddress as string;
    await eventually(async () => expect((await indexedRevision(o3))?.status).toBe("Open"));
    await take(bob, o1, 4n * UNIT, String((await indexedRevision(o1))!.revision));
    await eventually(async () => expect((await indexedRevision(o1))?.revision).toBeGreaterThan(1));
    await take(bob, o1, 6n * UNIT, String((await indexedRevision(o1))!.revision));
    await take(bob, o3, 2n * UNIT, String((await indexedRevision(o3))!.revision));
    const closed = await post(s, `/${o2}/close`, { expectedRevision: String((await indexedRevision(o2))!.revision), idempotencyKey: key() }, alice.token);
    expect(closed.status, closed.text).toBe(200);
    await s.chain.gateway.advance(61n);
    await s.admin.resolveContract(k1, "sideB");
    await s.admin.resolveContract(k2, "void");
    await eventually(async () => expect((await indexedRevision(o1))?.status).toBe("Filled"));
    await s.worker.drain();

    // 500 to everything first.
    rx.mode = "fail";
    const first = await s.webhookDispatcher.runOnce();
    expect(first.enqueued).toBe(13);
    // At most 4 attempts in flight per endpoint: the first round tried 4 of each.
    expect(first).toMatchObject({ attempted: 8, delivered: 0 });
    await until(
      async () => {
        await s.webhookDispatcher.runOnce();
        return [...(await deliveries(alice)), ...(await deliveries(bob))].every((d) => d.attempts >= 1) || null;
      },
      5_000,
      30,
    );
    const failed = rx.got.length;
    expect(failed).toBeGreaterThanOrEqual(13);
    // Then down: attempts find no one.
    await rx.down();
    // Down for as long as it takes every delivery to find no one at least once.
    await until(
      async () => {
        await s.webhookDispatcher.runOnce();
        return [...(await deliveries(alice)), ...(await deliveries(bob))].every((d) => d.attemptLog.some((x) => x.status === null)) || null;
      },
      10_000,
      30,
    );
    expect(rx.got.length).toBe(failed);
    // Then up and accepting: everything pending goes through.
    rx.mode = "accept";
    await rx.up();
    await until(
      async () => {
        await s.webhookDispatcher.runOnce();
        const all = [...(await deliveries(alice)), ...(await deliveries(bob))];
        return all.every((d) => d.state === "delivered") ? all : null;
      },
      10_000,
      60,
    );

    // What each user's endpoint got, by type: one id per event, the fill's id shared by both sides.
    const a = await deliveries(alice);
    const b = await deliveries(bob);
    const types = (ds: { eventType: string }[]) => ds.map((d) => d.eventType).sort();
    expect(types(a)).toEqual([
      "offer.closed",
      "offer.closed",
      "offer.filled",
      "offer.taken",
      "offer.taken",
      "offer.taken",
      "position.refunded",
      "position.settled",
    ]);
    expect(types(b)).toEqual(["offer.taken", "offer.taken", "offer.taken", "position.refunded", "position.settled"]);
    expect(new Set(a.filter((d) => d.eventType === "offer.taken").map((d) => d.eventId))).toEqual(
      new Set(b.filter((d) => d.eventType === "offer.taken").map((d) => d.eventId)),
    );
    const closes = a.filter((d) => d.eventType === "offer.closed").map((d) => d.payload.data);
    expect(closes).toEqual(
      expect.arrayContaining([expect.objectContaining({ offer: o2, reason: "closed" }), expect.objectContaining({ offer: o3, reason: "cutoff" })]),
    );
    expect(a.find((d) => d.eventType === "offer.filled")!.payload).toMatchObject({ data: { offer: o1, takerFilledMicros: String(10n * UNIT) } });
    // The attempts are recorded: a 500, a refused connection, then the 200.
    for (const d of [...a, ...b]) {
      expect(d.attempts).toBeGreaterThanOrEqual(3);
      const log = (await s.db
        .selectFrom("webhook_attempts" as never)
        .select(["attempt", "status", "error"] as never)
        .where("delivery_id" as never, "=", d.id as never)
        .orderBy("attempt" as never)
        .execute()) as { status: number | null; error: string | null }[];
      expect(log.length).toBe(d.attempts);
      expect(log[0].status).toBe(500);
      expect(log.some((x) => x.status === null && x.error)).toBe(true);
      expect(log[log.length - 1].status).toBe(200);
      expect(d.attemptLog[0].status).toBe(200);
    }

    // Every event arrived at least once, and every request verifies with its endpoint's secret.
    const secretOf = (d: { endpointId: string }) => secrets.get(d.endpointId)!;
    const byId = new Map<string, Received[]>();
    for (const g of rx.got) byId.set(String(g.headers["webhook-id"]), [...(byId.get(String(g.headers["webhook-id"])) ?? []), g]);
    for (const d of [...a, ...b]) {
      const got = byId.get(d.eventId) ?? [];
      expect(got.length, d.eventType).toBeGreaterThanOrEqual(1);
      const verified = got.filter((g) => {
        try {
          new Webhook(secretOf(d)).verify(g.body, g.headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      });
      // A fill is sent to both endpoints under one id: each request verifies with one of the two secrets.
      expect(verified.length, d.eventType).toBeGreaterThanOrEqual(1);
      for (const g of verified) expect(JSON.parse(g.body)).toEqual(d.payload);
    }
    for (const g of rx.got) {
      const ok = [aliceHook, bobHook].filter((id) => {
        try {
          new Webhook(secrets.get(id)!).verify(g.body, g.headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      });
      expect(ok.length).toBe(1);
    }
    // The verifier refuses a timestamp outside its tolerance (5 minutes), correctly signed or not.
    const sample = rx.got[rx.got.length - 1];
    const wh = new Webhook(secrets.get(aliceHook)!);
    const old = new Date(Date.now() - 10 * 60_000);
    const stale = { ...sample.headers, "webhook-timestamp": String(Math.floor(old.getTime() / 1000)) } as unknown as Record<string, string>;
    expect(() => wh.verify(sample.body, { ...stale, "webhook-signature": wh.sign(String(sample.headers["webhook-id"]), old, sample.body) })).toThrow(/too old/);
    expect(() => wh.verify(sample.body, stale)).toThrow();

    // A replay sends the delivery again, same id and body, freshly signed.
    const target = a.find((d) => d.eventType === "offer.filled")!;
    const before = byId.get(target.eventId)!.length;
    const r = await post(s, `/webhooks/deliveries/${target.id}/replay`, {}, alice.token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.state).toBe("pending");
    await s.webhookDispatcher.runOnce();
    const again = rx.got.filter((g) => g.headers["webhook-id"] === target.eventId);
    expect(again.length).toBe(before + 1);
    expect(again[again.length - 1].body).toBe(again[0].body);
    expect(() => wh.verify(again[again.length - 1].body, again[again.length - 1].headers as Record<string, string>)).not.toThrow();
    expect((await get(s, `/webhooks/deliveries/${target.id}`, alice.token)).body).toMatchObject({ state: "delivered", replays: 1 });

    // A restart re-derives nothing new: the outbox is unique per endpoint and event.
    const n = (await s.db
      .selectFrom("webhook_deliveries" as never)
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirst()) as { n: number };
    await s.db.deleteFrom("webhook_scan" as never).execute();
    expect((await s.webhookDispatcher.runOnce()).enqueued).toBe(0);
    expect(
      Number(
        (
          (await s.db
            .selectFrom("webhook_deliveries" as never)
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirst()) as { n: number }
        ).n,
      ),
    ).toBe(Number(n.n));

    // Per-user isolation: Bob sees only his deliveries and cannot touch Alice's.
    expect((await deliveries(bob)).every((d) => d.endpointId === bobHook)).toBe(true);
    expect((await post(s, `/webhooks/deliveries/${target.id}/replay`, {}, bob.token)).status).toBe(404);
    expect((await get(s, `/webhooks/deliveries/${target.id}`, bob.token)).status).toBe(404);
    expect((await getJson(s, `/api/bets-usdc/offers/webhooks/${aliceHook}`, { method: "DELETE", token: bob.token })).status).toBe(404);
    expect((await post(s, `/webhooks/${aliceHook}/rotate-secret`, {}, bob.token)).status).toBe(404);
    expect((await get(s, "/webhooks", bob.token)).body.endpoints.map((e: { id: string }) => e.id)).toEqual([bobHook]);

    // Replays are limited per user: a burst of 3 (one used above), then 429 with Retry-After.
    expect((await post(s, `/webhooks/deliveries/${target.id}/replay`, {}, alice.token)).status).toBe(200);
    expect((await post(s, `/webhooks/deliveries/${target.id}/replay`, {}, alice.token)).status).toBe(200);
    const limited = await post(s, `/webhooks/deliveries/${target.id}/replay`, {}, alice.token);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  }, 120_000);

  it("an offer the worker closes at its expiry, before the contract's cutoff, is offer.closed with reason expired", async () => {
    rx.mode = "accept";
    const carol = await makeUser(s, 100n * UNIT);
    await register(carol, ["offer.closed"]);
    const k = await contract(s, 3_600n);
    const expiresAt = (await s.chain.gateway.now()) + 600n;
    const r = await post(s, "/", createBody(k, { expiresAt: new Date(Number(expiresAt) * 1000).toISOString() }), carol.token);
    expect(r.status, r.text).toBe(200);
    const offer = r.body.offerAddress as string;
    await eventually(async () => expect((await indexedRevision(offer))?.status).toBe("Open"));
    await s.chain.gateway.advance(expiresAt - (await s.chain.gateway.now()));
    await s.worker.drain();
    await eventually(async () => expect((await indexedRevision(offer))?.status).toBe("Closed"));
    // The contract then passes its cutoff and is voided before the event is read: the reason is the
    // close's own (at its expiry), not the contract's state at reading.
    await s.chain.gateway.advance(3_600n);
    await s.admin.resolveContract(k, "void");
    await eventually(async () =>
      expect((await s.db.selectFrom("contracts").select("status").where("address", "=", k.toBase58()).executeTakeFirst())?.status).toBe("Voided"),
    );
    const closed = await deliveredOf(carol, "offer.closed");
    expect(closed.payload.data).toMatchObject({ offer, reason: "expired" });
  });

  it("a refund the creator's closed token account cannot receive is claim.credited to the creator, with the exact amount, signed", async () => {
    rx.mode = "accept";
    // Dave's balance is exactly the offer's stake, so his token account is empty once it is posted.
    const stake = 8n * UNIT;
    const dave = await makeUser(s, stake);
    const hook = await register(dave, ["claim.credited"]);
    const k = await contract(s, 600n);
    const r = await post(s, "/", createBody(k, { creatorTotalMicros: String(stake) }), dave.token);
    expect(r.status, r.text).toBe(200);
    const offer = r.body.offerAddress as string;
    await eventually(async () => expect((await indexedRevision(offer))?.status).toBe("Open"));
    const gw = s.chain.gateway;
    const daveKey = await s.custody.signer(dave.user.id);
    await sendAndConfirm(gw, [createCloseAccountInstruction(dave.user.tokenAccount, daveKey.publicKey, daveKey.publicKey)], [s.chain.service, daveKey]);
    expect(await gw.getAccount(dave.user.tokenAccount)).toBeNull();
    // Past the cutoff the worker closes the untaken offer: the whole stake goes to Dave's claim.
    await gw.advance(601n);
    await s.worker.drain();
    await eventually(async () => expect((await indexedRevision(offer))?.status).toBe("Closed"));
    const credited = await deliveredOf(dave, "claim.credited");
    const wallet = dave.user.wallet.toBase58();
    expect(credited.payload).toMatchObject({ type: "claim.credited", role: "owner" });
    expect(credited.payload.data).toEqual({
      program: OFFERS_PROGRAM,
      owner: wallet,
      amountMicros: String(stake),
      totalMicros: String(stake),
      signature: credited.payload.signature,
    });
    const got = rx.got.filter((g) => g.headers["webhook-id"] === credited.eventId);
    expect(got.length).toBeGreaterThan(0);
    for (const g of got) expect(new Webhook(secrets.get(hook)!).verify(g.body, g.headers as Record<string, string>)).toMatchObject({ type: "claim.credited" });
  });

  it("refuses bad endpoints, other users and unscoped tokens; holds the endpoint limit; GraphQL serves the same", async () => {
    const u = await makeUser(s, 0n);
    const bad: unknown[] = [
      { url: "ftp://127.0.0.1/x", events: ["offer.taken"] },
      { url: "http://example.com/x", events: ["offer.taken"] },
      { url: "not a url", events: ["offer.taken"] },
      { url: rx.url, events: [] },
      { url: rx.url, events: ["offer.sold"] },
      { url: rx.url, events: ["offer.taken", "offer.taken"] },
      { url: rx.url },
      { url: rx.url, events: ["offer.taken"], extra: 1 },
      { url: "https://user:pw@example.com/x", events: ["offer.taken"] },
    ];
    for (const b of bad) expect((await post(s, "/webhooks", b, u.token)).status, JSON.stringify(b)).toBe(400);
    expect((await post(s, "/webhooks", { url: rx.url, events: ["offer.taken"] })).status).toBe(401);
    const { token: readOnly } = await s.custody.issueToken(u.user.id, { scopes: ["bet:read"], ttlSeconds: 600 });
    expect((await post(s, "/webhooks", { url: rx.url, events: ["offer.taken"] }, readOnly)).status).toBe(401);
    expect((await get(s, "/webhooks", readOnly)).status).toBe(200);

    const ids: string[] = [];
    for (let i = 0; i < limits.maxEndpointsPerUser; i++) ids.push((await post(s, "/webhooks", { url: rx.url, events: ["offer.closed"] }, u.token)).body.id);
    const over = await post(s, "/webhooks", { url: rx.url, events: ["offer.closed"] }, u.token);
    expect(over.status).toBe(409);
    expect(over.body.error).toMatch(/at most 3 webhook endpoints/);

    // Disable, change events, rotate, delete.
    const patched = await getJson(s, `/api/bets-usdc/offers/webhooks/${ids[0]}`, {
      method: "PATCH",
      token: u.token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ disabled: true, events: ["position.settled"] }),
    } as never);
    const listed = (await get(s, "/webhooks", u.token)).body.endpoints.find((e: { id: string }) => e.id === ids[0]);
    expect(patched.status === 200 ? listed : null).toMatchObject({ disabled: true, events: ["position.settled"] });
    const rotated = await post(s, `/webhooks/${ids[0]}/rotate-secret`, {}, u.token);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(JSON.stringify((await get(s, "/webhooks", u.token)).body)).not.toContain("whsec_");
    expect((await getJson(s, `/api/bets-usdc/offers/webhooks/${ids[0]}`, { method: "DELETE", token: u.token })).body).toEqual({ deleted: true, id: ids[0] });
    expect((await get(s, "/webhooks/deliveries?state=bogus", u.token)).status).toBe(400);
    expect((await get(s, "/webhooks/deliveries?limit=101", u.token)).status).toBe(400);

    // GraphQL: the same service.
    const q = await gql(s, "{ webhooks { id url events disabled } }", {}, u.token);
    expect(q.body.data.webhooks.map((e: { id: string }) => e.id)).toEqual(ids.slice(1));
    const m = await gql(
      s,
      "mutation($i: CreateWebhookInput!) { createWebhook(input: $i) { id secret events } }",
      { i: { url: "http://example.com/x", events: ["OFFER_TAKEN"] } },
      u.token,
    );
    expect(m.body.errors[0].extensions.code).toBe("BAD_REQUEST");
    expect((await gql(s, "{ webhookDeliveries { id } }", {}, null)).body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
  });

  it("production mode refuses http, loopback, private and link-local targets (SSRF)", () => {
    const prod = { allowLocalTargets: false, maxUrlLength: WEBHOOK_LIMITS.maxUrlLength };
    for (const url of [
      "https://127.0.0.1/x",
      "https://localhost/x",
      "https://10.1.2.3/x",
      "https://192.168.0.10/x",
      "https://172.20.0.1/x",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/x",
      "https://[fe80::1]/x",
      "https://[::ffff:10.0.0.1]/x",
      "http://127.0.0.1/x",
      "http://example.com/x",
    ])
      expect(() => checkWebhookUrl(url, prod), url).toThrow(/SSRF|https/);
    expect(checkWebhookUrl("https://hooks.example.com/in?x=1", prod)).toBe("https://hooks.example.com/in?x=1");
    expect(() => checkWebhookUrl("https://example.com/" + "a".repeat(2_100), prod)).toThrow(/at most 2048/);
  });
});
