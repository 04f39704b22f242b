/**
 * The write mutations over GraphQL (Pothos), on the same WriteService as the REST routes:
 *
 *   createOffer(input: CreateOfferInput!): WriteReceipt!
 *   takeOffer(offerAddress: String!, input: TakeOfferInput!): WriteReceipt!
 *   closeOffer(offerAddress: String!, input: CloseOfferInput!): WriteReceipt!
 *
 * Inputs carry exactly the REST body fields (amounts as decimal strings); errors are GraphQL
 * errors whose `extensions.code` names the REST status (BAD_REQUEST 400, UNAUTHENTICATED 401,
 * FORBIDDEN 403, NOT_FOUND 404, CONFLICT 409, TOO_MANY_REQUESTS 429, SERVICE_UNAVAILABLE 503) with
 * `extensions.status` the number (and `extensions.retryAfter`, seconds, on 429). The token is the
 * request's `Authorization: Bearer` header, as for REST.
 *
 * `addWriteMutations(builder, ...)` registers them on any Pothos builder (the read API's schema);
 * `writesSchema(service)` is a schema of its own for a stack without the read API.
 */
import SchemaBuilder from "@pothos/core";
import { GraphQLError, type GraphQLSchema } from "graphql";
import type { WriteService } from "../../service/writes/write-service";
import { apiGraphQLError } from "../../service/api-error";

const gqlError = (e: unknown, log?: (e: unknown) => void): GraphQLError =>
  apiGraphQLError(e, "temporarily unavailable; retry with the same idempotencyKey", log);

interface Receipt {
  signature: string;
  status: string;
  offerAddress: string;
  positionAddress?: string;
  takeAmountMicros?: string;
  creatorMatchedMicros?: string;
  refundMicros?: string;
  expectedRevision?: string;
}

/** Anything with a `request` (yoga's context) carrying the Authorization header. */
export type RequestContext = { request: Request };

// The builder's generics belong to the schema that hosts the mutations.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyBuilder = any;

export function addWriteMutations(
  builder: AnyBuilder,
  service: WriteService | ((ctx: RequestContext) => WriteService),
  opts: { log?: (e: unknown) => void } = {},
): void {
  const svc = (ctx: RequestContext) => (typeof service === "function" ? service(ctx) : service);
  const auth = (ctx: RequestContext) => svc(ctx).authorize(ctx.request.headers.get("authorization"));

  const WriteReceipt = builder.objectRef("WriteReceipt").implement({
    description: "A write submitted on chain: `status` is `pending` until the indexer shows the change (see the spec's tracking rules).",
    fields: (t: AnyBuilder) => ({
      signature: t.exposeString("signature"),
      status: t.exposeString("status"),
      offerAddress: t.exposeString("offerAddress"),
      positionAddress: t.exposeString("positionAddress", { nullable: true, description: "take: the caller's position on the offer" }),
      takeAmountMicros: t.exposeString("takeAmountMicros", { nullable: true }),
      creatorMatchedMicros: t.exposeString("creatorMatchedMicros", { nullable: true, description: "take: creator stake matched with this take" }),
      refundMicros: t.exposeString("refundMicros", { nullable: true, description: "close: unmatched creator stake refunded" }),
      expectedRevision: t.exposeString("expectedRevision", { nullable: true }),
    }),
  });
  const CreateOfferInput = builder.inputType("CreateOfferInput", {
    fields: (t: AnyBuilder) => ({
      contractAddress: t.string({ required: true }),
      creatorOutcome: t.string({ required: true, description: "sideA or sideB" }),
      creatorTotalMicros: t.string({ required: true }),
      takerTargetMicros: t.string({ required: true }),
      minimumTakeMicros: t.string({ required: true }),
      expectedFeeBps: t.int({ required: true }),
      idempotencyKey: t.string({ required: true }),
    }),
  });
  const TakeOfferInput = builder.inputType("TakeOfferInput", {
    fields: (t: AnyBuilder) => ({
      takeAmountMicros: t.string({ required: true }),
      expectedRevision: t.string({ required: true }),
      idempotencyKey: t.string({ required: true }),
    }),
  });
  const CloseOfferInput = builder.inputType("CloseOfferInput", {
    fields: (t: AnyBuilder) => ({ expectedRevision: t.string({ required: true }), idempotencyKey: t.string({ required: true }) }),
  });
  const plain = (o: unknown) => ({ ...(o as object) });
  type WriteCall<A> = (writes: ReturnType<typeof svc>, user: Awaited<ReturnType<typeof auth>>, args: A) => Promise<Receipt>;
  /** A mutation's resolver: the caller authenticated, the write service called, its errors as GraphQL errors with the REST status. */
  const write =
    <A>(call: WriteCall<A>) =>
    async (_r: unknown, a: A, ctx: RequestContext): Promise<Receipt> => {
      try {
        return await call(svc(ctx), await auth(ctx), a);
      } catch (e) {
        throw gqlError(e, opts.log);
      }
    };
  builder.mutationFields((t: AnyBuilder) => ({
    createOffer: t.field({
      type: WriteReceipt,
      args: { input: t.arg({ type: CreateOfferInput, required: true }) },
      resolve: write<{ input: unknown }>((writes, user, a) => writes.create(user, plain(a.input))),
    }),
    takeOffer: t.field({
      type: WriteReceipt,
      args: { offerAddress: t.arg.string({ required: true }), input: t.arg({ type: TakeOfferInput, required: true }) },
      resolve: write<{ offerAddress: string; input: unknown }>((writes, user, a) => writes.take(user, a.offerAddress, plain(a.input))),
    }),
    closeOffer: t.field({
      type: WriteReceipt,
      args: { offerAddress: t.arg.string({ required: true }), input: t.arg({ type: CloseOfferInput, required: true }) },
      resolve: write<{ offerAddress: string; input: unknown }>((writes, user, a) => writes.close(user, a.offerAddress, plain(a.input))),
    }),
  }));
}

/** A schema with only the write mutations (and a trivial query), for a stack without the read API. */
export function writesSchema(service: WriteService): GraphQLSchema {
  const builder = new SchemaBuilder<{ Context: RequestContext }>({});
  builder.queryType({ fields: (t) => ({ writesReady: t.boolean({ resolve: () => true }) }) });
  builder.mutationType({});
  addWriteMutations(builder, service);
  return builder.toSchema();
}
