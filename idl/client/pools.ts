/**
 * Client of the pools program, on top of Anchor's `Program` built from idl/pools.json: PDA
 * derivation, account decoding (u64/i64 as bigint, text as strings), instruction builders, the
 * event parser and what can happen next to a pool (`poolResolutionAt`). The aggregate's rules
 * (shares in bps, the derived LOCKED state) are in ./pools-rules.ts.
 */
import { Program, type Provider } from "./anchor";
import { PublicKey } from "@solana/web3.js";
import { ProgramClient, ProgramPdas, SYSTEM_PROGRAM, TOKEN_PROGRAM, bigints, bn, programCodec, type ClaimAccount, u64le } from "./common";
import { poolsIdl, type Pools } from "../pools";
import { STORED_POOL_STATES, type StoredPoolState } from "./pools-rules";

export const POOLS_IDL: Pools = poolsIdl;
export const POOLS_PROGRAM_ID = new PublicKey(poolsIdl.address);
export { TOKEN_PROGRAM, SYSTEM_PROGRAM };
export type { ClaimAccount };

/** Limits of the program (bytes of UTF-8). */
export const POOL_LIMITS = { maxOutcomes: 8, question: 160, criteria: 280, coverUrl: 128, label: 24 } as const;
/** A new pool closes at most this long after its creation. */
export const MAX_OPEN_SECONDS = 31_622_400n;
/** A scheduled resolution is at most this long after closesAt. */
export const MAX_RESOLUTION_DELAY_SECONDS = 2_592_000n;
/** Participants may dispute a proposed outcome for this long. */
export const DISPUTE_WINDOW_SECONDS = 86_400n;
/** The creator must propose within this long after max(closesAt, resolutionAt); then anyone may escalate. */
export const PROPOSAL_DEADLINE_SECONDS = 259_200n;
/** The authority must decide an escalated pool within this long; then anyone may cancel. */
export const AUTHORITY_DEADLINE_SECONDS = 604_800n;
/** On-chain states by code (./pools-rules.ts declares them, with the derived LOCKED). */
export const PoolState = STORED_POOL_STATES;
export const NO_OUTCOME = 255;
/** `authorityResolve` with this outcome cancels the pool. */
export const CANCEL_OUTCOME = 255;

/** UTF-8 text into a fixed field (the program checks the length; longer text is cut to `size` here only when it must not fit, so oversize requests still reach the program). */
function field(text: string, size: number): { len: number; bytes: number[] } {
  const b = Buffer.from(text, "utf8");
  const out = Buffer.alloc(size);
  b.copy(out, 0, 0, Math.min(size, b.length));
  return { len: b.length, bytes: [...out] };
}

export class PoolsPda extends ProgramPdas {
  constructor(programId: PublicKey = POOLS_PROGRAM_ID) {
    super(programId);
  }
  pool(creator: PublicKey, nonce: bigint) {
    return this.find([Buffer.from("pool"), creator.toBuffer(), u64le(nonce)]);
  }
  participant(pool: PublicKey, user: PublicKey) {
    return this.find([Buffer.from("participant"), pool.toBuffer(), user.toBuffer()]);
  }
}

const codec = programCodec<PoolsAccountKind, PoolsEvent["name"]>(POOLS_IDL);
export const poolsAccountsCoder = codec.accounts;
export const poolsEventCoder = codec.events;

export interface CreatePoolInput {
  payer: PublicKey;
  creator: PublicKey;
  nonce: bigint;
  question: string;
  /** Omit (or two empty strings) on a two-outcome pool for "For" / "Against". */
  labels?: string[];
  /** Needed only when labels are omitted; default 2. */
  outcomeCount?: number;
  closesAt: bigint;
  resolutionAt?: bigint;
  criteria?: string;
  coverUrl?: string;
  /** Raw lengths, to send inconsistent data on purpose (adversarial tests). */
  rawLens?: Partial<{ question: number; criteria: number; coverUrl: number; labels: number[] }>;
  overrides?: Partial<Record<"config" | "pool" | "systemProgram", PublicKey>>;
}

type Over<K extends string> = Partial<Record<K, PublicKey>>;

/**
 * A payout to a participant: `user` is its wallet (its Claim receives what `userToken` cannot);
 * `payer` signs and pays the Claim's rent if one is created; `claimBump` overrides the canonical bump.
 */
interface PayoutInput {
  pool: PublicKey;
  participant: PublicKey;
  user: PublicKey;
  userToken: PublicKey;
  payer: PublicKey;
  claimBump?: number;
  overrides?: Over<"config" | "vault" | "tokenProgram" | "userClaim" | "systemProgram">;
}

