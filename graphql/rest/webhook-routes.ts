/**
 * Webhooks over REST (issue #26), under `/api/bets-usdc/offers/webhooks`, on the one service
 * (service/webhooks/endpoints.ts) GraphQL uses too. Changing anything (create, update, delete,
 * rotate the secret, replay) needs a token with bet:write; listing endpoints and deliveries any
 * valid token of the user. Mounted before the read routes, whose `/{address}` would otherwise take
 * these paths. Limits (docs/service-guide.md, "Webhooks"): the request limits per address and token
 * of every route, bodies of at most 16 KiB, 10 endpoints per user, replays 10 at once then 30 a
 * minute per user.
 */
import { createRoute, OpenAPIHono, z, type RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError, apiErrorResponse } from "../../service/api-error";
import { bearerToken, type Custody, type Principal } from "../../service/custody/custody";
import { CreateWebhookBody, DeliveriesQuery, UpdateWebhookBody, type Webhooks } from "../../service/webhooks/endpoints";
import { validationHook } from "./validation-hook";
import { documentedError, ERRORS, ok } from "./schemas";
import {
  WebhookDeleted,
  WebhookDeliveryAnswer,
  WebhookDeliveryList,
  WebhookEndpointAnswer,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
} from "./webhook-schemas";
import { callerGate } from "./caller-gate";
import type { ErrorLog } from "../../service/observability/log";

const FALLBACK = "temporarily unavailable; retry with backoff";
const { 400: e400, 401: e401, 413: e413, 503: e503 } = ERRORS;
const e404 = documentedError(404, "no webhook endpoint or delivery of the caller by that id");
const e409 = documentedError(409, "the caller holds the most endpoints allowed, or the delivery was retracted by a fork");
const e429 = documentedError(429, "too many requests from this address or token, or too many replays", {
  "Retry-After": z
    .string()
    .regex(/^[0-9]+$/)
    .meta({ description: "seconds to wait before retrying" }),
});
const route = <R extends RouteConfig>(r: R) => createRoute({ tags: ["webhooks"], security: [{ bearer: [] }], ...r });
const body = (schema: z.ZodType) => ({ required: true, content: { "application/json": { schema } } });
const IdParam = z.object({ id: z.string().max(64).meta({ description: "the endpoint's id (whep_...)" }) });
const DeliveryParam = z.object({ id: z.string().max(64).meta({ description: "the delivery's id (whd_...)" }) });

const createRouteDef = route({
  method: "post",
  path: "/webhooks",
  operationId: "createWebhook",
  summary: "Register a webhook endpoint (https URL and the events wanted); its signing secret is answered once",
  request: { body: body(CreateWebhookBody) },
  responses: { 200: ok("the endpoint with its secret", WebhookEndpointWithSecret), 400: e400, 401: e401, 409: e409, 413: e413, 429: e429, 503: e503 },
});
const listRoute = route({
  method: "get",
  path: "/webhooks",
  operationId: "webhooks",
  summary: "The caller's webhook endpoints (without secrets)",
  responses: { 200: ok("the endpoints", WebhookEndpointList), 401: e401, 429: e429, 503: e503 },
});
const updateRoute = route({
  method: "patch",
  path: "/webhooks/{id}",
  operationId: "updateWebhook",
  summary: "Change an endpoint's events, or disable / enable it",
  request: { params: IdParam, body: body(UpdateWebhookBody) },
  responses: { 200: ok("the endpoint", WebhookEndpointAnswer), 400: e400, 401: e401, 404: e404, 413: e413, 429: e429, 503: e503 },
});
const deleteRoute = route({
  method: "delete",
  path: "/webhooks/{id}",
  operationId: "deleteWebhook",
  summary: "Delete an endpoint with its deliveries",
  request: { params: IdParam },
  responses: { 200: ok("deleted", WebhookDeleted), 400: e400, 401: e401, 404: e404, 429: e429, 503: e503 },
});
const rotateRoute = route({
  method: "post",
  path: "/webhooks/{id}/rotate-secret",
  operationId: "rotateWebhookSecret",
  summary: "A new signing secret for an endpoint, answered once; every later attempt is signed with it",
  request: { params: IdParam },
  responses: { 200: ok("the endpoint with its new secret", WebhookEndpointWithSecret), 400: e400, 401: e401, 404: e404, 429: e429, 503: e503 },
});
const deliveriesRoute = route({
  method: "get",
  path: "/webhooks/deliveries",
  operationId: "webhookDeliveries",
  summary: "The caller's webhook deliveries, newest first: state, attempts, last status, next attempt, the attempts",
  request: { query: DeliveriesQuery },
  responses: { 200: ok("the deliveries", WebhookDeliveryList), 400: e400, 401: e401, 429: e429, 503: e503 },
});
const deliveryRoute = route({
  method: "get",
  path: "/webhooks/deliveries/{id}",
  operationId: "webhookDelivery",
  summary: "One webhook delivery of the caller",
  request: { params: DeliveryParam },
  responses: { 200: ok("the delivery", WebhookDeliveryAnswer), 400: e400, 401: e401, 404: e404, 429: e429, 503: e503 },
});
const replayRoute = route({
  method: "post",
  path: "/webhooks/deliveries/{id}/replay",
  operationId: "replayWebhookDelivery",
  summary: "Send a delivery again (same event id and body, a fresh signature), retried like a new one",
  request: { params: DeliveryParam },
  responses: { 200: ok("the delivery, pending again", WebhookDeliveryAnswer), 400: e400, 401: e401, 404: e404, 409: e409, 429: e429, 503: e503 },
});

