/**
 * The webhooks' outbox and its sender, run by the acting settlement worker only (it starts and
 * stops with SettlementWorker.start / stop, which the worker role's leadership calls), every
 * `pollMs`:
 *
 * 1. Derive: the indexed transaction events (./events.ts) of slots up to the final slot, for the
 *    endpoints that want them, into `webhook_deliveries` (unique per endpoint and event id, so a
 *    rescan inserts nothing twice). The scan re-reads RESCAN_SLOTS below its cursor each time, so
 *    a row the indexer adds late below the cursor (a gap check's find) is still derived.
 * 2. Send what is due, at most `concurrencyPerEndpoint` per endpoint and `concurrencyTotal` in all,
 *    each signed per Standard Webhooks (`webhook-id` = the event id, `webhook-timestamp`,
 *    `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`, the `standardwebhooks`
 *    package) with a `timeoutMs` limit. A 2xx answer delivers it; anything else (status, no
 *    answer, timeout, a refused target) is recorded as an attempt and retried after
 *    firstRetryMs * 2^(attempts-1), at most maxRetryDelayMs, times a jitter in [0.5, 1), until
 *    `retryForMs` after it was enqueued (then "failed"; a replay starts again).
 *
 * Finality: a delivery is derived only once its slot is `finalitySlots` behind the indexed head
 * (0 on the in-process chain, which has no forks; RPC_FINALITY_SLOTS against a node, ./limits.ts),
 * and before each attempt the transaction is looked up in the store again: a fork's retraction
 * deletes its rows, and the delivery is then recorded "retracted" and never sent.
 *
 * At least once: the row is the truth, written before any send and updated after; a worker that
 * dies mid-send leaves the row pending (its lease runs out after timeoutMs + LEASE_SLACK_MS) and
 * the next acting worker sends it again with the same event id.
 */
import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import type { Kysely } from "kysely";
import type { Database } from "../../indexer/store/schema";
import type { WebhookDeliveriesTable } from "../custody/schema";
import { deriveEvents, stillIndexed, type DerivedEvent } from "./events";
import { indexedHead, type WebhookDb, type Webhooks } from "./endpoints";
import { refusedTarget } from "./url-policy";

/** Slots below the scan's cursor read again each scan (the RPC source's fork margin). */
export const RESCAN_SLOTS = 64;
/** What a lease adds to the attempt's timeout before another worker may take the delivery. */
export const LEASE_SLACK_MS = 10_000;
const SCAN_SOURCE = "webhooks";

