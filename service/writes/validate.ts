/**
 * Parsing of write requests: every field of the spec's POST bodies, strictly.
 *
 * Decisions (documented in README "Writes"):
 * - Amounts (`*Micros`) are JSON strings of decimal digits with no sign, no spaces, no exponent,
 *   no fraction and no leading zero ("0" itself is a valid integer string, refused later by the
 *   limits); at most 20 digits and at most 2^64-1 (u64). Numbers are refused: a JSON number may
 *   already have lost precision.
 * - `expectedRevision` is a decimal string like amounts (u64).
 * - `expectedFeeBps` is a JSON integer 0..10000.
 * - `expiresAt` (optional; absent or null: none) is an ISO 8601 date-time with a zone, a whole
 *   second (the program keeps unix seconds); whether it is after now and no later than the
 *   contract's cutoff is the write service's check, against the chain's clock.
 * - `idempotencyKey` is any string of 8 to 128 characters (Unicode code points, the spec's
 *   "characters"). A key the store cannot hold as text (a NUL, an unpaired surrogate) is kept as
 *   its sha256 instead; it still names one action of its user.
 * - Unknown fields are refused, so a typo in a field name never goes unnoticed.
 * - The rules are zod schemas (CreateBody, TakeBody, CloseBody): the REST routes validate with them
 *   and publish them in docs/openapi.json, so the document cannot drift from the checks.
 */
import { createHash } from "node:crypto";
import { PublicKey } from "@solana/web3.js";
import { z } from "zod";
import { fieldError, parseWith, strictBody } from "../validation";

export const U64_MAX = 18_446_744_073_709_551_615n;
const DIGITS = /^(0|[1-9][0-9]{0,19})$/;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * Addresses recently found canonical: every read of an offer checks its address, and decoding
 * then re-encoding base58 cost more than the rest of a cached read. Only good answers are kept,
 * at most CANONICAL_KEPT (oldest out first).
 */
const canonical = new Set<string>();
const CANONICAL_KEPT = 10_000;

function canonicalAddress(v: string): boolean {
  if (canonical.has(v)) return true;
  try {
    if (new PublicKey(v).toBase58() !== v) return false;
  } catch {
    return false;
  }
  if (canonical.size >= CANONICAL_KEPT) canonical.delete(canonical.values().next().value!);
  canonical.add(v);
  return true;
}

/** One schema per field name: built once, reused by every request. */
function perField<S>(build: (field: string) => S): (field: string) => S {
  const made = new Map<string, S>();
  return (field) => {
    let s = made.get(field);
    if (s === undefined) made.set(field, (s = build(field)));
    return s;
  };
}

/** A base58 address of 32 bytes, in its canonical spelling. */
export const addressSchema = perField((field) => {
  const message = `${field} must be a base58 address of 32 bytes`;
  return z
    .string({ error: fieldError(field, message) })
    .regex(BASE58, { error: message, abort: true })
    .refine(canonicalAddress, { error: message })
    .meta({ description: "base58 address of 32 bytes", examples: ["11111111111111111111111111111111"] });
});

/** An amount in micro-units (or a revision): a JSON string of decimal digits, at most 2^64-1. */
export const u64Schema = perField((field) =>
  z
    .string({ error: fieldError(field, `${field} must be a string of decimal digits (micro-units), e.g. "5000000"`) })
    .regex(DIGITS, { error: `${field} must be a string of decimal digits without sign, spaces, exponent or leading zeros`, abort: true })
    .refine((v) => BigInt(v) <= U64_MAX, { error: `${field} must be at most ${U64_MAX}` })
    .meta({ description: "decimal string of an unsigned 64-bit integer", examples: ["5000000"] }),
);

const keyLength = (v: string) => [...v].length;

const idempotencyKeySchema = z
  .string({ error: fieldError("idempotencyKey", "idempotencyKey must be a string of 8 to 128 characters") })
  .refine((v) => keyLength(v) >= 8 && keyLength(v) <= 128, {
    error: (iss) => `idempotencyKey must be 8 to 128 characters; got ${keyLength(String(iss.input))}`,
  })
  // JSON Schema counts characters as code points, like the rule (zod's min/max count UTF-16 units).
  .meta({ minLength: 8, maxLength: 128, description: "unique per intended action: a replay with the same key and body returns the original result" });

/** The store keeps text: a key it cannot hold (a NUL, an unpaired surrogate) is kept as its sha256. */
function storableKey(v: string): string {
  if (v.includes("\u0000") || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(v))
    return `sha256:${createHash("sha256").update(Buffer.from(v, "utf16le")).digest("hex")}`;
  return v;
}

export function parseAddress(v: unknown, field: string): PublicKey {
  return new PublicKey(parseWith(addressSchema(field), v));
}

export function parseU64String(v: unknown, field: string): bigint {
  return BigInt(parseWith(u64Schema(field), v));
}