export interface WebhookRouteDeps {
  custody: Custody | null;
  webhooks: Webhooks | null;
  log?: ErrorLog;
}

export function webhookRoutes(d: WebhookRouteDeps): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false, defaultHook: validationHook(FALLBACK) });
  const fail = (c: Context, e: unknown) => apiErrorResponse(c, e, FALLBACK, d.log);
  const callers = callerGate<Principal>(fail);
  /** `write`: the token must hold bet:write; `withBody`: the JSON body is read and checked first. */
  const auth = (write: boolean, withBody = false) =>
    callers.gate(
      async (c) => {
        if (!d.webhooks || !d.custody) throw new ApiError(503, "webhooks are not configured");
        return authorize(d.custody, c.req.header("authorization"), write);
      },
      { body: withBody },
    );
  const handle = (op: (c: Context, p: Principal, w: Webhooks) => Promise<unknown>) => callers.handle((c, p) => op(c, p, d.webhooks!));

  app.openapi(
    { ...createRouteDef, middleware: [auth(true, true)] },
    handle(async (c, p, w) => w.create(p, await c.req.json<unknown>())),
  );
  app.openapi(
    { ...listRoute, middleware: [auth(false)] },
    handle(async (_c, p, w) => ({ endpoints: await w.list(p) })),
  );
  // Before "/webhooks/{id}": the deliveries' paths are not endpoint ids.
  app.openapi(
    { ...deliveriesRoute, middleware: [auth(false)] },
    handle(async (c, p, w) => ({ deliveries: await w.deliveries(p, c.req.query()) })),
  );
  app.openapi(
    { ...deliveryRoute, middleware: [auth(false)] },
    handle(async (c, p, w) => w.delivery(p, c.req.param("id")!)),
  );
  app.openapi(
    { ...replayRoute, middleware: [auth(true)] },
    handle(async (c, p, w) => w.replay(p, c.req.param("id")!)),
  );
  app.openapi(
    { ...updateRoute, middleware: [auth(true, true)] },
    handle(async (c, p, w) => w.update(p, c.req.param("id")!, await c.req.json<unknown>())),
  );
  app.openapi(
    { ...deleteRoute, middleware: [auth(true)] },
    handle(async (c, p, w) => w.remove(p, c.req.param("id")!)),
  );
  app.openapi(
    { ...rotateRoute, middleware: [auth(true)] },
    handle(async (c, p, w) => w.rotateSecret(p, c.req.param("id")!)),
  );
  return app;
}

/** The caller: any valid token of the user, or (`write`) one with bet:write. */
export async function authorize(custody: Custody, header: string | null | undefined, write: boolean): Promise<Principal> {
  const token = bearerToken(header);
  if (!token) throw new ApiError(401, "missing or malformed Authorization: Bearer token");
  const p = await custody.authenticate(token);
  if (!p) throw new ApiError(401, "invalid, revoked or expired token");
  if (write && !p.scopes.has("bet:write")) throw new ApiError(401, "token lacks the bet:write scope");
  return p;
}
