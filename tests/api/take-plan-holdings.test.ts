/**
 * The take-best plan (service/read/take-plan.ts) takes the caller's holdings as one lookup
 * (service/read/holdings.ts), for the quote and the write alike: what the caller holds on an
 * offer counts against the per-position maximum wager there and nowhere else. Pure: no chain.
 */
import { describe, expect, it } from "vitest";
import { NO_HOLDINGS, holdingsOf } from "../../service/read/holdings";
import { ANY_ODDS, planOverBook, type BookOffer } from "../../service/read/take-plan";

const offer = (address: string, takerTarget: bigint): BookOffer => ({
  address,
  side: "sideA",
  contract: "K",
  status: "Open",
  creator: "creator",
  creatorTotal: takerTarget,
  creatorAllocated: 0n,
  takerTarget,
  takerFilled: 0n,
  minimumTake: 1n,
  revision: 1n,
  feeBps: 100,
});
const book = [offer("a", 600n), offer("b", 600n), offer("c", 600n)];
const request = { side: "sideB" as const, amount: 1_000n, worstOdds: ANY_ODDS, taker: "taker", maximumWager: 500n };
const takes = (p: ReturnType<typeof planOverBook>) => p.fills.map((f) => [f.address, f.amount]);

describe("the plan's holdings lookup", () => {
  it("holding nothing: each offer up to the maximum", () => {
    expect(takes(planOverBook(book, NO_HOLDINGS, request))).toEqual([
      ["a", 500n],
      ["b", 500n],
    ]);
  });

  it("a held position counts against the maximum on its offer only; an offer held at the maximum is passed over", () => {
    const p = planOverBook(
      book,
      holdingsOf([
        ["a", 100n],
        ["b", 500n],
      ]),
      request,
    );
    expect(takes(p)).toEqual([
      ["a", 400n],
      ["c", 500n],
    ]);
    expect(p).toMatchObject({ filled: 900n, unfilled: 100n, error: null });
  });

  it("a lookup lists only what is held: any other offer is held 0", () => {
    const h = holdingsOf([["a", 7n]]);
    expect([h("a"), h("b"), NO_HOLDINGS("a")]).toEqual([7n, 0n, 0n]);
  });
});
