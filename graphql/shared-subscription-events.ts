/**
 * One execution per subscription event for all the subscribers that would get the same answer.
 *
 * A change to one offer reaches each of its subscribers as the same payload object (LiveUpdates
 * reads it once per change). graphql-yoga's executor would still run the subscription's document
 * over that payload once per subscriber, and serialise each answer again. This plugin replaces the
 * subscribe step: the source stream is made as graphql-js makes it, and each event is executed
 * once per (payload, Authorization, document, operation name, variables); the answer, and its
 * JSON (yoga's SSE processor calls a result's own `stringify`), are reused by every subscriber with
 * that key. The Authorization header is in the key because it is all a resolver may know of the
 * viewer (the context is built from it): two viewers never share an answer, anonymous subscribers
 * (no header) all do. Payloads that are not objects (indexedSlot's string) are executed per
 * subscriber. A document whose variables do not coerce goes to yoga's own subscribe, which refuses
 * it as before.
 */
import type { DocumentNode, ExecutionArgs, ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";
import { createRequire } from "node:module";

/**
 * graphql's CommonJS build, the one Node resolves "graphql" to (its package has no exports map)
 * and so the one the schema's classes and yoga's executor come from. A bundler resolving for this
 * module (vitest) would pick the .mjs copy, whose instanceof checks refuse that schema.
 */
const { createSourceEventStream, execute, getOperationAST, getVariableValues, print } = createRequire(import.meta.url)("graphql") as typeof import("graphql");

/** Counts, for the live updates' stats: events executed, and answers reused instead. */
export interface SharedEventCounts {
  executions: number;
  shared: number;
}

type Answer = ExecutionResult & { stringify?: (r: ExecutionResult) => string };

/** Answers by payload: an entry lives as long as some subscriber's queue holds the payload. */
const answers = new WeakMap<object, Map<string, Promise<Answer>>>();
const printed = new WeakMap<DocumentNode, string>();

function documentKey(d: DocumentNode): string {
  let k = printed.get(d);
  if (k === undefined) printed.set(d, (k = print(d)));
  return k;
}

/** The answer's JSON, made once (yoga's stringify passes a copy instead when it strips error internals). */
function memoiseJson(r: Answer): Answer {
  let json: string | undefined;
  Object.defineProperty(r, "stringify", { value: (x: ExecutionResult) => (x === r ? (json ??= JSON.stringify(x)) : JSON.stringify(x)) });
  return r;
}

/** Whose answer: the Authorization header of the subscription's request ("" for anonymous). */
function viewerKey(context: unknown): string {
  const request = (context as { request?: Request } | null)?.request;
  return request?.headers.get("authorization") ?? "";
}

/** The source's events mapped through `run`; return() ends the source at once, even while it waits for an event. */
function mapEvents(
  source: AsyncIterable<unknown>,
  run: (payload: unknown) => Promise<ExecutionResult>,
  signal?: AbortSignal,
): AsyncIterableIterator<ExecutionResult> {
  const it = source[Symbol.asyncIterator]();
  const stop = () => void it.return?.();
  signal?.addEventListener("abort", stop, { once: true });
  const end = () => signal?.removeEventListener("abort", stop);
  return {
    async next() {
      const r = await it.next();
      if (r.done) {
        end();
        return { done: true, value: undefined };
      }
      return { done: false, value: await run(r.value) };
    },
    async return() {
      end();
      await it.return?.();
      return { done: true, value: undefined };
    },
    async throw(e: unknown) {
      end();
      await it.return?.();
      throw e;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

export function useSharedSubscriptionEvents(counts: SharedEventCounts): Plugin {
  return {
    onSubscribe({ subscribeFn, setSubscribeFn }) {
      setSubscribeFn(async (args: ExecutionArgs) => {
        const operation = getOperationAST(args.document, args.operationName);
        if (!operation) return subscribeFn(args);
        const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
        if (coerced.errors) return subscribeFn(args);
        const source = await createSourceEventStream(args);
        if (!(Symbol.asyncIterator in source)) return source;
        const key = [viewerKey(args.contextValue), args.operationName ?? "", JSON.stringify(args.variableValues ?? {}), documentKey(args.document)].join("\n");
        const run = (payload: unknown): Promise<Answer> => {
          const once = () => Promise.resolve(execute({ ...args, rootValue: payload })) as Promise<Answer>;
          if (typeof payload !== "object" || payload === null) {
            counts.executions++;
            return once();
          }
          let byKey = answers.get(payload);
          if (!byKey) answers.set(payload, (byKey = new Map()));
          let answer = byKey.get(key);
          if (answer) counts.shared++;
          else {
            counts.executions++;
            byKey.set(key, (answer = once().then(memoiseJson)));
          }
          return answer;
        };
        // yoga passes the request's AbortSignal (graphql-js's arguments do not name it).
        return mapEvents(source, run, (args as { signal?: AbortSignal }).signal);
      });
    },
  };
}
