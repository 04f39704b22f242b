/**
 * Shared pieces of the attacker-model fuzzers (tests/offers/attacks/attacker-fuzz.test.ts,
 * tests/pools/attacks/attacker-fuzz.test.ts): an instruction builder driven by the IDL (so an attacker can
 * put any account in any slot, with any signer/writable flag, and honest flows keep working while
 * the programs' account lists change), actors with their token accounts and a model of what they
 * are owed, attack tallies, error names, SPL token moves (close, re-open, re-own), non-canonical
 * PDAs at every bump, planted Config-shaped accounts, and invariant failures that carry the seed
 * and the step.
 *
 * FUZZ_SEED (default 1510) and FUZZ_ACTIONS (default 1500) select a run.
 */
import {
  AccountLayout,
  ACCOUNT_SIZE,
  AuthorityType,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createCloseAccountInstruction,
  createInitializeAccount3Instruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  createSetAuthorityInstruction,
  createTransferInstruction,
} from "@solana/spl-token";
import { Keypair, PublicKey, SystemProgram, TransactionInstruction, type AccountInfo } from "@solana/web3.js";
import type { Idl, Program } from "../../idl/client/anchor";
import { BN } from "../../idl/client/anchor";
import type { TestChain, TxResult } from "../../harness/chain";
import { Rng as RngOf, type Rng } from "../../harness/random";
import { TOKEN_ERRORS, programDataAddress } from "../../idl/client/common";
import { LAUNCH_FEE_BPS, LAUNCH_LIMITS, OFFERS_ERRORS, OFFERS_PROGRAM_ID, OffersClient, offersAccountsCoder } from "../../idl/client/offers";
import { POOLS_ERRORS, POOLS_PROGRAM_ID, PoolsClient, poolsAccountsCoder } from "../../idl/client/pools";

export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 1510);
export const FUZZ_ACTIONS = Number(process.env.FUZZ_ACTIONS ?? 1500);
/** The test's time limit: generous per action (a loaded 2-core machine runs 3-4 times slower than an idle one). */
export const FUZZ_TIMEOUT_MS = Math.max(180_000, FUZZ_ACTIONS * 400);
/** The describe title of a fuzzer: what program, which run (seed and length), which engine. */
export const fuzzTitle = (program: string): string =>
  `${program} attacker fuzz (seed ${FUZZ_SEED}, ${FUZZ_ACTIONS} actions, ${process.env.SVM_ENGINE ?? "bankrun"})`;
export const SYSTEM_PROGRAM = SystemProgram.programId;
export const TOKEN_PROGRAM = TOKEN_PROGRAM_ID;

const b58 = (k: PublicKey) => k.toBase58();

// ---------------------------------------------------------------------------------------------
// Failures that name the seed and the step.

export class FuzzContext {
  step = -1;
  action = "setup";
  readonly trail: string[] = [];
  readonly startedAt = Date.now();
  constructor(
    readonly program: string,
    readonly seed: number,
    readonly actions: number,
  ) {}
  /** Records what the current step does (the last 12 are printed with a failure). */
  note(s: string): void {
    this.trail.push(`${this.step}: ${s}`);
    if (this.trail.length > 12) this.trail.shift();
  }
  fail(msg: string, logs?: string[]): never {
    const tail = logs?.length ? `\n--- logs ---\n${logs.slice(-40).join("\n")}` : "";
    throw new Error(
      `[${this.program} attacker fuzz] INVARIANT BROKEN at step ${this.step} (${this.action}); reproduce with FUZZ_SEED=${this.seed} FUZZ_ACTIONS=${this.actions}\n` +
        `${msg}\n--- last steps ---\n${this.trail.join("\n")}${tail}`,
    );
  }
  check(cond: unknown, msg: string | (() => string), logs?: string[]): asserts cond {
    if (!cond) this.fail(typeof msg === "string" ? msg : msg(), logs);
  }
}

// ---------------------------------------------------------------------------------------------
// Instructions from the IDL.

export type AccountMap = Record<string, PublicKey | undefined>;
/** What the fuzzers need of Anchor's BorshAccountsCoder. */
export interface AccountsCoder {
  decode(name: string, data: Buffer): unknown;
  encode(name: string, value: unknown): Promise<Buffer>;
}
export interface IdlIxAccount {
  name: string;
  writable?: boolean;
  signer?: boolean;
}

export function idlIx(program: Program<Idl>, name: string): { accounts: IdlIxAccount[]; args: { name: string; type: unknown }[] } | undefined {
  return (program.idl.instructions as unknown as { name: string; accounts: IdlIxAccount[]; args: { name: string; type: unknown }[] }[]).find(
    (i) => i.name === name,
  );
}
export const hasIx = (program: Program<Idl>, name: string): boolean => idlIx(program, name) !== undefined;
export const ixNames = (program: Program<Idl>): string[] => (program.idl.instructions as unknown as { name: string }[]).map((i) => i.name);

export interface BuildOptions {
  /** Addresses that sign (default: the IDL's signer flags). */
  signers?: Set<string>;
  /** Account names whose writable flag is flipped. */
  flipWritable?: Set<string>;
  /** Fill accounts the map lacks with this (instead of failing). */
  fill?: (name: string) => PublicKey;
}

const bnArgs = (v: unknown): unknown => {
  if (typeof v === "bigint") return new BN(v.toString());
  if (Array.isArray(v)) return v.map(bnArgs);
  if (v && typeof v === "object" && !(v instanceof PublicKey) && !BN.isBN(v) && !Buffer.isBuffer(v))
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, bnArgs(x)]));
  return v;
};

/**
 * An instruction of `program` named `name` (camelCase, as in the IDL the client uses), its
 * accounts taken by name from `accounts` in the IDL's order (extra names ignored, so one map can
 * serve several versions of an account list), its arguments by name from `args` (bigints become
 * u64s; an argument `fooBump` missing from `args` is taken from `bumps` for the account `foo`).
 */
export function buildIx(
  program: Program<Idl>,
  name: string,
  args: Record<string, unknown>,
  accounts: AccountMap,
  opts: BuildOptions = {},
  bumps?: Map<string, number>,
): TransactionInstruction {
  const ix = idlIx(program, name);
  if (!ix) throw new Error(`the IDL has no instruction ${name}`);
  const missing: string[] = [];
  const keys = ix.accounts.map((a) => {
    let k = accounts[a.name];
    if (!k && opts.fill) k = opts.fill(a.name);
    if (!k) {
      missing.push(a.name);
      k = PublicKey.default;
    }
    const signer = opts.signers ? opts.signers.has(b58(k)) && !!a.signer : !!a.signer;
    const writable = !!a.writable !== !!opts.flipWritable?.has(a.name);
    return { pubkey: k, isSigner: signer, isWritable: writable || signer };
  });
  if (missing.length) throw new Error(`${name}: no account for ${missing.join(", ")} (IDL: ${ix.accounts.map((a) => a.name).join(" ")})`);
  const full: Record<string, unknown> = { ...args };
  for (const a of ix.args) {
    if (full[a.name] !== undefined) continue;
    const m = /^(.*)Bump$/.exec(a.name);
    const acct = m ? accounts[m[1]] : undefined;
    if (acct && bumps?.has(b58(acct))) full[a.name] = bumps.get(b58(acct));
    else if (m) full[a.name] = 255;
    else throw new Error(`${name}: no value for argument ${a.name} (IDL args: ${ix.args.map((x) => x.name).join(" ")})`);
  }
  const data = program.coder.instruction.encode(name, bnArgs(full) as never);
  return new TransactionInstruction({ programId: program.programId, keys, data });
}

/** Decodes a program account by its IDL name with u64/i64 as bigint (null when not that type). */
export function decodeAs<T = Record<string, unknown>>(coder: AccountsCoder, name: string, data: Buffer | undefined | null): T | null {
  if (!data || data.length < 8) return null;
  try {
    return toBig(coder.decode(name, data)) as T;
  } catch {
    return null;
  }
}
export function toBig(v: unknown): unknown {
  if (BN.isBN(v)) return BigInt((v as BN).toString());
  if (v instanceof PublicKey || v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(toBig);
  return Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, toBig(x)]));
}

// ---------------------------------------------------------------------------------------------
// PDAs at every bump.

export interface Pda {
  address: PublicKey;
  bump: number;
  canonical: boolean;
}

/** Every valid PDA of `seeds` (canonical first), at most `limit` of them. */
export function allBumps(seeds: (Buffer | Uint8Array)[], programId: PublicKey, limit = 256): Pda[] {
  const out: Pda[] = [];
  for (let bump = 255; bump >= 0 && out.length < limit; bump--) {
    try {
      const address = PublicKey.createProgramAddressSync([...seeds, Buffer.from([bump])], programId);
      out.push({ address, bump, canonical: out.length === 0 });
    } catch {
      /* on the curve: not a PDA */
    }
  }
  return out;
}

