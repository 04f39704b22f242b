//! Money arithmetic: integers only, 128-bit products (kit::wide), every rounding stated.

use kit::wide::{mul_div_floor, product_le};

/// `a * b <= c * d` without overflow.
#[inline(always)]
pub fn ratio_le(a: u64, b: u64, c: u64, d: u64) -> bool {
    product_le(a, b, c, d)
}

/// Creator stake matched by a take: `floor(take * creator_total / taker_target)`, except that
/// the take filling the offer gets all creator stake still unallocated, so a filled offer is
/// fully allocated. Callers guarantee `taker_filled + take <= taker_target`, hence the quotient
/// is at most `creator_total`.
#[inline(always)]
pub fn matched_for_take(take: u64, creator_total: u64, taker_target: u64, taker_filled: u64, creator_allocated: u64) -> u64 {
    if taker_filled + take == taker_target {
        creator_total - creator_allocated
    } else {
        mul_div_floor(take, creator_total, taker_target).unwrap_or(0)
    }
}

/// Fee on a winner's profit: `floor(fee_bps * profit / 10000)` (fee_bps <= 10000, so it fits).
#[inline(always)]
pub fn fee(fee_bps: u16, profit: u64) -> u64 {
    mul_div_floor(fee_bps as u64, profit, 10_000).unwrap_or(0)
}

/// Payouts of a settled position as (creator, taker, fee to treasury); `None` means void.
#[inline(always)]
pub fn payouts(creator_wins: Option<bool>, fee_bps: u16, creator_matched: u64, taker_amount: u64) -> [u64; 3] {
    match creator_wins {
        None => [creator_matched, taker_amount, 0],
        Some(true) => {
            let f = fee(fee_bps, taker_amount);
            [creator_matched + taker_amount - f, 0, f]
        }
        Some(false) => {
            let f = fee(fee_bps, creator_matched);
            [0, taker_amount + creator_matched - f, f]
        }
    }
}

/// take_best's odds limit: whether an offer's taker odds `(taker_target + creator_total) :
/// taker_target` are at least `numerator : denominator`. `(T + S) * den >= num * T` is
/// `S * den >= (num - den) * T` (always true when `num <= den`: every offer pays back at least the
/// stake), so both products stay 64x64 bits and `T + S` never has to fit a u64.
#[inline(always)]
pub fn odds_at_least(creator_total: u64, taker_target: u64, numerator: u64, denominator: u64) -> bool {
    numerator <= denominator || ratio_le(numerator - denominator, taker_target, creator_total, denominator)
}

/// Why take_best passes over one offer of its list (it never fails the transaction for these).
/// The codes are the `skip` names of idl/client/take-best-rules.ts.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// The offer's creator backs the side the taker backs.
    WrongSide = 1,
    /// Filled, closed, settled or expired (nothing to take).
    OfferNotOpen = 2,
    /// The taker created it.
    SelfTake = 3,
    /// Its taker odds are worse than the limit.
    OddsBelowLimit = 4,
    /// The taker's position on it is already at the maximum wager.
    PositionAboveMaximum = 5,
    /// What is left of the total (or of the taker's room) is below the offer's minimum take and
    /// is not its exact remainder.
    TakeBelowMinimum = 6,
    /// The take would be matched with no creator stake.
    TakeTooSmallToMatch = 7,
}

/// One offer as take_best sees it, with what the sweep has left to take.
pub struct SweepStep {
    /// The side the taker backs, and the offer's side (its creator's).
    pub taker_side: u8,
    pub offer_side: u8,
    pub offer_open: bool,
    pub self_take: bool,
    pub odds_numerator: u64,
    pub odds_denominator: u64,
    pub creator_total: u64,
    pub taker_target: u64,
    pub taker_filled: u64,
    pub creator_allocated: u64,
    pub minimum_take: u64,
    /// The taker's position on this offer so far, and the per-position maximum wager.
    pub held: u64,
    pub maximum_wager: u64,
    /// What is left of the sweep's total (> 0).
    pub left: u64,
}

