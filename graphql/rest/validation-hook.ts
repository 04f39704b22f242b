/**
 * The routes' answer to a request their zod schemas refuse: the project's error shape, `{error}`
 * with 400 and the message of service/validation.ts (the one GraphQL and the services give too).
 */
import type { Hook } from "@hono/zod-openapi";
import { apiErrorResponse } from "../../service/api-error";
import { validationError } from "../../service/validation";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one hook serves every route's schemas
export const validationHook =
  (fallback: string): Hook<any, any, any, any> =>
  (result, c) => {
    if (!result.success) return apiErrorResponse(c, validationError(result.error), fallback);
  };
