/**
 * A write route's JSON body, read and checked before its schemas see it: Content-Type, size,
 * UTF-8, JSON, nesting depth, each refused with 400 and a message saying which. hono keeps what it
 * read, so the route reads the same body again with `c.req.json()`.
 */
import type { Context } from "hono";
import { ApiError } from "../../service/api-error";
import { assertJsonDepth } from "../../service/json-depth";

const MAX_BODY = 16 * 1024;
export const CONTENT_TYPE = "Content-Type must be application/json";

export async function jsonBody(c: Context): Promise<unknown> {
  const ct = c.req.header("content-type") ?? "";
  if (!/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(ct.trim())) throw new ApiError(400, CONTENT_TYPE);
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
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, "body must be valid JSON");
  }
  assertJsonDepth(body, "body");
  return body;
}
