/**
 * GraphQL's unexpected errors: masked (no internal detail leaves the server) and logged once each,
 * with the id of the HTTP request they happened in.
 *
 * yoga masks without knowing the request (`maskError` gets the error alone), so masking and
 * logging are two steps: `maskError` replaces the error and keeps what it stood for beside the
 * masked one (service/api-error.ts withUnexpectedCause, as the resolvers' 503s do), and
 * `useUnexpectedErrorLog` logs those causes where the request is known: each answer yoga is about
 * to send (its serverContext holds the request id: graphql/server.ts passes it to yoga.fetch),
 * and each event of a subscription (its context's request id; none over WebSocket). A cause is
 * logged once per request however many of its answers carry it (both hooks see a subscription's
 * refusal), and once for each request it failed (a load the read cache shared between two).
 *
 * An event stream that throws after it started (its source, or an event's shared execution,
 * failing rather than answering with errors) is logged the same way, as it throws: yoga then
 * sends the client the masked error as the stream's last event, and that answer reaches neither
 * hook. The live streams end on purpose with a value, never by throwing
 * (service/read/live-subscription.ts); what a stream throws is judged as maskError judges it.
 */
import { GraphQLError, type ExecutionResult } from "graphql";
import { handleStreamOrSingleExecutionResult, isAsyncIterable, mapAsyncIterator, type Plugin } from "graphql-yoga";
import { unexpectedCauseOf, withUnexpectedCause } from "../service/api-error";
import type { ErrorLog } from "../service/observability/log";

// Duck-typed: yoga and this module may hold different copies (ESM/CJS) of graphql's classes.
const isGql = (e: unknown): e is GraphQLError => !!e && (e as Error).name === "GraphQLError";

/**
 * Errors the API raises on purpose (coded GraphQLErrors: parse, validation, limits, REST-status
 * errors of the services) pass; anything else is masked, its cause kept for the log.
 */
export function maskError(error: unknown, message: string): Error {
  if (isGql(error) && (!error.originalError || isGql(error.originalError))) {
    // A variable graphql-js could not coerce (a bad scalar or enum value) is refused before
    // anything runs, like the same value written in the document: one code for both. Set on the
    // error itself: a replaced error would be logged as unexpected.
    if (!error.extensions?.code && !error.path && /^Variable "\$\w+" /.test(error.message))
      (error.extensions as Record<string, unknown>).code = "GRAPHQL_VALIDATION_FAILED";
    return error;
  }
  const cause = (error as GraphQLError | null)?.originalError ?? error;
  return withUnexpectedCause(new GraphQLError(message, { extensions: { code: "INTERNAL_SERVER_ERROR", status: 500 } }), cause);
}

/**
 * The unexpected error `e` stands for, else none: kept beside it or an error it wraps (graphql-js
 * wraps what a resolver throws), or, not masked yet, the foreign error maskError would mask.
 */
function causeOf(e: unknown): unknown {
  for (let x = e; isGql(x); x = x.originalError) {
    const cause = unexpectedCauseOf(x);
    if (cause !== undefined) return cause;
    if (x.originalError && !isGql(x.originalError)) return x.originalError;
  }
  return undefined;
}

/** The unexpected error behind what a stream threw: none for a coded GraphQLError, else what maskError masks. */
const thrownCause = (e: unknown): unknown => (isGql(e) ? causeOf(e) : e);

/** Logs the causes behind a result's errors, with the request id, each cause once per request. */
export function useUnexpectedErrorLog(log: ErrorLog): Plugin<{ requestId?: string }> {
  const logged = new WeakMap<object, Set<string | undefined>>();
  const logCauses = (causes: readonly unknown[], requestId: string | undefined) => {
    for (const cause of causes) {
      if (cause === undefined) continue;
      if (typeof cause === "object" && cause !== null) {
        let ids = logged.get(cause);
        if (!ids) logged.set(cause, (ids = new Set()));
        if (ids.has(requestId)) continue;
        ids.add(requestId);
      }
      log(cause, requestId);
    }
  };
  const logErrors = (errors: readonly unknown[] | undefined, requestId: string | undefined) => {
    if (errors) logCauses(errors.map(causeOf), requestId);
  };
  return {
    // A subscription's answers, over SSE and WebSocket alike (a stream's events never reach
    // onResultProcess one by one): the context holds the request id.
    onSubscribe({ args }) {
      const requestId = (args.contextValue as { requestId?: string }).requestId;
      return {
        onSubscribeResult: (payload) => {
          // Each event as it is; a failing next() is logged, then rethrown (after the source's
          // return(), as mapAsyncIterator closes a source that threw).
          if (isAsyncIterable(payload.result))
            payload.setResult(
              mapAsyncIterator(
                payload.result,
                (event) => event,
                (e: unknown) => {
                  logCauses([thrownCause(e)], requestId);
                  throw e;
                },
              ),
            );
          return handleStreamOrSingleExecutionResult(payload, ({ result }) => logErrors(result.errors, requestId));
        },
      };
    },
    // Every other answer (queries, mutations, errors raised outside execution), as it is sent.
    onResultProcess({ result, serverContext }) {
      if (isAsyncIterable(result)) return;
      const requestId = (serverContext as { requestId?: string }).requestId;
      for (const r of Array.isArray(result) ? result : [result]) logErrors((r as ExecutionResult).errors, requestId);
    },
  };
}
