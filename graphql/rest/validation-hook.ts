/**
 * The routes' answer to a request their zod schemas refuse: the project's error shape, `{error}`
 * with 400 and the message of service/validation.ts (the one GraphQL and the services give too).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { ApiError, apiErrorResponse } from "../../service/api-error";
import { validationError } from "../../service/validation";

type DefaultHook = NonNullable<ConstructorParameters<typeof OpenAPIHono>[0]>["defaultHook"];

export const validationHook =
  (fallback: string): DefaultHook =>
  (result, c) => {
    if (result.success) return;
    // A repeated query parameter reaches the schema as an array; say so rather than quoting the
    // array as if it were one odd value.
    if (result.target === "query") {
      const field = result.error.issues.map((i) => i.path[0]).find((k) => typeof k === "string" && (c.req.queries(k)?.length ?? 0) > 1);
      if (typeof field === "string") return apiErrorResponse(c, new ApiError(400, `${field} given more than once; give it once`), fallback);
    }
    return apiErrorResponse(c, validationError(result.error), fallback);
  };