export class PoolsClient extends ProgramClient<Pools, PoolsPda> {
  constructor(program: Program<Pools>) {
    super(program, new PoolsPda(program.programId));
  }

  static fromProvider(provider: Provider, programId: PublicKey = POOLS_PROGRAM_ID): PoolsClient {
    return new PoolsClient(new Program<Pools>({ ...POOLS_IDL, address: programId.toBase58() }, provider));
  }

  /** `deployer` (default: the authority) must be the program's upgrade authority; it signs and pays. */
  initializeConfig(a: {
    authority: PublicKey;
    mint: PublicKey;
    treasury: PublicKey;
    feeBps: number;
    deployer?: PublicKey;
    overrides?: Over<"config" | "vault" | "programData">;
  }) {
    return this.program.methods
      .initializeConfig(a.feeBps)
      .accountsStrict({ ...this.initializeConfigAccounts(a), ...a.overrides })
      .instruction();
  }

  updateConfig(a: { authority: PublicKey; feeBps: number; config?: PublicKey }) {
    return this.program.methods.updateConfig(a.feeBps).accountsStrict(this.authorityAccounts(a)).instruction();
  }

  /** Names a new fee treasury (authority only), e.g. when the old one was closed or frozen. */
  setTreasury(a: { authority: PublicKey; treasury: PublicKey; config?: PublicKey }) {
    return this.program.methods
      .setTreasury()
      .accountsStrict({ ...this.authorityAccounts(a), treasury: a.treasury })
      .instruction();
  }

  createPool(a: CreatePoolInput & { bump?: number }) {
    const [pool, canonicalBump] = this.pda.pool(a.creator, a.nonce);
    const bump = a.bump ?? canonicalBump;
    const labels = a.labels ?? [];
    const count = a.labels ? a.labels.length : (a.outcomeCount ?? 2);
    const q = field(a.question, POOL_LIMITS.question);
    const c = field(a.criteria ?? "", POOL_LIMITS.criteria);
    const u = field(a.coverUrl ?? "", POOL_LIMITS.coverUrl);
    const labelBytes = Buffer.alloc(8 * POOL_LIMITS.label);
    const labelLens = Array<number>(8).fill(0);
    labels.slice(0, 8).forEach((l, i) => {
      const f = field(l, POOL_LIMITS.label);
      labelLens[i] = Math.min(f.len, 255);
      Buffer.from(f.bytes).copy(labelBytes, i * POOL_LIMITS.label);
    });
    const r = a.rawLens ?? {};
    return this.program.methods
      .createPool(
        bn(a.nonce),
        bump,
        count,
        bn(a.closesAt),
        bn(a.resolutionAt ?? 0n),
        Math.min(r.question ?? q.len, 65535),
        q.bytes,
        Math.min(r.criteria ?? c.len, 65535),
        c.bytes,
        Math.min(r.coverUrl ?? u.len, 255),
        u.bytes,
        r.labels ?? labelLens,
        [...labelBytes],
      )
      .accountsStrict({ payer: a.payer, creator: a.creator, config: this.pda.config()[0], pool, systemProgram: SYSTEM_PROGRAM, ...a.overrides })
      .instruction();
  }

  /** `participantBump` overrides the canonical bump (adversarial tests). */
  placePick(a: {
    payer: PublicKey;
    user: PublicKey;
    userToken: PublicKey;
    pool: PublicKey;
    outcome: number;
    amount: bigint;
    participantBump?: number;
    overrides?: Over<"config" | "participant" | "vault" | "tokenProgram" | "systemProgram">;
  }) {
    const [participant, bump] = this.pda.participant(a.pool, a.user);
    return this.program.methods
      .placePick(a.outcome, bn(a.amount), a.participantBump ?? bump)
      .accountsStrict({
        payer: a.payer,
        user: a.user,
        userToken: a.userToken,
        config: this.pda.config()[0],
        pool: a.pool,
        participant,
        vault: this.pda.vault()[0],
        tokenProgram: TOKEN_PROGRAM,
        systemProgram: SYSTEM_PROGRAM,
        ...a.overrides,
      })
      .instruction();
  }

  proposeOutcome(a: { creator: PublicKey; pool: PublicKey; outcome: number }) {
    return this.program.methods.proposeOutcome(a.outcome).accountsStrict({ creator: a.creator, pool: a.pool }).instruction();
  }

  castVote(a: { voter: PublicKey; pool: PublicKey; outcome: number; participant?: PublicKey }) {
    const participant = a.participant ?? this.pda.participant(a.pool, a.voter)[0];
    return this.program.methods.castVote(a.outcome).accountsStrict({ voter: a.voter, pool: a.pool, participant }).instruction();
  }