export const u64le = (v: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, v));
  return b;
};

// ---------------------------------------------------------------------------------------------
// Error names and tallies.

const SYSTEM_ERRORS = [
  "AccountAlreadyInUse",
  "ResultWithNegativeLamports",
  "InvalidProgramId",
  "InvalidAccountDataLength",
  "MaxSeedLengthExceeded",
  "AddressWithSeedMismatch",
];

/** The runtime's own refusals, by message (both engines' wordings). */
const RUNTIME_ERRORS: [RegExp, string][] = [
  [/insufficient funds for rent|InsufficientFundsForRent/i, "InsufficientFundsForRent"],
  [/missing required signature|MissingRequiredSignature/i, "MissingRequiredSignature"],
  [/writable privilege escalated|PrivilegeEscalation/i, "PrivilegeEscalation"],
  [/instruction modified data of an account it does not own|ExternalAccountDataModified/i, "ExternalAccountDataModified"],
  [/sum of account balances before and after instruction do not match|UnbalancedInstruction/i, "UnbalancedInstruction"],
  [/Program failed to complete|ProgramFailedToComplete/i, "ProgramFailedToComplete"],
  [/account data too small|AccountDataTooSmall/i, "AccountDataTooSmall"],
  [/invalid account data for instruction|InvalidAccountData/i, "InvalidAccountData"],
  [/incorrect program id for instruction|IncorrectProgramId/i, "IncorrectProgramId"],
  [/Attempt to debit an account but found no record of a prior credit|AccountNotFound/i, "AccountNotFound"],
  [/already in use|AccountAlreadyInUse/i, "AccountAlreadyInUse"],
  [/invalid program argument|InvalidArgument/i, "InvalidArgument"],
  [/Cross-program invocation with unauthorized signer or writable account/i, "CpiUnauthorizedSignerOrWritable"],
  [/ReadonlyLamportChange|instruction changed the balance of a read-only account/i, "ReadonlyLamportChange"],
  [/AccountBorrowFailed|already borrowed/i, "AccountBorrowFailed"],
];
const pascal = (s: string) =>
  s
    .replace(/[^A-Za-z0-9 ]/g, " ")
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join("");

/** A failed transaction's error as one short name: the program's named error, `Token:…`, `System:…` or the runtime's. */
export function errorName(r: TxResult, programErrors: Map<number, { name: string }>, programId?: PublicKey): string {
  if (r.ok) return "ok";
  const failed = r.logs.find((l) => / failed: /.test(l));
  const failedProgram = failed ? failed.split(" ")[1] : undefined;
  if (r.code !== null) {
    if (failedProgram === TOKEN_PROGRAM.toBase58()) return `Token:${TOKEN_ERRORS[r.code] ?? r.code}`;
    if (failedProgram === SYSTEM_PROGRAM.toBase58()) return `System:${SYSTEM_ERRORS[r.code] ?? r.code}`;
    if (!programId || !failedProgram || failedProgram === programId.toBase58() || r.code >= 6000) return programErrors.get(r.code)?.name ?? `custom:${r.code}`;
    return `custom:${r.code}`;
  }
  const e = r.error ?? "unknown";
  for (const [re, n] of RUNTIME_ERRORS) if (re.test(e)) return n;
  const m = /InstructionError\(\s*\d+\s*,\s*([A-Za-z]+)/.exec(e) ?? /Instruction \d+: (.*)$/.exec(e) ?? /TransactionError\((.*)\)/.exec(e);
  const name = pascal((m ? m[1] : e).replace(/^(Error processing )/, ""));
  const prefix = failedProgram === TOKEN_PROGRAM.toBase58() ? "Token:" : failedProgram === SYSTEM_PROGRAM.toBase58() ? "System:" : "";
  return prefix + (name.length > 48 ? name.slice(0, 48) : name);
}

/** Attempts by kind, and how each ended (error name counts). */
export class Tally {
  readonly byKind = new Map<string, Map<string, number>>();
  add(kind: string, result: string): void {
    const m = this.byKind.get(kind) ?? new Map<string, number>();
    m.set(result, (m.get(result) ?? 0) + 1);
    this.byKind.set(kind, m);
  }
  count(kind: string, result?: string): number {
    const m = this.byKind.get(kind);
    if (!m) return 0;
    return result ? (m.get(result) ?? 0) : [...m.values()].reduce((a, b) => a + b, 0);
  }
  total(prefix = ""): number {
    return [...this.byKind.keys()].filter((k) => k.startsWith(prefix)).reduce((a, k) => a + this.count(k), 0);
  }
  report(prefix = ""): string {
    return [...this.byKind.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([k, m]) =>
          `  ${k.padEnd(34)} ${String(this.count(k)).padStart(5)}  ${[...m.entries()]
            .sort((a, b) => b[1] - a[1])
            .map(([r, n]) => `${r} ${n}`)
            .join(", ")}`,
      )
      .join("\n");
  }
}

// ---------------------------------------------------------------------------------------------
// Actors and tokens.

export interface TokenAcct {
  address: PublicKey;
  /** The account's own keypair, kept so it can be re-created at the same address after a close. */
  kp: Keypair;
}

/** Someone who holds tokens: honest users, the attacker (all its keys), the treasury. */
export interface Actor {
  name: string;
  honest: boolean;
  keys: Keypair[];
  /** Every real-mint token account it ever owned (closed ones read as 0). */
  tokens: TokenAcct[];
  /** The account it uses for new stakes. */
  current: TokenAcct;
  /** What the rules say it holds now: tokens plus claims. */
  expected: bigint;
  /** Real-mint tokens it started with (attacker: what it put in). */
  initial: bigint;
}

export interface TokenState {
  mint: PublicKey;
  owner: PublicKey;
  amount: bigint;
  state: number;
}

export async function readToken(chain: TestChain, address: PublicKey): Promise<TokenState | null> {
  const a = await chain.account(address);
  if (!a || !a.owner.equals(TOKEN_PROGRAM) || a.data.length !== ACCOUNT_SIZE) return null;
  const d = AccountLayout.decode(a.data);
  return { mint: d.mint, owner: d.owner, amount: d.amount, state: d.state };
}

/** Real-mint balance of a token account (0 when closed, of another mint, or not a token account). */
export async function realBalance(chain: TestChain, address: PublicKey, mint: PublicKey): Promise<bigint> {
  const t = await readToken(chain, address);
  return t && t.mint.equals(mint) ? t.amount : 0n;
}

/** Can a payout of `mint` for `owner` land in `address` (kit::accounts::can_receive)? */
export async function canReceive(chain: TestChain, address: PublicKey, mint: PublicKey, owner: PublicKey): Promise<boolean> {
  const t = await readToken(chain, address);
  return !!t && t.state === 1 && t.mint.equals(mint) && t.owner.equals(owner);
}

export async function createMint(chain: TestChain, authority: Keypair, decimals = 6): Promise<PublicKey> {
  const mint = Keypair.generate();
  const r = await chain.send(
    [
      SystemProgram.createAccount({
        fromPubkey: authority.publicKey,
        newAccountPubkey: mint.publicKey,
        lamports: Number(await chain.rentExempt(MINT_SIZE)),
        space: MINT_SIZE,
        programId: TOKEN_PROGRAM,
      }),
      createInitializeMint2Instruction(mint.publicKey, decimals, authority.publicKey, authority.publicKey),
    ],
    [authority, mint],
    authority,
  );
  if (!r.ok) throw new Error(`mint: ${r.error}`);
  return mint.publicKey;
}

/** Instructions creating the token account `kp` (of `mint`, owned by `owner`), rent from `payer`. */
export async function openTokenIxs(chain: TestChain, payer: PublicKey, kp: Keypair, mint: PublicKey, owner: PublicKey): Promise<TransactionInstruction[]> {
  return [
    SystemProgram.createAccount({
      fromPubkey: payer,
      newAccountPubkey: kp.publicKey,
      lamports: Number(await chain.rentExempt(ACCOUNT_SIZE)),
      space: ACCOUNT_SIZE,
      programId: TOKEN_PROGRAM,
    }),
    createInitializeAccount3Instruction(kp.publicKey, mint, owner),
  ];
}

export const mintToIx = (mint: PublicKey, to: PublicKey, authority: PublicKey, amount: bigint) => createMintToInstruction(mint, to, authority, amount);
export const transferIx = (from: PublicKey, to: PublicKey, owner: PublicKey, amount: bigint) => createTransferInstruction(from, to, owner, amount);
export const closeTokenIx = (account: PublicKey, destination: PublicKey, owner: PublicKey) => createCloseAccountInstruction(account, destination, owner);
export const setOwnerIx = (account: PublicKey, owner: PublicKey, newOwner: PublicKey) =>
  createSetAuthorityInstruction(account, owner, AuthorityType.AccountOwner, newOwner);

/** A system transfer of lamports (pre-funding a future PDA). */
export const lamportsIx = (from: PublicKey, to: PublicKey, lamports: bigint) => SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports });

