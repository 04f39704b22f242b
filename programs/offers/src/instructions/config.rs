use super::{InitializeConfigArgs, SetTreasuryArgs, UpdateConfigArgs};
use crate::addresses::CANONICAL;
use crate::{
    error::OfferError,
    math::ratio_le,
    state::{Config, Limits},
};
use kit::{setup, AccountView, Address, ProgramError, ProgramResult};

fn validate(fee_bps: u16, offers_enabled: u8, l: &Limits) -> ProgramResult {
    let ok = fee_bps <= 10_000
        && offers_enabled <= 1
        && l.minimum_creator_micros.get() > 0
        && l.minimum_take_micros.get() > 0
        && l.minimum_creator_micros.get() <= l.maximum_wager_micros.get()
        && l.warning_ratio_denominator.get() > 0
        && l.minimum_odds_denominator.get() > 0
        && l.maximum_odds_denominator.get() > 0
        && l.minimum_odds_numerator.get() > 0
        // minimum odds <= maximum odds
        && ratio_le(l.minimum_odds_numerator.get(), l.maximum_odds_denominator.get(), l.maximum_odds_numerator.get(), l.minimum_odds_denominator.get());
    if ok {
        Ok(())
    } else {
        Err(OfferError::InvalidConfig.into())
    }
}

pub fn initialize(program_id: &Address, accounts: &[AccountView], args: &InitializeConfigArgs) -> ProgramResult {
    validate(args.fee_bps.get(), args.offers_enabled, &args.limits)?;
    let c = setup::initialize::<Config>(program_id, accounts, &CANONICAL)?;
    c.fee_bps = args.fee_bps;
    c.offers_enabled = args.offers_enabled;
    c.limits = args.limits;
    Ok(())
}

pub fn update(program_id: &Address, accounts: &[AccountView], args: &UpdateConfigArgs) -> ProgramResult {
    let c = setup::update::<Config, _>(program_id, accounts, &CANONICAL, OfferError::Unauthorized)?;
    validate(args.fee_bps.get(), args.offers_enabled, &args.limits)?;
    c.fee_bps = args.fee_bps;
    c.offers_enabled = args.offers_enabled;
    c.limits = args.limits;
    Ok(())
}

/// Loads the (one, canonical) config and checks `authority` signed as its authority.
pub(crate) fn authorized<'a>(program_id: &Address, authority: &AccountView, config: &'a AccountView) -> Result<&'a Config, ProgramError> {
    setup::authorised::<Config, _>(program_id, authority, config, &CANONICAL.config, OfferError::Unauthorized)
}

pub fn set_treasury(program_id: &Address, accounts: &[AccountView], _args: &SetTreasuryArgs) -> ProgramResult {
    setup::set_treasury::<Config, _>(program_id, accounts, &CANONICAL, OfferError::Unauthorized)
}
