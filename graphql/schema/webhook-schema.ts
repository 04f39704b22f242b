/**
 * Webhooks over GraphQL (issue #26), on the same service as REST (graphql/rest/webhook-routes.ts):
 *
 *   webhooks: [WebhookEndpoint!]!                               (any token of the caller)
 *   webhookDeliveries(endpoint, state, limit): [WebhookDelivery!]!
 *   createWebhook(input: CreateWebhookInput!): WebhookEndpointWithSecret!   (bet:write)
 *   updateWebhook(id: String!, input: UpdateWebhookInput!): WebhookEndpoint!
 *   deleteWebhook(id: String!): Boolean!
 *   rotateWebhookSecret(id: String!): WebhookEndpointWithSecret!
 *   replayWebhookDelivery(id: String!): WebhookDelivery!
 *
 * Fields as in docs/api-guide.md ("Webhooks"); a delivery's body is `payload`, the JSON text sent.
 */
import { apiGraphQLError, ApiError } from "../../service/api-error";
import type { Custody, Principal } from "../../service/custody/custody";
import { DELIVERY_STATES, type WebhookAttemptView, type WebhookDeliveryView, type WebhookEndpointView, type Webhooks } from "../../service/webhooks/endpoints";
import { WEBHOOK_EVENTS } from "../../service/webhooks/events";
import { authorize } from "../rest/webhook-routes";
import type { ApiBuilder, ReadContext } from "./builder";

export interface WebhookSchemaDeps {
  custody: Custody | null;
  webhooks: () => Webhooks | null;
}

type WithSecret = WebhookEndpointView & { secret: string };