  resolvePool(a: { caller: PublicKey; pool: PublicKey }) {
    return this.program.methods.resolvePool().accountsStrict(a).instruction();
  }

  /** The config's authority decides an escalated pool: an outcome index, or CANCEL_OUTCOME. */
  authorityResolve(a: { authority: PublicKey; pool: PublicKey; outcome: number; config?: PublicKey }) {
    return this.program.methods
      .authorityResolve(a.outcome)
      .accountsStrict({ authority: a.authority, config: a.config ?? this.pda.config()[0], pool: a.pool })
      .instruction();
  }

  cancelPool(a: { caller: PublicKey; pool: PublicKey }) {
    return this.program.methods.cancelPool().accountsStrict(a).instruction();
  }

  settleParticipant(a: PayoutInput & { treasury: PublicKey }) {
    const [accounts, bump] = this.payoutAccounts(a);
    return this.program.methods
      .settleParticipant(bump)
      .accountsStrict({ ...accounts, treasury: a.treasury, ...a.overrides })
      .instruction();
  }

  refundParticipant(a: PayoutInput) {
    const [accounts, bump] = this.payoutAccounts(a);
    return this.program.methods
      .refundParticipant(bump)
      .accountsStrict({ ...accounts, ...a.overrides })
      .instruction();
  }

  /** What settle_participant and refund_participant both take (settle adds the treasury), and the claim bump to send. */
  private payoutAccounts(a: PayoutInput) {
    const [userClaim, bump] = this.pda.claim(a.user);
    const accounts = {
      config: this.pda.config()[0],
      pool: a.pool,
      participant: a.participant,
      vault: this.pda.vault()[0],
      userToken: a.userToken,
      tokenProgram: TOKEN_PROGRAM,
      payer: a.payer,
      userClaim,
      systemProgram: SYSTEM_PROGRAM,
    };
    return [accounts, a.claimBump ?? bump] as const;
  }

  /** The owner takes its whole claim to `destination` (a token account of the mint it owns); the rent returns to the claim's `rentPayer`. */
  withdrawClaim(a: { owner: PublicKey; destination: PublicKey; rentPayer: PublicKey; overrides?: Over<"config" | "claim" | "vault" | "tokenProgram"> }) {
    return this.program.methods.withdrawClaim().accountsStrict(this.withdrawClaimAccounts(a)).instruction();
  }
}

const big = bigints;
const text = (bytes: number[], len: number) => Buffer.from(bytes.slice(0, len)).toString("utf8");

export interface PoolsConfigAccount {
  authority: PublicKey;
  mint: PublicKey;
  treasury: PublicKey;
  vault: PublicKey;
  feeBps: number;
  bump: number;
  vaultBump: number;
}
export interface OutcomeAccount {
  outcomeIndex: number;
  label: string;
  totalOi: bigint;
  wagerCount: number;
  voteWeight: bigint;
}
export interface PoolAccount {
  creator: PublicKey;
  nonce: bigint;
  bump: number;
  version: number;
  state: StoredPoolState;
  outcomeCount: number;
  feeBps: number;
  question: string;
  criteria: string;
  coverUrl: string;
  closesAt: bigint;
  resolutionAt: bigint;
  /** End of the dispute window of the proposal (0 before one). */
  voteEndsAt: bigint;
  /** When the pool went to the authority (0: not escalated). */
  escalatedAt: bigint;
  outcomes: OutcomeAccount[];
  totalOi: bigint;
  participantCount: number;
  voterCount: number;
  voteWeightTotal: bigint;
  proposedOutcome: number | null;
  escalated: boolean;
  disputeCount: number;
  winningOutcome: number | null;
  settledCount: number;
  paidOut: bigint;
  feesPaid: bigint;
  createdAt: bigint;
  updatedAt: bigint;
}
export interface ParticipantAccount {
  pool: PublicKey;
  user: PublicKey;
  userToken: PublicKey;
  bump: number;
  voted: boolean;
  voteOutcome: number | null;
  settled: boolean;
  stakes: bigint[];
  total: bigint;
  pickCount: number;
  payout: bigint;
  fee: bigint;
  createdAt: bigint;
}

