/**
 * Issue #26 over GraphQL, on the same services as REST (graphql/rest/portfolio-routes.ts):
 *
 *   portfolio(from: DateTime, to: DateTime): Portfolio!       (the caller's, token needed)
 *   closeAllOffers(input: CloseAllOffersInput!): BulkClose!    (token with bet:write)
 *
 * Fields as in docs/api-guide.md ("Portfolio", "Bulk close"); signed amounts (net, realised P&L)
 * are decimal strings that may start with "-".
 */
import type { Kysely } from "kysely";
import type { Database } from "../../indexer/store/schema";
import { apiGraphQLError, ApiError } from "../../service/api-error";
import type { Custody } from "../../service/custody/custody";
import { portfolio, type ContractExposure, type OutcomeExposure, type Portfolio, type PortfolioTotals } from "../../service/read/portfolio";
import { BulkClose, CLOSE_SCOPES, type BulkCloseItem, type BulkCloseResponse } from "../../service/writes/bulk-close";
import { claimBalance } from "../../service/writes/claim-balance";
import type { WriteService } from "../../service/writes/write-service";
import type { ApiBuilder, ReadContext } from "./builder";
import { viewerWallet } from "./read-types";

export interface PortfolioSchemaDeps {
  db: () => Kysely<Database>;
  custody: Custody | null;
  writes: () => WriteService | null;
}

