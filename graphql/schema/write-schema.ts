/**
 * The write mutations over GraphQL (Pothos), on the same WriteService as the REST routes:
 *
 *   createOffer(input: CreateOfferInput!): WriteReceipt!
 *   takeOffer(offerAddress: Address!, input: TakeOfferInput!): WriteReceipt!
 *   closeOffer(offerAddress: Address!, input: CloseOfferInput!): WriteReceipt!
 *
 * Inputs carry exactly the REST body fields, typed: amounts are `Amount` (decimal strings of a
 * u64), addresses `Address`, the side a `Side`, so a malformed value fails at validation. Errors
 * of the write service are GraphQL errors whose `extensions.code` names the REST status
 * (BAD_REQUEST 400, UNAUTHENTICATED 401, FORBIDDEN 403, NOT_FOUND 404, CONFLICT 409,
 * TOO_MANY_REQUESTS 429, SERVICE_UNAVAILABLE 503) with `extensions.status` the number (and
 * `extensions.retryAfter`, seconds, on 429). The token is the request's `Authorization: Bearer`
 * header, as for REST.
 *
 * `addWriteMutations(builder, ...)` registers them on the API's builder (with the read API);
 * `writesSchema(service)` is a schema of its own for a stack without the read API.
 */
import { GraphQLError, type GraphQLSchema } from "graphql";
import type { WriteService } from "../../service/writes/write-service";
import { apiGraphQLError } from "../../service/api-error";
import { createBuilder, type ApiBuilder, type ReadContext } from "./builder";
import { enumsOf } from "./enums";

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

export function addWriteMutations(
  builder: ApiBuilder,
  service: WriteService | ((ctx: ReadContext) => WriteService),
  opts: { log?: (e: unknown) => void } = {},
): void {
  const svc = (ctx: ReadContext) => (typeof service === "function" ? service(ctx) : service);
  const auth = (ctx: ReadContext) => svc(ctx).authorize(ctx.request.headers.get("authorization"));

  const { Side } = enumsOf(builder);
  const WriteReceipt = builder.objectRef<Receipt>("WriteReceipt").implement({
    description: "A write submitted on chain: `status` is `pending` until the indexer shows the change (see the spec's tracking rules).",
    fields: (t) => ({
      signature: t.exposeString("signature"),
      status: t.exposeString("status"),
      offerAddress: t.expose("offerAddress", { type: "Address" }),
      positionAddress: t.expose("positionAddress", { type: "Address", nullable: true, description: "take: the caller's position on the offer" }),
      takeAmountMicros: t.expose("takeAmountMicros", { type: "Amount", nullable: true }),
      creatorMatchedMicros: t.expose("creatorMatchedMicros", { type: "Amount", nullable: true, description: "take: creator stake matched with this take" }),
      refundMicros: t.expose("refundMicros", { type: "Amount", nullable: true, description: "close: unmatched creator stake refunded" }),
      expectedRevision: t.exposeString("expectedRevision", { nullable: true }),
    }),
  });
  const CreateOfferInput = builder.inputType("CreateOfferInput", {
    fields: (t) => ({
      contractAddress: t.field({ type: "Address", required: true }),
      creatorOutcome: t.field({ type: Side, required: true }),
      creatorTotalMicros: t.field({ type: "Amount", required: true }),
      takerTargetMicros: t.field({ type: "Amount", required: true }),
      minimumTakeMicros: t.field({ type: "Amount", required: true }),
      expectedFeeBps: t.int({ required: true }),
      idempotencyKey: t.string({ required: true }),
    }),
  });
  const TakeOfferInput = builder.inputType("TakeOfferInput", {
    fields: (t) => ({
      takeAmountMicros: t.field({ type: "Amount", required: true }),
      expectedRevision: t.string({ required: true }),
      idempotencyKey: t.string({ required: true }),
    }),
  });
  const CloseOfferInput = builder.inputType("CloseOfferInput", {
    fields: (t) => ({ expectedRevision: t.string({ required: true }), idempotencyKey: t.string({ required: true }) }),
  });
  // The write service validates a REST body: the same fields as a plain object.
  const plain = (o: object): Record<string, unknown> => ({ ...o });
  type WriteCall = (writes: ReturnType<typeof svc>, user: Awaited<ReturnType<typeof auth>>) => Promise<Receipt>;
  /** A mutation's body: the caller authenticated, the write service called, its errors as GraphQL errors with the REST status. */
  const write = async (ctx: ReadContext, call: WriteCall): Promise<Receipt> => {
    try {
      return await call(svc(ctx), await auth(ctx));
    } catch (e) {
      throw gqlError(e, opts.log);
    }
  };
  builder.mutationFields((t) => ({
    createOffer: t.field({
      type: WriteReceipt,
      args: { input: t.arg({ type: CreateOfferInput, required: true }) },
      resolve: (_r, a, ctx) => write(ctx, (writes, user) => writes.create(user, plain(a.input))),
    }),
    takeOffer: t.field({
      type: WriteReceipt,
      args: { offerAddress: t.arg({ type: "Address", required: true }), input: t.arg({ type: TakeOfferInput, required: true }) },
      resolve: (_r, a, ctx) => write(ctx, (writes, user) => writes.take(user, a.offerAddress, plain(a.input))),
    }),
    closeOffer: t.field({
      type: WriteReceipt,
      args: { offerAddress: t.arg({ type: "Address", required: true }), input: t.arg({ type: CloseOfferInput, required: true }) },
      resolve: (_r, a, ctx) => write(ctx, (writes, user) => writes.close(user, a.offerAddress, plain(a.input))),
    }),
  }));
}

/** A schema with only the write mutations (and a trivial query), for a stack without the read API. */
export function writesSchema(service: WriteService): GraphQLSchema {
  const builder = createBuilder();
  builder.queryType({ fields: (t) => ({ writesReady: t.boolean({ resolve: () => true }) }) });
  builder.mutationType({});
  addWriteMutations(builder, service);
  return builder.toSchema();
}
