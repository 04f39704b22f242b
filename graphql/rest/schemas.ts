/**
 * Response bodies and headers of the REST routes as zod schemas, for the OpenAPI document
 * (docs/openapi.json). The request side lives with the rules it states: service/read/params.ts
 * and service/writes/validate.ts. Amounts are decimal strings, never numbers.
 */
import { z } from "@hono/zod-openapi";
import { SPORTS } from "../../service/read/sports";
import { POOL_CANCEL_REASONS } from "../../indexer";
import { OfferStatus as OFFER_STATUSES, SETTLEMENT_STATUSES } from "../../idl/client/offers";
import { POOL_STATES } from "../../idl/client/pools-rules";
import { TAKE_REFUSALS } from "../../service/read/offer-viewer";
import { API_ERROR_CODES, type HttpErrorStatus } from "../../service/api-error";

const micros = (description = "amount in micro-units, a decimal string of an unsigned 64-bit integer") =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/)
    .meta({ description });
const timestamp = () => z.string().meta({ format: "date-time", description: "ISO 8601 UTC" });
const address = () => z.string().meta({ description: "base58 address of 32 bytes" });
const side = () => z.enum(["sideA", "sideB"]);

const codeList = Object.entries(API_ERROR_CODES)
  .map(([status, code]) => `${code} (${status})`)
  .join(", ");
export const ErrorBody = z
  .object({
    error: z.string().meta({ description: "what was wrong, for a person to read" }),
    code: z.enum(Object.values(API_ERROR_CODES)).meta({
      description: `what was wrong, for a program: names the status, the same code as GraphQL's extensions.code: ${codeList}`,
    }),
  })
  .meta({ id: "Error" });

export const Settings = z.object({
  feeBps: z.number().int().min(0).max(10_000),
  offersEnabled: z.boolean(),
  limits: z
    .object({
      minimumCreatorMicros: micros(),
      minimumTakeMicros: micros(),
      maximumWagerMicros: micros(),
      warningRatioNumerator: micros("decimal string"),
      warningRatioDenominator: micros("decimal string"),
      minimumOddsNumerator: micros("decimal string"),
      minimumOddsDenominator: micros("decimal string"),
      maximumOddsNumerator: micros("decimal string"),
      maximumOddsDenominator: micros("decimal string"),
    })
    .meta({ id: "Limits" }),
});

export const Contract = z
  .object({
    address: address(),
    templateId: z.string(),
    eventId: z.string(),
    title: z.string(),
    description: z.string(),
    event: z.string(),
    sport: z.enum(SPORTS),
    competition: z.string(),
    startsAt: timestamp(),
    cutoffAt: timestamp(),
    resolutionDeadline: timestamp(),
    status: z.string().meta({ description: "Open accepts offers (before cutoffAt)" }),
    result: z.enum(["sideA", "sideB", "void"]).nullable().meta({ description: "the side that won, or void; null while unresolved" }),
    outcomes: z.array(z.object({ side: side(), label: z.string() })),
    visuals: z.array(z.object({ src: z.string(), alt: z.string() })),
  })
  .meta({ id: "Contract" });

export const ContractsResponse = Settings.extend({ contracts: z.array(Contract) }).meta({ id: "ContractsResponse" });

const ViewerPosition = z
  .object({
    address: address(),
    takerAmountMicros: micros(),
    creatorMatchedMicros: micros(),
    status: z.string(),
    fillCount: z.number().int(),
    createdAt: timestamp(),
    settledAt: timestamp().nullable(),
    payoutMicros: micros().nullable(),
    feeMicros: micros().nullable(),
  })
  .meta({ id: "ViewerPosition" });

const SettlementOutcome = z
  .object({
    status: z.enum(SETTLEMENT_STATUSES),
    positionCount: z.number().int(),
    takerMicros: micros(),
    creatorMatchedMicros: micros(),
    creatorPayoutMicros: micros(),
    takerPayoutMicros: micros(),
    feeMicros: micros(),
  })
  .meta({ id: "SettlementOutcome" });

const CreatorSettlement = z
  .object({
    settledPositionCount: z.number().int(),
    paidOutMicros: micros(),
    feeMicros: micros(),
    refundedMicros: micros(),
    receivedMicros: micros(),
    outcomes: z.array(SettlementOutcome),
  })
  .meta({ id: "CreatorSettlement" });

