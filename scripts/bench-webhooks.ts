/**
 * Webhook delivery on the local stack (SQLite store, a node:http receiver on loopback answering
 * 200): deliveries per second through the outbox (sign, POST, record the attempt and the state)
 * beside the bare baseline measured in the same run (the same POSTs with fetch, the same
 * concurrency per endpoint, no signing and no store), and the latency from a take being indexed
 * to its offer.taken arriving at the receiver with the dispatcher's loop running.
 *
 *   npx tsx scripts/bench-webhooks.ts [--n 2000] [--takes 20]
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { Command } from "commander";
import type { Kysely } from "kysely";
import { startLocalStack, OFFERS_BASE } from "../stack/local-stack";
import { workedExampleCreate } from "../harness/api-requests";
import { sizeOption } from "../stack/config/settings";
import { strictExit } from "../stack/config/cli";
import type { CustodyDatabase } from "../service/custody/schema";
import { WEBHOOK_LIMITS } from "../service/webhooks/limits";

process.env.LOG_LEVEL ??= "silent";

const o = strictExit(new Command().name("bench-webhooks"))
  .addOption(sizeOption("--n <n>", "deliveries through the outbox (and bare POSTs for the baseline)", 2_000))
  .addOption(sizeOption("--takes <n>", "takes whose indexing-to-arrival latency is measured", 20))
  .parse()
  .opts<{ n: number; takes: number }>();
const UNIT = 1_000_000n;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function main() {
  const arrivals = new Map<string, number>();
  let count = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      count++;
      const id = req.headers["webhook-id"];
      if (typeof id === "string" && !arrivals.has(id)) arrivals.set(id, performance.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  // One user makes every offer: no holdings cap or write rate in the way of the measurement.
  const s = await startLocalStack({
    webhookLimits: { allowLocalTargets: true, pollMs: 50 },
    walletLimits: { maxOpenOffers: 0, maxOpenPositions: 0, writeBurst: 0, writesPerHour: 0 },
  });
  const post = (path: string, body: unknown, token: string) =>
    fetch(`${s.url}${OFFERS_BASE}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));
  const user = async (name: string) => {
    const u = await s.admin.createUser(name, name);
    await s.admin.fund(name, 10_000n * UNIT);
    return { u, token: (await s.custody.issueToken(u.id, { scopes: ["bet:write"], ttlSeconds: 3600 })).token };
  };
  const [maker, taker] = [await user("maker"), await user("taker")];
  const hook = await post("/webhooks", { url, events: ["offer.taken"] }, maker.token);
  if (hook.status !== 200) throw new Error(JSON.stringify(hook.body));
  const db = s.db as unknown as Kysely<CustodyDatabase>;
  const payload = JSON.stringify({
    id: "evt_x",
    type: "offer.taken",
    timestamp: new Date().toISOString(),
    slot: 1,
    signature: "s".repeat(88),
    role: "creator",
    data: { offer: "o".repeat(44), takeMicros: "4000000" },
  });

  // 1. Bare baseline: the same number of POSTs, 4 at a time (the per-endpoint concurrency).
  const per = WEBHOOK_LIMITS.concurrencyPerEndpoint;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: per }, async () => {
      while (next < o.n) {
        next++;
        const r = await fetch(url, { method: "POST", body: payload, headers: { "content-type": "application/json" } });
        await r.body?.cancel();
      }
    }),
  );
  const bareS = (performance.now() - t0) / 1000;

  // 2. The outbox: n pending deliveries of one endpoint (a fill's signature that stays indexed), sent by the running loop.
  const contract = await s.admin.createContract({
    title: "bench",
    event: "bench",
    sport: "football",
    competition: "bench",
    startsAt: Number((await s.chain.gateway.now()) + 3_600n),
    cutoffAt: (await s.chain.gateway.now()) + 3_600n,
    resolutionDeadline: (await s.chain.gateway.now()) + 90_000n,
    sideALabel: "A",
    sideBLabel: "B",
    visuals: [],
  });
  const fillSignature = async (offer: string) => {
    for (;;) {
      const f = await s.db.selectFrom("fills").select(["signature"]).where("offer", "=", offer).executeTakeFirst();
      if (f) return f.signature;
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const created = await post("/", workedExampleCreate(contract, `bench-${randomUUID()}`), maker.token);
  const offer = created.body.offerAddress;
  while (!(await s.db.selectFrom("offers").select("revision").where("address", "=", offer).executeTakeFirst())) await new Promise((r) => setTimeout(r, 5));
  const t1 = await post(`/${offer}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "1", idempotencyKey: `bench-${randomUUID()}` }, taker.token);
  if (t1.status !== 200) throw new Error(JSON.stringify(t1.body));
  const sig = await fillSignature(offer);
  await s.webhookDispatcher.runOnce(); // the take's own event, out of the way
  const now = Date.now();
  const rows = Array.from({ length: o.n }, () => ({
    id: "whd_" + randomUUID().replaceAll("-", ""),
    endpoint_id: hook.body.id,
    user_id: maker.u.id,
    event_id: "evt_" + randomUUID().replaceAll("-", ""),
    event_type: "offer.taken",
    slot: 1,
    signature: sig,
    payload_json: payload,
    state: "pending",
    attempts: 0,
    next_attempt_ms: now,
    give_up_at_ms: now + 3_600_000,
    last_status: null,
    last_error: null,
    lease_until_ms: 0,
    replays: 0,
    created_at_ms: now,
    delivered_at_ms: null,
  }));
  for (let i = 0; i < rows.length; i += 200)
    await db
      .insertInto("webhook_deliveries")
      .values(rows.slice(i, i + 200))
      .execute();
  const before = count;
  const cpu0 = process.cpuUsage();
  const t2 = performance.now();
  s.webhookDispatcher.start(); // the loop: each finished attempt starts the next
  let last = [count, performance.now()];
  while (count - before < o.n) {
    await new Promise((r) => setTimeout(r, 2));
    if (count !== last[0]) last = [count, performance.now()];
    else if (performance.now() - last[1] > 15_000) {
      const states = await db
        .selectFrom("webhook_deliveries")
        .select(["state", "last_error"])
        .select((eb) => eb.fn.countAll().as("n"))
        .groupBy(["state", "last_error"])
        .execute();
      throw new Error(`no delivery for 15 s after ${count - before} of ${o.n}: ${JSON.stringify(states)}`);
    }
  }
  const outboxS = (performance.now() - t2) / 1000;
  const cpu = process.cpuUsage(cpu0);

  // 3. Indexing-to-arrival latency with the loop running (pollMs 50 here; 500 by default).
  const lat: number[] = [];
  for (let i = 0; i < o.takes; i++) {
    const c = await post("/", workedExampleCreate(contract, `bench-${randomUUID()}`), maker.token);
    if (c.status !== 200) throw new Error(`create: ${JSON.stringify(c.body)}`);
    const a = c.body.offerAddress;
    while (!(await s.db.selectFrom("offers").select("revision").where("address", "=", a).executeTakeFirst())) await new Promise((r) => setTimeout(r, 2));
    await post(`/${a}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "1", idempotencyKey: `bench-${randomUUID()}` }, taker.token);
    const fill = await fillSignature(a);
    const indexed = performance.now();
    let row: { event_id: string } | undefined;
    while (
      !(row = await db.selectFrom("webhook_deliveries").select("event_id").where("signature", "=", fill).where("state", "=", "delivered").executeTakeFirst())
    ) {
      await new Promise((r) => setTimeout(r, 1));
      if (performance.now() - indexed > 15_000) throw new Error(`take ${i}: not delivered 15 s after it was indexed`);
    }
    lat.push(arrivals.get(row.event_id)! - indexed);
  }
  await s.webhookDispatcher.stop();

  console.log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  console.log(`bare POST baseline:   ${o.n} POSTs, ${per} at a time: ${(o.n / bareS).toFixed(0)} /s`);
  console.log(
    `outbox deliveries:    ${o.n} deliveries, ${per} at a time: ${(o.n / outboxS).toFixed(0)} /s (${((o.n / outboxS / (o.n / bareS)) * 100).toFixed(0)}% of bare), ` +
      `CPU ${(((cpu.user + cpu.system) / 1000 / o.n) * 1000).toFixed(0)} us per delivery (whole process: receiver, store, dispatcher)`,
  );
  console.log(
    `indexed -> arrived:   ${lat.length} takes, pollMs 50: p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms`,
  );
  await s.stop();
  server.closeAllConnections();
  server.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
