/**
 * The amount an Action's visitor types: stablecoin units as people write them ("5", "2.5"), up
 * to the mint's 6 decimals, turned into micro-units exactly (string arithmetic, never a float).
 */
import { ApiError } from "../api-error";

const AMOUNT = /^(\d{1,12})(?:\.(\d{1,6}))?$/;

/** "2.5" -> 2_500_000n; anything else (sign, exponent, 7 decimals, empty) is a 400 naming the field. */
export function parseStablecoinAmount(raw: string | null | undefined, field = "amount"): bigint {
  const m = AMOUNT.exec((raw ?? "").trim());
  if (!m) throw new ApiError(400, `${field} must be a stablecoin amount such as 5 or 2.5 (at most 6 decimals)`);
  return BigInt(m[1]) * 1_000_000n + BigInt((m[2] ?? "").padEnd(6, "0"));
}

/** 2_500_000n -> "2.5": the inverse, for the links an Action offers. */
export function stablecoinAmount(micros: bigint): string {
  const frac = (micros % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return `${micros / 1_000_000n}${frac ? `.${frac}` : ""}`;
}