const Viewer = z
  .object({
    role: z.enum(["none", "creator", "taker"]),
    canTake: z.boolean(),
    maxTakeMicros: micros(),
    takeLimit: z.enum(["remaining", "maximumWager"]),
    takeRefusal: z.enum(TAKE_REFUSALS).nullable(),
    canClose: z.boolean(),
    returnMicros: micros().nullable(),
    position: ViewerPosition.nullable(),
    settlement: CreatorSettlement.nullable(),
  })
  .meta({ id: "Viewer", description: "the offer relative to the signed-in caller (role none when anonymous)" });

const oddsFields = {
  numerator: micros("numerator of the ratio in lowest terms, a decimal integer string"),
  denominator: micros("denominator of the ratio in lowest terms, a decimal integer string"),
  decimal: z
    .string()
    .regex(/^[0-9]+\.[0-9]{4}$/)
    .meta({ description: "numerator / denominator with 4 decimals, rounded down" }),
  impliedProbabilityBps: z.number().int().min(0).max(10_000).meta({ description: "10000 × denominator / numerator, rounded to nearest (a half up)" }),
};
export const Odds = z
  .object(oddsFields)
  .meta({ id: "Odds", description: "odds as an exact ratio: what a unit staked returns when it wins, stake included, before fee" });
export const TakerOdds = z
  .object({
    ...oddsFields,
    decimalAfterFee: z
      .string()
      .regex(/^[0-9]+\.[0-9]{4}$/)
      .meta({ description: "(T + S - fee on S at the offer's feeBps) / T with 4 decimals, rounded down" }),
  })
  .meta({ id: "TakerOdds", description: "the taker's odds (T + S) : T for creator stake S and taker target T" });

export const Offer = z
  .object({
    address: address(),
    contract: Contract,
    creator: z.object({ displayName: z.string(), profileImageUrl: z.string() }),
    creatorOutcome: side(),
    creatorSideLabel: z.string(),
    takerSideLabel: z.string(),
    creatorTotalMicros: micros(),
    creatorAllocatedMicros: micros(),
    takerTargetMicros: micros(),
    takerFilledMicros: micros(),
    remainingTakerMicros: micros(),
    minimumTakeMicros: micros(),
    feeBps: z.number().int(),
    termsGuardrail: z.object({ status: z.enum(["normal", "warning"]) }),
    status: z.enum(OFFER_STATUSES),
    fillCount: z.number().int(),
    positionCount: z.number().int(),
    settledPositionCount: z.number().int(),
    revision: micros("decimal string; changes on every fill and close (send it back as expectedRevision)"),
    createdAt: timestamp(),
    closedAt: timestamp().nullable(),
    expiresAt: timestamp()
      .nullable()
      .meta({ description: "From this time the offer takes no takes and anyone may close it; null: none (the contract's cutoff only)" }),
    takerOdds: TakerOdds,
    creatorOdds: Odds,
    viewer: Viewer,
  })
  .meta({ id: "Offer" });

const Pagination = z
  .object({ page: z.number().int(), pageSize: z.number().int(), total: z.number().int(), hasNextPage: z.boolean() })
  .meta({ id: "Pagination" });

export const OfferPage = z.object({ offers: z.array(Offer), pagination: Pagination }).meta({ id: "OfferPage" });

export const WalletPick = z
  .object({
    poolAddress: z.string(),
    participantAddress: z.string(),
    question: z.string(),
    state: z.enum(["OPEN", "LOCKED", "RESOLVING", "RESOLVED", "DISTRIBUTED", "CANCELED", "REFUNDED"]),
    totalMicros: z.string().meta({ description: "micro-units the wallet has on the pool, all outcomes together" }),
    settled: z.boolean().meta({ description: "paid, marked a loser, or refunded" }),
    winningOutcome: z.number().int().nullable(),
  })
  .meta({ id: "WalletPick" });

export const WalletPositions = z
  .object({
    offers: z.array(Offer).meta({ description: "offers the wallet took, each with the wallet's position in viewer" }),
    pagination: Pagination,
    picks: z.array(WalletPick).meta({ description: "the wallet's pool picks, newest first, at most 100" }),
  })
  .meta({ id: "WalletPositions" });

