/**
 * Token re-checks of live updates: a subscription made with a token ends (UNAUTHENTICATED, or
 * whatever custody answers) within `everyMs` of the token being revoked or expiring. Each distinct
 * token of the open subscriptions is resolved once per round, however many subscriptions it holds.
 */
import { ApiError } from "../api-error";
import type { Custody } from "../custody/custody";
import { resolveViewer } from "./viewer";
import type { LiveSubscription } from "./live-subscription";

export class LiveTokenChecks {
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly subs: ReadonlySet<LiveSubscription<unknown>>,
    private readonly custody: Custody | null,
    everyMs: number,
    private readonly log?: (e: unknown) => void,
  ) {
    this.timer = setInterval(() => void this.recheck(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One round: a refused token ends its subscriptions. */
  private async recheck(): Promise<void> {
    const byAuth = new Map<string, LiveSubscription<unknown>[]>();
    for (const s of this.subs) if (s.authorization) byAuth.set(s.authorization, [...(byAuth.get(s.authorization) ?? []), s]);
    for (const [authorization, subs] of byAuth) {
      try {
        await resolveViewer(this.custody, authorization);
      } catch (e) {
        if (e instanceof ApiError) for (const s of subs) s.end(e);
        else this.log?.(e);
      }
    }
  }
}
