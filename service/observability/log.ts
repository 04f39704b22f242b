/**
 * The service's structured log: pino, one JSON object a line, and the request scope that ties
 * whatever happens during an HTTP request (a transaction sent, an error) to its request id.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger } from "pino";

export interface LogOptions {
  /** pino level; default `LOG_LEVEL`, else `silent` under tests (VITEST / NODE_ENV=test), else `info`. */
  level?: string;
  /** Where lines go (default stdout); tests pass a stream to read them. */
  destination?: DestinationStream;
}

export function logLevel(level?: string): string {
  if (level) return level;
  if (process.env.LOG_LEVEL) return process.env.LOG_LEVEL;
  // Test runs start many stacks; their access logs would bury the test report.
  return process.env.VITEST || process.env.NODE_ENV === "test" ? "silent" : "info";
}

export function createLogger(o: LogOptions = {}): Logger {
  return pino({ level: logLevel(o.level), timestamp: pino.stdTimeFunctions.isoTime, base: { pid: process.pid } }, o.destination);
}

/** What the HTTP middleware knows about the request being served. */
export interface RequestScope {
  requestId: string;
  log: Logger;
}

// Async context rather than a parameter: a transaction is sent deep inside the write service,
// which REST and GraphQL both call, and neither passes an HTTP context down.
const scope = new AsyncLocalStorage<RequestScope>();

export function inRequest<T>(s: RequestScope, fn: () => T): T {
  return scope.run(s, fn);
}

/** The request being served, if any (none in the worker or a script). */
export function currentRequest(): RequestScope | undefined {
  return scope.getStore();
}
