/**
 * The RPC source's delivery ledger (indexer/sources/rpc/delivery-ledger.ts) alone, no node: what
 * counts as delivered, what waits for a listing, which forks a retraction takes in, what the
 * checkpoint keeps. The same cases against a real validator are in tests/rpc/rpc-fork.test.ts and
 * tests/rpc/rpc-gap.test.ts; here each takes microseconds.
 */
import { describe, expect, it } from "vitest";
import { DeliveryLedger, FORK_MARGIN_SLOTS, UNCONFIRMED_KEPT, decodeCursor, encodeCursor } from "../../indexer/sources/rpc/delivery-ledger";

const listed = (signature: string, slot: number) => ({ signature, slot });

describe("delivery ledger", () => {
  it("a delivery the chain lists at its slot is confirmed and waits no more", () => {
    const l = new DeliveryLedger(true);
    l.delivered("a", 100);
    expect(l.isWaiting("a")).toBe(true);
    expect(l.forkOf(listed("a", 100))).toBeNull();
    expect(l.isWaiting("a")).toBe(false);
    expect(l.deliveredAt(listed("a", 100))).toBe(true);
    // Delivered a second time at the same slot (a reconnect's re-delivery): still one slot.
    l.delivered("a", 100);
    expect(l.deliveredAt(listed("a", 100))).toBe(true);
  });

  it("a delivery the chain lists at another slot is a fork, and its retraction rewinds before the lower slot", () => {
    const l = new DeliveryLedger(true);
    l.delivered("a", 170);
    expect(l.deliveredAt(listed("a", 171))).toBe(false);
    const fork = l.forkOf(listed("a", 171));
    expect(fork).toEqual(["a", 170, 171]);
    // Not confirmed by a listing at another slot.
    expect(l.isWaiting("a")).toBe(true);
    const { from, forks } = l.retract([fork!]);
    expect(from).toBe(170 - FORK_MARGIN_SLOTS);
    expect(forks).toEqual([["a", 170, 171]]);
    // Forgotten (the re-read fetches it) and pending until its retraction commits.
    expect(l.wasDelivered("a")).toBe(false);
    expect(l.isWaiting("a")).toBe(false);
    expect(l.pendingForks()).toEqual([["a", 170, 171]]);
    l.retracted(["a"]);
    expect(l.pendingForks()).toEqual([]);
  });

  it("a chain slot lower than the live one sets where the retraction rewinds", () => {
    const l = new DeliveryLedger(true);
    l.delivered("a", 300);
    expect(l.retract([l.forkOf(listed("a", 250))!]).from).toBe(250 - FORK_MARGIN_SLOTS);
  });

  it("a delivery notified at two slots counts at neither, even the one the chain lists", () => {
    const l = new DeliveryLedger(true);
    l.delivered("a", 171);
    l.delivered("a", 170);
    expect(l.deliveredAt(listed("a", 171))).toBe(false);
    expect(l.deliveredAt(listed("a", 170))).toBe(false);
    expect(l.forkOf(listed("a", 171))).toEqual(["a", 170, 171]);
    // A third slot keeps the lowest.
    l.delivered("a", 175);
    expect(l.forkOf(listed("a", 171))).toEqual(["a", 170, 171]);
  });

  it("a retraction takes in the deliveries notified at two slots from where it rewinds, not those before", () => {
    const l = new DeliveryLedger(true);
    const from = 500 - FORK_MARGIN_SLOTS;
    for (const [sig, slots] of [
      ["inside", [from, from + 1]],
      ["before", [from - 2, from - 1]],
      ["once", [from + 3]],
    ] as const)
      for (const s of slots) l.delivered(sig, s);
    const { forks } = l.retract([["fork", 500, undefined]]);
    expect(forks).toEqual([
      ["fork", 500, undefined],
      ["inside", from, undefined],
    ]);
    expect(l.wasDelivered("inside")).toBe(false);
    expect(l.wasDelivered("before")).toBe(true);
    // A delivery notified once is not a fork; the caller forgets it with the rewound stretch.
    expect(l.wasDelivered("once")).toBe(true);
    l.forgetFrom(from);
    expect(l.wasDelivered("once")).toBe(false);
    expect(l.wasDelivered("before")).toBe(true);
  });

  it("a delivery the chain never had is looked up once orphanSlots behind the node, and is a fork", () => {
    const l = new DeliveryLedger(true);
    l.delivered("ghost", 100);
    l.delivered("real", 100);
    l.sawSlot(260);
    expect(l.due(160, false)).toEqual([]);
    l.sawSlot(261);
    expect(l.due(160, false)).toEqual([listed("ghost", 100), listed("real", 100)]);
    expect(l.lookedUp(listed("ghost", 100), undefined)).toEqual(["ghost", 100, undefined]);
    expect(l.lookedUp(listed("real", 100), 100)).toBeNull();
    expect(l.isWaiting("real")).toBe(false);
    expect(l.isWaiting("ghost")).toBe(true);
    // Found at another slot: a fork with the chain's slot.
    l.delivered("moved", 100);
    expect(l.lookedUp(listed("moved", 100), 101)).toEqual(["moved", 100, 101]);
    // Pending forks are not looked up again.
    l.retract([["ghost", 100, undefined]]);
    expect(l.due(160, true).map((x) => x.signature)).toEqual(["moved"]);
  });

  it("a delivery notified at two slots is a fork even when the lookup finds it at its first slot", () => {
    const l = new DeliveryLedger(true);
    l.delivered("a", 100);
    l.delivered("a", 99);
    expect(l.lookedUp(listed("a", 100), 100)).toEqual(["a", 99, 100]);
  });

  it("forks found in a round that cannot retract them stay pending", () => {
    const l = new DeliveryLedger(true);
    l.keepPending([["a", 10, 11]]);
    expect(l.pendingForks()).toEqual([["a", 10, 11]]);
    l.retracted(["b"]);
    expect(l.pendingForks()).toEqual([["a", 10, 11]]);
  });

  it("keeps the deliveries waiting longer than one check in the checkpoint's cursor, and a restart looks them up at once", () => {
    const l = new DeliveryLedger(true);
    l.delivered("early", 40);
    l.delivered("twice", 42);
    l.delivered("twice", 41);
    l.checked();
    l.delivered("fresh", 43);
    const cursors = new Map([["ProgramA", "sigA"]]);
    const text = encodeCursor(cursors, l.waiting());
    expect(JSON.parse(text)).toEqual({
      ProgramA: "sigA",
      _unconfirmed: [
        ["early", 40],
        ["twice", 42, 41],
      ],
    });
    const back = decodeCursor(text);
    expect(back.cursors).toEqual(cursors);
    const restarted = new DeliveryLedger(true);
    restarted.restore(back.waiting);
    // Due whatever their age, and each kept on the next checkpoint without another check.
    expect(restarted.due(160, true)).toEqual([listed("early", 40), listed("twice", 42)]);
    expect(restarted.waiting()).toEqual(back.waiting);
    // The second slot came back: found at its first slot, still a fork.
    expect(restarted.lookedUp(listed("twice", 42), 42)).toEqual(["twice", 41, 42]);
    expect(restarted.lookedUp(listed("early", 40), 40)).toBeNull();
    expect(restarted.waiting()).toEqual([["twice", 42, 41]]);
  });

  it("an empty or cursor-only checkpoint restores no waiting delivery", () => {
    expect(decodeCursor("")).toEqual({ cursors: new Map(), waiting: [] });
    expect(encodeCursor(new Map([["P", "s"]]), [])).toBe('{"P":"s"}');
    expect(decodeCursor('{"P":"s"}').waiting).toEqual([]);
  });

  it("keeps at most UNCONFIRMED_KEPT waiting deliveries in the checkpoint", () => {
    const l = new DeliveryLedger(true);
    for (let i = 0; i <= UNCONFIRMED_KEPT; i++) l.delivered(`s${i}`, i);
    l.checked();
    const kept = l.waiting();
    expect(kept).toHaveLength(UNCONFIRMED_KEPT);
    expect(kept[0]).toEqual(["s0", 0]);
  });

  it("without a gap check nothing waits (nothing would confirm it)", () => {
    const l = new DeliveryLedger(false);
    l.delivered("a", 1);
    expect(l.hasWaiting()).toBe(false);
    expect(l.wasDelivered("a")).toBe(true);
  });

  it("forgets delivered signatures below a slot, and from a slot on", () => {
    const l = new DeliveryLedger(true);
    for (const [sig, slot] of [
      ["a", 10],
      ["b", 20],
      ["c", 30],
    ] as const)
      l.delivered(sig, slot);
    l.forgetBelow(20);
    expect(["a", "b", "c"].map((s) => l.wasDelivered(s))).toEqual([false, true, true]);
    l.forgetFrom(30);
    expect(["a", "b", "c"].map((s) => l.wasDelivered(s))).toEqual([false, true, false]);
    // Forgetting the delivery does not confirm it: it still waits for its listing.
    expect(l.isWaiting("a")).toBe(true);
  });

  it("a gap check's sweep: undelivered ones, and the cursor just older than the oldest of them", () => {
    const l = new DeliveryLedger(true);
    l.delivered("b", 20);
    l.delivered("a", 10);
    // Newest first, as the node lists.
    const page = [listed("c", 30), listed("b", 20), listed("a", 10)];
    expect(l.sweep(page, false)).toEqual({ undelivered: ["c"], moveTo: listed("b", 20) });
    expect(l.isWaiting("a")).toBe(false);
    l.delivered("c", 30);
    expect(l.sweep(page, false)).toEqual({ undelivered: [], moveTo: listed("c", 30) });
    // A full page: older signatures beyond it were not looked at.
    expect(l.sweep(page, true).moveTo).toBeUndefined();
    // The oldest undelivered is the oldest listed: nothing older to move to.
    expect(l.sweep([listed("c", 30), listed("z", 5)], false)).toEqual({ undelivered: ["z"], moveTo: undefined });
    // Listed at another slot than delivered: undelivered.
    expect(l.sweep([listed("b", 21)], false)).toEqual({ undelivered: ["b"], moveTo: undefined });
  });

  it("a signature listed undelivered at two checks in a row was missed, then the watch starts over", () => {
    const l = new DeliveryLedger(true);
    expect(l.missed(new Set(["x", "y"]))).toEqual([]);
    expect(l.missed(new Set(["y", "z"]))).toEqual(["y"]);
    expect(l.missed(new Set(["z"]))).toEqual([]);
    expect(l.missed(new Set(["z"]))).toEqual(["z"]);
  });
});