export const CreateBody = strictBody({
  contractAddress: addressSchema("contractAddress"),
  creatorOutcome: z.enum(["sideA", "sideB"], { error: fieldError("creatorOutcome", 'creatorOutcome must be "sideA" or "sideB"') }),
  creatorTotalMicros: u64Schema("creatorTotalMicros"),
  takerTargetMicros: u64Schema("takerTargetMicros"),
  minimumTakeMicros: u64Schema("minimumTakeMicros"),
  expectedFeeBps: z
    .number({ error: fieldError("expectedFeeBps", "expectedFeeBps must be an integer from 0 to 10000") })
    .int({ error: "expectedFeeBps must be an integer from 0 to 10000" })
    .min(0, { error: "expectedFeeBps must be an integer from 0 to 10000" })
    .max(10_000, { error: "expectedFeeBps must be an integer from 0 to 10000" }),
  expiresAt: z.iso
    .datetime({ offset: true, error: fieldError("expiresAt", "expiresAt must be an ISO 8601 date-time with a zone, e.g. 2026-01-31T18:00:00Z") })
    .refine((v) => Date.parse(v) % 1000 === 0, { error: "expiresAt must be a whole second" })
    .nullish()
    .meta({
      description:
        "optional: from this time the offer takes no takes and anyone may close it (the service's worker does); after now and no later than the contract's cutoff",
      examples: ["2026-01-31T18:00:00Z"],
    }),
  idempotencyKey: idempotencyKeySchema,
}).meta({ id: "CreateOfferRequest" });

export const TakeBody = strictBody({
  takeAmountMicros: u64Schema("takeAmountMicros"),
  expectedRevision: u64Schema("expectedRevision"),
  idempotencyKey: idempotencyKeySchema,
}).meta({ id: "TakeOfferRequest" });

export const CloseBody = strictBody({
  expectedRevision: u64Schema("expectedRevision"),
  idempotencyKey: idempotencyKeySchema,
}).meta({ id: "CloseOfferRequest" });

/** A taker's odds limit `numerator : denominator`, two positive u64 decimal strings (issue 24). */
const oddsPart = (field: string) => u64Schema(`worstOdds.${field}`).refine((v) => v !== "0", { error: `worstOdds.${field} must be positive` });

export const TakeBestBody = strictBody({
  side: z
    .enum(["sideA", "sideB"], { error: fieldError("side", 'side must be "sideA" or "sideB"') })
    .meta({ description: "the outcome the taker backs; the offers taken are those whose creator backs the other" }),
  amountMicros: u64Schema("amountMicros").refine((v) => v !== "0", { error: "amountMicros must be positive" }),
  worstOdds: z
    .strictObject(
      { numerator: oddsPart("numerator"), denominator: oddsPart("denominator") },
      { error: fieldError("worstOdds", 'worstOdds must be {"numerator", "denominator"}, two strings of positive decimal digits') },
    )
    .meta({
      description: "the taker's worst odds accepted, (T + S) : T as an exact ratio, e.g. 5 : 2",
    }),
  mode: z
    .enum(["fill-and-kill", "fill-or-kill"], { error: fieldError("mode", 'mode must be "fill-and-kill" or "fill-or-kill"') })
    .meta({ description: "fill-and-kill: take what the limit allows, leave the rest; fill-or-kill: all of it or nothing" }),
  idempotencyKey: idempotencyKeySchema,
}).meta({ id: "TakeBestRequest" });

/** The offer address of a take or close path. */
export const OfferPath = z.object({ address: addressSchema("offer address") });

export interface CreateRequest {
  contract: PublicKey;
  side: "sideA" | "sideB";
  creatorTotal: bigint;
  takerTarget: bigint;
  minimumTake: bigint;
  expectedFeeBps: number;
  /** Unix seconds; 0: none. */
  expiresAt: bigint;
  idempotencyKey: string;
}

export function parseCreate(body: unknown): CreateRequest {
  const o = parseWith(CreateBody, body);
  return {
    contract: new PublicKey(o.contractAddress),
    side: o.creatorOutcome,
    creatorTotal: BigInt(o.creatorTotalMicros),
    takerTarget: BigInt(o.takerTargetMicros),
    minimumTake: BigInt(o.minimumTakeMicros),
    expectedFeeBps: o.expectedFeeBps,
    expiresAt: o.expiresAt ? BigInt(Date.parse(o.expiresAt) / 1000) : 0n,
    idempotencyKey: storableKey(o.idempotencyKey),
  };
}

export interface TakeRequest {
  offer: PublicKey;
  amount: bigint;
  expectedRevision: bigint;
  idempotencyKey: string;
}

export function parseTake(offerAddress: string, body: unknown): TakeRequest {
  const offer = parseAddress(offerAddress, "offer address");
  const o = parseWith(TakeBody, body);
  return { offer, amount: BigInt(o.takeAmountMicros), expectedRevision: BigInt(o.expectedRevision), idempotencyKey: storableKey(o.idempotencyKey) };
}

export interface TakeBestRequestBody {
  contract: PublicKey;
  side: "sideA" | "sideB";
  amount: bigint;
  worstOdds: { numerator: bigint; denominator: bigint };
  mode: "fill-and-kill" | "fill-or-kill";
  idempotencyKey: string;
}

export function parseTakeBest(contractAddress: string, body: unknown): TakeBestRequestBody {
  const contract = parseAddress(contractAddress, "contract address");
  const o = parseWith(TakeBestBody, body);
  return {
    contract,
    side: o.side,
    amount: BigInt(o.amountMicros),
    worstOdds: { numerator: BigInt(o.worstOdds.numerator), denominator: BigInt(o.worstOdds.denominator) },
    mode: o.mode,
    idempotencyKey: storableKey(o.idempotencyKey),
  };
}

export interface CloseRequest {
  offer: PublicKey;
  expectedRevision: bigint;
  idempotencyKey: string;
}

export function parseClose(offerAddress: string, body: unknown): CloseRequest {
  const offer = parseAddress(offerAddress, "offer address");
  const o = parseWith(CloseBody, body);
  return { offer, expectedRevision: BigInt(o.expectedRevision), idempotencyKey: storableKey(o.idempotencyKey) };
}
