/**
 * Time (programs/SECURITY.md, "sysvar spoofing", bounded schedules): the clock comes from a
 * syscall, schedules are bounded so nothing locks stakes for ever, nothing happens before its time.
 */
import { beforeAll, describe, it } from "vitest";
import { expectError, expectOk } from "../../support/expect";
import { randomUUID } from "node:crypto";
import { setUp, I64_MAX, w } from "./scene";

beforeAll(setUp);

describe("offers: time and schedules", () => {
  it("unbounded contract schedule: create_contract refuses a resolution deadline of i64::MAX (void_expired could never run)", async () => {
    const now = await w.chain.now();
    const r = await w.send(
      [
        await w.client.createContract({
          authority: w.authority.publicKey,
          payer: w.authority.publicKey,
          templateId: randomUUID(),
          eventId: randomUUID(),
          cutoffAt: I64_MAX - 1n,
          resolutionDeadline: I64_MAX,
        }),
      ],
      [w.authority],
    );
    expectError(r, "InvalidSchedule");
    // The bounds: cutoff at most 366 days ahead, deadline at most 30 days after the cutoff.
    const DAY = 86_400n;
    const create = (cutoffAt: bigint, resolutionDeadline: bigint) =>
      w.client.createContract({
        authority: w.authority.publicKey,
        payer: w.authority.publicKey,
        templateId: randomUUID(),
        eventId: randomUUID(),
        cutoffAt,
        resolutionDeadline,
      });
    expectError(await w.send([await create(now + 366n * DAY + 1n, now + 367n * DAY)], [w.authority]), "InvalidSchedule");
    expectError(await w.send([await create(now + 100n, now + 100n + 30n * DAY + 1n)], [w.authority]), "InvalidSchedule");
    expectOk(await w.send([await create(now + 366n * DAY, now + 396n * DAY)], [w.authority]));
  });

  it("early void / early resolve: void_expired before the deadline and a side result before cutoff are refused", async () => {
    const contract = await w.contract({ cutoffIn: 100n, deadlineAfterCutoff: 100n });
    expectError(await w.resolve(contract, "sideA"), "ResolveBeforeCutoff");
    expectError(await w.send([await w.client.voidExpiredContract({ contract })]), "DeadlineNotPassed");
    await w.chain.advance(200n);
    expectError(await w.send([await w.client.voidExpiredContract({ contract })]), "DeadlineNotPassed");
    await w.chain.advance(1n);
    expectOk(await w.send([await w.client.voidExpiredContract({ contract })]));
  });
});
