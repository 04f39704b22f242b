/**
 * The read admission rule itself (service/rate/admission.ts), on its own clock: one read at a
 * time, the slot held while callers queue, the order in which the queued reads then run. A caller's
 * weight is the number of its recent reads per second since it was first seen, not how long they
 * ran, so one slow read does not put a light caller behind a busy one, and new callers are judged
 * on their own short past, not on the history they have not had the time to build.
 */
import { describe, expect, it } from "vitest";
import { ReadAdmission } from "../../service/rate/admission";

function rig() {
  let now = 0;
  const admission = new ReadAdmission({ concurrency: 1, queuePerCaller: 8, queueTotal: 256, retryAfterSeconds: 1 }, () => now);
  const order: string[] = [];
  return {
    admission,
    order,
    advance: (ms: number) => (now += ms),
    /** One read of `key` that takes `ms` of the clock. */
    read: (key: string, ms = 0) =>
      admission.run(async () => {
        now += ms;
        order.push(key);
      }, key),
    /** Holds the slot; reads asked meanwhile queue. The returned release lets them run, and waits for them. */
    hold() {
      let release!: () => void;
      const held = admission.run(() => new Promise<void>((r) => (release = r)), "holder");
      return async (queued: Promise<void>[]) => {
        release();
        await held;
        await Promise.all(queued);
      };
    },
  };
}

describe("read admission rule", () => {
  it("weighs a caller by its reads, not by how long they ran: one slow read leaves a light caller ahead of a busy one", async () => {
    const r = rig();
    r.advance(60_000);
    await r.read("light", 5_000); // one read the machine stretched to 5 s
    for (let i = 0; i < 4; i++) await r.read("busy", 1);
    const release = r.hold();
    const queued = [r.read("busy"), r.read("light")];
    r.order.length = 0;
    await release(queued);
    expect(r.order).toEqual(["light", "busy"]);
  });

  it("judges a new caller on its own past: two reads in its first second weigh more than an older caller's one a second", async () => {
    const r = rig();
    for (let i = 0; i < 30; i++) {
      await r.read("older");
      r.advance(1_000);
    }
    for (const n of ["new-1", "new-2"]) for (let i = 0; i < 2; i++) await r.read(n);
    const release = r.hold();
    const queued = [r.read("new-1"), r.read("new-2"), r.read("older")];
    r.order.length = 0;
    await release(queued);
    expect(r.order).toEqual(["older", "new-1", "new-2"]);
  });

  it("serves a caller's first read before the queued reads of callers with a past, the earliest arrival first among equals", async () => {
    const r = rig();
    for (const k of ["a", "b"]) await r.read(k);
    r.advance(2_000);
    const release = r.hold();
    const queued = [r.read("a"), r.read("b"), r.read("first-time"), r.read("also-first")];
    r.order.length = 0;
    await release(queued);
    expect(r.order).toEqual(["first-time", "also-first", "a", "b"]);
  });
});
