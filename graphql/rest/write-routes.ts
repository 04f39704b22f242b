/**
 * The spec's write routes on hono, mounted under `/api/bets-usdc/offers`:
 * POST `/`, POST `/:address/take`, POST `/:address/close`. Parsing and shaping only; the rules
 * live in WriteService. Errors are `{error: message}` with the spec's statuses; anything
 * unexpected is logged and answered 503 without detail (no stack, no SQL, no key material).
 */
import { Hono, type Context } from "hono";
import { ApiError, apiErrorResponse } from "../../service/api-error";
import type { WriteService } from "../../service/writes/write-service";

const MAX_BODY = 16 * 1024;

const writeErrorResponse = (c: Context, e: unknown, log?: (e: unknown) => void) =>
  apiErrorResponse(c, e, "temporarily unavailable; retry with the same idempotencyKey", log);

async function jsonBody(c: Context): Promise<unknown> {
  const ct = c.req.header("content-type") ?? "";
  if (!/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(ct.trim())) throw new ApiError(400, "Content-Type must be application/json");
  const len = Number(c.req.header("content-length") ?? "0");
  if (len > MAX_BODY) throw new ApiError(400, `body larger than ${MAX_BODY} bytes`);
  const buf = await c.req.arrayBuffer();
  if (buf.byteLength > MAX_BODY) throw new ApiError(400, `body larger than ${MAX_BODY} bytes`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(buf);
  } catch {
    throw new ApiError(400, "body must be UTF-8 JSON");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, "body must be valid JSON");
  }
}

/** Routes relative to the offers base path. */
export function writeRoutes(service: WriteService, opts: { log?: (e: unknown) => void } = {}): Hono {
  const app = new Hono({ strict: false });
  const handle = (op: (c: Context) => Promise<unknown>) => async (c: Context) => {
    try {
      return c.json((await op(c)) as object, 200);
    } catch (e) {
      return writeErrorResponse(c, e, opts.log);
    }
  };
  app.post(
    "/",
    handle(async (c) => {
      const p = await service.authorize(c.req.header("authorization"));
      return service.create(p, await jsonBody(c));
    }),
  );
  app.post(
    "/:address/take",
    handle(async (c) => {
      const p = await service.authorize(c.req.header("authorization"));
      return service.take(p, c.req.param("address") ?? "", await jsonBody(c));
    }),
  );
  app.post(
    "/:address/close",
    handle(async (c) => {
      const p = await service.authorize(c.req.header("authorization"));
      return service.close(p, c.req.param("address") ?? "", await jsonBody(c));
    }),
  );
  return app;
}
