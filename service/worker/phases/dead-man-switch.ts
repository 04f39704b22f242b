/**
 * Phase 0 of each pass: the dead-man switches (service/writes/dead-man-switch.ts). Trips every
 * armed switch whose deadline passed, then carries out every tripped one (a bulk close of all the
 * user's open offers, signed with the user's custodial key, so it runs through the write service
 * rather than the phase runner, whose items the service's wallet signs alone). Both steps are
 * conditioned on the row in the store, so a worker that takes over the role mid-way finishes the
 * job with the same idempotency keys.
 */
import type { DeadManSwitches } from "../../writes/dead-man-switch";

export async function deadManSwitchPhase(
  switches: DeadManSwitches,
  log?: (msg: string, extra?: Record<string, unknown>) => void,
): Promise<{ tripped: number; fired: number }> {
  const tripped = await switches.tripDue();
  const fired = await switches.fireTripped(log);
  return { tripped, fired };
}
