/**
 * Who may take and who may close, as one rule (idl/client/offers-rules.ts `takeRefusal`,
 * `closeRefusal`), its answers on the write path (service/writes/errors.ts `refusalError`: the
 * exact status of every name) and its names in the offer's `viewer` (`TAKE_REFUSAL_OF`). Pure
 * functions: no chain, no store.
 */
import { describe, expect, it } from "vitest";
import { TAKE_REFUSALS, closeRefusal, takeRefusal, type TakeAttempt, type TakeRefusalName } from "../../idl/client/offers-rules";
import { OFFERS_ERRORS } from "../../idl/client/offers";
import { refusalError } from "../../service/writes/errors";
import { TAKE_REFUSAL_OF, viewerOf, type ViewerInput } from "../../service/read/offer-viewer";
import type { OffersTable } from "../../indexer";

const U = 1_000_000n;
/** A take every rule accepts: 10 of an offer of 8 against 20 (5 taken), minimum 2, cap 50. */
const ok = (): TakeAttempt => ({
  offer: {
    status: "Open",
    creator: "C",
    creatorTotal: 8n * U,
    creatorAllocated: 2n * U,
    takerTarget: 20n * U,
    takerFilled: 5n * U,
    minimumTake: 2n * U,
    revision: 3n,
  },
  contract: { status: "Open", cutoffAt: 1_000n },
  taker: { wallet: "T", blocked: false, held: 0n },
  creatorBlocked: false,
  amount: 10n * U,
  expectedRevision: 3n,
  now: 999n,
  config: { offersEnabled: true, maximumWager: 50n * U },
});
const take = (f: (t: TakeAttempt) => void) => {
  const t = ok();
  f(t);
  return takeRefusal(t);
};

describe("takeRefusal", () => {
  it("accepts a valid take, the exact remainder below the minimum, and a take up to the per-position cap", () => {
    expect(takeRefusal(ok())).toBeNull();
    expect(take((t) => ((t.offer.takerFilled = 19n * U), (t.amount = U)))).toBeNull();
    expect(take((t) => ((t.taker.held = 40n * U), (t.amount = 10n * U)))).toBeNull();
    expect(take((t) => ((t.config = null), (t.expectedRevision = undefined)))).toBeNull();
  });

  it("names each rule by the program's error (the compliance rule by the service's)", () => {
    const cases: [TakeRefusalName, (t: TakeAttempt) => void][] = [
      ["CallerBlocked", (t) => (t.taker.blocked = true)],
      ["CreatorBlocked", (t) => (t.creatorBlocked = true)],
      ["OffersDisabled", (t) => (t.config!.offersEnabled = false)],
      ["ContractNotOpen", (t) => (t.contract.status = "Resolved")],
      ["CutoffPassed", (t) => (t.now = 1_000n)],
      ["OfferNotOpen", (t) => (t.offer.status = "Closed")],
      ["OfferNotOpen", (t) => (t.offer.takerFilled = t.offer.takerTarget)],
      ["OfferExpired", (t) => (t.offer.expiresAt = 999n)],
      ["SelfTake", (t) => (t.taker.wallet = "C")],
      ["RevisionMismatch", (t) => (t.expectedRevision = 2n)],
      ["ZeroAmount", (t) => (t.amount = 0n)],
      ["AmountExceedsRemaining", (t) => (t.amount = 16n * U)],
      ["TakeBelowMinimum", (t) => (t.amount = U)],
      ["TakeTooSmallToMatch", (t) => ((t.offer.minimumTake = 1n), (t.amount = 1n))],
      ["PositionAboveMaximum", (t) => (t.taker.held = 41n * U)],
    ];
    for (const [name, f] of cases) expect(take(f), name).toBe(name);
    expect(new Set(cases.map(([n]) => n))).toEqual(new Set(TAKE_REFUSALS));
  });

  it("answers the first rule broken in the program's order (take_offer.rs), compliance first", () => {
    // Offer closed on a contract past its cutoff: the program checks the contract first.
    expect(take((t) => ((t.offer.status = "Closed"), (t.now = 5_000n)))).toBe("CutoffPassed");
    // A stale revision on one's own offer: SelfTake comes before RevisionMismatch.
    expect(take((t) => ((t.taker.wallet = "C"), (t.expectedRevision = 1n)))).toBe("SelfTake");
    expect(take((t) => ((t.config!.offersEnabled = false), (t.contract.status = "Voided")))).toBe("OffersDisabled");
    expect(take((t) => ((t.creatorBlocked = true), (t.taker.blocked = true), (t.offer.status = "Settled")))).toBe("CallerBlocked");
    // Offer::accepts_takes: not Open before expired; the expiry second itself is past, one before is not; 0 is none.
    expect(take((t) => ((t.offer.status = "Closed"), (t.offer.expiresAt = 10n)))).toBe("OfferNotOpen");
    expect(take((t) => (t.offer.expiresAt = 1_000n))).toBeNull();
    expect(take((t) => (t.offer.expiresAt = 0n))).toBeNull();
    expect(take((t) => ((t.offer.expiresAt = 999n), (t.expectedRevision = 1n)))).toBe("OfferExpired");
    // Every u64 amount survives the matched-stake arithmetic (no number rounding).
    expect(take((t) => ((t.amount = 18_446_744_073_709_551_615n), (t.config = null)))).toBe("AmountExceedsRemaining");
  });
});

