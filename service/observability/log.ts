/**
 * The service's structured log: pino, one JSON object a line. What happens during an HTTP request
 * (a transaction sent, an unexpected error) is logged with the request's id, handed down by the
 * caller (`requestId` arguments), never looked up from an async context: on Node an enabled
 * AsyncLocalStorage hooks every promise of the process (docs/service-guide.md, "Request ids").
 */
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

/** How the HTTP layer reports an unexpected error: logged, with the id of the request it happened in when there is one. */
export type ErrorLog = (e: unknown, requestId?: string) => void;
