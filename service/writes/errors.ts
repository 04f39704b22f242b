/**
 * How the API answers a rule the offers program (or the service's compliance rule) refuses, by
 * its name: before signing, when a pre-check finds it (idl/client/offers-rules.ts `takeRefusal`,
 * `closeRefusal`, `contractRefusal`), with the figures the service read; and after submitting,
 * when the chain refused on a race with another write, with the message alone. Everything else
 * the chain refuses or loses is a 503 without detail.
 */
import { OFFERS_ERRORS, type ContractAccount, type OfferAccount } from "../../idl/client/offers";
import type { CloseRefusalName, TakeRefusalName } from "../../idl/client/offers-rules";
import { ApiError, type ApiStatus } from "../api-error";
import type { SubmitFailure } from "../chain/submitter";

/** What a pre-check read, for the message of its refusal. */
export interface RefusalFacts {
  offer?: OfferAccount;
  contract?: ContractAccount;
  amount?: bigint;
  /** The caller's position on the offer before this take. */
  held?: bigint;
  expectedRevision?: bigint;
  maximumWager?: bigint;
}

interface Answer {
  status: ApiStatus;
  /** The answer to the chain's refusal; without it, the IDL's message. */
  message?: string;
  /** The answer to the pre-check's refusal, with what it read; without it, `message`. */
  precheck?: (f: RefusalFacts) => string;
}

const remaining = (o: OfferAccount) => o.takerTarget - o.takerFilled;
const changed = (f: RefusalFacts) => `the offer changed: expectedRevision ${f.expectedRevision}, current revision ${f.offer!.revision}; re-read it and retry`;

/** Every refusal the API answers, by name (the offers program's IDL names, and the compliance rule's). */
const ANSWERS: Record<string, Answer> = {
  CallerBlocked: { status: 403, message: "your account is blocked from wagering" },
  CreatorBlocked: { status: 403, message: "the offer's creator is blocked from wagering" },
  OffersDisabled: { status: 503, message: "offers are switched off; retry later with the same idempotencyKey" },
  FeeChanged: { status: 409, message: "the fee changed; re-read feeBps from /contracts and retry" },
  ContractNotOpen: {
    status: 409,
    message: "the contract no longer accepts offers",
    precheck: (f) => `the contract is ${f.contract!.status} and no longer accepts offers`,
  },
  CutoffPassed: { status: 409, message: "the contract's cutoff has passed" },
  OfferNotOpen: { status: 409, message: "the offer is no longer open; re-read it", precheck: (f) => `the offer is ${f.offer!.status}` },
  OfferExpired: {
    status: 409,
    message: "the offer has expired: it takes no more takes",
    precheck: (f) => `the offer expired at ${new Date(Number(f.offer!.expiresAt) * 1000).toISOString()}: it takes no more takes`,
  },
  InvalidExpiry: { status: 400, message: "expiresAt must be in the future and no later than the contract's cutoff" },
  RevisionMismatch: { status: 409, message: "the offer changed since expectedRevision; re-read it and retry with its current revision", precheck: changed },
  AmountExceedsRemaining: {
    status: 409,
    message: "the amount is no longer available; re-read remainingTakerMicros",
    precheck: (f) => `the amount is no longer available: remainingTakerMicros is ${remaining(f.offer!)}`,
  },
  AlreadyInitialized: { status: 409, message: "an offer for this idempotencyKey already exists" },
  InvalidSide: { status: 400 },
  StakeBelowMinimum: { status: 400 },
  StakeAboveMaximum: { status: 400 },
  InvalidTarget: { status: 400 },
  OddsBelowMinimum: { status: 400 },
  OddsAboveMaximum: { status: 400 },
  MinimumTakeTooSmall: { status: 400 },
  MinimumTakeAboveTarget: { status: 400 },
  InsufficientBalance: { status: 400, message: "insufficient balance" },
  SelfTake: { status: 400, message: "you cannot take your own offer" },
  ZeroAmount: { status: 400, precheck: () => "takeAmountMicros must be positive" },
  TakeBelowMinimum: {
    status: 400,
    message: "takeAmountMicros is below the offer's minimumTakeMicros and is not the remaining amount",
    precheck: (f) =>
      `takeAmountMicros must be at least the offer's minimumTakeMicros ${f.offer!.minimumTake}, or exactly remainingTakerMicros ${remaining(f.offer!)}`,
  },
  PositionAboveMaximum: {
    status: 400,
    message: "your position on this offer would exceed maximumWagerMicros",
    precheck: (f) => `your position on this offer would be ${f.held! + f.amount!} micros, above maximumWagerMicros ${f.maximumWager}`,
  },
  NothingTaken: { status: 409, message: "take-best: the offers planned were taken by others first; nothing was taken: re-read the book or quote and retry" },
  NotFilled: { status: 409, message: "fill-or-kill: the book no longer fills the amount within worstOdds; nothing was taken: re-read the quote and retry" },
  TakeTooSmallToMatch: { status: 400, message: "takeAmountMicros is too small to be matched with any creator stake" },
  CloseNotAllowed: {
    status: 409,
    message: "only the creator may close an offer before its expiry and the contract's cutoff",
    precheck: (f) =>
      `only the creator may close this offer before the contract's cutoff at ${new Date(Number(f.contract!.cutoffAt) * 1000).toISOString()}` +
      (f.offer?.expiresAt ? ` and its expiry at ${new Date(Number(f.offer.expiresAt) * 1000).toISOString()}` : ""),
  },
};

