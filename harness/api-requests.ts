/**
 * Request bodies of the REST API that scripts and tests both send: the API guide's worked example
 * (8 units against 10, minimum take 1, the launch fee of 10%) as a create request.
 */
import type { PublicKey } from "@solana/web3.js";

const UNIT = 1_000_000n;

/** POST / body for the worked-example offer on `contract`; `o` overrides or adds fields. */
export function workedExampleCreate(contract: PublicKey, idempotencyKey: string, o: Partial<Record<string, unknown>> = {}): Record<string, unknown> {
  return {
    contractAddress: contract.toBase58(),
    creatorOutcome: "sideA",
    creatorTotalMicros: String(8n * UNIT),
    takerTargetMicros: String(10n * UNIT),
    minimumTakeMicros: String(UNIT),
    expectedFeeBps: 1000,
    idempotencyKey,
    ...o,
  };
}