export function addPortfolioSchema(builder: ApiBuilder, d: PortfolioSchemaDeps): void {
  const gql = (e: unknown) => apiGraphQLError(e, "temporarily unavailable; retry with backoff (and the same idempotencyKey)");
  const Outcome = builder.objectRef<OutcomeExposure>("OutcomeExposure").implement({
    description: "What the caller gets back, and wins or loses, if the contract ends on `result`.",
    fields: (t) => ({
      result: t.exposeString("result", { description: "sideA, sideB or void." }),
      returnMicros: t.expose("returnMicros", { type: "Amount", description: "Back to the caller on this result: stakes included, fee deducted." }),
      netMicros: t.exposeString("netMicros", { description: "returnMicros less matchedStakeMicros (signed decimal string)." }),
    }),
  });
  const Exposure = builder.objectRef<ContractExposure>("ContractExposure").implement({
    description: "The caller's unsettled stake on one contract.",
    fields: (t) => ({
      contract: t.expose("contract", { type: "Address" }),
      title: t.exposeString("title", { nullable: true }),
      event: t.exposeString("event", { nullable: true }),
      sport: t.exposeString("sport", { nullable: true }),
      status: t.exposeString("status", { description: "Open, Resolved or Voided." }),
      result: t.exposeString("result", { description: "none until resolved, then sideA, sideB or void." }),
      cutoffAt: t.exposeString("cutoffAt", { description: "ISO 8601 UTC." }),
      matchedStakeMicros: t.expose("matchedStakeMicros", { type: "Amount", description: "The caller's matched stake in unsettled positions." }),
      unmatchedMicros: t.expose("unmatchedMicros", { type: "Amount", description: "Unmatched stake of the caller's open offers here." }),
      openOfferCount: t.exposeInt("openOfferCount"),
      openPositionCount: t.exposeInt("openPositionCount"),
      outcomes: t.field({ type: [Outcome], resolve: (c) => c.outcomes }),
    }),
  });
  const Totals = builder.objectRef<PortfolioTotals>("PortfolioTotals").implement({
    fields: (t) => ({
      stakeAtRiskMicros: t.expose("stakeAtRiskMicros", { type: "Amount", description: "Matched stake in unsettled positions on contracts still Open." }),
      unmatchedLockedMicros: t.expose("unmatchedLockedMicros", { type: "Amount", description: "Unmatched stake of the caller's open offers." }),
      pendingPayoutsMicros: t.expose("pendingPayoutsMicros", {
        type: "Amount",
        description: "What unsettled positions on resolved or voided contracts will pay.",
      }),
      claimsWaitingMicros: t.expose("claimsWaitingMicros", { type: "Amount", nullable: true, description: "The caller's claim balance on chain." }),
      realisedPnlMicros: t.exposeString("realisedPnlMicros", { description: "Paid less staked over positions settled in the range, after fees (signed)." }),
      feesPaidMicros: t.expose("feesPaidMicros", { type: "Amount", description: "Fees deducted from the caller's winnings in the range." }),
      won: t.exposeInt("won"),
      lost: t.exposeInt("lost"),
      refunded: t.exposeInt("refunded"),
    }),
  });
  const PortfolioT = builder.objectRef<Portfolio>("Portfolio").implement({
    description: "The caller's exposure per contract and outcome, and totals (docs/api-guide.md, Portfolio).",
    fields: (t) => ({
      wallet: t.expose("wallet", { type: "Address" }),
      from: t.exposeString("from", { nullable: true }),
      to: t.exposeString("to", { nullable: true }),
      totals: t.field({ type: Totals, resolve: (p) => p.totals }),
      contracts: t.field({ type: [Exposure], resolve: (p) => p.contracts }),
    }),
  });
  builder.queryField("portfolio", (t) =>
    t.field({
      type: PortfolioT,
      description: "The caller's portfolio (needs a token). The range applies to the realised P&L and the counts (settled in [from, to)).",
      args: {
        from: t.arg({ type: "DateTime", required: false, description: "Settled at or after." }),
        to: t.arg({ type: "DateTime", required: false, description: "Settled before." }),
      },
      resolve: async (_r, a, ctx: ReadContext) => {
        try {
          const wallet = await viewerWallet(ctx, d.custody);
          if (!wallet) throw new ApiError(401, "portfolio needs a token: Authorization: Bearer <token>");
          const sec = (x: Date | null | undefined) => (x ? Math.floor(x.getTime() / 1000) : null);
          const range = { from: sec(a.from), to: sec(a.to) };
          if (range.from !== null && range.to !== null && range.from >= range.to) throw new ApiError(400, "from must be before to");
          const writes = d.writes();
          return await portfolio(d.db(), wallet, range, writes ? () => claimBalance(writes, wallet) : undefined);
        } catch (e) {
          throw gql(e);
        }
      },
    }),
  );

  const Scope = builder.enumType("CloseScope", { values: CLOSE_SCOPES, description: "Which open offers of the caller a bulk close takes." });
  const Item = builder.objectRef<BulkCloseItem>("BulkCloseItem").implement({
    fields: (t) => ({
      offerAddress: t.expose("offerAddress", { type: "Address" }),
      contract: t.expose("contract", { type: "Address" }),
      status: t.exposeString("status", { description: "pending (submitted, with its signature) or refused (with why)." }),
      signature: t.exposeString("signature", { nullable: true }),
      refundMicros: t.expose("refundMicros", { type: "Amount", nullable: true }),
      httpStatus: t.exposeInt("httpStatus", { nullable: true, description: "A refusal's status, as a single close would answer it." }),
      code: t.exposeString("code", { nullable: true }),
      error: t.exposeString("error", { nullable: true }),
    }),
  });
  const Bulk = builder.objectRef<BulkCloseResponse>("BulkClose").implement({
    description: "A bulk close: one transaction per closed offer; every offer in scope is listed with its signature or its refusal.",
    fields: (t) => ({
      scope: t.exposeString("scope"),
      requested: t.exposeInt("requested"),
      closed: t.exposeInt("closed"),
      refused: t.exposeInt("refused"),
      transactions: t.exposeInt("transactions"),
      results: t.field({ type: [Item], resolve: (b) => b.results }),
    }),
  });
  const Input = builder.inputType("CloseAllOffersInput", {
    fields: (t) => ({
      scope: t.field({ type: Scope, required: true, description: "contract, event, sport or all." }),
      contract: t.field({ type: "Address", required: false, description: "With scope contract." }),
      event: t.string({ required: false, description: "With scope event: the catalog's event." }),
      sport: t.string({ required: false, description: "With scope sport: the catalog's sport." }),
      idempotencyKey: t.string({ required: true, description: "8 to 128 characters; a replay answers the same offers and signatures." }),
    }),
  });
  builder.mutationField("closeAllOffers", (t) =>
    t.field({
      type: Bulk,
      description: "Close every open offer of the caller in a scope (token with bet:write).",
      args: { input: t.arg({ type: Input, required: true, description: "The scope, its contract, event or sport, and the idempotency key." }) },
      resolve: async (_r, a, ctx: ReadContext) => {
        try {
          const writes = d.writes();
          if (!writes) throw new ApiError(503, "writes are not configured");
          const p = await writes.authorize(ctx.request.headers.get("authorization"));
          const body = Object.fromEntries(Object.entries(a.input).filter(([, v]) => v !== null && v !== undefined));
          return await new BulkClose(writes).closeAll(p, body, "request", ctx.requestId);
        } catch (e) {
          throw gql(e);
        }
      },
    }),
  );
}
