/**
 * The market scenario through the whole service (scripts/sim/http-scenario.ts): every user action
 * a REST request, the operator's resolutions and the settlement worker as the crank. The run
 * throws if tokens are not conserved (checked every 50 actions and at the end), if the vault is
 * not empty once everything settled, or if the fees the indexer recorded differ from the treasury.
 * Its book report samples the book endpoint as it goes.
 */
import { describe, expect, it } from "vitest";
import { runHttpScenario } from "../../scripts/sim/http-scenario";

describe("HTTP simulation on the local stack", () => {
  it("300 actions by 12 users over 3 simulated days: invariants hold, only rule rejections", async () => {
    const s = await runHttpScenario({ users: 12, actions: 300, days: 3, seed: 7, engine: "bankrun" });
    expect(s.invariantChecks).toBe(Math.ceil(300 / 50) + 3);
    expect(s.offersCreated).toBeGreaterThan(50);
    expect(s.fills).toBeGreaterThan(50);
    // A share of takers used take-best: plans within amount and limit (the run throws otherwise).
    expect(s.takeBestSweeps).toBeGreaterThan(5);
    expect(s.sweepOffersTaken).toBeGreaterThanOrEqual(s.takeBestSweeps);
    expect(s.positionsSettled).toBeGreaterThan(40);
    expect(s.feesMicros).toBeGreaterThan(0n);
    // Refusals are the API's answers to rule breaks (4xx), never server errors.
    for (const k of Object.keys(s.rejections)) expect(k).toMatch(/^4\d\d /);
    expect(Object.keys(s.rejections).some((k) => k.startsWith("400 idempotencyKey"))).toBe(false);
    // The book report, as GET /contracts/{address}/book answered it: both sides by their labels, prices that move.
    expect(s.book.length).toBeGreaterThanOrEqual(8);
    const prices = new Set<string>();
    for (const t of s.book) {
      expect(t.name).toMatch(/^Match \d+$/);
      for (const sample of t.samples) {
        expect(sample.sides.map((q) => `${q.side} ${q.label}`)).toEqual(["sideA Home", "sideB Away"]);
        for (const q of sample.sides) if (q.best) prices.add(`${t.contract} ${q.side} ${q.best.decimal}`);
      }
    }
    expect(s.book.some((t) => [...prices].filter((p) => p.startsWith(t.contract)).length > 1)).toBe(true);
  });
});