describe("closeRefusal", () => {
  const close = (
    caller: string | null,
    now: bigint,
    o: Partial<{ status: string; revision: bigint; expected: bigint; contract: string; expiresAt: bigint }> = {},
  ) =>
    closeRefusal({
      offer: { status: o.status ?? "Open", creator: "C", revision: o.revision ?? 3n, expiresAt: o.expiresAt },
      contract: { status: o.contract ?? "Open", cutoffAt: 1_000n },
      caller,
      expectedRevision: o.expected,
      now,
    });
  it("the creator any time; anyone else once the contract accepts no offers; only an Open offer, at its revision", () => {
    expect(close("C", 999n)).toBeNull();
    expect(close("S", 999n)).toBe("CloseNotAllowed");
    expect(close(null, 999n)).toBe("CloseNotAllowed");
    expect(close("S", 1_000n)).toBeNull();
    expect(close("S", 999n, { contract: "Voided" })).toBeNull();
    expect(close("C", 999n, { status: "Filled" })).toBe("OfferNotOpen");
    expect(close("C", 999n, { expected: 2n })).toBe("RevisionMismatch");
    // close_offer.rs: the offer's status, then the revision, then who may close.
    expect(close("S", 999n, { status: "Closed", expected: 2n })).toBe("OfferNotOpen");
    expect(close("S", 999n, { expected: 2n })).toBe("RevisionMismatch");
  });
  it("anyone once the offer expired (the expiry second itself), not one second before", () => {
    expect(close("S", 499n, { expiresAt: 500n })).toBe("CloseNotAllowed");
    expect(close("S", 500n, { expiresAt: 500n })).toBeNull();
    expect(close(null, 501n, { expiresAt: 500n })).toBeNull();
    expect(close("S", 999n, { expiresAt: 0n })).toBe("CloseNotAllowed");
  });
});

describe("the write path's answer to each refusal", () => {
  it("maps every name to exactly one status", () => {
    const status = Object.fromEntries([...TAKE_REFUSALS, "CloseNotAllowed" as const].map((n) => [n, refusalError(n, FACTS).status]));
    expect(status).toEqual({
      CallerBlocked: 403,
      CreatorBlocked: 403,
      OffersDisabled: 503,
      ContractNotOpen: 409,
      CutoffPassed: 409,
      OfferNotOpen: 409,
      OfferExpired: 409,
      SelfTake: 400,
      RevisionMismatch: 409,
      ZeroAmount: 400,
      AmountExceedsRemaining: 409,
      TakeBelowMinimum: 400,
      TakeTooSmallToMatch: 400,
      PositionAboveMaximum: 400,
      CloseNotAllowed: 409,
    });
  });

  it("says what the pre-check read", () => {
    expect(refusalError("AmountExceedsRemaining", FACTS).message).toBe("the amount is no longer available: remainingTakerMicros is 15000000");
    expect(refusalError("PositionAboveMaximum", FACTS).message).toBe("your position on this offer would be 52000000 micros, above maximumWagerMicros 50000000");
    expect(refusalError("RevisionMismatch", FACTS).message).toBe("the offer changed: expectedRevision 2, current revision 3; re-read it and retry");
    expect(refusalError("ContractNotOpen", FACTS).message).toBe("the contract is Voided and no longer accepts offers");
    expect(refusalError("CloseNotAllowed", FACTS).message).toBe(
      "only the creator may close this offer before the contract's cutoff at 1970-01-01T00:16:40.000Z",
    );
    const expiring = { ...FACTS, offer: { expiresAt: 900n } as never };
    expect(refusalError("OfferExpired", expiring).message).toBe("the offer expired at 1970-01-01T00:15:00.000Z: it takes no more takes");
    expect(refusalError("CloseNotAllowed", expiring).message).toBe(
      "only the creator may close this offer before the contract's cutoff at 1970-01-01T00:16:40.000Z and its expiry at 1970-01-01T00:15:00.000Z",
    );
  });

  it("every program error a take or close names is one of the IDL's", () => {
    const idl = new Set([...OFFERS_ERRORS.values()].map((e) => e.name));
    for (const n of [...TAKE_REFUSALS, "CloseNotAllowed"].filter((n) => !["CallerBlocked", "CreatorBlocked"].includes(n))) expect(idl.has(n), n).toBe(true);
  });
});

