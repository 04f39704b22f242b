/**
 * ReadCache's loads (service/read/read-cache.ts): callers that miss one key together share one
 * load, and a write (drop) is never hidden by a load that began before it.
 */
import { describe, expect, it } from "vitest";
import { ReadCache } from "../../service/read/read-cache";

const heard = () => new ReadCache({ indexedPosition: async () => "0.0", heard: true });

describe("ReadCache loads", () => {
  it("runs one load for ten callers missing the same key, then serves the kept value", async () => {
    const c = heard();
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 20));
      return { page: loads };
    };
    const values = await Promise.all(Array.from({ length: 10 }, () => c.get("k", 1_000, load)));
    expect(loads).toBe(1);
    expect(new Set(values).size).toBe(1);
    expect(await c.get("k", 1_000, load)).toBe(values[0]);
    expect(loads).toBe(1);
    // Another key is its own load.
    await c.get("other", 1_000, load);
    expect(loads).toBe(2);
  });

  it("does not hand a load begun before a write to a caller after it", async () => {
    const c = heard();
    let release!: () => void;
    const before = c.get("k", 1_000, () => new Promise<string>((r) => (release = () => r("old"))));
    await Promise.resolve();
    c.drop(); // the indexer applied a write
    const after = c.get("k", 1_000, async () => "new");
    release();
    expect(await before).toBe("old");
    expect(await after).toBe("new");
    // The old load was not kept either: the next caller sees the new value.
    expect(await c.get("k", 1_000, async () => "newer")).toBe("new");
  });

  it("shares a failed load's error with its waiters, and loads again afterwards", async () => {
    const c = heard();
    let loads = 0;
    const failing = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 5));
      throw new Error("store down");
    };
    const results = await Promise.allSettled([c.get("k", 1_000, failing), c.get("k", 1_000, failing)]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(loads).toBe(1);
    expect(await c.get("k", 1_000, async () => "back")).toBe("back");
  });

  it("unheard: a write in the same slot (a higher write version) drops what was kept; callers of one poll share one position read", async () => {
    let position = "5.1";
    let reads = 0;
    const c = new ReadCache({
      indexedPosition: async () => {
        reads++;
        await new Promise((r) => setTimeout(r, 5));
        return position;
      },
      heard: false,
      pollMs: 10,
    });
    let loads = 0;
    const load = async () => ++loads;
    expect(await c.get("k", 10_000, load)).toBe(1);
    expect(await c.get("k", 10_000, load)).toBe(1);
    position = "5.2";
    await new Promise((r) => setTimeout(r, 20));
    reads = 0;
    const got = await Promise.all(Array.from({ length: 10 }, () => c.get("k", 10_000, load)));
    expect(got).toEqual(Array(10).fill(2));
    expect(reads).toBe(1);
  });
});
