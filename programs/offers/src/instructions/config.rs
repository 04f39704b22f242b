use super::{InitializeConfigArgs, SetTreasuryArgs, UpdateConfigArgs};
use crate::addresses::CANONICAL;
use crate::{error::OfferError, math::ratio_le, state::{Config, Limits}};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    setup, AccountView, Address, ProgramError, ProgramResult,
};

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
    if ok { Ok(()) } else { Err(OfferError::InvalidConfig.into()) }
}

pub fn initialize(program_id: &Address, accounts: &[AccountView], args: &InitializeConfigArgs) -> ProgramResult {
    validate(args.fee_bps.get(), args.offers_enabled, &args.limits)?;
    let a = setup::create_config_and_vault(program_id, accounts, Config::SIZE, &CANONICAL)?;
    let c = acc::init::<Config>(a.config)?;
    c.authority = *a.authority.address();
    c.mint = *a.mint.address();
    c.treasury = *a.treasury.address();
    c.vault = *a.vault.address();
    c.fee_bps = args.fee_bps;
    c.offers_enabled = args.offers_enabled;
    c.bump = CANONICAL.config_bump;
    c.vault_bump = CANONICAL.vault_bump;
    c.limits = args.limits;
    Ok(())
}

pub fn update(program_id: &Address, accounts: &[AccountView], args: &UpdateConfigArgs) -> ProgramResult {
    let [authority, config, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(authority)?;
    acc::same(config, &CANONICAL.config)?;
    let c = acc::load_mut::<Config>(config, program_id)?;
    if authority.address() != &c.authority {
        return Err(OfferError::Unauthorized.into());
    }
    validate(args.fee_bps.get(), args.offers_enabled, &args.limits)?;
    c.fee_bps = args.fee_bps;
    c.offers_enabled = args.offers_enabled;
    c.limits = args.limits;
    Ok(())
}

/// Loads the (one, canonical) config and checks `authority` signed as its authority.
pub(crate) fn authorized<'a>(program_id: &Address, authority: &AccountView, config: &'a AccountView) -> Result<&'a Config, ProgramError> {
    acc::signer(authority)?;
    acc::same(config, &CANONICAL.config)?;
    let c = acc::load::<Config>(config, program_id)?;
    if authority.address() != &c.authority {
        return Err(OfferError::Unauthorized.into());
    }
    Ok(c)
}

pub fn set_treasury(program_id: &Address, accounts: &[AccountView], _args: &SetTreasuryArgs) -> ProgramResult {
    let [authority, config, treasury, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(authority)?;
    acc::same(config, &CANONICAL.config)?;
    let c = acc::load_mut::<Config>(config, program_id)?;
    if authority.address() != &c.authority {
        return Err(OfferError::Unauthorized.into());
    }
    setup::check_treasury(treasury, &c.mint, &c.vault)?;
    c.treasury = *treasury.address();
    Ok(())
}
