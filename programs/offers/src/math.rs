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
}
