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
 * A receipt carries `offer`, the Offer (a Relay node) as the read API knows it when the mutation
 * answers, so that a normalising cache (Apollo, Relay) updates its copy from the mutation: for take
 * and close the offer as indexed so far (the write shows once the indexer applies it, `status`
 * `pending` until then); for create null until the new offer is indexed. It is loaded only when
 * asked for, with the caller's `viewer` block.
 *
 * `addWriteMutations(builder, ...)` registers them on the API's builder (with the read API);
 * `writesSchema(service)` is a schema of its own for a stack without the read API.
 */
import { GraphQLError, type GraphQLSchema } from "graphql";
import type { WriteService } from "../../service/writes/write-service";
import { apiGraphQLError } from "../../service/api-error";
import type { ErrorLog } from "../../service/observability/log";
import type { Offer } from "../../service/read/read-service";
import type { Quote } from "../../service/read/quote";
import type { TakeBestResponse } from "../../service/writes/take-best";
import type { ObjectRef } from "@pothos/core";
import { createBuilder, type ApiBuilder, type ApiSchemaTypes, type ReadContext } from "./builder";
import type { ReadTypes } from "./read-types";
import { enumsOf } from "./enums";

const gqlError = (e: unknown): GraphQLError => apiGraphQLError(e, "temporarily unavailable; retry with the same idempotencyKey");

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

/** How a receipt finds its offer: the read API's Offer type and a load as the `offer` query does it. */
export interface ReceiptOffer {
  type: ReadTypes["OfferT"];
  load: (address: string, ctx: ReadContext) => Promise<Offer | null>;
}

