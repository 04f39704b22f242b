/**
 * offerOf (service/read/offer-shaping.ts) builds an offer as one object literal for speed. This
 * holds it to the composition it replaced (the derived fields without contract and creator, then
 * the contract, creator, side labels, odds and viewer, spread in that order) over random offers,
 * contracts and settings: the same fields, the same values, the same order (compared as JSON text,
 * which is what the API sends).
 */
import { describe, expect, it } from "vitest";
import { deriveOffer, sideLabels, type ConfigTable } from "../../indexer";
import { contractOfRow, toContract, type OfferRow } from "../../service/read/contracts";
import { offerOdds } from "../../service/read/odds";
import { offerOf } from "../../service/read/offer-shaping";
import type { Offer } from "../../service/read/read-model";
import type { Viewer } from "../../service/read/offer-viewer";

/** mulberry32: a seeded generator, so a failure names the case that reproduces it. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function cases(seed: number) {
  const r = random(seed);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)];
  const micros = () => String(BigInt(1 + int(1_000_000)) * BigInt(1 + int(1_000_000)));
  const total = micros();
  const target = micros();
  const filled = String(BigInt(target) - BigInt(int(2)) * BigInt(int(Number(BigInt(target) % 1_000_000n))));
  const row: OfferRow = {
    address: `offer${seed}`,
    contract: `contract${int(5)}`,
    creator: `creator${int(5)}`,
    creator_token: "t",
    rent_payer: "p",
    nonce: String(int(1000)),
    side: pick(["sideA", "sideB"]),
    status: pick(["Open", "Closed", "Settled", "Cancelled"]),
    fee_bps: int(2001),
    creator_total_micros: total,
    taker_target_micros: target,
    minimum_take_micros: String(1 + int(1_000_000)),
    taker_filled_micros: filled,
    creator_allocated_micros: String(int(1_000_000)),
    creator_refunded_micros: String(int(1_000_000)),
    revision: int(100),
    fill_count: int(50),
    position_count: int(50),
    settled_position_count: int(50),
    created_at: 1_700_000_000 + int(100_000_000),
    closed_at: r() < 0.5 ? null : 1_700_000_000 + int(100_000_000),
    expires_at: r() < 0.5 ? null : 1_700_000_000 + int(100_000_000),
    slot: int(1_000_000),
    write_version: int(1_000_000),
    deleted: 0,
    k_template_id: "tpl",
    k_event_id: "ev",
    k_cutoff_at: 1_700_000_000 + int(100_000_000),
    k_resolution_deadline: 1_800_000_000 + int(100_000_000),
    k_status: pick(["Open", "Resolved", "Voided"]),
    k_result: pick(["none", "sideA", "sideB", "void"]),
    k_title: pick(["Match", null]),
    k_description: pick(["About it", null]),
    k_event: pick(["A vs B", null]),
    k_sport: pick(["football", "basketball"]),
    k_competition: pick(["League", null]),
    k_starts_at: 1_700_000_000 + int(100_000_000),
    k_side_a_label: pick(["Home", null]),
    k_side_b_label: pick(["Away", null]),
    k_visuals_json: pick([null, "[]"]),
    p_display_name: pick([null, "Bob"]),
    p_profile_image_url: pick([null, ""]),
  } as OfferRow;
  const config = r() < 0.2 ? null : ({ warning_ratio_numerator: String(1 + int(20)), warning_ratio_denominator: String(1 + int(20)) } as ConfigTable);
  return { row, config };
}

/** The composition offerOf replaced, kept here as the reference. */
function spreadOffer(r: OfferRow, config: ConfigTable | null, creator: Offer["creator"], viewer: Viewer): Offer {
  const contract = toContract(contractOfRow(r));
  const { contract: _c, creator: _cr, ...fields } = deriveOffer(r, config);
  return {
    ...fields,
    contract,
    creator,
    ...sideLabels(fields.creatorOutcome, { side_a_label: contract.outcomes[0].label, side_b_label: contract.outcomes[1].label }),
    ...offerOdds(r),
    viewer,
  };
}

describe("offerOf", () => {
  it("equals the spread composition it replaced, field for field and in order, over 2,000 random offers", () => {
    const viewer = { role: "none" } as Viewer;
    const creator = { displayName: "Bob", profileImageUrl: "" };
    for (let seed = 1; seed <= 2_000; seed++) {
      const { row, config } = cases(seed);
      const expected = JSON.stringify(spreadOffer(row, config, creator, viewer));
      const actual = JSON.stringify(offerOf(row, config, toContract(contractOfRow(row)), creator, viewer));
      if (actual !== expected) expect({ seed, actual }).toEqual({ seed, actual: expected });
    }
  });
});
