/**
 * The kill-window TEST fail point (service/writes/fail-point.ts) is inert unless the process
 * environment names one of its points, and a value it does not know refuses the start rather than
 * running unarmed (a typo must not turn the crash test into a test of nothing). The kills
 * themselves: tests/rpc/kill-window.test.ts.
 */
import { describe, expect, it } from "vitest";
import { FAIL_POINT_ENV, WRITE_FAIL_POINTS, armedFailPoint, reachFailPoint } from "../../service/writes/fail-point";

describe("the write fail point", () => {
  it("is inert without the variable, armed by each known point, and refuses any other value", () => {
    expect(armedFailPoint({})).toBeNull();
    expect(armedFailPoint({ [FAIL_POINT_ENV]: "" })).toBeNull();
    for (const p of WRITE_FAIL_POINTS) expect(armedFailPoint({ [FAIL_POINT_ENV]: p })).toBe(p);
    for (const bad of ["write-after-sned", "WRITE-AFTER-SEND", " write-after-send", "1", "true"])
      expect(() => armedFailPoint({ [FAIL_POINT_ENV]: bad })).toThrow(`${FAIL_POINT_ENV}: unknown fail point ${JSON.stringify(bad)}`);
  });

  it("does nothing at a point other than the armed one", () => {
    // Reaching the armed point would SIGKILL this test process; every other pairing must return.
    for (const armed of [null, ...WRITE_FAIL_POINTS])
      for (const point of WRITE_FAIL_POINTS) if (armed !== point) expect(reachFailPoint(armed, point)).toBeUndefined();
  });
});
