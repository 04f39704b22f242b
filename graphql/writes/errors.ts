/**
 * The offers program's errors, as the API answers them when the chain refuses a transaction the
 * pre-checks passed (a race with another write): the same statuses the pre-checks give.
 */
import { OFFERS_ERRORS } from "../../idl/client/offers";
import { WriteError } from "./validate";

const STATUS: Record<string, 400 | 403 | 409 | 503> = {
  OffersDisabled: 503,
  FeeChanged: 409,
  ContractNotOpen: 409,
  CutoffPassed: 409,
  OfferNotOpen: 409,
  RevisionMismatch: 409,
  AmountExceedsRemaining: 409,
  AlreadyInitialized: 409,
  InvalidSide: 400,
  StakeBelowMinimum: 400,
  StakeAboveMaximum: 400,
  InvalidTarget: 400,
  OddsBelowMinimum: 400,
  OddsAboveMaximum: 400,
  MinimumTakeTooSmall: 400,
  MinimumTakeAboveTarget: 400,
  InsufficientBalance: 400,
  SelfTake: 400,
  ZeroAmount: 400,
  TakeBelowMinimum: 400,
  PositionAboveMaximum: 400,
  TakeTooSmallToMatch: 400,
  CloseNotAllowed: 403,
};

const MESSAGE: Record<string, string> = {
  OffersDisabled: "offers are switched off; retry later with the same idempotencyKey",
  FeeChanged: "the fee changed; re-read feeBps from /contracts and retry",
  ContractNotOpen: "the contract no longer accepts offers",
  CutoffPassed: "the contract's cutoff has passed",
  OfferNotOpen: "the offer is no longer open; re-read it",
  RevisionMismatch: "the offer changed since expectedRevision; re-read it and retry with its current revision",
  AmountExceedsRemaining: "the amount is no longer available; re-read remainingTakerMicros",
  AlreadyInitialized: "an offer for this idempotencyKey already exists",
  InsufficientBalance: "insufficient balance",
  SelfTake: "you cannot take your own offer",
  PositionAboveMaximum: "your position on this offer would exceed maximumWagerMicros",
  TakeBelowMinimum: "takeAmountMicros is below the offer's minimumTakeMicros and is not the remaining amount",
  TakeTooSmallToMatch: "takeAmountMicros is too small to be matched with any creator stake",
  CloseNotAllowed: "only the creator may close an offer before the contract's cutoff",
};

/** A program error code as the API's error; null when the code is not the offers program's. */
export function programError(code: number | null): WriteError | null {
  if (code === null) return null;
  const e = OFFERS_ERRORS.get(code);
  if (!e) return null;
  const status = STATUS[e.name];
  if (!status) return null;
  return new WriteError(status, MESSAGE[e.name] ?? e.msg);
}
