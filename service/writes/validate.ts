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
 * - `idempotencyKey` is 8 to 128 characters of visible ASCII (0x21..0x7E).
 * - Unknown fields are refused, so a typo in a field name never goes unnoticed.
 */
import { PublicKey } from "@solana/web3.js";
import { ApiError } from "../api-error";

const bad = (m: string) => new ApiError(400, m);
export const U64_MAX = 18_446_744_073_709_551_615n;
const DIGITS = /^(0|[1-9][0-9]{0,19})$/;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const KEY = /^[\x21-\x7e]{8,128}$/;

export function parseAddress(v: unknown, field: string): PublicKey {
  if (typeof v !== "string" || !BASE58.test(v)) throw bad(`${field} must be a base58 address of 32 bytes`);
  let k: PublicKey;
  try {
    k = new PublicKey(v);
  } catch {
    throw bad(`${field} must be a base58 address of 32 bytes`);
  }
  if (k.toBase58() !== v) throw bad(`${field} must be a base58 address of 32 bytes`);
  return k;
}

export function parseU64String(v: unknown, field: string): bigint {
  if (typeof v !== "string") throw bad(`${field} must be a string of decimal digits (micro-units), e.g. "5000000"`);
  if (!DIGITS.test(v)) throw bad(`${field} must be a string of decimal digits without sign, spaces, exponent or leading zeros`);
  const n = BigInt(v);
  if (n > U64_MAX) throw bad(`${field} must be at most ${U64_MAX}`);
  return n;
}

function parseKey(v: unknown): string {
  if (typeof v !== "string" || !KEY.test(v)) throw bad("idempotencyKey must be a string of 8 to 128 visible ASCII characters");
  return v;
}

function object(body: unknown, allowed: readonly string[], required: readonly string[]): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw bad("body must be a JSON object");
  const o = body as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !allowed.includes(k));
  if (extra.length)
    throw bad(
      `unknown field(s): ${extra
        .slice(0, 5)
        .map((k) => JSON.stringify(k.slice(0, 40)))
        .join(", ")}; allowed: ${allowed.join(", ")}`,
    );
  const missing = required.filter((k) => o[k] === undefined);
  if (missing.length) throw bad(`missing field(s): ${missing.join(", ")}`);
  return o;
}

export interface CreateRequest {
  contract: PublicKey;
  side: "sideA" | "sideB";
  creatorTotal: bigint;
  takerTarget: bigint;
  minimumTake: bigint;
  expectedFeeBps: number;
  idempotencyKey: string;
}

const CREATE_FIELDS = [
  "contractAddress",
  "creatorOutcome",
  "creatorTotalMicros",
  "takerTargetMicros",
  "minimumTakeMicros",
  "expectedFeeBps",
  "idempotencyKey",
] as const;

export function parseCreate(body: unknown): CreateRequest {
  const o = object(body, CREATE_FIELDS, CREATE_FIELDS);
  const idempotencyKey = parseKey(o.idempotencyKey);
  const contract = parseAddress(o.contractAddress, "contractAddress");
  if (o.creatorOutcome !== "sideA" && o.creatorOutcome !== "sideB") throw bad('creatorOutcome must be "sideA" or "sideB"');
  const creatorTotal = parseU64String(o.creatorTotalMicros, "creatorTotalMicros");
  const takerTarget = parseU64String(o.takerTargetMicros, "takerTargetMicros");
  const minimumTake = parseU64String(o.minimumTakeMicros, "minimumTakeMicros");
  const fee = o.expectedFeeBps;
  if (typeof fee !== "number" || !Number.isInteger(fee) || fee < 0 || fee > 10_000) throw bad("expectedFeeBps must be an integer from 0 to 10000");
  return { contract, side: o.creatorOutcome, creatorTotal, takerTarget, minimumTake, expectedFeeBps: fee, idempotencyKey };
}

export interface TakeRequest {
  offer: PublicKey;
  amount: bigint;
  expectedRevision: bigint;
  idempotencyKey: string;
}

const TAKE_FIELDS = ["takeAmountMicros", "expectedRevision", "idempotencyKey"] as const;

export function parseTake(offerAddress: string, body: unknown): TakeRequest {
  const offer = parseAddress(offerAddress, "offer address");
  const o = object(body, TAKE_FIELDS, TAKE_FIELDS);
  const idempotencyKey = parseKey(o.idempotencyKey);
  return {
    offer,
    amount: parseU64String(o.takeAmountMicros, "takeAmountMicros"),
    expectedRevision: parseU64String(o.expectedRevision, "expectedRevision"),
    idempotencyKey,
  };
}

export interface CloseRequest {
  offer: PublicKey;
  expectedRevision: bigint;
  idempotencyKey: string;
}

const CLOSE_FIELDS = ["expectedRevision", "idempotencyKey"] as const;

export function parseClose(offerAddress: string, body: unknown): CloseRequest {
  const offer = parseAddress(offerAddress, "offer address");
  const o = object(body, CLOSE_FIELDS, CLOSE_FIELDS);
  const idempotencyKey = parseKey(o.idempotencyKey);
  return { offer, expectedRevision: parseU64String(o.expectedRevision, "expectedRevision"), idempotencyKey };
}
