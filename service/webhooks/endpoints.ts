/**
 * Webhooks as a user manages them (issue #26), one service for REST (graphql/rest/webhook-routes.ts)
 * and GraphQL (graphql/schema/webhook-schema.ts): register an endpoint (URL and the events wanted;
 * its signing secret is answered once), list, change (events, disable), delete, rotate the secret,
 * list the deliveries with their attempts, replay one. A user sees and touches only their own
 * endpoints and deliveries: every query is conditioned on the caller's user id, and another's id
 * answers 404 like an unknown one.
 *
 * The secret (`whsec_` + base64 of 24 random bytes, the Standard Webhooks form) is sealed under the
 * service key with the endpoint id as associated data (like the custodial wallets); the service
 * key's rotation re-seals it (service/custody/key-rotation.ts).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { z } from "zod";
import type { Kysely } from "kysely";
import type { CustodyDatabase, WebhookDeliveriesTable, WebhookEndpointsTable } from "../custody/schema";
import type { Database } from "../../indexer/store/schema";
import type { Principal } from "../custody/custody";
import type { ServiceKey } from "../custody/crypto";
import { ApiError } from "../api-error";
import { takeFromBucket } from "../rate/gcra";
import { WEBHOOK_EVENTS } from "./events";
import { WEBHOOK_LIMITS, type WebhookLimits } from "./limits";
import { checkWebhookUrl } from "./url-policy";

export type WebhookDb = Kysely<CustodyDatabase & Database>;

export const DELIVERY_STATES = ["pending", "delivered", "failed", "retracted"] as const;

const events = z
  .array(z.enum(WEBHOOK_EVENTS, { error: `events: each one of ${WEBHOOK_EVENTS.join(", ")}` }))
  .min(1, { message: "events: at least one event" })
  .max(WEBHOOK_EVENTS.length)
  .refine((a) => new Set(a).size === a.length, { message: "events: each event once" })
  .describe(`The events to receive: ${WEBHOOK_EVENTS.join(", ")}`);

export const CreateWebhookBody = z
  .object({
    url: z.string().describe("https:// URL the events are POSTed to (a public address)"),
    events,
  })
  .strict();

export const UpdateWebhookBody = z
  .object({
    events: events.optional(),
    disabled: z.boolean().optional().describe("true: nothing new is sent (deliveries already queued wait); false: sent again"),
  })
  .strict()
  .refine((b) => b.events !== undefined || b.disabled !== undefined, { message: "give events or disabled" });

export const DeliveriesQuery = z
  .object({
    endpoint: z.string().max(64).optional().describe("only this endpoint's deliveries"),
    state: z.enum(DELIVERY_STATES).optional(),
    limit: z.coerce.number().int().min(1).max(WEBHOOK_LIMITS.maxListed).optional().describe(`at most ${WEBHOOK_LIMITS.maxListed}, default 50`),
  })
  .strict();

export interface WebhookEndpointView {
  id: string;
  url: string;
  events: string[];
  disabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookAttemptView {
  attempt: number;
  at: string;
  status: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookDeliveryView {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  state: (typeof DELIVERY_STATES)[number];
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  /** When the next attempt is due (pending only). */
  nextAttemptAt: string | null;
  /** When retries stop (pending only). */
  giveUpAt: string | null;
  replays: number;
  slot: number;
  signature: string;
  createdAt: string;
  deliveredAt: string | null;
  /** The body as sent (JSON). */
  payload: unknown;
  /** The last attempts, newest first (at most 10). */
  attemptLog: WebhookAttemptView[];
}

