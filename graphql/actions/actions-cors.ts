/**
 * The CORS headers the Actions specification requires on `/actions.json` and every action route:
 * any origin (an Action is rendered by clients on other sites: wallets, chats, X), the methods and
 * headers the spec lists, and the two headers a client reads to know what it is talking to. An
 * OPTIONS preflight is answered here, before the limits. The rest of the API keeps its
 * allow-list (../cors.ts).
 */
import type { MiddlewareHandler } from "hono";

/** The version of the Actions specification these routes follow (@solana/actions-spec 2.4). */
export const ACTION_VERSION = "2.4";

export const ACTIONS_CORS_HEADERS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET,POST,PUT,OPTIONS",
  "Access-Control-Allow-Headers": "Content-Type, Authorization, Content-Encoding, Accept-Encoding, X-Action-Version, X-Blockchain-Ids",
  "Access-Control-Expose-Headers": "X-Action-Version, X-Blockchain-Ids",
};

/** Every answer (errors, 429 and 413 included) carries the headers; OPTIONS is a 204 with them. */
export function actionsCors(blockchainId: string): MiddlewareHandler {
  const headers = { ...ACTIONS_CORS_HEADERS, "X-Action-Version": ACTION_VERSION, "X-Blockchain-Ids": blockchainId };
  return async (c, next) => {
    if (c.req.method === "OPTIONS") return c.body(null, 204, headers);
    await next();
    for (const [k, v] of Object.entries(headers)) c.res.headers.set(k, v);
  };
}