export function addWriteMutations(
  builder: ApiBuilder,
  service: WriteService | ((ctx: ReadContext) => WriteService),
  opts: { log?: ErrorLog; offer?: ReceiptOffer; quote?: ObjectRef<PothosSchemaTypes.ExtendDefaultTypes<ApiSchemaTypes>, Quote> } = {},
): void {
  const svc = (ctx: ReadContext) => (typeof service === "function" ? service(ctx) : service);
  const auth = (ctx: ReadContext) => svc(ctx).authorize(ctx.request.headers.get("authorization"));

  const { Side } = enumsOf(builder);
  const receiptOffer = opts.offer;
  const WriteReceipt = builder.objectRef<Receipt>("WriteReceipt").implement({
    description: "A write submitted on chain: `status` is `pending` until the indexer shows the change (see the spec's tracking rules).",
    fields: (t) => ({
      signature: t.exposeString("signature", { description: "The on-chain transaction signature (base58)." }),
      status: t.exposeString("status", { description: "`pending`: submitted; the change shows once the indexer applies it." }),
      offerAddress: t.expose("offerAddress", { type: "Address", description: "The offer written to (create: the new offer's address)." }),
      ...(receiptOffer
        ? {
            offer: t.field({
              type: receiptOffer.type,
              nullable: true,
              description:
                "The offer as the read API knows it now, with the caller's viewer block, for a normalising cache: take and close: as indexed so far (the write shows once indexed); create: null until indexed.",
              // The write went through: a failed read leaves this null rather than reporting the write as failed.
              resolve: (r, _a, ctx) =>
                receiptOffer.load(r.offerAddress, ctx).catch((e: unknown) => {
                  opts.log?.(e, ctx.requestId);
                  return null;
                }),
            }),
          }
        : {}),
      positionAddress: t.expose("positionAddress", { type: "Address", nullable: true, description: "take: the caller's position on the offer" }),
      takeAmountMicros: t.expose("takeAmountMicros", { type: "Amount", nullable: true, description: "take: the amount taken" }),
      creatorMatchedMicros: t.expose("creatorMatchedMicros", { type: "Amount", nullable: true, description: "take: creator stake matched with this take" }),
      refundMicros: t.expose("refundMicros", { type: "Amount", nullable: true, description: "close: unmatched creator stake refunded" }),
      expectedRevision: t.exposeString("expectedRevision", { nullable: true, description: "take and close: the revision the write was made against" }),
    }),
  });
  const idempotencyKey = "8 to 128 characters, unique per intended action: a replay with the same key and input returns the first receipt.";
  const expectedRevision = "The offer's current `revision`; the write is refused (CONFLICT) if the offer changed since.";
  const CreateOfferInput = builder.inputType("CreateOfferInput", {
    description: "The REST create body: a side of an open contract, a stake and the total wanted on the other side.",
    fields: (t) => ({
      contractAddress: t.field({ type: "Address", required: true, description: "An open contract before its cutoff (the contracts query)." }),
      creatorOutcome: t.field({ type: Side, required: true, description: "The creator's side." }),
      creatorTotalMicros: t.field({ type: "Amount", required: true, description: "The creator's stake, within the settings' limits." }),
      takerTargetMicros: t.field({ type: "Amount", required: true, description: "Total wanted on the other side; stake : target within the odds range." }),
      minimumTakeMicros: t.field({ type: "Amount", required: true, description: "Smallest take accepted (a take of the whole remainder may go below)." }),
      expectedFeeBps: t.int({ required: true, description: "The settings' current feeBps; refused (CONFLICT) if it changed." }),
      expiresAt: t.field({
        type: "DateTime",
        required: false,
        description:
          "Optional: from this time the offer takes no takes and anyone may close it; after now and no later than the contract's cutoff, a whole second.",
      }),
      idempotencyKey: t.string({ required: true, description: idempotencyKey }),
    }),
  });
  const TakeOfferInput = builder.inputType("TakeOfferInput", {
    description: "The REST take body.",
    fields: (t) => ({
      takeAmountMicros: t.field({
        type: "Amount",
        required: true,
        description: "At least the offer's minimumTakeMicros, or exactly its remainingTakerMicros.",
      }),
      expectedRevision: t.string({ required: true, description: expectedRevision }),
      idempotencyKey: t.string({ required: true, description: idempotencyKey }),
    }),
  });
  const CloseOfferInput = builder.inputType("CloseOfferInput", {
    description: "The REST close body.",
    fields: (t) => ({
      expectedRevision: t.string({ required: true, description: expectedRevision }),
      idempotencyKey: t.string({ required: true, description: idempotencyKey }),
    }),
  });
  // The write service validates a REST body: the same fields as a plain object.
  // A DateTime arrives parsed (a Date): the body carries it as the REST ISO string.
  const plain = (o: object): Record<string, unknown> => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]));
  type WriteCall = (writes: ReturnType<typeof svc>, user: Awaited<ReturnType<typeof auth>>) => Promise<Receipt>;
  /** A mutation's body: the caller authenticated, the write service called, its errors as GraphQL errors with the REST status. */
  const write = async (ctx: ReadContext, call: WriteCall): Promise<Receipt> => {
    try {
      return await call(svc(ctx), await auth(ctx));
    } catch (e) {
      throw gqlError(e);
    }
  };
  builder.mutationFields((t) => ({
    createOffer: t.field({
      type: WriteReceipt,
      description: "Create an offer with the caller's wallet (token with bet:write); the caller's balance must cover the stake.",
      args: { input: t.arg({ type: CreateOfferInput, required: true, description: "The offer's terms and the idempotency key." }) },
      resolve: (_r, a, ctx) => write(ctx, (writes, user) => writes.create(user, plain(a.input), ctx.requestId)),
    }),
    takeOffer: t.field({
      type: WriteReceipt,
      description: "Take part or all of another user's offer (token with bet:write); repeat takes add to the caller's position.",
      args: {
        offerAddress: t.arg({ type: "Address", required: true, description: "The offer's address." }),
        input: t.arg({ type: TakeOfferInput, required: true, description: "The amount, the expected revision and the idempotency key." }),
      },
      resolve: (_r, a, ctx) => write(ctx, (writes, user) => writes.take(user, a.offerAddress, plain(a.input), ctx.requestId)),
    }),
    closeOffer: t.field({
      type: WriteReceipt,
      description:
        "Withdraw the unmatched part of an offer (token with bet:write): its creator at any time, anyone after the contract's cutoff; allowed to blocked accounts.",
      args: {
        offerAddress: t.arg({ type: "Address", required: true, description: "The offer's address." }),
        input: t.arg({ type: CloseOfferInput, required: true, description: "The expected revision and the idempotency key." }),
      },
      resolve: (_r, a, ctx) => write(ctx, (writes, user) => writes.close(user, a.offerAddress, plain(a.input), ctx.requestId)),
    }),
  }));
  if (opts.quote) addTakeBest(builder, opts.quote, write as unknown as TakeBestWrite);
}