export const FillPage = z
  .object({
    fills: z.array(
      z
        .object({
          offer: address(),
          revision: micros("decimal string: the offer's revision this fill produced"),
          taker: address(),
          position: address(),
          takeMicros: micros(),
          creatorMatchedMicros: micros(),
          takerFilledMicros: micros(),
          creatorAllocatedMicros: micros(),
          filledAt: timestamp(),
          signature: z.string(),
        })
        .meta({ id: "Fill" }),
    ),
    pagination: Pagination,
  })
  .meta({ id: "FillPage" });

export const ShareablePage = z
  .object({
    offers: z.array(z.object({ address: address(), text: z.string(), url: z.string(), offer: Offer }).meta({ id: "ShareableOffer" })),
    pagination: Pagination,
  })
  .meta({ id: "ShareablePage" });

const receipt = {
  signature: z.string().meta({ description: "the on-chain transaction signature" }),
  status: z.literal("pending"),
  offerAddress: address(),
};
export const CreateReceipt = z.object(receipt).meta({ id: "CreateOfferResponse" });
export const TakeReceipt = z
  .object({ ...receipt, positionAddress: address(), takeAmountMicros: micros(), creatorMatchedMicros: micros(), expectedRevision: micros("decimal string") })
  .meta({ id: "TakeOfferResponse" });
export const CloseReceipt = z.object({ ...receipt, refundMicros: micros(), expectedRevision: micros("decimal string") }).meta({ id: "CloseOfferResponse" });

export const PoolAggregate = z
  .object({
    schemaVersion: z.literal(1),
    id: address(),
    slug: z.string().nullable(),
    question: z.string(),
    version: z.number().int(),
    state: z.enum(POOL_STATES),
    cancelReason: z.enum(POOL_CANCEL_REASONS).nullable(),
    outcomes: z.array(
      z.object({
        outcomeIndex: z.number().int(),
        label: z.string(),
        totalOiMicros: micros(),
        shareBps: z.number().int().min(0).max(10_000),
        wagerCount: z.number().int(),
        isResolved: z.boolean(),
      }),
    ),
    totalOiMicros: micros(),
    participantCount: z.number().int(),
    closesAt: timestamp().nullable(),
    resolutionAt: timestamp().nullable(),
    resolutionCriteria: z.string().nullable(),
    coverImageUrl: z.string().nullable(),
    updatedAt: timestamp(),
    canonicalUrl: z.string(),
    revision: z.string().regex(/^[0-9a-f]{32}$/),
  })
  .meta({ id: "PoolAggregate" });

export const EmbedResponse = z.object({ data: PoolAggregate, error: z.null() }).meta({ id: "EmbedResponse" });

/** Seconds to wait: sent with every 429 and 503. */
const retryAfter = z
  .string()
  .regex(/^[0-9]+$/)
  .meta({ description: "seconds to wait before retrying" });

const json = (schema: z.ZodType) => ({ "application/json": { schema } });
/** An error answer of a route: its description, the code of its status, the `{error, code}` body. */
export const documentedError = (status: HttpErrorStatus, description: string, headers?: Record<string, z.ZodType>) => ({
  description: `${description} (code ${API_ERROR_CODES[status]})`,
  content: json(ErrorBody),
  ...(headers ? { headers: z.object(headers) } : {}),
});

/** The error statuses every offers route may answer, with the spec's meaning. */
export const ERRORS = {
  400: documentedError(400, "malformed input: the message names the field and what it accepts"),
  401: documentedError(401, "a token is missing (where needed), malformed, unknown, revoked, expired, or lacks bet:write on a write"),
  403: documentedError(403, "the caller's account, or the offer creator's, is blocked from wagering"),
  404: documentedError(404, "unknown offer (or contract)"),
  409: documentedError(409, "state moved (fee, revision, amount no longer available): re-read and retry with fresh values"),
  413: documentedError(413, "request body too large"),
  429: documentedError(429, "too many requests from this address or token", { "Retry-After": retryAfter }),
  503: documentedError(503, "offers switched off or temporarily unavailable: retry with backoff (and the same idempotencyKey)", { "Retry-After": retryAfter }),
} as const;

export const ok = (description: string, schema: z.ZodType, headers?: Record<string, z.ZodType>) => ({
  description,
  content: json(schema),
  ...(headers ? { headers: z.object(headers) } : {}),
});
