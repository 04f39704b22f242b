//! One taker sweeps a list of offers of one contract, best first as the caller orders them, up
//! to a total and no worse than a limit on the taker's odds. Each offer is taken by the rules of
//! take_offer (the shared parts are take_offer.rs's); an offer that no longer qualifies, or has
//! less left, is passed over or taken in part (math::sweep_take), never failing the transaction.

use super::{
    take_offer::{existing_position, new_position, open_for_takes, pay_in, record_take, Fill, Fixed, Taker},
    TakeBestArgs,
};
use crate::{
    error::OfferError,
    math::{sweep_take, SweepStep},
    state::*,
};
use kit::{
    accounts::{self as acc, KitError},
    log, time, AccountView, Address, ProgramResult,
};

pub const MODE_FILL_AND_KILL: u8 = 0;
pub const MODE_FILL_OR_KILL: u8 = 1;

pub fn process(program_id: &Address, accounts: &[AccountView], args: &TakeBestArgs) -> ProgramResult {
    let [payer, taker, taker_token, config, contract, vault, token_program, system_program, pairs @ ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    let cfg = Fixed { payer, taker, config, vault, token_program, system_program }.check(program_id)?;
    let (side, amount, numerator, denominator) = (args.side, args.amount.get(), args.worst_odds_numerator.get(), args.worst_odds_denominator.get());
    if side != SIDE_A && side != SIDE_B {
        return Err(OfferError::InvalidSide.into());
    }
    if args.mode != MODE_FILL_AND_KILL && args.mode != MODE_FILL_OR_KILL {
        return Err(OfferError::InvalidTakeMode.into());
    }
    if denominator == 0 {
        return Err(OfferError::InvalidOddsLimit.into());
    }
    if amount == 0 {
        return Err(OfferError::ZeroAmount.into());
    }
    let n = pairs.len() / 2;
    if pairs.len() % 2 != 0 || n == 0 || n > args.position_bumps.len() {
        return Err(OfferError::InvalidOfferList.into());
    }
    let k = acc::load::<Contract>(contract, program_id)?;
    let now = time::now();
    open_for_takes(cfg, k, now)?;
    let t = Taker { program_id, payer, taker, taker_token, cfg, now };
    let maximum_wager = cfg.limits.maximum_wager_micros.get();

    let mut left = amount;
    let mut i = 0;
    while i < n && left > 0 {
        let (offer, position) = (&pairs[2 * i], &pairs[2 * i + 1]);
        // The same offer twice would be two views of one account; refused before either is loaded.
        let mut j = 0;
        while j < i {
            if pairs[2 * j].address() == offer.address() {
                return Err(OfferError::DuplicateOffer.into());
            }
            j += 1;
        }
        let o = acc::load_mut::<Offer>(offer, program_id)?;
        acc::same(contract, &o.contract)?;
        let existing = existing_position(&t, offer, position)?;
        let held = match &existing {
            Some(p) => p.taker_amount.get(),
            None => 0,
        };
        let step = SweepStep {
            taker_side: side,
            offer_side: o.side,
            // Filled, closed, settled or expired: passed over alike.
            offer_open: o.accepts_takes(now).is_ok(),
            self_take: taker.address() == &o.creator,
            odds_numerator: numerator,
            odds_denominator: denominator,
            creator_total: o.creator_total.get(),
            taker_target: o.taker_target.get(),
            taker_filled: o.taker_filled.get(),
            creator_allocated: o.creator_allocated.get(),
            minimum_take: o.minimum_take.get(),
            held,
            maximum_wager,
            left,
        };
        match sweep_take(&step) {
            Ok((take, matched)) => {
                let p = match existing {
                    Some(p) => p,
                    None => new_position(&t, offer, position, args.position_bumps[i], o)?,
                };
                record_take(&t, Fill { offer, position, o, p, amount: take, matched });
                left -= take;
            }
            Err(skip) => {
                log::msg("take_best skips: offer index, reason");
                log::msg_u64(i as u64, skip as u64, 0, 0, 0);
            }
        }
        i += 1;
    }
    let taken = amount - left;
    if taken == 0 {
        return Err(OfferError::NothingTaken.into());
    }
    if args.mode == MODE_FILL_OR_KILL && left > 0 {
        return Err(OfferError::NotFilled.into());
    }
    // One transfer for the whole sweep: the fills above are undone with it if it fails.
    pay_in(&t, vault, taken)
}
