/**
 * The quote in GraphQL (issue 24): `Contract.quote(side, amountMicros, worstOdds)`, answering what
 * GET /contracts/{contractAddress}/quote answers (service/read/quote.ts).
 */
import type { Quote, QuoteFill } from "../../service/read/quote";
import { contractQuote } from "../../service/read/quote";
import { quoteParams } from "../../service/read/quote-params";
import type { ObjectRef } from "@pothos/core";
import type { ApiBuilder, ApiSchemaTypes, ReadContext } from "./builder";
import { viewerWallet, type ReadDeps, type ReadTypes } from "./read-types";

const quoteTypes = new WeakMap<ApiBuilder, ReturnType<ApiBuilder["objectRef"]>>();

/** The `Quote` type addQuote registered on `builder` (the takeBest mutation answers its plan with it), if any. */
export function quoteTypeOf(builder: ApiBuilder) {
  return quoteTypes.get(builder) as ObjectRef<PothosSchemaTypes.ExtendDefaultTypes<ApiSchemaTypes>, Quote> | undefined;
}

export function addQuote(builder: ApiBuilder, d: ReadDeps, types: ReadTypes, guard: <T>(fn: () => Promise<T>) => Promise<T>) {
  const { OddsT, ContractT, enums } = types;
  const wallet = (ctx: ReadContext) => viewerWallet(ctx, d.custody);
  const FillT = builder.objectRef<QuoteFill>("QuoteFill").implement({
    description: "One offer a take-best would use, and how much of it.",
    fields: (t) => ({
      offer: t.expose("offer", { type: "Address" }),
      odds: t.expose("odds", { type: OddsT, description: "The offer's taker odds." }),
      amountMicros: t.expose("amountMicros", { type: "Amount", description: "The taker's stake on this offer." }),
      creatorMatchedMicros: t.expose("creatorMatchedMicros", { type: "Amount", description: "Creator stake matched by it." }),
      feeBps: t.exposeInt("feeBps", { description: "The offer's fee on the matched stake, fixed when it was created." }),
    }),
  });
  const QuoteT = builder.objectRef<Quote>("Quote").implement({
    description: "What a take-best of an amount at no worse than given odds would take from the contract's book now.",
    fields: (t) => ({
      contract: t.expose("contract", { type: "Address" }),
      side: t.expose("side", { type: enums.Side, description: "The outcome the taker backs." }),
      amountMicros: t.expose("amountMicros", { type: "Amount" }),
      worstOdds: t.expose("worstOdds", { type: OddsT, nullable: true, description: "The limit asked (taker odds), null for any." }),
      fills: t.expose("fills", { type: [FillT], description: "The offers used, in the order taken." }),
      filledMicros: t.expose("filledMicros", { type: "Amount" }),
      creatorMatchedMicros: t.expose("creatorMatchedMicros", { type: "Amount" }),
      unfilledMicros: t.expose("unfilledMicros", { type: "Amount", description: "What the book cannot fill within the limit." }),
      averageOdds: t.expose("averageOdds", { type: OddsT, nullable: true, description: "(filled + matched) : filled, exact; null when nothing is taken." }),
      feeIfWinMicros: t.expose("feeIfWinMicros", { type: "Amount", description: "The fee on the matched stake if the taker wins." }),
      returnIfWinMicros: t.expose("returnIfWinMicros", { type: "Amount", description: "Stake + matched - fee, if the taker wins." }),
    }),
  });
  quoteTypes.set(builder, QuoteT as never);
  builder.objectField(ContractT, "quote", (t) =>
    t.field({
      type: QuoteT,
      args: {
        side: t.arg({ type: enums.Side, required: true, description: "The outcome the taker backs." }),
        amountMicros: t.arg({ type: "Amount", required: true, description: "The total the taker would stake." }),
        worstOdds: t.arg.string({ description: "The taker's worst odds as numerator/denominator, e.g. 5/2; absent: any." }),
      },
      resolve: (c, a, ctx) =>
        guard(async () => {
          const q = quoteParams(c.address, { side: a.side, amountMicros: String(a.amountMicros), worstOdds: a.worstOdds ?? null });
          return contractQuote(d.read, q, await wallet(ctx));
        }),
    }),
  );
}