const iso = (ms: number | string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
const parse = <T>(schema: z.ZodType<T>, body: unknown): T => {
  const r = schema.safeParse(body);
  if (!r.success) throw new ApiError(400, r.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ` : "") + i.message).join("; "));
  return r.data;
};

export const newSecret = () => "whsec_" + randomBytes(24).toString("base64");

export function endpointView(r: WebhookEndpointsTable): WebhookEndpointView {
  return {
    id: r.id,
    url: r.url,
    events: r.events.split(" "),
    disabled: Number(r.disabled) === 1,
    createdAt: iso(r.created_at_ms)!,
    updatedAt: iso(r.updated_at_ms)!,
  };
}

/** The indexed head: the highest slot any indexer source applied. */
export async function indexedHead(db: WebhookDb): Promise<number> {
  const r = await db
    .selectFrom("checkpoints")
    .select((eb) => eb.fn.max<number>("slot").as("slot"))
    .executeTakeFirst();
  return Number(r?.slot ?? 0);
}

export class Webhooks {
  constructor(
    readonly db: WebhookDb,
    private readonly key: ServiceKey,
    readonly limits: WebhookLimits = WEBHOOK_LIMITS,
    private readonly clockMs: () => number = Date.now,
  ) {}

  sealSecret(id: string, secret: string): string {
    return this.key.seal(Buffer.from(secret, "utf8"), `webhook:${id}`);
  }

  openSecret(id: string, sealed: string): string {
    return this.key.open(sealed, `webhook:${id}`).toString("utf8");
  }

  private async own(p: Principal, id: string): Promise<WebhookEndpointsTable> {
    const r = await this.db.selectFrom("webhook_endpoints").selectAll().where("id", "=", id).where("user_id", "=", p.user.id).executeTakeFirst();
    if (!r) throw new ApiError(404, `no webhook endpoint ${id}`);
    return r;
  }

  /** Registers an endpoint; the secret is in this answer only. */
  async create(p: Principal, body: unknown): Promise<WebhookEndpointView & { secret: string }> {
    const b = parse(CreateWebhookBody, body);
    const url = checkWebhookUrl(b.url, this.limits);
    const now = Math.floor(this.clockMs());
    const id = "whep_" + randomUUID().replaceAll("-", "");
    const secret = newSecret();
    const row: WebhookEndpointsTable = {
      id,
      user_id: p.user.id,
      url,
      events: b.events.join(" "),
      secret_enc: this.sealSecret(id, secret),
      disabled: 0,
      from_slot: await indexedHead(this.db),
      created_at_ms: now,
      updated_at_ms: now,
    };
    // The count and the insert in one transaction: two creates at once cannot both pass the limit on SQLite; on
    // PostgreSQL two concurrent creates may at worst hold one more than the limit until one is deleted.
    await this.db.transaction().execute(async (trx) => {
      const n = await trx
        .selectFrom("webhook_endpoints")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("user_id", "=", p.user.id)
        .executeTakeFirst();
      if (Number(n?.n ?? 0) >= this.limits.maxEndpointsPerUser)
        throw new ApiError(409, `at most ${this.limits.maxEndpointsPerUser} webhook endpoints per user; delete one first`);
      await trx.insertInto("webhook_endpoints").values(row).execute();
    });
    return { ...endpointView(row), secret };
  }

  async list(p: Principal): Promise<WebhookEndpointView[]> {
    const rows = await this.db.selectFrom("webhook_endpoints").selectAll().where("user_id", "=", p.user.id).orderBy("created_at_ms").orderBy("id").execute();
    return rows.map(endpointView);
  }

  async update(p: Principal, id: string, body: unknown): Promise<WebhookEndpointView> {
    const b = parse(UpdateWebhookBody, body);
    await this.own(p, id);
    await this.db
      .updateTable("webhook_endpoints")
      .set({
        ...(b.events ? { events: b.events.join(" ") } : {}),
        ...(b.disabled !== undefined ? { disabled: b.disabled ? 1 : 0 } : {}),
        updated_at_ms: Math.floor(this.clockMs()),
      })
      .where("id", "=", id)
      .where("user_id", "=", p.user.id)
      .execute();
    return endpointView(await this.own(p, id));
  }

  /** Deletes the endpoint with its deliveries and their attempts. */
  async remove(p: Principal, id: string): Promise<{ deleted: true; id: string }> {
    await this.own(p, id);
    await this.db.transaction().execute(async (trx) => {
      const ids = trx.selectFrom("webhook_deliveries").select("id").where("endpoint_id", "=", id);
      await trx.deleteFrom("webhook_attempts").where("delivery_id", "in", ids).execute();
      await trx.deleteFrom("webhook_deliveries").where("endpoint_id", "=", id).execute();
      await trx.deleteFrom("webhook_endpoints").where("id", "=", id).where("user_id", "=", p.user.id).execute();
    });
    return { deleted: true, id };
  }

  /** A new secret, answered once; every later attempt (retries included) is signed with it. */
  async rotateSecret(p: Principal, id: string): Promise<WebhookEndpointView & { secret: string }> {
    await this.own(p, id);
    const secret = newSecret();
    await this.db
      .updateTable("webhook_endpoints")
      .set({ secret_enc: this.sealSecret(id, secret), updated_at_ms: Math.floor(this.clockMs()) })
      .where("id", "=", id)
      .where("user_id", "=", p.user.id)
      .execute();
    return { ...endpointView(await this.own(p, id)), secret };
  }

  async deliveries(p: Principal, query: unknown): Promise<WebhookDeliveryView[]> {
    const q = parse(DeliveriesQuery, query);
    let s = this.db.selectFrom("webhook_deliveries").selectAll().where("user_id", "=", p.user.id);
    if (q.endpoint) s = s.where("endpoint_id", "=", q.endpoint);
    if (q.state) s = s.where("state", "=", q.state);
    const rows = await s
      .orderBy("created_at_ms", "desc")
      .orderBy("id", "desc")
      .limit(q.limit ?? 50)
      .execute();
    return Promise.all(rows.map((r) => this.deliveryView(r)));
  }

  async delivery(p: Principal, id: string): Promise<WebhookDeliveryView> {
    const r = await this.db.selectFrom("webhook_deliveries").selectAll().where("id", "=", id).where("user_id", "=", p.user.id).executeTakeFirst();
    if (!r) throw new ApiError(404, `no webhook delivery ${id}`);
    return this.deliveryView(r);
  }

  /**
   * Sends a delivery again (delivered, failed or pending: due now, retried for `retryForMs` again),
   * with the same event id and body; a retracted one is refused (409). Limited per user
   * (`replayBurst`, then `replaysPerMinute`: 429 with Retry-After).
   */
  async replay(p: Principal, id: string): Promise<WebhookDeliveryView> {
    const r = await this.db.selectFrom("webhook_deliveries").selectAll().where("id", "=", id).where("user_id", "=", p.user.id).executeTakeFirst();
    if (!r) throw new ApiError(404, `no webhook delivery ${id}`);
    if (r.state === "retracted") throw new ApiError(409, "the event's transaction was retracted by a fork: it is never sent");
    const now = Math.floor(this.clockMs());
    const wait = await takeFromBucket(
      this.db as Kysely<unknown>,
      { table: "request_rate", keyColumn: "key", key: `webhook-replay:${p.user.id}` },
      this.limits.replayBurst,
      Math.ceil(60_000 / this.limits.replaysPerMinute),
      now,
    );
    if (wait > 0) throw new ApiError(429, `at most ${this.limits.replaysPerMinute} webhook replays per minute`, Math.max(1, Math.ceil(wait / 1000)));
    await this.db
      .updateTable("webhook_deliveries")
      .set((eb) => ({ state: "pending", next_attempt_ms: now, give_up_at_ms: now + this.limits.retryForMs, replays: eb("replays", "+", 1), lease_until_ms: 0 }))
      .where("id", "=", id)
      .where("user_id", "=", p.user.id)
      .execute();
    return this.delivery(p, id);
  }

  private async deliveryView(r: WebhookDeliveriesTable): Promise<WebhookDeliveryView> {
    const attempts = await this.db.selectFrom("webhook_attempts").selectAll().where("delivery_id", "=", r.id).orderBy("attempt", "desc").limit(10).execute();
    const pending = r.state === "pending";
    return {
      id: r.id,
      endpointId: r.endpoint_id,
      eventId: r.event_id,
      eventType: r.event_type,
      state: r.state as WebhookDeliveryView["state"],
      attempts: Number(r.attempts),
      lastStatus: r.last_status === null ? null : Number(r.last_status),
      lastError: r.last_error,
      nextAttemptAt: pending ? iso(r.next_attempt_ms) : null,
      giveUpAt: pending ? iso(r.give_up_at_ms) : null,
      replays: Number(r.replays),
      slot: Number(r.slot),
      signature: r.signature,
      createdAt: iso(r.created_at_ms)!,
      deliveredAt: iso(r.delivered_at_ms),
      payload: JSON.parse(r.payload_json) as unknown,
      attemptLog: attempts.map((a) => ({
        attempt: Number(a.attempt),
        at: iso(a.at_ms)!,
        status: a.status === null ? null : Number(a.status),
        error: a.error,
        durationMs: Number(a.duration_ms),
      })),
    };
  }
}