/** A pre-check's refusal as the API's error: the status of its name, the message with what it read. */
export function refusalError(name: TakeRefusalName | CloseRefusalName | "ContractNotOpen" | "CutoffPassed", facts: RefusalFacts = {}): ApiError {
  const a = ANSWERS[name];
  return new ApiError(a.status, a.precheck?.(facts) ?? a.message ?? name);
}

export const CHAIN_UNREACHABLE = "the chain is temporarily unreachable; retry with the same idempotencyKey";
export const CHAIN_REFUSED = "the chain refused the transaction; retry later with the same idempotencyKey";

/**
 * The numbers an instruction logged with `kit::log::msg_u64` on the line after `marker`: the
 * runtime writes them as `Program log: 0x1f, 0x0, ..` (hexadecimal, five of them).
 */
export function loggedU64s(logs: string[], marker: string): bigint[] | null {
  const i = logs.findIndex((l) => l.includes(marker));
  const m = i >= 0 ? /^Program log: (0x[0-9a-f]+(?:, 0x[0-9a-f]+)*)$/i.exec(logs[i + 1] ?? "") : null;
  return m ? m[1].split(", ").map((h) => BigInt(h)) : null;
}

/**
 * A refusal of the offers program as the API's error (null when it is not one of the errors
 * the API answers). InsufficientBalance carries the amounts the program logged when it refused
 * (create_offer.rs, take_offer.rs: needed, then available).
 */
export function programRefusal(f: SubmitFailure): ApiError | null {
  if (f.kind !== "program" || f.program !== "offers" || !f.name) return null;
  const e = ANSWERS[f.name];
  if (!e) return null;
  if (f.name === "InsufficientBalance") {
    const n = loggedU64s(f.logs, "insufficient balance: needed, available");
    if (n && n.length >= 2) return new ApiError(400, `insufficient balance: needed ${n[0]} micros, available ${n[1]} micros`);
  }
  return new ApiError(e.status, e.message ?? OFFERS_ERRORS.get(f.code)?.msg ?? f.name);
}

/**
 * A failed submission as the API's error: a program refusal as above, the chain unreachable
 * 503, anything else (a refusal that is not the caller's: fee payer, signatures, an unknown
 * program error) 503 after `onInternal` saw it.
 */
export function submitFailureError(f: SubmitFailure, onInternal?: (f: SubmitFailure) => void): ApiError {
  const refused = programRefusal(f);
  if (refused) return refused;
  if (f.kind === "rpc") return new ApiError(503, CHAIN_UNREACHABLE);
  onInternal?.(f);
  return new ApiError(503, CHAIN_REFUSED);
}
