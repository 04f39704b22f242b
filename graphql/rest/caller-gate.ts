/**
 * Who calls a route, decided before the route's schemas check anything: one rule for every route
 * that takes a token (reads, writes, the portfolio tools, webhooks), as GraphQL has it too. A bad
 * token is 401 whatever else is wrong with the request, and a write's body is read and checked
 * (./json-body.ts) before its fields are.
 *
 * `gate` is the route's middleware: it resolves the caller with the route's `authorize` (whose
 * errors, like the body's, are answered by `fail`: each route family has its own fallback
 * message) and keeps it for the request. `handle` wraps an operation that answers JSON with 200,
 * given the caller; whatever it throws is answered by `fail` too.
 */
import type { Context } from "hono";
import { jsonBody } from "./json-body";

type Fail = (c: Context, e: unknown) => Response | Promise<Response>;

export function callerGate<P>(fail: Fail) {
  const callers = new WeakMap<Request, P>();
  /** The caller `gate` resolved for this request. */
  const callerOf = (c: Context) => callers.get(c.req.raw) as P;
  const gate =
    (authorize: (c: Context) => Promise<P>, o: { body?: boolean } = {}) =>
    async (c: Context, next: () => Promise<void>) => {
      try {
        callers.set(c.req.raw, await authorize(c));
        if (o.body) await jsonBody(c);
      } catch (e) {
        return fail(c, e);
      }
      await next();
    };
  const handle = (op: (c: Context, caller: P) => Promise<unknown>) =>
    (async (c: Context) => {
      try {
        return c.json((await op(c, callerOf(c))) as object, 200);
      } catch (e) {
        return fail(c, e);
      }
    }) as never;
  return { gate, callerOf, handle };
}
