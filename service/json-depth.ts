/**
 * How deep a JSON value the API walks. Parsing is not the risk (V8's JSON.parse is iterative);
 * whatever walks the value afterwards recursively is: JSON.stringify for a cache key, graphql-js's
 * coercion of variables, zod. 5,000 nested arrays (10 KB) overflowed the stack there and answered
 * 200 with INTERNAL_SERVER_ERROR. So every parsed body and every GraphQL variables/extensions
 * object is measured first, without recursion, and refused 400 past MAX_JSON_DEPTH.
 */
import { ApiError } from "./api-error";

/**
 * 32 levels: the deepest input the API defines (a write body, a GraphQL filter object or list of
 * ids) is 3; a client building something deeper is building something else.
 */
export const MAX_JSON_DEPTH = 32;

/** Whether `value` nests objects/arrays deeper than `max` (an explicit stack, so any depth is safe to ask). */
export function nestedDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/** ApiError 400 when `value` (named `what` in the message) nests deeper than MAX_JSON_DEPTH. */
export function assertJsonDepth(value: unknown, what: string): void {
  if (nestedDeeperThan(value)) throw new ApiError(400, `${what} nested deeper than ${MAX_JSON_DEPTH} levels`);
}