// ---------------------------------------------------------------------------------------------
// Sending with what the checks need: the transaction's accounts, its signers, lamports before.

export interface Sent {
  r: TxResult;
  /** Every account of the transaction (base58), fee payer and programs included. */
  keys: Set<string>;
  signers: Set<string>;
  /** Lamports of every account before the transaction (when asked for). */
  before?: Map<string, bigint>;
}

export async function sendTracked(chain: TestChain, ixs: TransactionInstruction[], signers: Keypair[], feePayer: Keypair, snapshot = false): Promise<Sent> {
  const keys = new Set<string>([b58(feePayer.publicKey)]);
  for (const ix of ixs) {
    keys.add(b58(ix.programId));
    for (const k of ix.keys) keys.add(b58(k.pubkey));
  }
  let before: Map<string, bigint> | undefined;
  if (snapshot) {
    before = new Map();
    for (const k of keys) before.set(k, await chain.lamports(new PublicKey(k)));
  }
  const all = [...new Map([feePayer, ...signers].map((k) => [b58(k.publicKey), k])).values()];
  // Only keys the instructions mark as signers (and the fee payer) sign.
  const needed = new Set<string>([b58(feePayer.publicKey)]);
  for (const ix of ixs) for (const k of ix.keys) if (k.isSigner) needed.add(b58(k.pubkey));
  const use = all.filter((k) => needed.has(b58(k.publicKey)));
  let r: TxResult;
  try {
    r = await chain.send(
      ixs,
      use.filter((k) => !k.publicKey.equals(feePayer.publicKey)),
      feePayer,
    );
  } catch (e) {
    // A transaction the client cannot even serialise (too large, a signer missing) never reaches the chain.
    r = { ok: false, code: null, error: `Client:${pascal(String((e as Error).message ?? e)).slice(0, 40)}`, logs: [], computeUnits: 0n, signature: "" };
  }
  return { r, keys, signers: new Set(use.map((k) => b58(k.publicKey))), before };
}

// ---------------------------------------------------------------------------------------------
// Rogue accounts.

/**
 * Plants a program-owned account with `data` at `address` (what a rogue Config created by an
 * earlier program version, or by any bug, would look like): rent-exempt, not executable.
 */
export async function plant(chain: TestChain, address: PublicKey, owner: PublicKey, data: Buffer): Promise<void> {
  const info: AccountInfo<Buffer> = { data, owner, lamports: Number(await chain.rentExempt(data.length)), executable: false, rentEpoch: 0 };
  chain.setAccount(address, info);
}

// ---------------------------------------------------------------------------------------------
// Random helpers.

/** An element of `xs` other than `not` when there is one. */
export function pickOther<T>(rng: Rng, xs: readonly T[], not?: T): T {
  const l = xs.filter((x) => x !== not);
  return rng.pick(l.length ? l : xs);
}

/** Mutations of a u64 argument an attacker tries. */
export function mutateU64(rng: Rng, v: bigint): bigint {
  switch (rng.int(0, 7)) {
    case 0:
      return 0n;
    case 1:
      return 1n;
    case 2:
      return (1n << 64n) - 1n;
    case 3:
      return v + 1n;
    case 4:
      return v > 0n ? v - 1n : 0n;
    case 5:
      return v * 2n;
    case 6:
      return rng.big(0n, 1_000_000_000_000n);
    default:
      return 1n << 63n;
  }
}

export const fmtTime = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A fuzz step: its weight in the draw, its name (in failures and tallies), what it does. */
export type Step = [weight: number, name: string, run: () => Promise<unknown>];

/** What a fuzzer's attacks are built from: a valid-looking call of each instruction, extra accounts to draw, PDAs to prefund. */
/** A plausible call of an instruction; `remaining`: the accounts after the IDL's (take_best's (offer, position) pairs). */
export interface BaseCall {
  accounts: AccountMap;
  args: Record<string, unknown>;
  remaining?: PublicKey[];
}

export interface AttackTargets {
  baseFor: (name: string) => BaseCall;
  extraAccounts: () => PublicKey[];
  prefundTargets: () => PublicKey[];
}

// ---------------------------------------------------------------------------------------------
// The world both fuzzers share: one program under attack (the other deployed beside it, its
// accounts part of what the attacker passes around), the service, honest users, the attacker.

import { TestMint } from "../../harness/token";
import { BN as BNv } from "../../idl/client/anchor";

export interface WorldSpec {
  label: string;
  programId: PublicKey;
  program: Program<Idl>;
  coder: AccountsCoder;
  errors: Map<number, { name: string }>;
  /** Arguments of initialize_config (the honest one; attackers vary the fee). */
  initArgs: Record<string, unknown>;
  other: { programId: PublicKey; program: Program<Idl>; initArgs: Record<string, unknown> };
  honestCount: number;
}

/** A program as the fuzzers attack it: its id, IDL program, account coder, errors and the honest initialize_config arguments. */
interface FuzzProgram {
  programId: PublicKey;
  program: Program<Idl>;
  coder: AccountsCoder;
  errors: Map<number, { name: string }>;
  initArgs: Record<string, unknown>;
}

function fuzzProgram(name: "offers" | "pools"): FuzzProgram {
  const provider = { publicKey: PublicKey.default } as never;
  if (name === "offers") {
    return {
      programId: OFFERS_PROGRAM_ID,
      program: OffersClient.fromProvider(provider).program as unknown as Program<Idl>,
      coder: offersAccountsCoder as unknown as AccountsCoder,
      errors: OFFERS_ERRORS,
      initArgs: { feeBps: LAUNCH_FEE_BPS, offersEnabled: 1, limits: LAUNCH_LIMITS },
    };
  }
  return {
    programId: POOLS_PROGRAM_ID,
    program: PoolsClient.fromProvider(provider).program as unknown as Program<Idl>,
    coder: poolsAccountsCoder as unknown as AccountsCoder,
    errors: POOLS_ERRORS,
    initArgs: { feeBps: 500 },
  };
}

/**
 * A world with `name` under attack and the other program deployed beside it: `honestCount`
 * honest users funded with `honestFunds` (main and spare account), the attacker with
 * `attackerFunds`; its random choices from `seed`, its failures naming `label` (default `name`),
 * the seed and `actions` (default: FUZZ_SEED, FUZZ_ACTIONS).
 */
export function attackerWorldOf(
  name: "offers" | "pools",
  o: { seed?: number; actions?: number; label?: string; honestCount: number; honestFunds: [bigint, bigint]; attackerFunds: bigint },
): Promise<AttackerWorld> {
  const seed = o.seed ?? FUZZ_SEED;
  const ctx = new FuzzContext(o.label ?? name, seed, o.actions ?? FUZZ_ACTIONS);
  const otherName = name === "offers" ? "pools" : "offers";
  const { programId, program, coder, errors, initArgs } = fuzzProgram(name);
  const other = fuzzProgram(otherName);
  return AttackerWorld.create(
    {
      label: name,
      programId,
      program,
      coder,
      errors,
      honestCount: o.honestCount,
      initArgs,
      other: { programId: other.programId, program: other.program, initArgs: other.initArgs },
    },
    new RngOf(seed),
    ctx,
    new Tally(),
    [
      { name, programId },
      { name: otherName, programId: other.programId },
    ],
    o.honestFunds,
    o.attackerFunds,
  );
}

/** A program account closed by a transaction, and who must get its lamports. */
export interface Closed {
  addr: string;
  rentPayer: PublicKey;
}

export class AttackerWorld {
  readonly bumps = new Map<string, number>();
  readonly actors: Actor[] = [];
  readonly honest: Actor[] = [];
  readonly keyOwner = new Map<string, Actor>();
  readonly attackerKeys = new Set<string>();
  readonly freshKeys: Keypair[] = [];
  readonly claimAddrs = new Set<string>();
  readonly claimRent = new Map<string, PublicKey>();
  readonly rogueConfigs: PublicKey[] = [];
  readonly otherAccounts: PublicKey[] = [];
  configBumps: Pda[] = [];
  vaultBumps: Pda[] = [];
  treasuryExpected = 0n;
  donated = 0n;
  sent = 0;
  now = 0n;
  /** The program-specific part of checking a successful transaction; returns the program accounts it closed. */
  reconcileProgram: (s: Sent) => Promise<Closed[]> = async () => [];
  readonly prof = { reads: 0, readMs: 0, sends: 0, sendMs: 0 };
  private bumpTurn = 0;
  private otherVaultBalance = 0n;
  private configSnapshot: Buffer = Buffer.alloc(0);

