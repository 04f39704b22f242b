/**
 * The routes' answer to a request their zod schemas refuse: the project's error shape, `{error}`
 * with 400 and the message of service/validation.ts (the one GraphQL and the services give too).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { apiErrorResponse } from "../../service/api-error";
import { validationError } from "../../service/validation";

type DefaultHook = NonNullable<ConstructorParameters<typeof OpenAPIHono>[0]>["defaultHook"];

export const validationHook =
  (fallback: string): DefaultHook =>
  (result, c) => {
    if (!result.success) return apiErrorResponse(c, validationError(result.error), fallback);
  };
