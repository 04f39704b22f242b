/**
 * The one error the API raises on purpose, for reads and writes alike: an HTTP status, a message
 * a client can show, and the code naming the status (API_ERROR_CODES, the one table of codes).
 * REST answers `{error: message, code}` with the status (and `Retry-After` on 429 and 503);
 * GraphQL answers the message with the same code in `extensions.code`, `extensions.status` (and
 * `extensions.retryAfter` on 429 and 503). Anything else that escapes a handler is logged and
 * answered 503 without detail (no stack, no SQL, no key material).
 */
import { GraphQLError } from "graphql";
import type { Context } from "hono";
import type { ErrorLog } from "./observability/log";

export type ApiStatus = 400 | 401 | 403 | 404 | 409 | 429 | 503;
/** Statuses only the HTTP layer answers (a body over the size limit; the embed's spec-given 500). */
export type HttpErrorStatus = ApiStatus | 413 | 500;

/**
 * The machine-readable code of every error status: REST's `code` beside `error`, GraphQL's
 * `extensions.code` (GraphQL adds GRAPHQL_VALIDATION_FAILED and GRAPHQL_PARSE_FAILED of its own for
 * documents refused before anything runs). Clients branch on the code, people read `error`.
 */
export const API_ERROR_CODES = {
  400: "BAD_REQUEST",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  429: "TOO_MANY_REQUESTS",
  500: "INTERNAL_SERVER_ERROR",
  503: "SERVICE_UNAVAILABLE",
} as const satisfies Record<HttpErrorStatus, string>;
export type ApiErrorCode = (typeof API_ERROR_CODES)[HttpErrorStatus];

/** A REST error body: the message for people, the code for programs. */
const errorBody = (status: HttpErrorStatus, message: string) => ({ error: message, code: API_ERROR_CODES[status] });

/** A REST error answer with its body, status and headers (Retry-After on 429 and 503 is the caller's to give). */
export const errorJson = (c: Context, status: HttpErrorStatus, message: string, headers?: Record<string, string>) =>
  c.json(errorBody(status, message), status, headers);

/** Seconds a client or balancer should wait before asking again after a 503 (no better estimate). */
export const RETRY_AFTER_SECONDS = 5;

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  /** 429: seconds until the request can pass; 503: RETRY_AFTER_SECONDS unless given (the `Retry-After` header). */
  readonly retryAfterSeconds?: number;

  constructor(
    readonly status: ApiStatus,
    message: string,
    retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "ApiError";
    this.code = API_ERROR_CODES[status];
    this.retryAfterSeconds = retryAfterSeconds ?? (status === 503 ? RETRY_AFTER_SECONDS : undefined);
  }
}

/** REST: an ApiError as `{error, code}` with its status; anything else logged (with the request id) and answered 503 `fallback`. */
export function apiErrorResponse(c: Context, e: unknown, fallback: string, log?: ErrorLog) {
  if (e instanceof ApiError) {
    if (e.retryAfterSeconds !== undefined) c.header("Retry-After", String(e.retryAfterSeconds));
    return errorJson(c, e.status, e.message);
  }
  log?.(e, c.get("requestId"));
  c.header("Retry-After", String(RETRY_AFTER_SECONDS));
  return errorJson(c, 503, fallback);
}

/**
 * The unexpected error each GraphQL error stands for (a 503 below, an error masked by the server),
 * kept beside the error rather than as its originalError (yoga would answer a GraphQL error with
 * a foreign originalError 500): the GraphQL server logs it once, where the request id is known
 * (graphql/error-log.ts).
 */
const causes = new WeakMap<GraphQLError, unknown>();

/** `g` stands for the unexpected error `cause` (logged by the server with the request id). */
export function withUnexpectedCause<G extends GraphQLError>(g: G, cause: unknown): G {
  if (cause !== undefined) causes.set(g, cause);
  return g;
}

/** The unexpected error `g` stands for, if any. */
export const unexpectedCauseOf = (g: GraphQLError): unknown => causes.get(g);

/** GraphQL: an ApiError with its code and status; a GraphQLError as is; anything else 503 `fallback`, its cause logged by the server. */
export function apiGraphQLError(e: unknown, fallback: string): GraphQLError {
  if (e instanceof GraphQLError) return e;
  if (e instanceof ApiError) {
    return new GraphQLError(e.message, {
      extensions: { code: e.code, status: e.status, ...(e.retryAfterSeconds !== undefined ? { retryAfter: e.retryAfterSeconds } : {}) },
    });
  }
  return withUnexpectedCause(new GraphQLError(fallback, { extensions: { code: API_ERROR_CODES[503], status: 503, retryAfter: RETRY_AFTER_SECONDS } }), e);
}
