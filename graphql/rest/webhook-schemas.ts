/**
 * Response bodies of ./webhook-routes.ts as zod schemas, for the OpenAPI document. The fields and
 * every event's payload are defined in docs/api-guide.md ("Webhooks").
 */
import { z } from "@hono/zod-openapi";
import { WEBHOOK_EVENTS } from "../../service/webhooks/events";
import { DELIVERY_STATES } from "../../service/webhooks/endpoints";

const timestamp = () => z.string().meta({ format: "date-time", description: "ISO 8601 UTC" });

export const WebhookEndpointAnswer = z
  .object({
    id: z.string().meta({ description: "whep_ followed by 32 hex characters" }),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    disabled: z.boolean(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .meta({ id: "WebhookEndpoint" });

export const WebhookEndpointWithSecret = WebhookEndpointAnswer.extend({
  secret: z.string().meta({ description: "whsec_ + base64 of 24 bytes: the signing secret, answered only here" }),
}).meta({ id: "WebhookEndpointWithSecret" });

export const WebhookEndpointList = z.object({ endpoints: z.array(WebhookEndpointAnswer) }).meta({ id: "WebhookEndpointList" });

export const WebhookDeleted = z.object({ deleted: z.literal(true), id: z.string() }).meta({ id: "WebhookDeleted" });

export const WebhookDeliveryAnswer = z
  .object({
    id: z.string().meta({ description: "whd_ followed by 32 hex characters" }),
    endpointId: z.string(),
    eventId: z.string().meta({ description: "the webhook-id header: the same for every attempt and replay of the event" }),
    eventType: z.enum(WEBHOOK_EVENTS),
    state: z.enum(DELIVERY_STATES),
    attempts: z.number().int(),
    lastStatus: z.number().int().nullable().meta({ description: "the receiver's last HTTP status; null: no answer" }),
    lastError: z.string().nullable(),
    nextAttemptAt: timestamp().nullable().meta({ description: "pending only" }),
    giveUpAt: timestamp().nullable().meta({ description: "pending only: retries stop then" }),
    replays: z.number().int(),
    slot: z.number().int(),
    signature: z.string().meta({ description: "the transaction the event comes from" }),
    createdAt: timestamp(),
    deliveredAt: timestamp().nullable(),
    payload: z.record(z.string(), z.unknown()).meta({ description: "the body as sent" }),
    attemptLog: z.array(
      z
        .object({
          attempt: z.number().int(),
          at: timestamp(),
          status: z.number().int().nullable(),
          error: z.string().nullable(),
          durationMs: z.number().int(),
        })
        .meta({ id: "WebhookAttempt" }),
    ),
  })
  .meta({ id: "WebhookDelivery" });

export const WebhookDeliveryList = z.object({ deliveries: z.array(WebhookDeliveryAnswer) }).meta({ id: "WebhookDeliveryList" });