export function decodePoolsConfig(data: Buffer): PoolsConfigAccount {
  return big(poolsAccountsCoder.decode("config", data));
}
/** A Pool as the Borsh coder reads it (u64/i64 as bigint), before texts and sentinels are resolved. */
export interface RawPool {
  creator: PublicKey;
  nonce: bigint;
  bump: number;
  version: number;
  state: number;
  outcomeCount: number;
  feeBps: number;
  questionLen: number;
  question: number[];
  criteriaLen: number;
  criteria: number[];
  coverUrlLen: number;
  coverUrl: number[];
  closesAt: bigint;
  resolutionAt: bigint;
  voteEndsAt: bigint;
  escalatedAt: bigint;
  outcomes: { labelLen: number; label: number[]; totalOi: bigint; wagerCount: number; voteWeight: bigint }[];
  totalOi: bigint;
  participantCount: number;
  voterCount: number;
  voteWeightTotal: bigint;
  proposedOutcome: number;
  escalated: number;
  disputeCount: number;
  winningOutcome: number;
  settledCount: number;
  paidOut: bigint;
  feesPaid: bigint;
  createdAt: bigint;
  updatedAt: bigint;
}
/** A Participant as the Borsh coder reads it, with its flags and vote as their codes. */
export type RawParticipant = Omit<ParticipantAccount, "voted" | "settled" | "voteOutcome"> & { voted: number; settled: number; voteOutcome: number };
export function decodePool(data: Buffer): PoolAccount {
  const r = big<RawPool>(poolsAccountsCoder.decode("pool", data));
  const outcomes = r.outcomes.slice(0, r.outcomeCount).map((o, i) => ({
    outcomeIndex: i,
    label: text(o.label, o.labelLen),
    totalOi: o.totalOi,
    wagerCount: o.wagerCount,
    voteWeight: o.voteWeight,
  }));
  return {
    creator: r.creator,
    nonce: r.nonce,
    bump: r.bump,
    version: r.version,
    state: PoolState[r.state],
    outcomeCount: r.outcomeCount,
    feeBps: r.feeBps,
    question: text(r.question, r.questionLen),
    criteria: text(r.criteria, r.criteriaLen),
    coverUrl: text(r.coverUrl, r.coverUrlLen),
    closesAt: r.closesAt,
    resolutionAt: r.resolutionAt,
    voteEndsAt: r.voteEndsAt,
    escalatedAt: r.escalatedAt,
    outcomes,
    totalOi: r.totalOi,
    participantCount: r.participantCount,
    voterCount: r.voterCount,
    voteWeightTotal: r.voteWeightTotal,
    proposedOutcome: r.proposedOutcome === NO_OUTCOME ? null : r.proposedOutcome,
    escalated: r.escalated === 1,
    disputeCount: r.disputeCount,
    winningOutcome: r.winningOutcome === NO_OUTCOME ? null : r.winningOutcome,
    settledCount: r.settledCount,
    paidOut: r.paidOut,
    feesPaid: r.feesPaid,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export function decodeParticipant(data: Buffer): ParticipantAccount {
  const r = big<RawParticipant>(poolsAccountsCoder.decode("participant", data));
  return { ...r, voted: r.voted === 1, settled: r.settled === 1, voteOutcome: r.voteOutcome === NO_OUTCOME ? null : r.voteOutcome };
}

export function decodeClaim(data: Buffer): ClaimAccount {
  return big(poolsAccountsCoder.decode("claim", data));
}

/** Which account type a program-owned account holds, by its discriminator. */
export type PoolsAccountKind = "config" | "pool" | "participant" | "claim";
export const poolsAccountKind = codec.accountKind;

/** What can happen next to a pool at `now` in the resolution of the program (for crank and UI). */
export function poolResolutionAt(
  pool: PoolAccount,
  now: bigint,
): "picks-open" | "awaiting-proposal" | "escalatable" | "dispute-window" | "resolvable" | "awaiting-authority" | "cancelable" | "final" {
  if (pool.state === "OPEN") {
    if (now < pool.closesAt) return "picks-open";
    if (pool.participantCount === 0) return "cancelable";
    const base = pool.resolutionAt > pool.closesAt ? pool.resolutionAt : pool.closesAt;
    return now < base + PROPOSAL_DEADLINE_SECONDS ? "awaiting-proposal" : "escalatable";
  }
  if (pool.state !== "RESOLVING") return "final";
  if (pool.escalated) return now < pool.escalatedAt + AUTHORITY_DEADLINE_SECONDS ? "awaiting-authority" : "cancelable";
  return now < pool.voteEndsAt && pool.voterCount < pool.participantCount ? "dispute-window" : "resolvable";
}

export interface PoolsEvent {
  name: "pickPlaced" | "voteCast" | "outcomeProposed" | "poolEscalated" | "poolStateChanged" | "participantSettled" | "claimCredited" | "claimWithdrawn";
  data: Record<string, unknown>;
}
export function parsePoolsEvents(logs: string[]): PoolsEvent[] {
  return codec.parseEvents(logs);
}

/** Program error code -> name (as in the Rust enum) and message. */
export const POOLS_ERRORS: Map<number, { name: string; msg: string }> = codec.errors;
