/**
 * The market scenario through the whole service (scripts/sim/http-scenario.ts): every user action
 * a REST request, the operator's resolutions and the settlement worker as the crank. The run
 * throws if tokens are not conserved (checked every 50 actions and at the end), if the vault is
 * not empty once everything settled, or if the fees the indexer recorded differ from the treasury.
 */
import { describe, expect, it } from "vitest";
import { runHttpScenario } from "../../scripts/sim/http-scenario";

describe("HTTP simulation on the local stack", () => {
  it("300 actions by 12 users over 3 simulated days: invariants hold, only rule rejections", async () => {
    const s = await runHttpScenario({ users: 12, actions: 300, days: 3, seed: 7, engine: "bankrun" });
    expect(s.invariantChecks).toBe(Math.ceil(300 / 50) + 3);
    expect(s.offersCreated).toBeGreaterThan(50);
    expect(s.fills).toBeGreaterThan(50);
    expect(s.positionsSettled).toBeGreaterThan(40);
    expect(s.feesMicros).toBeGreaterThan(0n);
    // Refusals are the API's answers to rule breaks (4xx), never server errors.
    for (const k of Object.keys(s.rejections)) expect(k).toMatch(/^4\d\d /);
    expect(Object.keys(s.rejections).some((k) => k.startsWith("400 idempotencyKey"))).toBe(false);
  });
});
