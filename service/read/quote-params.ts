/**
 * Parameters of the quote (GET /contracts/{contractAddress}/quote, Contract.quote in GraphQL),
 * parsed strictly like the book's (./book-params.ts): `side` and `amountMicros` are required,
 * `worstOdds` is optional; a malformed or missing value is a 400 naming the parameter.
 *
 * `worstOdds` is the taker's worst odds `numerator/denominator` (the book's ratio (T + S) : T),
 * two positive decimal integers of at most 2^64-1 each, compared exactly, never as a decimal.
 */
import { z } from "zod";
import { parseWith } from "../validation";
import { U64_MAX } from "../writes/validate";
import { ContractAddressPath } from "./book-params";
import type { Side } from "./book";

const U64 = /^[1-9][0-9]{0,19}$/;
const RATIO = /^([1-9][0-9]{0,19})\/([1-9][0-9]{0,19})$/;
const got = (v: unknown) => JSON.stringify(String(v).slice(0, 60));
const positiveU64 = (v: string) => U64.test(v) && BigInt(v) <= U64_MAX;

/** A ratio of two positive u64 as `numerator/denominator`, or null when malformed. */
export function parseRatio(v: string): { numerator: bigint; denominator: bigint } | null {
  const m = RATIO.exec(v);
  if (!m || !positiveU64(m[1]) || !positiveU64(m[2])) return null;
  return { numerator: BigInt(m[1]), denominator: BigInt(m[2]) };
}

export const QuoteQuery = z.object({
  side: z
    .string({ error: (i) => `side must be "sideA" or "sideB"; got ${got(i.input)}` })
    .refine((v) => v === "sideA" || v === "sideB", { error: (i) => `side must be "sideA" or "sideB"; got ${got(i.input)}` })
    .meta({ enum: ["sideA", "sideB"], description: "the outcome the taker backs (the offers used are those whose creator backs the other)" }),
  amountMicros: z
    .string({ error: (i) => `amountMicros must be a positive decimal integer of micro-units (at most ${U64_MAX}); got ${got(i.input)}` })
    .refine(positiveU64, { error: (i) => `amountMicros must be a positive decimal integer of micro-units (at most ${U64_MAX}); got ${got(i.input)}` })
    .meta({ description: "the total the taker would stake, in micro-units", examples: ["50000000"] }),
  worstOdds: z
    .string({ error: (i) => `worstOdds must be numerator/denominator, two positive integers; got ${got(i.input)}` })
    .refine((v) => v === "" || parseRatio(v) !== null, {
      error: (i) => `worstOdds must be numerator/denominator, two positive integers; got ${got(i.input)}`,
    })
    .optional()
    .meta({ description: "the taker's worst odds accepted, an exact ratio (T + S) : T such as 5/2; absent: any odds", examples: ["5/2"] }),
});

export interface QuoteParams {
  contract: string;
  side: Side;
  amount: bigint;
  worstOdds: { numerator: bigint; denominator: bigint } | null;
}

/** The contract address and the quote's terms, from a path segment and the raw query. */
export function quoteParams(contractAddress: string, q: { side?: string | null; amountMicros?: string | null; worstOdds?: string | null }): QuoteParams {
  const contract = parseWith(ContractAddressPath, { contractAddress }).contractAddress;
  const present = (v: string | null | undefined) => (v === null || v === undefined ? undefined : v);
  const p = parseWith(QuoteQuery, { side: present(q.side), amountMicros: present(q.amountMicros), worstOdds: present(q.worstOdds) });
  return {
    contract,
    side: p.side as Side,
    amount: BigInt(p.amountMicros),
    worstOdds: p.worstOdds ? parseRatio(p.worstOdds) : null,
  };
}
