/**
 * The read routes of the spec on hono: the offers GETs (relative to /api/bets-usdc/offers) and
 * the pool aggregate embed endpoint. Parsing and shaping only; ReadService holds the logic.
 */
import { Hono, type Context } from "hono";
import type { Custody } from "../../service/custody/custody";
import { ApiError, apiErrorResponse } from "../../service/api-error";
import { browseParams, offerAddress, pageParams } from "../../service/read/params";
import type { ReadService } from "../../service/read/read-service";
import { resolveViewer } from "../../service/read/viewer";

export const EMBED_CACHE_CONTROL = "public, max-age=5, s-maxage=15, stale-while-revalidate=30";

const errorResponse = (c: Context, e: unknown, log?: (e: unknown) => void) => apiErrorResponse(c, e, "temporarily unavailable; retry with backoff", log);

export function readRoutes(read: ReadService, custody: Custody | null, opts: { log?: (e: unknown) => void } = {}): Hono {
  const app = new Hono({ strict: false });
  const handle = (op: (c: Context) => Promise<unknown>) => async (c: Context) => {
    try {
      return c.json((await op(c)) as object, 200);
    } catch (e) {
      return errorResponse(c, e, opts.log);
    }
  };
  const viewer = (c: Context) => resolveViewer(custody, c.req.header("authorization"));

  app.get(
    "/contracts",
    handle(async (c) => {
      await viewer(c);
      const [settings, contracts] = await Promise.all([read.settings(), read.openContracts()]);
      return { contracts, ...settings };
    }),
  );
  app.get(
    "/",
    handle(async (c) => {
      const p = browseParams(c.req.query());
      return read.browse(p, (await viewer(c))?.wallet ?? null);
    }),
  );
  app.get(
    "/mine",
    handle(async (c) => {
      const v = await viewer(c);
      if (!v) throw new ApiError(401, "GET /mine needs a token: Authorization: Bearer <token>");
      return read.mine(browseParams(c.req.query()), v.wallet);
    }),
  );
  app.get(
    "/shareable",
    handle(async (c) => read.shareable(browseParams(c.req.query()))),
  );
  app.get(
    "/:address",
    handle(async (c) => {
      const address = offerAddress(c.req.param("address") ?? "");
      const o = await read.offer(address, (await viewer(c))?.wallet ?? null);
      if (!o) throw new ApiError(404, "offer not found");
      return o;
    }),
  );
  app.get(
    "/:address/fills",
    handle(async (c) => {
      const address = offerAddress(c.req.param("address") ?? "");
      return read.fills(address, pageParams(c.req.query()));
    }),
  );
  return app;
}

/**
 * GET /api/embed/v1/polls/:identifier. Unknown, private, deleted, flagged and malformed
 * identifiers are the same 404; no CORS allowance is ever sent (server-to-server endpoint).
 */
export function embedRoutes(read: ReadService, opts: { log?: (e: unknown) => void } = {}): Hono {
  const app = new Hono({ strict: false });
  // The same aggregate object is served until it changes: serialise it once.
  const serialized = new WeakMap<object, string>();
  app.get("/polls/:identifier", async (c) => {
    try {
      const data = await read.poolAggregate(c.req.param("identifier") ?? "");
      c.header("Cache-Control", EMBED_CACHE_CONTROL);
      if (!data) return c.json({ error: "Poll not found" }, 404);
      let body = serialized.get(data);
      if (body === undefined) serialized.set(data, (body = JSON.stringify({ data, error: null })));
      c.header("Content-Type", "application/json");
      return c.body(body, 200);
    } catch (e) {
      opts.log?.(e);
      c.header("Cache-Control", "no-store");
      return c.json({ error: "Internal server error" }, 500);
    }
  });
  return app;
}
