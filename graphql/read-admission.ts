/**
 * The HTTP side of read admission (service/rate/admission.ts): who a request is (callerKey: its
 * token, else its address group) and where its expensive reads wait for their turn.
 *
 * - GraphQL: a query's execution waits (a mutation's or subscription's does not); an answer from
 *   the response cache, or shared with an identical query in flight, never executes and so never
 *   waits. Refused: HTTP 429 with Retry-After, the body a GraphQL error coded TOO_MANY_REQUESTS
 *   with `extensions.status` and `extensions.retryAfter`, as the live shares' refusals.
 * - REST: the routes read through the read service as the request's caller (`callerReads`,
 *   ReadService.forCaller), whose reads the read cache cannot answer wait. Refused: 429
 *   `{error, code}` with Retry-After, as the request limits'.
 * - /metrics: read_admission_running, read_admission_waiting, read_admission_admitted and
 *   read_admission_refused.
 */
import { getOperationAST } from "graphql";
// yoga's own GraphQLError (its copy of graphql): yoga reads `extensions.http` from it for the status and leaves it out of the body.
import { createGraphQLError, type Plugin } from "graphql-yoga";
import type { Context } from "hono";
import { Gauge, type Registry } from "prom-client";
import { AdmissionRefused, type ReadAdmission } from "../service/rate/admission";
import { callerKey } from "../service/rate/caller-key";
import type { ReadService } from "../service/read/read-service";
import { clientAddress, type RateLimitOptions } from "./rate-limit";

/** The read service a REST request reads through. */
export type RequestReads = (c: Context) => ReadService;

/** REST: the request's reads count against its caller (its token, else its address group). */
export function callerReads(read: ReadService, o: RateLimitOptions = {}): RequestReads {
  return (c) => read.forCaller(callerKey(c.req.header("authorization"), clientAddress(c, o)));
}

/** GraphQL: a query's execution waits for its caller's turn (the context's request and address, set by the server). */
export function useReadAdmission(admission: ReadAdmission): Plugin<{ request: Request; address?: string }> {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== "query") return;
      const ctx = args.contextValue as { request: Request; address?: string };
      const key = callerKey(ctx.request.headers.get("authorization"), ctx.address ?? "unknown");
      setExecuteFn((a) =>
        admission
          .run(async () => executeFn(a), key)
          .catch((e: unknown) => {
            if (!(e instanceof AdmissionRefused)) throw e;
            const retryAfter = e.retryAfterSeconds ?? 1;
            return {
              errors: [
                createGraphQLError(e.message, {
                  extensions: { code: e.code, status: e.status, retryAfter, http: { status: 429, headers: { "retry-after": String(retryAfter) } } },
                }),
              ],
            };
          }),
      );
    },
  };
}

export function registerAdmissionMetrics(registry: Registry, admission: ReadAdmission): void {
  const gauge = (name: string, help: string, value: (s: ReturnType<ReadAdmission["stats"]>) => number) => {
    registry.removeSingleMetric(name);
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value(admission.stats()));
      },
    });
  };
  gauge("read_admission_running", "Expensive reads running now", (s) => s.running);
  gauge("read_admission_waiting", "Expensive reads waiting for their turn", (s) => s.waiting);
  gauge("read_admission_admitted", "Expensive reads admitted since start", (s) => s.admitted);
  gauge("read_admission_refused", "Expensive reads refused 429 since start (a caller's or the process's queue full)", (s) => s.refused);
}
