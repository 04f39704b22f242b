/**
 * Time (programs/SECURITY.md, "sysvar spoofing", bounded schedules): the clock comes from a
 * syscall, schedules are bounded so nothing locks stakes for ever, nothing happens before its time.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AUTHORITY_DEADLINE_SECONDS, MAX_OPEN_SECONDS, MAX_RESOLUTION_DELAY_SECONDS, POOLS_IDL, PROPOSAL_DEADLINE_SECONDS } from "../../../idl/client/pools";
import { UNIT } from "../../../harness/pools-world";
import { expectOk } from "../../support/expect";
import { setUp, I64_MAX, alice, bob, carol, cast4, expectError, mallory, strangerCancelsAndRefunds, w } from "./scene";

beforeAll(setUp);

describe("pools: time and schedules", () => {
  it("closesAt and resolutionAt are bounded (i64::MAX refused), and a pool at both bounds is refunded by anyone within the bound", async () => {
    const now = await w.chain.now();
    const I64_MAX = 2n ** 63n - 1n;
    const before = await w.balances();
    expectError((await w.createPool(carol, { closesAt: now + MAX_OPEN_SECONDS + 1n })).r, "ClosesAtTooFar");
    expectError((await w.createPool(carol, { closesAt: I64_MAX })).r, "ClosesAtTooFar");
    expectError((await w.createPool(carol, { closesAt: now + 100n, resolutionAt: now + 100n + MAX_RESOLUTION_DELAY_SECONDS + 1n })).r, "ResolutionTooLate");
    expectError((await w.createPool(carol, { closesAt: now + 100n, resolutionAt: I64_MAX })).r, "ResolutionTooLate");
    expect(await w.balances()).toEqual(before);
    // At both bounds: the creator never proposes and the authority never decides. The last
    // moment anything depends on is closesAt + 30 d + 72 h + 7 d; then anyone refunds.
    const closesAt = now + MAX_OPEN_SECONDS;
    const { r, pool } = await w.createPool(carol, { closesAt, resolutionAt: closesAt + MAX_RESOLUTION_DELAY_SECONDS });
    expectOk(r);
    expectOk(await w.pick(alice, pool, 0, 10n * UNIT));
    expectOk(await w.pick(bob, pool, 1, 20n * UNIT));
    const escalatable = closesAt + MAX_RESOLUTION_DELAY_SECONDS + PROPOSAL_DEADLINE_SECONDS;
    await w.chain.setTime(escalatable);
    expectOk(await w.resolve(mallory.key, pool));
    await w.chain.setTime(escalatable + AUTHORITY_DEADLINE_SECONDS);
    await strangerCancelsAndRefunds(pool);
  });

  it("sysvars: no instruction takes a sysvar account (the clock and rent come from syscalls)", () => {
    const names = POOLS_IDL.instructions.flatMap((i) => i.accounts.map((a) => a.name));
    expect(names.filter((n) => /clock|rent$|sysvar|instructions/i.test(n))).toEqual([]);
    const sysvars = POOLS_IDL.instructions.flatMap((i) =>
      i.accounts.filter((a) => "address" in a && String((a as { address?: string }).address).startsWith("Sysvar")),
    );
    expect(sysvars).toEqual([]);
  });

  it("extreme times: closes_at = i64::MAX and resolution_at = i64::MAX are refused at creation", async () => {
    const [carol] = await cast4(w);
    expectError((await w.createPool(carol, { closesAt: I64_MAX })).r, "ClosesAtTooFar");
    const now = await w.chain.now();
    expectError((await w.createPool(carol, { closesAt: now + 100n, resolutionAt: I64_MAX })).r, "ResolutionTooLate");
    expectError((await w.createPool(carol, { closesAt: now + MAX_OPEN_SECONDS + 1n })).r, "ClosesAtTooFar");
    expectError((await w.createPool(carol, { closesAt: now + 100n, resolutionAt: -5n })).r, "InvalidResolutionTime");
  });
});
