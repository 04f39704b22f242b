import { expect } from "vitest";
import { OFFERS_ERRORS } from "../../idl/client/offers";
import type { TxResult } from "../../harness/chain";

/** Name of the program error a failed transaction ended with ("ok" when it succeeded). */
export function outcome(r: TxResult, errors: Map<number, { name: string }> = OFFERS_ERRORS): string {
  if (r.ok) return "ok";
  if (r.code !== null) return errors.get(r.code)?.name ?? `custom:${r.code}`;
  return r.error ?? "unknown";
}

export function expectOk(r: TxResult): void {
  expect(r.error, r.logs.join("\n")).toBeNull();
}

export function expectError(r: TxResult, name: string, errors?: Map<number, { name: string }>): void {
  expect(outcome(r, errors), r.logs.join("\n")).toBe(name);
}
