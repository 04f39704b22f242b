/**
 * The dead-man switch (issue #26): a caller arms it with a timeout (10 s to 10 min, whole
 * seconds), then sends heartbeats; when none arrives before the deadline (last heartbeat or arming
 * + timeout), the settlement worker (service/worker/phases/dead-man-switch.ts) trips it and closes
 * every open offer of the caller as one bulk close (./bulk-close.ts), and records why and the
 * answer, which the caller reads with GET /dead-man-switch.
 *
 * Kept in the store (`dead_man_switches`, one row per user), so it survives a restart of the
 * service and a takeover of the worker role: the trip is a compare-and-set on the row (state
 * armed -> tripped), and the bulk close's idempotency key derives from the arming and the attempt,
 * so a worker that takes over the job replays the same closes (no offer is closed twice; a close
 * submitted by the dead worker answers with its recorded signature).
 *
 * Worst-case delay from the last heartbeat to the closes being submitted: timeout + the worker's
 * period (+ one pass), and with a takeover of the worker role + the leadership takeover time; a
 * close the dead worker had reserved but not signed waits for its idempotency row to go stale
 * (60 s) and is retried on a later pass (docs/service-guide.md, "Dead-man switch").
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Kysely } from "kysely";
import type { CustodyDatabase, DeadManSwitchesTable } from "../custody/schema";
import type { Principal } from "../custody/custody";
import type { Custody } from "../custody/custody";
import { ApiError } from "../api-error";
import type { BulkClose, BulkCloseResponse } from "./bulk-close";

export const MIN_TIMEOUT_SECONDS = 10;
export const MAX_TIMEOUT_SECONDS = 600;
/**
 * How long a trip keeps retrying offers it could not close (refusals other than "already
 * finished", e.g. the write rate of a user whose bucket is empty: 60 per hour refill the default
 * holdings of 20 offers well within it) before it records the last answer as final.
 */
export const FIRE_RETRY_MS = 3_600_000;

export const ArmBody = z
  .object({
    timeoutSeconds: z
      .int({ error: `timeoutSeconds must be a whole number of seconds from ${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS}` })
      .min(MIN_TIMEOUT_SECONDS, { message: `timeoutSeconds must be at least ${MIN_TIMEOUT_SECONDS}` })
      .max(MAX_TIMEOUT_SECONDS, { message: `timeoutSeconds must be at most ${MAX_TIMEOUT_SECONDS}` })
      .describe(`Seconds without a heartbeat after which every open offer is closed (${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS})`),
  })
  .strict();

export interface DeadManSwitchView {
  state: "none" | "armed" | "disarmed" | "tripped" | "fired";
  timeoutSeconds: number | null;
  armedAt: string | null;
  lastHeartbeatAt: string | null;
  /** When the offers are closed if no heartbeat comes first (armed only). */
  deadlineAt: string | null;
  trippedAt: string | null;
  firedAt: string | null;
  /** Why it tripped. */
  reason: string | null;
  /** The bulk close it made (tripped: the last attempt; fired: the final one). */
  closes: BulkCloseResponse | null;
}

const isoMs = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export function viewOf(row: DeadManSwitchesTable | undefined): DeadManSwitchView {
  if (!row)
    return {
      state: "none",
      timeoutSeconds: null,
      armedAt: null,
      lastHeartbeatAt: null,
      deadlineAt: null,
      trippedAt: null,
      firedAt: null,
      reason: null,
      closes: null,
    };
  return {
    state: row.state as DeadManSwitchView["state"],
    timeoutSeconds: Number(row.timeout_seconds),
    armedAt: isoMs(Number(row.armed_at_ms)),
    lastHeartbeatAt: isoMs(Number(row.last_heartbeat_ms)),
    deadlineAt: row.state === "armed" ? isoMs(Number(row.deadline_ms)) : null,
    trippedAt: isoMs(row.tripped_at_ms === null ? null : Number(row.tripped_at_ms)),
    firedAt: isoMs(row.fired_at_ms === null ? null : Number(row.fired_at_ms)),
    reason: row.reason,
    closes: row.result_json ? (JSON.parse(row.result_json) as BulkCloseResponse) : null,
  };
}

export class DeadManSwitches {
  readonly db: Kysely<CustodyDatabase>;

  constructor(
    readonly bulk: BulkClose,
    readonly custody: Custody,
    /** The service's wall clock in unix ms (tests move it). */
    private readonly clockMs: () => number = Date.now,
  ) {
    this.db = custody.db;
  }

  private row(userId: string) {
    return this.db.selectFrom("dead_man_switches").selectAll().where("user_id", "=", userId).executeTakeFirst();
  }

  async status(p: Principal): Promise<DeadManSwitchView> {
    return viewOf(await this.row(p.user.id));
  }

  /** Arms (or re-arms with a new timeout); refused while a trip is being carried out. */
  async arm(p: Principal, body: unknown): Promise<DeadManSwitchView> {
    const parsed = ArmBody.safeParse(body);
    if (!parsed.success) throw new ApiError(400, parsed.error.issues.map((i) => i.message).join("; "));
    const t = parsed.data.timeoutSeconds;
    const now = Math.floor(this.clockMs());
    const values = {
      arm_id: randomUUID(),
      state: "armed",
      timeout_seconds: t,
      armed_at_ms: now,
      last_heartbeat_ms: now,
      deadline_ms: now + t * 1000,
      tripped_at_ms: null,
      fired_at_ms: null,
      attempts: 0,
      reason: null,
      result_json: null,
      updated_at_ms: now,
    };
    const r = await this.db
      .insertInto("dead_man_switches")
      .values({ user_id: p.user.id, ...values })
      .onConflict((oc) => oc.column("user_id").doUpdateSet(values).where("dead_man_switches.state", "!=", "tripped"))
      .executeTakeFirst();
    if (Number(r.numInsertedOrUpdatedRows ?? 0n) === 0)
      throw new ApiError(409, "the dead-man switch tripped and is closing your offers; arm it again once it has fired");
    return viewOf(await this.row(p.user.id));
  }

