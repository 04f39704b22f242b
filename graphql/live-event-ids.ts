/**
 * Which live subscription an answer belongs to, so each transport can write the id of the event
 * it sends (SSE's `id:` field, graphql-ws's `extensions.eventId`): the subscription fields record
 * the consumer's stream under the request (SSE: one request per subscription) and under the
 * operation's context (WebSocket: one context per subscribe message).
 */
import type { LiveSubscription } from "../service/read/live-subscription";

const byRequest = new WeakMap<object, LiveSubscription<unknown>>();
const byContext = new WeakMap<object, LiveSubscription<unknown>>();

/** Recorded when a subscription field opens its stream. */
export function recordLiveStream(request: object, context: object, s: LiveSubscription<unknown>): void {
  byRequest.set(request, s);
  byContext.set(context, s);
}

/** The stream an SSE request reads. */
export function liveStreamOfRequest(request: object): LiveSubscription<unknown> | undefined {
  return byRequest.get(request);
}

/** The stream a WebSocket operation (its context) reads. */
export function liveStreamOfContext(context: unknown): LiveSubscription<unknown> | undefined {
  return typeof context === "object" && context !== null ? byContext.get(context) : undefined;
}