export interface DispatchReport {
  enqueued: number;
  attempted: number;
  delivered: number;
  failed: number;
  retracted: number;
}

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  private tick: Promise<unknown> | null = null;
  /** The round of sends under way, and whether another was asked for meanwhile (rounds never overlap). */
  private pumping: Promise<void> | null = null;
  private again = false;
  private report: DispatchReport = { enqueued: 0, attempted: 0, delivered: 0, failed: 0, retracted: 0 };

  constructor(
    readonly hooks: Webhooks,
    private readonly o: {
      clockMs?: () => number;
      log?: (msg: string, extra?: Record<string, unknown>) => void;
      /** Called after each attempt (tests, metrics). */
      onAttempt?: (a: { deliveryId: string; eventId: string; status: number | null; error: string | null }) => void;
    } = {},
  ) {}

  private get db(): WebhookDb {
    return this.hooks.db;
  }
  private get limits() {
    return this.hooks.limits;
  }
  private now(): number {
    return Math.floor((this.o.clockMs ?? Date.now)());
  }

  start(): void {
    if (this.timer) return;
    const loop = () => {
      this.tick = this.step()
        .catch((e) => this.o.log?.("webhooks: pass failed", { error: String((e as Error)?.message ?? e) }))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(loop, this.limits.pollMs);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  /** Stops the loop and waits for the attempts in flight (their outcome is recorded). */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.tick;
    await Promise.allSettled(this.inFlight.values());
  }

  /** One derive and one round of sends, waiting for them: what tests and the operator's drain call. */
  async runOnce(): Promise<DispatchReport> {
    this.report = { enqueued: 0, attempted: 0, delivered: 0, failed: 0, retracted: 0 };
    await this.step();
    await Promise.allSettled(this.inFlight.values());
    return this.report;
  }

  private async step(): Promise<void> {
    this.report.enqueued += await this.derive();
    await this.pump();
  }

  /**
   * One round of sends at a time: a round asked for while one runs runs right after it. Each
   * finished attempt asks for one while the loop runs, so an endpoint's backlog moves at the pace
   * of its receiver, not of `pollMs`.
   */
  private pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = this.sendDue()
      .catch((e) => this.o.log?.("webhooks: sending failed", { error: String((e as Error)?.message ?? e) }))
      .finally(() => {
        this.pumping = null;
        if (this.again) {
          this.again = false;
          void this.pump();
        }
      });
    return this.pumping;
  }

  /** Derives the final events not derived yet into the outbox; the number of deliveries inserted. */
  async derive(): Promise<number> {
    const head = await indexedHead(this.db);
    const final = head - this.limits.finalitySlots;
    const cursor = await this.db.selectFrom("webhook_scan").select("slot").where("source", "=", SCAN_SOURCE).executeTakeFirst();
    const endpoints = await this.db
      .selectFrom("webhook_endpoints")
      .innerJoin("users", "users.id", "webhook_endpoints.user_id")
      .select(["webhook_endpoints.id", "webhook_endpoints.user_id", "webhook_endpoints.events", "webhook_endpoints.from_slot", "users.wallet"])
      .where("webhook_endpoints.disabled", "=", 0)
      .execute();
    let inserted = 0;
    if (endpoints.length > 0) {
      // An endpoint gets the events of its registration's slot on (deriveEvents reads slots above `lo`).
      const minFrom = Math.min(...endpoints.map((e) => Number(e.from_slot))) - 1;
      const lo = Math.max(minFrom, cursor ? Number(cursor.slot) - RESCAN_SLOTS : minFrom);
      const events = await deriveEvents(this.db as unknown as Kysely<Database>, lo, final);
      const byWallet = new Map<string, typeof endpoints>();
      for (const e of endpoints) byWallet.set(e.wallet, [...(byWallet.get(e.wallet) ?? []), e]);
      const now = this.now();
      for (const ev of events)
        for (const ep of byWallet.get(ev.wallet) ?? []) {
          if (ev.slot < Number(ep.from_slot) || !ep.events.split(" ").includes(ev.type)) continue;
          inserted += await this.enqueue(ep.id, ep.user_id, ev, now);
        }
    }
    const at = Math.max(final, Number(cursor?.slot ?? 0));
    await this.db
      .insertInto("webhook_scan")
      .values({ source: SCAN_SOURCE, slot: at })
      .onConflict((oc) => oc.column("source").doUpdateSet({ slot: at }))
      .execute();
    return inserted;
  }

  private async enqueue(endpointId: string, userId: string, ev: DerivedEvent, now: number): Promise<number> {
    const payload = JSON.stringify({
      id: ev.id,
      type: ev.type,
      timestamp: new Date(ev.at * 1000).toISOString(),
      slot: ev.slot,
      signature: ev.signature,
      role: ev.role,
      data: ev.data,
    });
    const tooBig = Buffer.byteLength(payload) > this.limits.maxBodyBytes;
    const r = await this.db
      .insertInto("webhook_deliveries")
      .values({
        id: "whd_" + randomUUID().replaceAll("-", ""),
        endpoint_id: endpointId,
        user_id: userId,
        event_id: ev.id,
        event_type: ev.type,
        slot: ev.slot,
        signature: ev.signature,
        payload_json: payload,
        state: tooBig ? "failed" : "pending",
        attempts: 0,
        next_attempt_ms: now,
        give_up_at_ms: now + this.limits.retryForMs,
        last_status: null,
        last_error: tooBig ? `the body is over ${this.limits.maxBodyBytes} bytes` : null,
        lease_until_ms: 0,
        replays: 0,
        created_at_ms: now,
        delivered_at_ms: null,
      })
      .onConflict((oc) => oc.columns(["endpoint_id", "event_id"]).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n);
  }

  /** Starts the due attempts the concurrency limits allow (without waiting for them). */
  private async sendDue(): Promise<void> {
    const room = this.limits.concurrencyTotal - this.inFlight.size;
    if (room <= 0) return;
    const now = this.now();
    // Narrow rows first (which deliveries), endpoints already at their concurrency left out; the
    // bodies only of those leased.
    const full = [...this.perEndpoint].filter(([, n]) => n >= this.limits.concurrencyPerEndpoint).map(([id]) => id);
    let q = this.db
      .selectFrom("webhook_deliveries as d")
      .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
      .select(["d.id", "d.endpoint_id"])
      .where("d.state", "=", "pending")
      .where("d.next_attempt_ms", "<=", now)
      .where("d.lease_until_ms", "<=", now)
      .where("e.disabled", "=", 0);
    if (full.length > 0) q = q.where("d.endpoint_id", "not in", full);
    const due = await q.orderBy("d.next_attempt_ms").orderBy("d.id").limit(room).execute();
    const leased: string[] = [];
    for (const d of due) {
      if (this.inFlight.has(d.id) || (this.perEndpoint.get(d.endpoint_id) ?? 0) >= this.limits.concurrencyPerEndpoint) continue;
      const lease = await this.db
        .updateTable("webhook_deliveries")
        .set({ lease_until_ms: now + this.limits.timeoutMs + LEASE_SLACK_MS })
        .where("id", "=", d.id)
        .where("state", "=", "pending")
        .where("lease_until_ms", "<=", now)
        .executeTakeFirst();
      if (Number(lease.numUpdatedRows) === 0) continue;
      this.perEndpoint.set(d.endpoint_id, (this.perEndpoint.get(d.endpoint_id) ?? 0) + 1);
      leased.push(d.id);
    }
    if (leased.length === 0) return;
    const rows = await this.db
      .selectFrom("webhook_deliveries as d")
      .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
      .selectAll("d")
      .select(["e.url", "e.secret_enc"])
      .where("d.id", "in", leased)
      .execute();
    // A delivery leased but gone meanwhile (its endpoint deleted) frees its place.
    for (const d of due.filter((x) => leased.includes(x.id) && !rows.some((r) => r.id === x.id))) {
      const n = (this.perEndpoint.get(d.endpoint_id) ?? 1) - 1;
      if (n <= 0) this.perEndpoint.delete(d.endpoint_id);
      else this.perEndpoint.set(d.endpoint_id, n);
    }
    for (const d of rows) {
      const p = this.attempt(d, d.url, d.secret_enc)
        .catch((e) => this.o.log?.("webhooks: attempt failed", { delivery: d.id, error: String((e as Error)?.message ?? e) }))
        .finally(() => {
          this.inFlight.delete(d.id);
          const n = (this.perEndpoint.get(d.endpoint_id) ?? 1) - 1;
          if (n <= 0) this.perEndpoint.delete(d.endpoint_id);
          else this.perEndpoint.set(d.endpoint_id, n);
          if (this.timer) void this.pump();
        });
      this.inFlight.set(d.id, p);
    }
  }

  private async attempt(d: WebhookDeliveriesTable, url: string, secretEnc: string): Promise<void> {
    if (!(await stillIndexed(this.db as unknown as Kysely<Database>, d.event_type, d.signature))) {
      await this.db
        .updateTable("webhook_deliveries")
        .set({ state: "retracted", last_error: "the transaction was retracted by a fork: never sent", lease_until_ms: 0 })
        .where("id", "=", d.id)
        .execute();
      this.report.retracted++;
      return;
    }
    const started = this.now();
    const attempt = Number(d.attempts) + 1;
    let status: number | null = null;
    let error: string | null = null;
    const refused = await refusedTarget(url, this.limits.allowLocalTargets);
    if (refused) error = refused;
    else {
      const secret = this.hooks.openSecret(d.endpoint_id, secretEnc);
      const at = new Date(started);
      const signature = new Webhook(secret).sign(d.event_id, at, d.payload_json);
      try {
        const res = await fetch(url, {
          method: "POST",
          body: d.payload_json,
          redirect: "manual",
          signal: AbortSignal.timeout(this.limits.timeoutMs),
          headers: {
            "content-type": "application/json",
            "user-agent": "offers-webhooks/1",
            "webhook-id": d.event_id,
            "webhook-timestamp": String(Math.floor(started / 1000)),
            "webhook-signature": signature,
          },
        });
        status = res.status;
        await res.body?.cancel().catch(() => {});
        if (status < 200 || status > 299) error = `answered ${status}`;
      } catch (e) {
        const err = e as Error & { cause?: { code?: string; message?: string } };
        error =
          err.name === "TimeoutError" ? `no answer within ${this.limits.timeoutMs} ms` : (err.cause?.code ?? err.cause?.message ?? err.message).slice(0, 300);
      }
    }
    const end = this.now();
    this.report.attempted++;
    await this.db
      .insertInto("webhook_attempts")
      .values({ delivery_id: d.id, attempt, at_ms: started, status, error, duration_ms: Math.max(0, end - started) })
      .onConflict((oc) => oc.columns(["delivery_id", "attempt"]).doNothing())
      .execute();
    if (error === null) {
      this.report.delivered++;
      await this.db
        .updateTable("webhook_deliveries")
        .set({ state: "delivered", attempts: attempt, last_status: status, last_error: null, delivered_at_ms: end, lease_until_ms: 0 })
        .where("id", "=", d.id)
        .execute();
    } else {
      const delay = Math.min(this.limits.firstRetryMs * 2 ** (attempt - 1), this.limits.maxRetryDelayMs) * (0.5 + Math.random() / 2);
      const next = end + Math.ceil(delay);
      const giveUp = next > Number(d.give_up_at_ms);
      if (giveUp) this.report.failed++;
      await this.db
        .updateTable("webhook_deliveries")
        .set({ state: giveUp ? "failed" : "pending", attempts: attempt, last_status: status, last_error: error, next_attempt_ms: next, lease_until_ms: 0 })
        .where("id", "=", d.id)
        .execute();
    }
    this.o.onAttempt?.({ deliveryId: d.id, eventId: d.event_id, status, error });
  }
}
