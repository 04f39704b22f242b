/**
 * Request schemas (zod) as the one place of the input rules: the REST routes validate with them and
 * publish them in the OpenAPI document, the services parse with them (GraphQL and REST alike). A
 * failure becomes one 400 ApiError whose message names the field and what it accepts.
 */
import { z } from "zod";
import { ApiError } from "./api-error";

const MISSING = "missing field(s): ";

/** The error of a field schema: `missing field(s): <name>` when absent, else `message`. */
export function fieldError(name: string, message: string) {
  return (iss: { input?: unknown }) => (iss.input === undefined ? `${MISSING}${name}` : message);
}

/**
 * One message for a failed parse: a problem of the whole value first (not an object, unknown
 * fields), then every missing field at once, then the first field in the schema's order.
 */
export function validationMessage(error: z.ZodError): string {
  const issues = error.issues;
  const root = issues.find((i) => i.path.length === 0);
  if (root) return root.message;
  const missing = issues.filter((i) => i.message.startsWith(MISSING)).map((i) => i.message.slice(MISSING.length));
  if (missing.length) return MISSING + missing.join(", ");
  return issues[0]?.message ?? "invalid request";
}

export function validationError(error: z.ZodError): ApiError {
  return new ApiError(400, validationMessage(error));
}

/** `schema`'s output for `value`, or the 400 that says what is wrong with it. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw validationError(r.error);
  return r.data;
}

/** A JSON body object that refuses unknown fields, naming them and the allowed ones. */
export function strictBody<T extends z.ZodRawShape>(shape: T) {
  const allowed = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === "unrecognized_keys"
        ? `unknown field(s): ${iss.keys
            .slice(0, 5)
            .map((k) => JSON.stringify(k.slice(0, 40)))
            .join(", ")}; allowed: ${allowed.join(", ")}`
        : "body must be a JSON object",
  });
}
