/**
 * The one Pothos builder of the API's schema: its context, scalars, nullability default and
 * plugins. Fields are non-null unless marked nullable, so clients can rely on what the spec
 * always sends; edges and their nodes are non-null too (a page never holds holes).
 */
import SchemaBuilder from "@pothos/core";
import RelayPlugin, { decodeGlobalID } from "@pothos/plugin-relay";
import { GraphQLError } from "graphql";
import type { ReadViewer } from "../../service/read/viewer";
import type { Cursor } from "./cursor";
import { addScalars } from "./scalars";

export interface ReadContext {
  request: Request;
  viewer?: Promise<ReadViewer | null>;
  /** The client's address group (graphql/rate-limit.ts clientAddress): live-capacity shares count by it. */
  address?: string;
  /** The HTTP request's id (none over WebSocket): logged with what is done on its behalf (writes' transactions, unexpected errors). */
  requestId?: string;
}

export interface ApiSchemaTypes {
  Context: ReadContext;
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Scalars: {
    ID: { Input: string; Output: string };
    /** A u64 amount in micro-units as a decimal string (input checked, output as stored). */
    Amount: { Input: string; Output: string };
    /** A base58 public key of 32 bytes, in its canonical spelling. */
    Address: { Input: string; Output: string };
    /** ISO 8601 in UTC out; any ISO 8601 date-time with a zone in. */
    DateTime: { Input: Date; Output: string };
    /** A page size: an integer from 1 to 50. */
    PageSize: { Input: number; Output: number };
    /** An opaque cursor returned by a connection. */
    Cursor: { Input: Cursor; Output: string };
  };
}

export type ApiBuilder = PothosSchemaTypes.SchemaBuilder<PothosSchemaTypes.ExtendDefaultTypes<ApiSchemaTypes>>;

/** The types node(id:) loads; an id of any other type is refused like a malformed one. */
export const NODE_TYPES: ReadonlySet<string> = new Set(["Offer", "ShareableOffer", "ViewerPosition", "Contract", "PoolAggregate", "Fill"]);

/** A global id this API could have issued, or BAD_REQUEST (never an internal error). */
function decodeId(id: string): { typename: string; id: string } {
  try {
    const d = decodeGlobalID(id);
    if (NODE_TYPES.has(d.typename)) return d;
  } catch {
    // Not base64 of `Type:key`: answered below.
  }
  throw new GraphQLError("not an id returned by this API", { extensions: { code: "BAD_REQUEST", status: 400 } });
}

export function createBuilder(): ApiBuilder {
  const builder = new SchemaBuilder<ApiSchemaTypes>({
    plugins: [RelayPlugin],
    defaultFieldNullability: false,
    relay: {
      clientMutationId: "omit",
      cursorType: "String",
      edgesFieldOptions: { nullable: false },
      nodeFieldOptions: { nullable: false },
      decodeGlobalID: decodeId,
    },
  });
  addScalars(builder);
  return builder;
}
