/**
 * @coral-xyz/anchor, importable from both vitest (ESM build) and plain Node/tsx (CJS build,
 * whose named exports Node cannot detect: `import { BN } from "@coral-xyz/anchor"` fails there).
 * Import Anchor values through this module.
 */
import * as ns from "@coral-xyz/anchor";

const anchor: typeof ns = (ns as unknown as { default?: typeof ns }).default ?? ns;

export const BN = anchor.BN;
export type BN = ns.BN;
export const Program = anchor.Program;
export type Program<T extends ns.Idl = ns.Idl> = ns.Program<T>;
export const BorshAccountsCoder = anchor.BorshAccountsCoder;
export const BorshEventCoder = anchor.BorshEventCoder;
export const AnchorProvider = anchor.AnchorProvider;
export type AnchorProvider = ns.AnchorProvider;
export const utils = anchor.utils;
export type { Idl, Provider } from "@coral-xyz/anchor";