type TakeBestWrite = (
  ctx: ReadContext,
  call: (writes: WriteService, user: Awaited<ReturnType<WriteService["authorize"]>>) => Promise<TakeBestResponse>,
) => Promise<TakeBestResponse>;

/** `takeBest(contractAddress, input)`: needs the read API's Quote type for its plan, so only on the API's builder. */
function addTakeBest(builder: ApiBuilder, QuoteT: ObjectRef<PothosSchemaTypes.ExtendDefaultTypes<ApiSchemaTypes>, Quote>, write: TakeBestWrite): void {
  const { Side } = enumsOf(builder);
  const Receipt = builder.objectRef<TakeBestResponse>("TakeBestReceipt").implement({
    description: 'A take-best submitted on chain: `pending` until the positions show what it took (docs/api-guide.md, "Take the best price").',
    fields: (t) => ({
      signature: t.exposeString("signature", { description: "The last transaction sent (the one a replay of the key follows)." }),
      signatures: t.exposeStringList("signatures", { description: "Every transaction sent, in order (several only under fill-and-kill)." }),
      status: t.exposeString("status"),
      mode: t.exposeString("mode"),
      plan: t.expose("plan", { type: QuoteT, description: "What the transactions were built to take." }),
    }),
  });
  const OddsLimitInput = builder.inputType("OddsLimitInput", {
    description: "The taker's worst odds accepted, (T + S) : T as an exact ratio.",
    fields: (t) => ({
      numerator: t.field({ type: "Amount", required: true, description: "T + S of the worst ratio accepted." }),
      denominator: t.field({ type: "Amount", required: true, description: "T of the worst ratio accepted (not 0)." }),
    }),
  });
  const TakeBestInput = builder.inputType("TakeBestInput", {
    description: "The REST take-best body.",
    fields: (t) => ({
      side: t.field({ type: Side, required: true, description: "The outcome the taker backs." }),
      amountMicros: t.field({ type: "Amount", required: true, description: "The most the taker stakes in all." }),
      worstOdds: t.field({ type: OddsLimitInput, required: true, description: "The worst taker odds accepted; offers below it are passed over." }),
      mode: t.string({ required: true, description: "`fill-and-kill` (take what the limit allows) or `fill-or-kill` (all or nothing)." }),
      idempotencyKey: t.string({
        required: true,
        description: "8 to 128 characters, unique per intended action: a replay with the same key and input returns the first receipt.",
      }),
    }),
  });
  builder.mutationField("takeBest", (t) =>
    t.field({
      type: Receipt,
      description: "Take up to an amount from a contract's book at no worse than given odds, best offers first (token with bet:write).",
      args: {
        contractAddress: t.arg({ type: "Address", required: true, description: "The contract whose book is swept (the contracts query)." }),
        input: t.arg({ type: TakeBestInput, required: true, description: "The side, amount, worst odds, mode and idempotency key." }),
      },
      resolve: (_r, a, ctx) =>
        write(ctx, (writes, user) => writes.takeBest(user, a.contractAddress, { ...a.input, worstOdds: { ...a.input.worstOdds } }, ctx.requestId)),
    }),
  );
}

/** A schema with only the write mutations (and a trivial query), for a stack without the read API. */
export function writesSchema(service: WriteService): GraphQLSchema {
  const builder = createBuilder();
  builder.queryType({ fields: (t) => ({ writesReady: t.boolean({ resolve: () => true }) }) });
  builder.mutationType({});
  addWriteMutations(builder, service);
  return builder.toSchema();
}