  /** Moves the deadline to now + timeout; 409 unless armed (never armed, disarmed, tripped, fired, or already late). */
  async heartbeat(p: Principal): Promise<DeadManSwitchView> {
    const now = Math.floor(this.clockMs());
    const row = await this.row(p.user.id);
    if (!row) throw new ApiError(409, "the dead-man switch is not armed; arm it first");
    if (row.state !== "armed") throw new ApiError(409, `the dead-man switch is ${row.state}${row.state === "disarmed" ? "" : ": arm it again"}`);
    // Late is late, whether or not a worker pass has tripped it yet; the arming must be the one read.
    const r = await this.db
      .updateTable("dead_man_switches")
      .set({ last_heartbeat_ms: now, deadline_ms: now + Number(row.timeout_seconds) * 1000, updated_at_ms: now })
      .where("user_id", "=", p.user.id)
      .where("arm_id", "=", row.arm_id)
      .where("state", "=", "armed")
      .where("deadline_ms", ">", now)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0)
      throw new ApiError(409, `the heartbeat came after the deadline ${isoMs(Number(row.deadline_ms))}: your offers are being closed`);
    return viewOf(await this.row(p.user.id));
  }

  async disarm(p: Principal): Promise<DeadManSwitchView> {
    const now = Math.floor(this.clockMs());
    const r = await this.db
      .updateTable("dead_man_switches")
      .set({ state: "disarmed", updated_at_ms: now })
      .where("user_id", "=", p.user.id)
      .where("state", "=", "armed")
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) {
      const row = await this.row(p.user.id);
      if (!row) throw new ApiError(409, "the dead-man switch is not armed");
      if (row.state === "tripped") throw new ApiError(409, "the dead-man switch tripped and is closing your offers");
    }
    return viewOf(await this.row(p.user.id));
  }

  /** Trips every armed switch whose deadline passed (compare-and-set: one worker wins each). */
  async tripDue(): Promise<number> {
    const now = Math.floor(this.clockMs());
    const due = await this.db.selectFrom("dead_man_switches").selectAll().where("state", "=", "armed").where("deadline_ms", "<=", now).execute();
    let n = 0;
    for (const d of due) {
      const reason = `no heartbeat for ${d.timeout_seconds} s after ${isoMs(Number(d.last_heartbeat_ms))}: the deadline ${isoMs(Number(d.deadline_ms))} passed, so every open offer was closed`;
      const r = await this.db
        .updateTable("dead_man_switches")
        .set({ state: "tripped", tripped_at_ms: now, reason, updated_at_ms: now })
        .where("user_id", "=", d.user_id)
        .where("arm_id", "=", d.arm_id)
        .where("state", "=", "armed")
        .where("deadline_ms", "<=", now)
        .executeTakeFirst();
      n += Number(r.numUpdatedRows);
    }
    return n;
  }

  /**
   * Carries out every tripped switch: a bulk close of all the user's open offers; done (fired)
   * when nothing was refused but for offers already finished, else retried on the next pass with
   * a fresh list (attempt + 1) for up to FIRE_RETRY_MS after the trip.
   */
  async fireTripped(log?: (msg: string, extra?: Record<string, unknown>) => void): Promise<number> {
    const tripped = await this.db.selectFrom("dead_man_switches").selectAll().where("state", "=", "tripped").execute();
    let fired = 0;
    for (const t of tripped) {
      const user = await this.custody.userById(t.user_id);
      const now = () => Math.floor(this.clockMs());
      if (!user) {
        await this.finish(t, "fired", null, now());
        continue;
      }
      const p: Principal = { user, tokenId: "dead-man-switch", scopes: new Set(["bet:write"]) };
      const res = await this.bulk.closeAll(p, { scope: "all", idempotencyKey: `dead-man:${t.arm_id}:${t.attempts}` }, "dead-man-switch");
      const done = res.results.every((r) => r.status === "pending" || isFinished(r.httpStatus, r.error));
      const state = done || now() - Number(t.tripped_at_ms) >= FIRE_RETRY_MS ? "fired" : "tripped";
      await this.finish(t, state, res, now());
      if (state === "fired") fired++;
      log?.("dead-man switch", { user: t.user_id, state, closed: res.closed, refused: res.refused });
    }
    return fired;
  }

  private async finish(t: DeadManSwitchesTable, state: "fired" | "tripped", res: BulkCloseResponse | null, now: number): Promise<void> {
    await this.db
      .updateTable("dead_man_switches")
      .set({
        state,
        attempts: t.attempts + 1,
        result_json: res ? JSON.stringify(res) : null,
        fired_at_ms: state === "fired" ? now : null,
        updated_at_ms: now,
      })
      .where("user_id", "=", t.user_id)
      .where("arm_id", "=", t.arm_id)
      .where("attempts", "=", t.attempts)
      .where("state", "=", "tripped")
      .execute();
  }
}

/** A refusal that means the offer needs no close any more (closed, filled or gone meanwhile). */
function isFinished(status: number | null, error: string | null): boolean {
  return status === 409 && /no longer open|not open|is (Filled|Closed|Settled)|finished/i.test(error ?? "");
}