export function addWebhookSchema(builder: ApiBuilder, d: WebhookSchemaDeps): void {
  const gql = (e: unknown) => apiGraphQLError(e, "temporarily unavailable; retry with backoff");
  const caller = async (ctx: ReadContext, write: boolean): Promise<[Principal, Webhooks]> => {
    const w = d.webhooks();
    if (!w || !d.custody) throw new ApiError(503, "webhooks are not configured");
    return [await authorize(d.custody, ctx.request.headers.get("authorization"), write), w];
  };
  const run =
    <A, T>(write: boolean, op: (p: Principal, w: Webhooks, a: A) => Promise<T>) =>
    async (_r: unknown, a: A, ctx: ReadContext): Promise<T> => {
      try {
        const [p, w] = await caller(ctx, write);
        return await op(p, w, a);
      } catch (e) {
        throw gql(e);
      }
    };

  const EventType = builder.enumType("WebhookEventType", {
    values: Object.fromEntries(WEBHOOK_EVENTS.map((e) => [e.replace(".", "_").toUpperCase(), { value: e }])) as Record<string, { value: string }>,
    description: "An event a webhook endpoint may receive (docs/api-guide.md, Webhooks).",
  });
  const State = builder.enumType("WebhookDeliveryState", {
    values: DELIVERY_STATES,
    description: "pending, delivered, failed (retries ran out) or retracted (a fork: never sent).",
  });
  // The same fields on both endpoint types (Pothos types a field builder per parent type).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const endpointFields = (t: any) => ({
    id: t.exposeString("id"),
    url: t.exposeString("url"),
    events: t.field({ type: [EventType], resolve: (e: WebhookEndpointView) => e.events as never }),
    disabled: t.exposeBoolean("disabled"),
    createdAt: t.exposeString("createdAt", { description: "ISO 8601 UTC." }),
    updatedAt: t.exposeString("updatedAt", { description: "ISO 8601 UTC." }),
  });
  const Endpoint = builder.objectRef<WebhookEndpointView>("WebhookEndpoint").implement({
    description: "A webhook endpoint of the caller (its secret is never read back).",
    fields: (t) => endpointFields(t),
  });
  const EndpointWithSecret = builder.objectRef<WithSecret>("WebhookEndpointWithSecret").implement({
    description: "An endpoint with its signing secret: answered by createWebhook and rotateWebhookSecret only.",
    fields: (t) => ({
      ...endpointFields(t),
      secret: t.exposeString("secret", { description: "whsec_ + base64 of 24 bytes (Standard Webhooks)." }),
    }),
  });
  const Attempt = builder.objectRef<WebhookAttemptView>("WebhookAttempt").implement({
    fields: (t) => ({
      attempt: t.exposeInt("attempt"),
      at: t.exposeString("at"),
      status: t.exposeInt("status", { nullable: true, description: "The receiver's HTTP status; null: no answer." }),
      error: t.exposeString("error", { nullable: true }),
      durationMs: t.exposeInt("durationMs"),
    }),
  });
  const Delivery = builder.objectRef<WebhookDeliveryView>("WebhookDelivery").implement({
    description: "One event for one endpoint, with its attempts.",
    fields: (t) => ({
      id: t.exposeString("id"),
      endpointId: t.exposeString("endpointId"),
      eventId: t.exposeString("eventId", { description: "The webhook-id header: the same for every attempt and replay." }),
      eventType: t.field({ type: EventType, resolve: (x) => x.eventType as never }),
      state: t.field({ type: State, resolve: (x) => x.state as never }),
      attempts: t.exposeInt("attempts"),
      lastStatus: t.exposeInt("lastStatus", { nullable: true }),
      lastError: t.exposeString("lastError", { nullable: true }),
      nextAttemptAt: t.exposeString("nextAttemptAt", { nullable: true }),
      giveUpAt: t.exposeString("giveUpAt", { nullable: true }),
      replays: t.exposeInt("replays"),
      slot: t.exposeInt("slot"),
      signature: t.exposeString("signature"),
      createdAt: t.exposeString("createdAt"),
      deliveredAt: t.exposeString("deliveredAt", { nullable: true }),
      payload: t.string({ description: "The body as sent (JSON text).", resolve: (x) => JSON.stringify(x.payload) }),
      attemptLog: t.field({ type: [Attempt], description: "The last attempts, newest first (at most 10).", resolve: (x) => x.attemptLog }),
    }),
  });

  builder.queryField("webhooks", (t) =>
    t.field({
      type: [Endpoint],
      description: "The caller's webhook endpoints (needs a token).",
      resolve: run(false, (p, w) => w.list(p)),
    }),
  );
  builder.queryField("webhookDeliveries", (t) =>
    t.field({
      type: [Delivery],
      description: "The caller's webhook deliveries, newest first (needs a token).",
      args: {
        endpoint: t.arg.string({ required: false, description: "Only this endpoint's." }),
        state: t.arg({ type: State, required: false }),
        limit: t.arg.int({ required: false, description: "At most 100, default 50." }),
      },
      resolve: run(false, (p, w, a: { endpoint?: string | null; state?: string | null; limit?: number | null }) =>
        w.deliveries(p, Object.fromEntries(Object.entries(a).filter(([, v]) => v !== null && v !== undefined))),
      ),
    }),
  );

  const CreateInput = builder.inputType("CreateWebhookInput", {
    fields: (t) => ({
      url: t.string({ required: true, description: "https:// URL the events are POSTed to (a public address)." }),
      events: t.field({ type: [EventType], required: true, description: "The events to receive, each once." }),
    }),
  });
  const UpdateInput = builder.inputType("UpdateWebhookInput", {
    fields: (t) => ({
      events: t.field({ type: [EventType], required: false, description: "The events to receive from now on." }),
      disabled: t.boolean({ required: false, description: "true: nothing is sent; false: sent again." }),
    }),
  });
  const clean = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));
  builder.mutationField("createWebhook", (t) =>
    t.field({
      type: EndpointWithSecret,
      description: "Register a webhook endpoint (token with bet:write); the secret is answered only here.",
      args: { input: t.arg({ type: CreateInput, required: true, description: "The URL and the events." }) },
      resolve: run(true, (p, w, a: { input: Record<string, unknown> }) => w.create(p, clean(a.input))),
    }),
  );
  builder.mutationField("updateWebhook", (t) =>
    t.field({
      type: Endpoint,
      description: "Change an endpoint's events, or disable / enable it (token with bet:write).",
      args: {
        id: t.arg.string({ required: true, description: "The endpoint's id." }),
        input: t.arg({ type: UpdateInput, required: true, description: "The events and/or disabled." }),
      },
      resolve: run(true, (p, w, a: { id: string; input: Record<string, unknown> }) => w.update(p, a.id, clean(a.input))),
    }),
  );
  builder.mutationField("deleteWebhook", (t) =>
    t.boolean({
      description: "Delete an endpoint with its deliveries (token with bet:write).",
      args: { id: t.arg.string({ required: true, description: "The endpoint's id." }) },
      resolve: run(true, async (p, w, a: { id: string }) => (await w.remove(p, a.id)).deleted),
    }),
  );
  builder.mutationField("rotateWebhookSecret", (t) =>
    t.field({
      type: EndpointWithSecret,
      description: "A new signing secret, answered once (token with bet:write).",
      args: { id: t.arg.string({ required: true, description: "The endpoint's id." }) },
      resolve: run(true, (p, w, a: { id: string }) => w.rotateSecret(p, a.id)),
    }),
  );
  builder.mutationField("replayWebhookDelivery", (t) =>
    t.field({
      type: Delivery,
      description: "Send a delivery again with the same event id (token with bet:write; 30 a minute).",
      args: { id: t.arg.string({ required: true, description: "The delivery's id." }) },
      resolve: run(true, (p, w, a: { id: string }) => w.replay(p, a.id)),
    }),
  );
}