  private constructor(
    readonly spec: WorldSpec,
    readonly rng: Rng,
    readonly ctx: FuzzContext,
    readonly tally: Tally,
    readonly chain: TestChain,
    readonly mint: TestMint,
    readonly service: Keypair,
    readonly treasury: PublicKey,
    readonly A: Keypair,
    readonly A2: Keypair,
    readonly aMain: TokenAcct,
    readonly aSpare: TokenAcct,
    readonly attacker: Actor,
    readonly fakeMint: PublicKey,
    readonly aFake: PublicKey,
    readonly rogueVault: PublicKey,
  ) {}

  get PID(): PublicKey {
    return this.spec.programId;
  }
  get program(): Program<Idl> {
    return this.spec.program;
  }
  get crank(): Keypair {
    return this.chain.payer;
  }
  get CONFIG(): PublicKey {
    return this.pda([Buffer.from("config")]);
  }
  get VAULT(): PublicKey {
    return this.pda([Buffer.from("vault")]);
  }
  get OTHER_CONFIG(): PublicKey {
    return PublicKey.findProgramAddressSync([Buffer.from("config")], this.spec.other.programId)[0];
  }
  get OTHER_VAULT(): PublicKey {
    return PublicKey.findProgramAddressSync([Buffer.from("vault")], this.spec.other.programId)[0];
  }

  /** The canonical PDA of `seeds` under the program (its bump remembered for instruction arguments). */
  pda(seeds: Buffer[], programId = this.spec.programId): PublicKey {
    const [a, b] = PublicKey.findProgramAddressSync(seeds, programId);
    this.bumps.set(b58(a), b);
    return a;
  }
  claimOf(owner: PublicKey): PublicKey {
    return this.pda([Buffer.from("claim"), owner.toBuffer()]);
  }
  /**
   * A withdraw_claim the attacker signs, both programs alike: its own claim or an honest user's,
   * to its own token account, naming the crank, itself or the owner as the rent payer.
   */
  withdrawClaimAttempt(common: AccountMap): { accounts: AccountMap; args: Record<string, unknown> } {
    const owner = this.rng.chance(0.5) ? this.rng.pick(this.honest).keys[0].publicKey : this.A.publicKey;
    const accounts = { ...common, owner: this.A.publicKey, claim: this.claimOf(owner), destination: this.aMain.address };
    return { accounts: { ...accounts, rentPayer: this.rng.pick([this.crank.publicKey, this.A.publicKey, owner]) }, args: {} };
  }
  /**
   * The accounts every attack starts from, both programs alike: the program's config, vault and
   * treasury, the token and system programs, the attacker paying, the mint.
   */
  attackAccounts(): AccountMap {
    return {
      config: this.CONFIG,
      vault: this.VAULT,
      treasury: this.treasury,
      tokenProgram: TOKEN_PROGRAM,
      systemProgram: SYSTEM_PROGRAM,
      payer: this.A.publicKey,
      mint: this.mint.mint,
    };
  }
  /**
   * initialize_config, update_config or set_treasury as the attacker tries them, both programs
   * alike: itself as deployer and authority, its own token account as the fee treasury where the
   * instruction names one; `args` are the program's.
   */
  configAttempt(
    name: "initializeConfig" | "updateConfig" | "setTreasury",
    common: AccountMap,
    args: Record<string, unknown> = {},
  ): { accounts: AccountMap; args: Record<string, unknown> } {
    const accounts = { ...common, authority: this.A.publicKey };
    if (name === "updateConfig") return { accounts, args };
    if (name === "setTreasury") return { accounts: { ...accounts, treasury: this.aMain.address }, args };
    return { accounts: { ...accounts, deployer: this.A.publicKey, treasury: this.aMain.address }, args };
  }
  /** `data` decoded as the program's account `name` (u64/i64 as bigint); null when there is none. */
  decode<T>(name: string, data: Buffer | undefined | null): T | null {
    return decodeAs<T>(this.spec.coder, name, data);
  }
  bumpOf(k: PublicKey): number {
    return this.bumps.get(b58(k)) ?? 255;
  }

  static async create(
    spec: WorldSpec,
    rng: Rng,
    ctx: FuzzContext,
    tally: Tally,
    programs: { name: string; programId: PublicKey }[],
    honestFunds: [bigint, bigint],
    attackerFunds: bigint,
  ): Promise<AttackerWorld> {
    const { TestChain } = await import("../../harness/chain");
    const chain = await TestChain.start(programs);
    const mint = await TestMint.create(chain);
    const service = await chain.fundedKeypair();
    const treasury = await mint.account(service.publicKey);
    const deployer = chain.upgradeAuthority;
    const initOf = async (program: Program<Idl>, programId: PublicKey, args: Record<string, unknown>, tre: PublicKey) => {
      const config = PublicKey.findProgramAddressSync([Buffer.from("config")], programId)[0];
      const vault = PublicKey.findProgramAddressSync([Buffer.from("vault")], programId)[0];
      const r = await chain.send(
        [
          buildIx(program, "initializeConfig", args, {
            deployer: deployer.publicKey,
            authority: service.publicKey,
            config,
            vault,
            mint: mint.mint,
            treasury: tre,
            programData: programDataAddress(programId),
            tokenProgram: TOKEN_PROGRAM,
            systemProgram: SYSTEM_PROGRAM,
          }),
        ],
        [deployer],
      );
      if (!r.ok) throw new Error(`initialize_config of ${programId.toBase58()}: ${r.error}\n${r.logs.join("\n")}`);
    };
    await initOf(spec.program, spec.programId, spec.initArgs, treasury);
    // The other program, same mint, its vault holding tokens: they must never move.
    const otherTreasury = await mint.account(service.publicKey);
    await initOf(spec.other.program, spec.other.programId, spec.other.initArgs, otherTreasury);

    const A = await chain.fundedKeypair(100_000_000_000n);
    const A2 = await chain.fundedKeypair(100_000_000_000n);
    const newTok = async (owner: PublicKey, amount: bigint): Promise<TokenAcct> => {
      const kp = Keypair.generate();
      const r = await chain.send(
        [
          ...(await openTokenIxs(chain, chain.payer.publicKey, kp, mint.mint, owner)),
          ...(amount > 0n ? [mintToIx(mint.mint, kp.publicKey, mint.authority.publicKey, amount)] : []),
        ],
        [kp],
      );
      if (!r.ok) throw new Error(`token account: ${r.error}`);
      return { address: kp.publicKey, kp };
    };
    const aMain = await newTok(A.publicKey, attackerFunds);
    const aSpare = await newTok(A.publicKey, 0n);
    const attacker: Actor = {
      name: "attacker",
      honest: false,
      keys: [A, A2],
      tokens: [aMain, aSpare],
      current: aMain,
      expected: attackerFunds,
      initial: attackerFunds,
    };
    const fakeMint = await createMint(chain, A);
    const aFake = Keypair.generate();
    await chain.send(
      [...(await openTokenIxs(chain, A.publicKey, aFake, fakeMint, A.publicKey)), mintToIx(fakeMint, aFake.publicKey, A.publicKey, 1_000_000_000_000n)],
      [A, aFake],
      A,
    );
    const rogueVault = Keypair.generate();
    await chain.send(await openTokenIxs(chain, A.publicKey, rogueVault, mint.mint, A.publicKey), [A, rogueVault], A);

    const w = new AttackerWorld(
      spec,
      rng,
      ctx,
      tally,
      chain,
      mint,
      service,
      treasury,
      A,
      A2,
      aMain,
      aSpare,
      attacker,
      fakeMint,
      aFake.publicKey,
      rogueVault.publicKey,
    );
    if (process.env.FUZZ_PROFILE) {
      // Counts account reads and time spent in them and in transactions (printed every 100 steps).
      const read = chain.account.bind(chain),
        send = chain.send.bind(chain);
      chain.account = async (k) => {
        const t = performance.now();
        try {
          return await read(k);
        } finally {
          w.prof.reads++;
          w.prof.readMs += performance.now() - t;
        }
      };
      chain.send = async (...a) => {
        const t = performance.now();
        try {
          return await send(...a);
        } finally {
          w.prof.sends++;
          w.prof.sendMs += performance.now() - t;
        }
      };
    }
    w.otherAccounts.push(w.OTHER_CONFIG, w.OTHER_VAULT, otherTreasury, spec.other.programId, programDataAddress(spec.other.programId));
    await mint.mintTo(w.OTHER_VAULT, 777_000_000n);
    w.otherVaultBalance = await mint.balance(w.OTHER_VAULT);
    for (let i = 0; i < spec.honestCount; i++) {
      const key = await chain.fundedKeypair();
      const amount = rng.big(honestFunds[0], honestFunds[1]);
      const tok = await newTok(key.publicKey, amount);
      const a: Actor = { name: `H${i}`, honest: true, keys: [key], tokens: [tok], current: tok, expected: amount, initial: amount };
      w.honest.push(a);
      w.addActor(a);
    }
    w.addActor(attacker);
    w.configSnapshot = (await chain.account(w.CONFIG))!.data;
    // Every valid bump of ["config"] and ["vault"]: initialize_config is tried at each in turn.
    w.configBumps = allBumps([Buffer.from("config")], spec.programId);
    w.vaultBumps = allBumps([Buffer.from("vault")], spec.programId);
    await w.plantRogueConfigs();
    w.now = await chain.now();
    return w;
  }

