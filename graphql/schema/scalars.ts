/**
 * The API's scalars. Input is checked while the request is validated (a literal) or its
 * variables coerced, so a bad value fails with GraphQL's standard error before any resolver runs
 * (`extensions.code` GRAPHQL_VALIDATION_FAILED, like an unknown enum value).
 * The rules are the write API's (service/writes/validate.ts): one place per rule.
 */
import { GraphQLError, Kind, type ValueNode } from "graphql";
import { ApiError } from "../../service/api-error";
import { parseAddress, parseU64String } from "../../service/writes/validate";
import type { ApiSchemaTypes } from "./builder";
import { decodeCursor } from "./cursor";

// No code of its own: GraphQL reports it as a validation error (GRAPHQL_VALIDATION_FAILED).
const badInput = (message: string) => new GraphQLError(message);

/** Runs a validate.ts rule, turning its ApiError into the GraphQL input error. */
function rule<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ApiError) throw badInput(e.message);
    throw e;
  }
}

const literal = (kind: Kind, what: string) => (node: ValueNode) => {
  if (node.kind !== kind) throw badInput(`${what}: expected a ${kind === Kind.INT ? "integer" : "string"} literal`);
  return (node as { value: string }).value;
};
const stringLiteral = literal(Kind.STRING, "value");

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export const parse = {
  amount: (v: unknown) => rule(() => (parseU64String(v, "amount"), v as string)),
  address: (v: unknown) => rule(() => parseAddress(v, "address").toBase58()),
  dateTime(v: unknown): Date {
    const d = typeof v === "string" && ISO.test(v) ? new Date(v) : null;
    if (!d || Number.isNaN(d.getTime())) throw badInput("expected an ISO 8601 date-time with a zone, e.g. 2026-01-31T18:00:00Z");
    return d;
  },
  pageSize(v: unknown): number {
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 50) throw badInput("first/last must be an integer from 1 to 50");
    return v;
  },
};

type Builder = PothosSchemaTypes.SchemaBuilder<PothosSchemaTypes.ExtendDefaultTypes<ApiSchemaTypes>>;

export function addScalars(builder: Builder): void {
  builder.scalarType("Amount", {
    description: 'An amount in micro-units: a decimal string of a u64 (0 to 18446744073709551615), no sign, no leading zeros, e.g. "5000000".',
    serialize: (v) => String(v),
    parseValue: parse.amount,
    parseLiteral: (n) => parse.amount(stringLiteral(n)),
  });
  builder.scalarType("Address", {
    description: "A Solana address: base58 of 32 bytes, in its canonical spelling.",
    serialize: (v) => String(v),
    parseValue: parse.address,
    parseLiteral: (n) => parse.address(stringLiteral(n)),
  });
  builder.scalarType("DateTime", {
    description: "A point in time: ISO 8601 in UTC out (2026-01-31T18:00:00.000Z); any ISO 8601 date-time with a zone in.",
    serialize: (v) => String(v),
    parseValue: parse.dateTime,
    parseLiteral: (n) => parse.dateTime(stringLiteral(n)),
  });
  builder.scalarType("PageSize", {
    description: "How many items a page holds: an integer from 1 to 50.",
    serialize: (v) => v,
    parseValue: parse.pageSize,
    parseLiteral: (n) => parse.pageSize(Number(literal(Kind.INT, "first/last")(n))),
  });
  builder.scalarType("Cursor", {
    description: "An opaque cursor from a connection's edges or pageInfo; it names an item, not a position, so it stays valid while items arrive.",
    serialize: (v) => String(v),
    parseValue: decodeCursor,
    parseLiteral: (n) => decodeCursor(stringLiteral(n)),
  });
}
