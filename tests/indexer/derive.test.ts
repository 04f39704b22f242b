/** The pure derivations the API calls: guardrail, remaining, shares, states, revision. */
import { describe, expect, it } from "vitest";
import { canonicalJson, derivePoolAggregate, payloadRevision, poolState, shareBps, termsGuardrail, iso } from "../../indexer/derive";
import { Rng } from "../../harness/random";
import type { PoolsTable } from "../../indexer/store/schema";

const W = { numerator: 5n, denominator: 1n };

describe("termsGuardrail", () => {
  it("warns above 5:1 either way, not at exactly 5:1", () => {
    expect(termsGuardrail(5n, 1n, W)).toBe("normal");
    expect(termsGuardrail(1n, 5n, W)).toBe("normal");
    expect(termsGuardrail(5_000_001n, 1_000_000n, W)).toBe("warning");
    expect(termsGuardrail(1_000_000n, 5_000_001n, W)).toBe("warning");
    expect(termsGuardrail(10n, 1n, W)).toBe("warning");
    expect(termsGuardrail(8n, 10n, W)).toBe("normal");
    // u64-scale amounts stay exact
    expect(termsGuardrail(18_446_744_073_709_551_615n, 3_689_348_814_741_910_323n, W)).toBe("normal");
    expect(termsGuardrail(18_446_744_073_709_551_615n, 3_689_348_814_741_910_322n, W)).toBe("warning");
  });
});

describe("shareBps (largest remainder)", () => {
  it("sums to exactly 10000 for any non-zero pot, all 0 for an empty pot", () => {
    const rng = new Rng(3);
    for (let i = 0; i < 5000; i++) {
      const n = rng.int(1, 8);
      const totals = Array.from({ length: n }, () => (rng.chance(0.2) ? 0n : rng.big(1n, rng.chance(0.5) ? 10n : 18_000_000_000_000_000_000n)));
      const s = shareBps(totals);
      const pot = totals.reduce((a, b) => a + b, 0n);
      if (pot === 0n) expect(s.every((x) => x === 0)).toBe(true);
      else expect(s.reduce((a, b) => a + b, 0)).toBe(10000);
      s.forEach((x, j) => {
        const exact = Number((totals[j] * 10_000_000n) / (pot || 1n)) / 1000;
        expect(Math.abs(x - exact)).toBeLessThan(1);
        if (totals[j] === 0n) expect(x).toBe(0);
      });
    }
    expect(shareBps([1n, 1n, 1n])).toEqual([3334, 3333, 3333]);
    expect(shareBps([0n, 0n])).toEqual([0, 0]);
    expect(shareBps([2n, 1n])).toEqual([6667, 3333]);
  });
});

describe("pool aggregate", () => {
  const pool: PoolsTable = {
    address: "Pool1111111111111111111111111111111111111111",
    version: 3,
    creator: null,
    question: "Will it rain?",
    state: "OPEN",
    outcome_count: 2,
    total_oi_micros: "3000000",
    participant_count: 2,
    closes_at: 1_800_000_000,
    resolution_at: null,
    resolution_criteria: null,
    cover_image_url: null,
    winning_outcome: null,
    updated_at: 1_700_000_000,
    vote_ends_at: null,
    escalated_at: null,
    voter_count: 0,
    slot: 1,
    write_version: 1,
    deleted: 0,
  };
  const outcomes = [
    { outcome_index: 0, label: null, total_oi_micros: "1000000", wager_count: 1 },
    { outcome_index: 1, label: null, total_oi_micros: "2000000", wager_count: 1 },
  ];
  it("derives LOCKED from closesAt at read time only, labels default to For/Against, revision is a sha256 prefix of the payload", () => {
    const open = derivePoolAggregate({ pool, outcomes, catalog: { slug: "rain" }, nowUnix: 1_799_999_999, canonicalBase: "https://x.test/polls" });
    const locked = derivePoolAggregate({ pool, outcomes, catalog: { slug: "rain" }, nowUnix: 1_800_000_000, canonicalBase: "https://x.test/polls" });
    expect(open.state).toBe("OPEN");
    expect(locked.state).toBe("LOCKED");
    expect(open.outcomes.map((o) => [o.label, o.shareBps])).toEqual([
      ["For", 3333],
      ["Against", 6667],
    ]);
    expect(open.revision).toMatch(/^[0-9a-f]{32}$/);
    expect(open.revision).not.toBe(locked.revision);
    expect(payloadRevision(open)).toBe(open.revision);
    const { revision: _r, ...rest } = locked;
    expect({ ...rest, state: "OPEN" }).toEqual((({ revision: _x, ...o }) => o)(open));
    expect(open.canonicalUrl).toBe("https://x.test/polls/rain");
    expect(open.closesAt).toBe(iso(1_800_000_000));
    expect(derivePoolAggregate({ pool, outcomes, catalog: { slug: "rain" }, nowUnix: 1_799_999_999, canonicalBase: "https://x.test/polls" }).revision).toBe(
      open.revision,
    );
  });
  it("canonical JSON sorts keys; other states are not touched by time", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }] })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
    expect(poolState("RESOLVED", 1, 10)).toBe("RESOLVED");
    expect(poolState("OPEN", null, 10)).toBe("OPEN");
  });
});
