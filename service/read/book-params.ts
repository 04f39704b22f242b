/**
 * Parameters of the book endpoint (GET /contracts/{contractAddress}/book, Contract.book in
 * GraphQL), parsed strictly like the other reads (./params.ts): a malformed address or a depth
 * outside 1..100 is a 400.
 */
import { z } from "zod";
import { addressSchema } from "../writes/validate";
import { parseWith } from "../validation";
import { intParam } from "./params";
import { BOOK_DEPTH } from "./book";

export const BookQuery = z.object({
  depth: intParam("depth", BOOK_DEPTH.default, 1, BOOK_DEPTH.max, "levels per side, best first"),
});

export const ContractAddressPath = z.object({ contractAddress: addressSchema("contract address") });

/** The contract address and depth of a book request, from a path segment and the raw query. */
export function bookParams(contractAddress: string, q: { depth?: string | null }): { contract: string; depth: number } {
  const contract = parseWith(ContractAddressPath, { contractAddress }).contractAddress;
  const p = parseWith(BookQuery, q.depth === null || q.depth === undefined ? {} : { depth: q.depth });
  return { contract, depth: p.depth ? Number(p.depth) : BOOK_DEPTH.default };
}
