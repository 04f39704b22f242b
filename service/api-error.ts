/**
 * The one error the API raises on purpose, for reads and writes alike: an HTTP status, a message
 * a client can show, and the GraphQL code naming the status. REST answers `{error: message}` with
 * the status (and `Retry-After` on 429 and 503); GraphQL answers the message with `extensions.code`,
 * `extensions.status` (and `extensions.retryAfter` on 429 and 503). Anything else that escapes a handler
 * is logged and answered 503 without detail (no stack, no SQL, no key material).
 */
import { GraphQLError } from "graphql";
import type { Context } from "hono";

export type ApiStatus = 400 | 401 | 403 | 404 | 409 | 429 | 503;

export const GRAPHQL_CODES: Record<ApiStatus, string> = {
  400: "BAD_REQUEST",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  429: "TOO_MANY_REQUESTS",
  503: "SERVICE_UNAVAILABLE",
};

/** Seconds a client or balancer should wait before asking again after a 503 (no better estimate). */
export const RETRY_AFTER_SECONDS = 5;

export class ApiError extends Error {
  readonly code: string;
  /** 429: seconds until the request can pass; 503: RETRY_AFTER_SECONDS unless given (the `Retry-After` header). */
  readonly retryAfterSeconds?: number;

  constructor(
    readonly status: ApiStatus,
    message: string,
    retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "ApiError";
    this.code = GRAPHQL_CODES[status];
    this.retryAfterSeconds = retryAfterSeconds ?? (status === 503 ? RETRY_AFTER_SECONDS : undefined);
  }
}

/** REST: an ApiError as `{error}` with its status; anything else logged and answered 503 `fallback`. */
export function apiErrorResponse(c: Context, e: unknown, fallback: string, log?: (e: unknown) => void) {
  if (e instanceof ApiError) {
    if (e.retryAfterSeconds !== undefined) c.header("Retry-After", String(e.retryAfterSeconds));
    return c.json({ error: e.message }, e.status);
  }
  log?.(e);
  c.header("Retry-After", String(RETRY_AFTER_SECONDS));
  return c.json({ error: fallback }, 503);
}

/** GraphQL: an ApiError with its code and status; a GraphQLError as is; anything else logged and 503 `fallback`. */
export function apiGraphQLError(e: unknown, fallback: string, log?: (e: unknown) => void): GraphQLError {
  if (e instanceof GraphQLError) return e;
  if (e instanceof ApiError) {
    return new GraphQLError(e.message, {
      extensions: { code: e.code, status: e.status, ...(e.retryAfterSeconds !== undefined ? { retryAfter: e.retryAfterSeconds } : {}) },
    });
  }
  log?.(e);
  return new GraphQLError(fallback, { extensions: { code: GRAPHQL_CODES[503], status: 503, retryAfter: RETRY_AFTER_SECONDS } });
}