const FACTS = {
  offer: { status: "Filled", revision: 3n, takerTarget: 20n * U, takerFilled: 5n * U, minimumTake: 2n * U, expiresAt: 0n } as never,
  contract: { status: "Voided", cutoffAt: 1_000n } as never,
  amount: 12n * U,
  held: 40n * U,
  expectedRevision: 2n,
  maximumWager: 50n * U,
};

describe("the viewer's takeRefusal", () => {
  const row = {
    address: "O",
    status: "Open",
    creator: "C",
    side: "sideA",
    creator_total_micros: String(8n * U),
    creator_allocated_micros: String(2n * U),
    taker_target_micros: String(20n * U),
    taker_filled_micros: String(5n * U),
    minimum_take_micros: String(2n * U),
    revision: 3,
    fee_bps: 100,
    creator_refunded_micros: "0",
  } as unknown as OffersTable;
  const view = (f: (i: ViewerInput) => void = () => {}) => {
    const i: ViewerInput = {
      offer: { ...row },
      wallet: "T",
      position: null,
      creatorPositions: [],
      contract: { status: "Open", cutoffAt: 1_000 },
      result: null,
      now: 999,
      config: { offers_enabled: 1, maximum_wager_micros: String(50n * U) } as never,
      callerBlocked: false,
      creatorBlocked: false,
    };
    f(i);
    return viewerOf(i);
  };

  it("is the take rule's name for the most the caller may take, mapped one way", () => {
    expect(view()).toMatchObject({ canTake: true, maxTakeMicros: String(15n * U), takeLimit: "remaining", takeRefusal: null });
    expect(view((i) => (i.wallet = "C")).takeRefusal).toBe("ownOffer");
    expect(view((i) => (i.contract.cutoffAt = 999)).takeRefusal).toBe("contractClosed");
    expect(view((i) => (i.offer.status = "Closed")).takeRefusal).toBe("offerNotOpen");
    expect(view((i) => (i.config = { offers_enabled: 0, maximum_wager_micros: String(50n * U) } as never)).takeRefusal).toBe("offersDisabled");
    // 49 held of a 50 cap: room 1 is under the minimum of 2 and is not the remainder.
    expect(view((i) => (i.position = { taker_micros: String(49n * U), creator_matched_micros: "0", status: "Open" } as never)).takeRefusal).toBe(
      "maximumWager",
    );
    expect(TAKE_REFUSAL_OF).toEqual({
      CallerBlocked: "callerBlocked",
      CreatorBlocked: "creatorBlocked",
      OffersDisabled: "offersDisabled",
      ContractNotOpen: "contractClosed",
      CutoffPassed: "contractClosed",
      OfferNotOpen: "offerNotOpen",
      OfferExpired: "offerExpired",
      SelfTake: "ownOffer",
      RevisionMismatch: "offerNotOpen",
      ZeroAmount: "maximumWager",
      AmountExceedsRemaining: "maximumWager",
      TakeBelowMinimum: "maximumWager",
      TakeTooSmallToMatch: "tooSmallToMatch",
      PositionAboveMaximum: "maximumWager",
    });
  });

  it("canClose follows closeRefusal", () => {
    expect(view().canClose).toBe(false);
    expect(view((i) => (i.wallet = "C")).canClose).toBe(true);
    expect(view((i) => (i.now = 1_000)).canClose).toBe(true);
    expect(view((i) => ((i.now = 1_000), (i.wallet = null))).canClose).toBe(false);
  });
});
