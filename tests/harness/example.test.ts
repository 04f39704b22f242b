/**
 * harness/README.md's simulation (harness/examples/match-day.ts), run as the README shows it, on
 * each SVM engine: the payouts follow the spec (a take is matched with the same share of the
 * creator's stake; the winner gets both stakes minus the fee on the profit; the unmatched stake
 * goes back at the close), no micro-unit appears or vanishes, and the README shows the file as it is.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { matchDay } from "../../harness/examples/match-day";

const root = resolve(import.meta.dirname, "..", "..");
const FEE_BPS = 1_000n; // the launch fee the world's config carries
const fee = (profit: bigint) => (profit * FEE_BPS) / 10_000n;
/** The creator's stake matched with a take: 40 staked for 50 wanted. */
const matched = (take: bigint) => (take * 40n) / 50n;

describe("harness/examples/match-day.ts", () => {
  it("pays the takers both stakes minus the fee when the away side wins, and keeps every micro-unit", async () => {
    const d = await matchDay({ seed: 7, takers: 4, winner: "sideB" });
    expect(d.taken.some((t) => t > 0n)).toBe(true);
    d.taken.forEach((t, i) => expect(d.after.takers[i]).toBe(d.before.takers[i] + matched(t) - fee(matched(t))));
    const allMatched = d.taken.reduce((a, t) => a + matched(t), 0n);
    expect(d.after.creator).toBe(d.before.creator - allMatched);
    expect(d.after.treasury).toBe(d.taken.reduce((a, t) => a + fee(matched(t)), 0n));
    expect(d.after.total).toBe(d.before.total);
    expect((await d.world.offer(d.offer)).status).toBe("Settled");
  });

  it("pays the creator the takers' stakes minus the fee when the home side wins", async () => {
    const d = await matchDay({ seed: 8, takers: 3, winner: "sideA" });
    d.taken.forEach((t, i) => expect(d.after.takers[i]).toBe(d.before.takers[i] - t));
    expect(d.after.creator).toBe(d.before.creator + d.taken.reduce((a, t) => a + t - fee(t), 0n));
    expect(d.after.total).toBe(d.before.total);
  });

  it("is shown in harness/README.md as it is", () => {
    const readme = readFileSync(join(root, "harness", "README.md"), "utf8");
    const shown = /^```ts harness\/examples\/match-day\.ts\n([\s\S]*?)^```$/m.exec(readme)?.[1];
    expect(shown).toBe(readFileSync(join(root, "harness", "examples", "match-day.ts"), "utf8"));
  });
});
