/**
 * Response bodies of ./portfolio-routes.ts as zod schemas, for the OpenAPI document. The fields
 * are defined in docs/api-guide.md ("Portfolio", "Bulk close", "Dead-man switch").
 */
import { z } from "@hono/zod-openapi";
import { CLOSE_SCOPES } from "../../service/writes/bulk-close";

const micros = (description = "amount in micro-units, a decimal string of an unsigned 64-bit integer") =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/)
    .meta({ description });
const signed = (description: string) =>
  z
    .string()
    .regex(/^(0|-?[1-9][0-9]*)$/)
    .meta({ description: `${description}; a decimal string of a signed integer in micro-units` });
const timestamp = () => z.string().meta({ format: "date-time", description: "ISO 8601 UTC" });
const address = () => z.string().meta({ description: "base58 address of 32 bytes" });

export const PortfolioAnswer = z
  .object({
    wallet: address(),
    from: timestamp().nullable(),
    to: timestamp().nullable(),
    totals: z
      .object({
        stakeAtRiskMicros: micros("matched stake in unsettled positions on contracts still Open"),
        unmatchedLockedMicros: micros("unmatched creator stake of the caller's open offers"),
        pendingPayoutsMicros: micros("what unsettled positions on Resolved or Voided contracts will pay the caller"),
        claimsWaitingMicros: micros("the caller's claim balance on chain, waiting for a withdrawal").nullable(),
        realisedPnlMicros: signed("paid to the caller less the caller's stake, over positions settled in the range (fees deducted)"),
        feesPaidMicros: micros("fees deducted from the caller's winnings in the range"),
        won: z.number().int(),
        lost: z.number().int(),
        refunded: z.number().int(),
      })
      .meta({ id: "PortfolioTotals" }),
    contracts: z.array(
      z
        .object({
          contract: address(),
          title: z.string().nullable(),
          event: z.string().nullable(),
          sport: z.string().nullable(),
          status: z.enum(["Open", "Resolved", "Voided"]),
          result: z.enum(["none", "sideA", "sideB", "void"]),
          cutoffAt: timestamp(),
          matchedStakeMicros: micros("the caller's matched stake in unsettled positions"),
          unmatchedMicros: micros("unmatched stake of the caller's open offers on this contract"),
          openOfferCount: z.number().int(),
          openPositionCount: z.number().int(),
          outcomes: z.array(
            z
              .object({
                result: z.enum(["sideA", "sideB", "void"]),
                returnMicros: micros("what comes back to the caller on this result (stake included, fee deducted)"),
                netMicros: signed("returnMicros less matchedStakeMicros"),
              })
              .meta({ id: "OutcomeExposure" }),
          ),
        })
        .meta({ id: "ContractExposure" }),
    ),
  })
  .meta({ id: "Portfolio" });

export const BulkCloseAnswer = z
  .object({
    scope: z.enum(CLOSE_SCOPES),
    requested: z.number().int(),
    closed: z.number().int(),
    refused: z.number().int(),
    transactions: z.number().int().meta({ description: "transactions sent: one per closed offer" }),
    results: z.array(
      z
        .object({
          offerAddress: address(),
          contract: address(),
          status: z.enum(["pending", "refused"]),
          signature: z.string().nullable(),
          refundMicros: micros().nullable(),
          httpStatus: z.number().int().nullable().meta({ description: "a refusal's status, as a single close would answer it" }),
          code: z.string().nullable(),
          error: z.string().nullable(),
        })
        .meta({ id: "BulkCloseItem" }),
    ),
  })
  .meta({ id: "BulkCloseResponse" });

export const DeadManSwitchAnswer = z
  .object({
    state: z.enum(["none", "armed", "disarmed", "tripped", "fired"]),
    timeoutSeconds: z.number().int().nullable(),
    armedAt: timestamp().nullable(),
    lastHeartbeatAt: timestamp().nullable(),
    deadlineAt: timestamp().nullable(),
    trippedAt: timestamp().nullable(),
    firedAt: timestamp().nullable(),
    reason: z.string().nullable().meta({ description: "why it tripped" }),
    // anyOf, not a nullable $ref: OpenAPI 3.1 renders the latter as allOf, which refuses null.
    closes: z.union([BulkCloseAnswer, z.null()]).meta({ description: "the bulk close it made; null before it tripped" }),
  })
  .meta({ id: "DeadManSwitch" });