/// The take of one offer within a sweep, as `(take, creator stake matched)`: the largest amount
/// take_offer would accept that is at most what is left of the total and within the taker's
/// room under the maximum wager (the whole remainder when it fits, else that bound if it reaches
/// the offer's minimum take), or why the offer is passed over, checked in take_offer's order.
#[inline(always)]
pub fn sweep_take(s: &SweepStep) -> Result<(u64, u64), Skip> {
    if s.offer_side == s.taker_side {
        return Err(Skip::WrongSide);
    }
    let remaining = s.taker_target - s.taker_filled;
    if !s.offer_open || remaining == 0 {
        return Err(Skip::OfferNotOpen);
    }
    if s.self_take {
        return Err(Skip::SelfTake);
    }
    if !odds_at_least(s.creator_total, s.taker_target, s.odds_numerator, s.odds_denominator) {
        return Err(Skip::OddsBelowLimit);
    }
    if s.held >= s.maximum_wager {
        return Err(Skip::PositionAboveMaximum);
    }
    let room = s.maximum_wager - s.held;
    let bound = if s.left < room { s.left } else { room };
    let take = if bound >= remaining {
        remaining
    } else if bound >= s.minimum_take {
        bound
    } else if room < s.left {
        return Err(Skip::PositionAboveMaximum);
    } else {
        return Err(Skip::TakeBelowMinimum);
    };
    let matched = matched_for_take(take, s.creator_total, s.taker_target, s.taker_filled, s.creator_allocated);
    if matched == 0 {
        return Err(Skip::TakeTooSmallToMatch);
    }
    Ok((take, matched))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_of_the_spec() {
        // Stake 8 against 10; a take of 5 is matched with 4; a taker win pays 5 + 4 - 0.4.
        let unit = 1_000_000u64;
        assert_eq!(matched_for_take(5 * unit, 8 * unit, 10 * unit, 0, 0), 4 * unit);
        assert_eq!(payouts(Some(false), 1000, 4 * unit, 5 * unit), [0, 9 * unit - 400_000, 400_000]);
        assert_eq!(payouts(Some(true), 1000, 4 * unit, 5 * unit), [9 * unit - 500_000, 0, 500_000]);
        assert_eq!(payouts(None, 1000, 4 * unit, 5 * unit), [4 * unit, 5 * unit, 0]);
    }

    #[test]
    fn last_take_gets_the_rest() {
        // Three takes of 1 on 10 against 3: floor(10/3) = 3 twice, then the rest, 4.
        let (t, c) = (3u64, 10u64);
        let a = matched_for_take(1, c, t, 0, 0);
        let b = matched_for_take(1, c, t, 1, a);
        let last = matched_for_take(1, c, t, 2, a + b);
        assert_eq!((a, b, last), (3, 3, 4));
    }

    #[test]
    fn no_overflow_at_extremes() {
        assert!(ratio_le(u64::MAX, u64::MAX, u64::MAX, u64::MAX));
        assert!(!ratio_le(u64::MAX, u64::MAX, u64::MAX, u64::MAX - 1));
        assert_eq!(matched_for_take(u64::MAX - 1, u64::MAX, u64::MAX, 0, 0), u64::MAX - 1);
        assert_eq!(fee(10_000, u64::MAX), u64::MAX);
        assert_eq!(fee(1000, u64::MAX), u64::MAX / 10);
    }

    // ---- the table shared with the TypeScript mirror (idl/client/offers-rules.ts) ----------

    extern crate std;
    use std::{format, string::String, vec::Vec};

    const M: u64 = u64::MAX;
    const UNIT: u64 = 1_000_000;

    fn q(v: u64) -> String {
        format!("\"{v}\"")
    }

    fn section(name: &str, rows: Vec<String>) -> String {
        format!("  \"{name}\": [\n    {}\n  ]", rows.join(",\n    "))
    }

    /// Every row of programs/offers/math-vectors.json, computed by this module (and kit::wide).
    fn render_vectors() -> String {
        let mut matched = Vec::new();
        let mut push_matched = |take: u64, total: u64, target: u64, filled: u64, allocated: u64| {
            let m = matched_for_take(take, total, target, filled, allocated);
            matched.push(format!(
                "{{\"take\": {}, \"creatorTotal\": {}, \"takerTarget\": {}, \"takerFilled\": {}, \"creatorAllocated\": {}, \"matched\": {}}}",
                q(take),
                q(total),
                q(target),
                q(filled),
                q(allocated),
                q(m)
            ));
        };
        // The spec's example, rounding down, and the last take getting the rest.
        push_matched(5 * UNIT, 8 * UNIT, 10 * UNIT, 0, 0);
        push_matched(1_000_001, 3 * UNIT, 7 * UNIT, 0, 0);
        push_matched(1, 10, 3, 0, 0);
        push_matched(1, 10, 3, 2, 6);
        push_matched(1, 1, M, 0, 0);
        let vals = [1u64, 3, 999_999, UNIT, 1 << 32, 1 << 63, M];
        for &total in &vals {
            for &target in &vals {
                for &take in &vals {
                    if take < target {
                        // A partial take on an untouched offer, and the take that fills it.
                        push_matched(take, total, target, 0, 0);
                        let filled = target - take;
                        push_matched(take, total, target, filled, wide_floor(filled, total, target));
                    }
                }
            }
        }

        let mut fees = Vec::new();
        for bps in [0u16, 1, 999, 1000, 9999, 10_000] {
            for profit in [0u64, 1, 9, 9_999, 10_000, 1_000_001, M - 1, M] {
                fees.push(format!("{{\"feeBps\": {bps}, \"profit\": {}, \"fee\": {}}}", q(profit), q(fee(bps, profit))));
            }
        }

        let mut pays = Vec::new();
        for (wins, label) in [(None, "null"), (Some(true), "true"), (Some(false), "false")] {
            for bps in [0u16, 1000, 10_000] {
                for (matched, taker) in [(0u64, 1u64), (4 * UNIT, 5 * UNIT), (1, 1), (3, 7), (999_999, 1), (M / 2, M / 2 + 1), (M - 5, 5), (5, M - 5)] {
                    let [c, t, f] = payouts(wins, bps, matched, taker);
                    pays.push(format!(
                        "{{\"creatorWins\": {label}, \"feeBps\": {bps}, \"creatorMatched\": {}, \"takerAmount\": {}, \"creator\": {}, \"taker\": {}, \"fee\": {}}}",
                        q(matched), q(taker), q(c), q(t), q(f)
                    ));
                }
            }
        }

        let mut ratios = Vec::new();
        let rv = [0u64, 1, 2, 3, 1 << 32, 1 << 63, M - 1, M];
        for &a in &rv {
            for &b in &rv {
                for (c, d) in [(b, a), (a, b.saturating_sub(1)), (M, 1), (1, M), (a, b)] {
                    ratios.push(format!("{{\"a\": {}, \"b\": {}, \"c\": {}, \"d\": {}, \"le\": {}}}", q(a), q(b), q(c), q(d), ratio_le(a, b, c, d)));
                }
            }
        }

        let mut divs = Vec::new();
        for a in [0u64, 1, 7, 1 << 32, 1 << 63, M] {
            for b in [0u64, 3, 10_000, 1 << 40, M] {
                for c in [0u64, 1, 3, 10_000, 1 << 32, M] {
                    let r = mul_div_floor(a, b, c).map(q).unwrap_or_else(|| "null".into());
                    divs.push(format!("{{\"a\": {}, \"b\": {}, \"c\": {}, \"quotient\": {r}}}", q(a), q(b), q(c)));
                }
            }
        }

        let sections =
            [section("matchedForTake", matched), section("fee", fees), section("payouts", pays), section("ratioLe", ratios), section("mulDivFloor", divs)];
        format!("{{\n{}\n}}\n", sections.join(",\n"))
    }

    fn wide_floor(a: u64, b: u64, c: u64) -> u64 {
        mul_div_floor(a, b, c).unwrap()
    }

    /// programs/offers/math-vectors.json is exactly what this module computes for its inputs;
    /// tests/offers/math-vectors.test.ts checks the TypeScript mirror against the same file.
    /// `UPDATE_MATH_VECTORS=1 cargo test -p offers` rewrites it after a deliberate change.
    #[test]
    fn vectors_file_matches_rust() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/math-vectors.json");
        let text = render_vectors();
        if std::env::var_os("UPDATE_MATH_VECTORS").is_some() {
            std::fs::write(path, &text).unwrap();
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(committed == text, "{path} differs from what math.rs computes; rerun with UPDATE_MATH_VECTORS=1 if the change is deliberate");
    }
}