  private addActor(a: Actor): void {
    this.actors.push(a);
    for (const k of a.keys) this.addKey(a, k);
  }
  private addKey(a: Actor, k: Keypair): void {
    this.keyOwner.set(b58(k.publicKey), a);
    this.claimAddrs.add(b58(this.claimOf(k.publicKey)));
    if (!a.honest) this.attackerKeys.add(b58(k.publicKey));
  }
  /** A key the attacker makes up and holds (owner of a re-opened account). */
  freshKey(): Keypair {
    const k = Keypair.generate();
    this.freshKeys.push(k);
    this.attacker.keys.push(k);
    this.addKey(this.attacker, k);
    return k;
  }
  attackerSigners(): Keypair[] {
    return [this.A, this.A2, ...this.freshKeys];
  }
  keypairOf(k: PublicKey): Keypair | undefined {
    return this.attacker.keys.find((x) => x.publicKey.equals(k));
  }
  actorOf(k: PublicKey): Actor {
    const a = this.keyOwner.get(b58(k));
    if (!a) this.ctx.fail(`an account names ${b58(k)}, a key no actor holds`);
    return a;
  }

  /** Config-shaped, program-owned accounts at other addresses: a keypair address and non-canonical bumps of ["config"]. */
  private async plantRogueConfigs(): Promise<void> {
    const base = decodeAs<Record<string, unknown>>(this.spec.coder, "config", this.configSnapshot)!;
    const toBn = (v: unknown): unknown =>
      typeof v === "bigint"
        ? new BNv(v.toString())
        : v && typeof v === "object" && !(v instanceof PublicKey) && !Array.isArray(v)
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toBn(x)]))
          : v;
    for (let i = 0; i < 6; i++) {
      const at = i < 2 ? Keypair.generate().publicKey : this.configBumps[1 + i].address;
      const f = { ...base, authority: this.A.publicKey } as Record<string, unknown>;
      if (i % 2 === 1) f.treasury = this.aMain.address;
      if (i === 3) f.mint = this.fakeMint;
      if (i === 4) f.vault = this.rogueVault;
      if ("bump" in f) f.bump = i === 5 || i < 2 ? this.configBumps[0].bump : this.configBumps[1 + i].bump; // i 5: signs as the canonical config
      await plant(this.chain, at, this.spec.programId, await this.spec.coder.encode("config", toBn(f)));
      this.rogueConfigs.push(at);
    }
  }

  // ------------------------------------------------------------------ reading and money
  async readClaim(k: PublicKey): Promise<{ owner: PublicKey; amount: bigint; rentPayer: PublicKey } | null> {
    const a = await this.chain.account(k);
    return a && a.owner.equals(this.PID) ? decodeAs(this.spec.coder, "claim", a.data) : null;
  }
  realBalance(k: PublicKey): Promise<bigint> {
    return realBalance(this.chain, k, this.mint.mint);
  }
  async holdings(a: Actor): Promise<{ tokens: bigint; claims: bigint }> {
    let tokens = 0n;
    for (const t of a.tokens) tokens += await this.realBalance(t.address);
    let claims = 0n;
    for (const k of a.keys) {
      const c = await this.readClaim(this.claimOf(k.publicKey));
      if (c) {
        this.ctx.check(c.owner.equals(k.publicKey), `claim of ${b58(k.publicKey)} names owner ${b58(c.owner)}`);
        claims += c.amount;
      }
    }
    return { tokens, claims };
  }
  /**
   * After every step: honest users hold exactly what the rules owe them (tokens + claims), the
   * attacker no more than the rules give it, the vault what the model owes plus claims plus
   * donations, the treasury the modelled fees; the config and the other program's vault unchanged.
   */
  async checkMoney(owed: bigint): Promise<void> {
    let claims = 0n;
    for (const a of this.actors) {
      const h = await this.holdings(a);
      claims += h.claims;
      if (a.honest)
        this.ctx.check(
          h.tokens + h.claims === a.expected,
          `${a.name} holds ${h.tokens} in tokens + ${h.claims} in claims = ${h.tokens + h.claims}; the rules owe ${a.expected}`,
        );
      else
        this.ctx.check(
          h.tokens + h.claims <= a.expected,
          `the attacker holds ${h.tokens} + ${h.claims} in claims = ${h.tokens + h.claims}, more than the rules give it (${a.expected}; it put in ${a.initial})`,
        );
    }
    const vault = await this.mint.balance(this.VAULT);
    this.ctx.check(vault === owed + claims + this.donated, `vault holds ${vault}; the model owes ${owed} + ${claims} in claims (+ ${this.donated} donated)`);
    const tre = await this.mint.balance(this.treasury);
    this.ctx.check(tre === this.treasuryExpected, `treasury holds ${tre}; the model's fees are ${this.treasuryExpected}`);
    this.ctx.check((await this.mint.balance(this.OTHER_VAULT)) === this.otherVaultBalance, "the other program's vault moved");
    this.ctx.check((await this.chain.account(this.CONFIG))!.data.equals(this.configSnapshot), "the config changed");
  }

  // ------------------------------------------------------------------ sending
  /** Program-owned accounts of the transaction that are new and of no kind the program-specific part knows. */
  async accountKind(k: PublicKey): Promise<{ kind: string | undefined; data: Buffer } | null> {
    const acc = await this.chain.account(k);
    if (!acc || !acc.owner.equals(this.PID)) return null;
    const disc = acc.data.subarray(0, 8);
    const kind = (this.program.idl.accounts as { name: string; discriminator: number[] }[]).find((a) => Buffer.from(a.discriminator).equals(disc))?.name;
    return { kind, data: acc.data };
  }
  isRogue(k: string): boolean {
    return this.rogueConfigs.some((r) => b58(r) === k);
  }

  private async reconcile(s: Sent, allowLamports: bigint): Promise<void> {
    if (!s.r.ok) return;
    const closed = await this.reconcileProgram(s);
    const signed = (k: PublicKey) => s.signers.has(b58(k));
    // Claims: only at an owner's canonical address, rent from a signer; closed back to that payer.
    for (const k of s.keys) {
      if (!this.claimAddrs.has(k)) {
        const x = await this.accountKind(new PublicKey(k));
        if (x?.kind === "claim") this.ctx.fail(`claim ${k} exists at a non-canonical address or for a non-payee`, s.r.logs);
        continue;
      }
      const rent = this.claimRent.get(k);
      const c = await this.readClaim(new PublicKey(k));
      if (c && !rent) {
        this.ctx.check(this.claimOf(c.owner).equals(new PublicKey(k)), `claim ${k} is not the canonical claim of ${b58(c.owner)}`);
        this.ctx.check(signed(c.rentPayer), `claim ${k} records rent payer ${b58(c.rentPayer)} who did not sign`);
        this.claimRent.set(k, c.rentPayer);
      } else if (c && rent) {
        this.ctx.check(c.rentPayer.equals(rent), `claim ${k}'s rent payer changed`);
      } else if (!c && rent) {
        this.claimRent.delete(k);
        closed.push({ addr: k, rentPayer: rent });
      }
    }
    // Lamports of closed accounts go to their recorded rent payers; the attacker gains only its own.
    if (s.before) {
      let allowed = allowLamports;
      for (const c of closed) {
        const got = (await this.chain.lamports(c.rentPayer)) - (s.before.get(b58(c.rentPayer)) ?? 0n);
        const fees = s.signers.has(b58(c.rentPayer)) ? 100_000n : 0n;
        const lamports = s.before.get(c.addr) ?? 0n;
        this.ctx.check(got + fees >= lamports, `closing ${c.addr} paid ${got} to its rent payer ${b58(c.rentPayer)}, not its ${lamports} lamports`);
        if (this.attackerKeys.has(b58(c.rentPayer))) allowed += lamports;
      }
      let gain = 0n;
      for (const k of s.keys) if (this.attackerKeys.has(k)) gain += (await this.chain.lamports(new PublicKey(k))) - (s.before.get(k) ?? 0n);
      this.ctx.check(gain <= allowed, `the attacker's lamports grew by ${gain} (allowed ${allowed})`, s.r.logs);
    }
  }

  async honestSend(kind: string, ixs: TransactionInstruction[], signers: Keypair[], mustSucceed = true): Promise<Sent> {
    this.sent++;
    const s = await sendTracked(this.chain, ixs, signers, this.crank);
    const name = errorName(s.r, this.spec.errors, this.PID);
    this.tally.add(`honest:${kind}`, name);
    this.ctx.note(`${kind} -> ${name}`);
    if (mustSucceed && !s.r.ok) this.ctx.fail(`honest ${kind} was refused (${name}) though the rules allow it`, s.r.logs);
    await this.reconcile(s, 0n);
    return s;
  }
  async attackSend(
    kind: string,
    ixs: TransactionInstruction[],
    signers: Keypair[] = [],
    opts: { feePayer?: Keypair; allowLamports?: bigint; mustFail?: boolean } = {},
  ): Promise<Sent> {
    this.sent++;
    const s = await sendTracked(this.chain, ixs, [this.A, ...signers], opts.feePayer ?? this.A, true);
    const name = errorName(s.r, this.spec.errors, this.PID);
    this.tally.add(`attack:${kind}`, name);
    this.ctx.note(`attack ${kind} -> ${name}`);
    if (opts.mustFail && s.r.ok) this.ctx.fail(`attack ${kind} succeeded`, s.r.logs);
    await this.reconcile(s, opts.allowLamports ?? 0n);
    return s;
  }
  async advance(secs: bigint): Promise<void> {
    this.now += secs;
    await this.chain.setTime(this.now);
    this.ctx.note(`clock +${secs} -> ${this.now}`);
  }

  // ------------------------------------------------------------------ honest token moves and claims
  ixWithdraw(owner: PublicKey, destination: PublicKey, rentPayer: PublicKey, over: AccountMap = {}, opts: BuildOptions = {}): TransactionInstruction {
    return buildIx(
      this.program,
      "withdrawClaim",
      {},
      { owner, config: this.CONFIG, claim: this.claimOf(owner), vault: this.VAULT, destination, rentPayer, tokenProgram: TOKEN_PROGRAM, ...over },
      opts,
    );
  }
  /** The honest users who hold a claim, with the claim's rent payer. */
  async honestClaims(): Promise<{ h: Actor; rentPayer: PublicKey }[]> {
    const hs: { h: Actor; rentPayer: PublicKey }[] = [];
    for (const h of this.honest) {
      const c = await this.readClaim(this.claimOf(h.keys[0].publicKey));
      if (c) hs.push({ h, rentPayer: c.rentPayer });
    }
    return hs;
  }
  private async withdrawHonest(h: Actor, rentPayer: PublicKey): Promise<void> {
    await this.honestSend("withdraw_claim", [this.ixWithdraw(h.keys[0].publicKey, h.current.address, rentPayer)], [h.keys[0]]);
  }
  /** An honest user with a claim withdraws it to its current account (must succeed); false when none has one. */
  async honestWithdraw(): Promise<boolean> {
    const hs = await this.honestClaims();
    if (!hs.length) return false;
    const { h, rentPayer } = this.rng.pick(hs);
    await this.withdrawHonest(h, rentPayer);
    return true;
  }
  /** The wind-down's last payment: every honest user withdraws its claim (each must succeed). */
  async withdrawAllHonest(): Promise<void> {
    for (const { h, rentPayer } of await this.honestClaims()) await this.withdrawHonest(h, rentPayer);
  }
  /** An honest user moves to a new token account and closes the old one (what is recorded there becomes claims). */
  async honestRotate(): Promise<void> {
    const h = this.rng.pick(this.honest);
    const key = h.keys[0];
    const kp = Keypair.generate();
    const bal = await this.realBalance(h.current.address);
    const ixs = [
      ...(await openTokenIxs(this.chain, this.crank.publicKey, kp, this.mint.mint, key.publicKey)),
      transferIx(h.current.address, kp.publicKey, key.publicKey, bal),
      closeTokenIx(h.current.address, key.publicKey, key.publicKey),
    ];
    await this.honestSend("rotate_token_account", ixs, [key, kp]);
    const t = { address: kp.publicKey, kp };
    h.tokens.push(t);
    h.current = t;
  }
  async liveReal(a: Actor, owner: PublicKey): Promise<{ t: TokenAcct; amount: bigint }[]> {
    const out: { t: TokenAcct; amount: bigint }[] = [];
    for (const t of a.tokens) {
      const s = await readToken(this.chain, t.address);
      if (s && s.mint.equals(this.mint.mint) && s.owner.equals(owner) && s.state === 1) out.push({ t, amount: s.amount });
    }
    return out;
  }
  /**
   * A deposit from outside (the mint): an actor running low gets 1,000 units on its current
   * account, and the model credits it (for the attacker: as more put in). Keeps long runs playing.
   */
  async topUp(): Promise<boolean> {
    const low: { a: Actor; t: PublicKey }[] = [];
    for (const a of this.honest) if ((await this.realBalance(a.current.address)) < 200_000_000n) low.push({ a, t: a.current.address });
    const at = (await this.liveReal(this.attacker, this.A.publicKey)).reduce((s, x) => s + x.amount, 0n);
    if (at < 500_000_000n) low.push({ a: this.attacker, t: this.aSpare.address });
    if (!low.length) return false;
    const { a, t } = this.rng.pick(low);
    const amount = 1_000_000_000n;
    this.sent++;
    const r = await this.chain.send([mintToIx(this.mint.mint, t, this.mint.authority.publicKey, amount)]);
    if (!r.ok) this.ctx.fail(`deposit to ${a.name}: ${r.error}`);
    a.expected += amount;
    a.initial += amount;
    this.tally.add(a.honest ? "honest:deposit" : "attack:play:deposit", "ok");
    return true;
  }
  /** A live real-mint account of A holding at least `need`. */
  async attackerToken(need = 0n): Promise<TokenAcct | undefined> {
    const l = (await this.liveReal(this.attacker, this.A.publicKey)).filter((x) => x.amount >= need);
    return l.length ? this.rng.pick(l).t : undefined;
  }
  /** The attacker withdraws one of its claims (to an account of the claim's owner, opened if needed). */
  async attackerWithdraw(): Promise<boolean> {
    const k = this.rng.pick(this.attacker.keys);
    const c = await this.readClaim(this.claimOf(k.publicKey));
    if (!c) return false;
    let dest = (await this.liveReal(this.attacker, k.publicKey))[0]?.t.address;
    if (!dest) {
      const kp = Keypair.generate();
      await this.attackSend("play:open_token", await openTokenIxs(this.chain, this.A.publicKey, kp, this.mint.mint, k.publicKey), [kp]);
      this.attacker.tokens.push({ address: kp.publicKey, kp });
      dest = kp.publicKey;
    }
    await this.attackSend("play:withdraw_claim", [this.ixWithdraw(k.publicKey, dest, c.rentPayer)], [k]);
    return true;
  }

  // ------------------------------------------------------------------ attacks every program gets
  /** initialize_config at the next bump pair, as a non-upgrade-authority (or naming it without its signature). */
  async initConfigAttack(args: Record<string, unknown>): Promise<void> {
    const cb = this.configBumps[this.bumpTurn % this.configBumps.length],
      vb = this.vaultBumps[(this.bumpTurn * 7) % this.vaultBumps.length];
    this.bumpTurn++;
    const rng = this.rng;
    const deployerKey = rng.pick([this.A.publicKey, this.A.publicKey, this.chain.upgradeAuthority.publicKey, this.service.publicKey]);
    const pd = rng.pick([programDataAddress(this.PID), programDataAddress(this.spec.other.programId), this.A.publicKey, programDataAddress(this.PID)]);
    const ix = buildIx(
      this.program,
      "initializeConfig",
      args,
      {
        deployer: deployerKey,
        authority: this.A.publicKey,
        config: rng.chance(0.2) ? this.CONFIG : cb.address,
        vault: rng.chance(0.2) ? this.VAULT : vb.address,
        mint: rng.pick([this.mint.mint, this.fakeMint]),
        treasury: rng.pick([this.aMain.address, this.aFake, this.treasury]),
        programData: pd,
        tokenProgram: TOKEN_PROGRAM,
        systemProgram: SYSTEM_PROGRAM,
      },
      { signers: new Set([b58(this.A.publicKey)]) },
    );
    await this.attackSend(`init_config:${cb.canonical ? "canonical" : "other_bump"}`, [ix], [], { mustFail: true });
  }
  /** Lamports to future PDAs of honest users (at least the rent-exempt minimum of an empty account: less is refused by the runtime). */
  async prefund(targets: PublicKey[]): Promise<void> {
    if (!targets.length) return;
    const ixs = [this.rng.pick(targets), this.rng.pick(targets)].map((t) =>
      lamportsIx(this.A.publicKey, t, this.rng.chance(0.5) ? this.rng.big(890_880n, 1_000_000n) : this.rng.big(1_000_000n, 20_000_000n)),
    );
    await this.attackSend("prefund_pda", ixs);
  }
  /** The attacker empties its recorded token account into its spare one and closes it (before refunds and payouts). */
  async tokenClose(): Promise<void> {
    const s = await readToken(this.chain, this.aMain.address);
    if (!s) return this.tokenReopen();
    const owner = this.keypairOf(s.owner);
    if (!owner) return this.tokenReopen();
    if (s.amount > 0n && !s.mint.equals(this.mint.mint)) return void this.tally.add("attack:token_close", "skip:fake-balance");
    const ixs: TransactionInstruction[] = [];
    if (s.amount > 0n) ixs.push(transferIx(this.aMain.address, this.aSpare.address, owner.publicKey, s.amount));
    ixs.push(closeTokenIx(this.aMain.address, this.A.publicKey, owner.publicKey));
    await this.attackSend("token_close", ixs, [owner], { allowLamports: await this.chain.lamports(this.aMain.address) });
  }
  /** Re-opens the closed account at the same address: same owner, its worthless mint, or another owner it holds. */
  async tokenReopen(): Promise<void> {
    if (await readToken(this.chain, this.aMain.address)) return this.tokenReown();
    const variant = this.rng.int(0, 3);
    const owner = variant === 2 ? this.A2.publicKey : variant === 3 ? this.freshKey().publicKey : this.A.publicKey;
    const m = variant === 1 ? this.fakeMint : this.mint.mint;
    await this.attackSend(
      `token_reopen:${["same", "fake_mint", "owner_A2", "owner_fresh"][variant]}`,
      await openTokenIxs(this.chain, this.A.publicKey, this.aMain.kp, m, owner),
      [this.aMain.kp],
    );
  }
  /** Hands the recorded account to another owner it holds (or back). */
  async tokenReown(): Promise<void> {
    const s = await readToken(this.chain, this.aMain.address);
    if (!s) return this.tokenReopen();
    const owner = this.keypairOf(s.owner);
    if (!owner) return this.tokenClose();
    const to = s.owner.equals(this.A.publicKey) ? this.rng.pick([this.A2.publicKey, this.freshKey().publicKey]) : this.A.publicKey;
    await this.attackSend("token_reown", [setOwnerIx(this.aMain.address, owner.publicKey, to)], [owner]);
  }
  /** Tokens sent straight to the vault: lost to the attacker, owed to nobody. */
  async donate(): Promise<void> {
    const tok = await this.attackerToken(1n);
    if (!tok) return void this.tally.add("attack:donate_to_vault", "skip:no-tokens");
    const amount = this.rng.big(1n, 1_000n);
    const s = await this.attackSend("donate_to_vault", [transferIx(tok.address, this.VAULT, this.A.publicKey, amount)]);
    if (s.r.ok) {
      this.donated += amount;
      this.attacker.expected -= amount;
    }
  }
  /** Withdrawals of honest users' claims: as itself, naming the owner unsigned, to its own account or with itself as rent payer. */
  async stealClaim(): Promise<boolean> {
    const victims = await this.honestClaims();
    if (!victims.length) return false;
    const { h, rentPayer } = this.rng.pick(victims);
    const key = h.keys[0].publicKey;
    const A = this.A.publicKey;
    const signers = new Set([b58(A)]);
    const variant = this.rng.int(0, 3);
    const ix = [
      () => this.ixWithdraw(A, this.aMain.address, rentPayer, { claim: this.claimOf(key) }),
      () => this.ixWithdraw(key, this.aMain.address, rentPayer, {}, { signers }),
      () => this.ixWithdraw(key, h.current.address, A, {}, { signers }),
      () => this.ixWithdraw(A, h.current.address, rentPayer, { claim: this.claimOf(key), owner: A }),
    ][variant]();
    await this.attackSend(`steal_claim:${["as_itself", "owner_unsigned", "rent_to_itself", "to_owner_account"][variant]}`, [ix], [], { mustFail: true });
    return true;
  }

  /** Accounts every mutated call may draw from: keys, token accounts, config, vault, treasury, non-canonical PDAs, rogue configs, the other program's. */
  universe(extra: PublicKey[]): PublicKey[] {
    const u: PublicKey[] = [
      this.CONFIG,
      this.VAULT,
      this.treasury,
      this.mint.mint,
      this.fakeMint,
      this.PID,
      programDataAddress(this.PID),
      TOKEN_PROGRAM,
      SYSTEM_PROGRAM,
      PublicKey.default,
      this.service.publicKey,
      this.crank.publicKey,
      this.A.publicKey,
      this.A2.publicKey,
      this.aMain.address,
      this.aSpare.address,
      this.aFake,
      this.rogueVault,
      ...this.rogueConfigs,
      ...this.otherAccounts,
      ...this.configBumps.slice(1, 4).map((p) => p.address),
      ...this.vaultBumps.slice(1, 4).map((p) => p.address),
      this.claimOf(this.A.publicKey),
      this.claimOf(this.A2.publicKey),
      ...extra,
    ];
    for (const h of this.honest) u.push(h.keys[0].publicKey, h.current.address, this.claimOf(h.keys[0].publicKey));
    u.push(
      ...allBumps([Buffer.from("claim"), this.rng.pick(this.honest).keys[0].publicKey.toBuffer()], this.PID, 3)
        .slice(1)
        .map((p) => p.address),
    );
    return u;
  }
  private mutateArgs(name: string, args: Record<string, unknown>): Record<string, unknown> {
    const ix = idlIx(this.program, name)!;
    const out = { ...args };
    for (const a of ix.args) {
      if (!this.rng.chance(0.3)) continue;
      const v = out[a.name];
      if (a.type === "u64") out[a.name] = mutateU64(this.rng, BigInt((v as bigint) ?? 0n));
      else if (a.type === "i64") out[a.name] = BigInt.asIntN(64, mutateU64(this.rng, BigInt((v as bigint) ?? 0n)));
      else if (a.type === "u8") out[a.name] = this.rng.int(0, 255);
      else if (a.type === "u16") out[a.name] = this.rng.int(0, 65_535);
    }
    return out;
  }
  /**
   * Any instruction, from a plausible account map (`baseFor`, the attacker signing wherever a
   * signature is needed) with accounts replaced by ones drawn from everything that exists, or by
   * another account of the same instruction (dup), or by the other program's (cross), or the
   * config replaced by a planted rogue one (rogue: must fail); writable flags flipped, arguments bent.
   */
  async mutate(kind: string, mode: "random" | "dup" | "cross" | "rogue", baseFor: (name: string) => BaseCall, extra: PublicKey[]): Promise<void> {
    const rng = this.rng;
    const names = ixNames(this.program);
    const withConfig = names.filter((n) => idlIx(this.program, n)!.accounts.some((a) => a.name === "config"));
    const name = mode === "rogue" ? rng.pick(withConfig) : rng.pick(names);
    const ixd = idlIx(this.program, name)!;
    const base = baseFor(name);
    const accounts: AccountMap = { ...base.accounts };
    const u = this.universe(extra);
    const slots = ixd.accounts.map((a) => a.name);
    for (const s of slots) if (!accounts[s]) accounts[s] = rng.pick(u);
    if (mode === "rogue") {
      accounts.config = rng.pick(this.rogueConfigs);
      for (const s of ["authority", "caller", "owner", "deployer"]) if (s in accounts) accounts[s] = this.A.publicKey;
      if (rng.chance(0.5)) accounts.treasury = this.aMain.address;
      if (rng.chance(0.3)) accounts.vault = rng.pick([this.rogueVault, this.VAULT]);
    } else if (mode === "dup") {
      const [x, y] = [rng.pick(slots), rng.pick(slots)];
      accounts[x] = accounts[y];
    } else if (mode === "cross") {
      accounts[rng.pick(slots)] = rng.pick(this.otherAccounts);
    } else {
      const n = rng.int(1, 3);
      for (let i = 0; i < n; i++) accounts[rng.pick(slots)] = rng.pick(u);
    }
    const flip = new Set<string>();
    if (rng.chance(0.15)) flip.add(rng.pick(slots));
    const signers = new Set(this.attackerSigners().map((k) => b58(k.publicKey)));
    const args = mode === "rogue" ? base.args : this.mutateArgs(name, base.args);
    let ix: TransactionInstruction;
    try {
      ix = buildIx(this.program, name, args, accounts, { signers, flipWritable: flip }, this.bumps);
    } catch (e) {
      return void this.tally.add(`attack:${kind}`, `unbuildable:${(e as Error).message.slice(0, 30)}`);
    }
    // The remaining accounts, each sometimes replaced too, or one dropped (an odd list).
    const rest = (base.remaining ?? []).map((k) => ({
      pubkey: mode !== "rogue" && rng.chance(0.15) ? rng.pick(u) : k,
      isSigner: false,
      isWritable: !rng.chance(0.05),
    }));
    if (rest.length && rng.chance(0.05)) rest.pop();
    ix.keys.push(...rest);
    // A rogue config must be refused by every instruction (rule 1: the one canonical Config).
    await this.attackSend(`${kind}:${name}`, [ix], this.attackerSigners(), { mustFail: mode === "rogue" });
  }

  /**
   * A keypair the attacker holds, signing, in the slot of an account the instruction creates at a
   * PDA (a pool, an offer, a participant, a position, a claim): the program must refuse it (when it
   * creates that account) or leave it alone; an account created there fails the run (reconcile).
   */
  async signerAsPda(kind: string, name: string, slot: string, baseFor: (name: string) => BaseCall, mustFail: boolean): Promise<void> {
    const base = baseFor(name);
    const K = Keypair.generate();
    if (this.rng.chance(0.3)) await this.attackSend("prefund_signer", [lamportsIx(this.A.publicKey, K.publicKey, 1_000_000n)]);
    const signers = new Set([...this.attackerSigners(), K].map((k) => b58(k.publicKey)));
    let ix: TransactionInstruction;
    try {
      ix = buildIx(this.program, name, base.args, { ...base.accounts, [slot]: K.publicKey }, { signers }, this.bumps);
    } catch (e) {
      return void this.tally.add(`attack:${kind}`, `unbuildable:${(e as Error).message.slice(0, 30)}`);
    }
    // K signs the transaction (a signer of the transaction is a signer in every instruction naming it).
    for (const k of ix.keys) if (k.pubkey.equals(K.publicKey)) k.isSigner = true;
    await this.attackSend(`${kind}:${name}.${slot}`, [ix], [...this.attackerSigners(), K], { mustFail });
  }

  /** Honest token moves both fuzzers draw: withdrawing a claim (weighted `withdrawWeight`), moving to a new account, depositing. */
  honestTokenSteps(withdrawWeight: number): Step[] {
    return [
      [withdrawWeight, "honest_withdraw", async () => (await this.honestWithdraw()) || this.honestRotate()],
      [10, "honest_rotate", () => this.honestRotate()],
      [8, "deposit", async () => (await this.topUp()) || this.honestRotate()],
    ];
  }

  /**
   * The attacks on the Config and on token accounts both programs face alike: initialize_config
   * (`initArgs` besides a random fee), planted configs, prefunded PDAs, its token account closed,
   * re-opened or re-owned.
   */
  configAndTokenAttacks(initArgs: Record<string, unknown>, t: AttackTargets): Step[] {
    return [
      [20, "init_config", () => this.initConfigAttack({ feeBps: this.rng.int(0, 10_000), ...initArgs })],
      [30, "rogue_config", () => this.mutate("rogue_config", "rogue", t.baseFor, t.extraAccounts())],
      [30, "prefund", () => this.prefund(t.prefundTargets())],
      [15, "token_close", () => this.tokenClose()],
      [15, "token_reopen", () => this.tokenReopen()],
      [10, "token_reown", () => this.tokenReown()],
    ];
  }

  /**
   * The attacks with accounts both programs face alike: stolen claims, donations, duplicated and
   * cross-program accounts, a signer where a PDA of `signerAsPda` belongs (each [instruction, slot]
   * must fail), `signerAsClaim`, and random mutations (the most frequent step).
   */
  accountAttacks(t: AttackTargets, signerAsPda: readonly (readonly [name: string, slot: string])[], signerAsClaim: () => Promise<unknown>): Step[] {
    const random = () => this.mutate("mutate", "random", t.baseFor, t.extraAccounts());
    return [
      [15, "steal_claim", async () => (await this.stealClaim()) || random()],
      [10, "donate", () => this.donate()],
      [25, "dup", () => this.mutate("dup", "dup", t.baseFor, t.extraAccounts())],
      [20, "cross", () => this.mutate("cross_program", "cross", t.baseFor, t.extraAccounts())],
      [
        25,
        "signer_as_pda",
        () => {
          const [name, slot] = this.rng.pick(signerAsPda);
          return this.signerAsPda("signer_as_pda", name, slot, t.baseFor, true);
        },
      ],
      [15, "signer_as_claim", signerAsClaim],
      [150, "mutate", random],
    ];
  }

  /** The accounts of `ix` (an instruction of the program under attack) by their IDL names. */
  accountsOf(ix: TransactionInstruction): AccountMap {
    const names = (this.program.idl.instructions as unknown as { accounts: { name: string }[]; discriminator: number[] }[]).find((i) =>
      Buffer.from(i.discriminator).equals(ix.data.subarray(0, 8)),
    )!.accounts;
    return Object.fromEntries(names.map((a, i) => [a.name, ix.keys[i].pubkey]));
  }

  /** A program account of the program under attack decoded as `name`; null when absent or owned by another program. */
  async readAs<T>(k: PublicKey, name: string): Promise<T | null> {
    const a = await this.chain.account(k);
    return a && a.owner.equals(this.PID) ? decodeAs<T>(this.spec.coder, name, a.data) : null;
  }

  /**
   * The run: FUZZ_ACTIONS steps drawn by weight (`choose` may replace the draw, e.g. when the
   * model lacks something to act on), the money checked against `owed` after each.
   * FUZZ_PROFILE prints timings every 100 steps.
   */
  async runSteps(steps: Step[], owed: () => bigint, opts: { choose?: (drawn: Step) => Step; size?: () => string } = {}): Promise<void> {
    const ctx = this.ctx;
    const totalWeight = steps.reduce((a, s) => a + s[0], 0);
    for (let step = 0; step < ctx.actions; step++) {
      ctx.step = step;
      this.now = await this.chain.now();
      let roll = this.rng.int(0, totalWeight - 1);
      let chosen = steps[0];
      for (const s of steps) {
        if (roll < s[0]) {
          chosen = s;
          break;
        }
        roll -= s[0];
      }
      if (opts.choose) chosen = opts.choose(chosen);
      ctx.action = chosen[1];
      await chosen[2]();
      await this.checkMoney(owed());
      if (process.env.FUZZ_PROFILE && step % 100 === 99) {
        console.log(
          `step ${step + 1}: ${fmtTime(Date.now() - ctx.startedAt)}, ${this.sent} transactions, ${JSON.stringify(this.prof, (_k, v) => (typeof v === "number" ? Math.round(v) : v))}, ${opts.size?.() ?? ""}`,
        );
      }
    }
    ctx.step = ctx.actions;
    ctx.action = "wind-down";
  }

  /** The closing report: the run, what the model held (`counts`), the attacker's result and every tally. */
  async report(counts: string): Promise<string> {
    const ctx = this.ctx;
    const hold = await this.holdings(this.attacker);
    const attacks = this.tally.total("attack:");
    return (
      `${ctx.program} attacker fuzz [${process.env.SVM_ENGINE ?? "bankrun"}]: seed ${ctx.seed}, ${ctx.actions} actions, ${fmtTime(Date.now() - ctx.startedAt)}; ${counts}\n` +
      `attacker: put in ${this.attacker.initial}, the rules give it ${this.attacker.expected}, it holds ${hold.tokens} + ${hold.claims} in claims (donated ${this.donated})` +
      `; ${attacks} attacker transactions, ${this.sent} transactions in all\n` +
      `attacks by kind (result counts):\n${this.tally.report("attack:")}\nhonest actions:\n${this.tally.report("honest:")}`
    );
  }
}
