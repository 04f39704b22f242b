use super::{InitializeConfigArgs, UpdateConfigArgs};
use crate::{error::OfferError, math::ratio_le, state::{Config, Limits}};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    cpi, AccountView, Address, ProgramError, ProgramResult,
};
use pinocchio::cpi::Seed;

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
    let [authority, config, vault, mint, treasury, token_program, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(authority)?;
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::program(system_program, &cpi::SYSTEM_PROGRAM_ID)?;
    if !config.is_data_empty() || config.lamports() != 0 {
        return Err(KitError::AlreadyInitialized.into());
    }
    validate(args.fee_bps.get(), args.offers_enabled, &args.limits)?;
    if !mint.owned_by(&cpi::TOKEN_PROGRAM_ID) || mint.data_len() != 82 {
        return Err(KitError::WrongAccountType.into());
    }
    let (treasury_mint, _, _) = acc::token_account(treasury, &cpi::TOKEN_PROGRAM_ID)?;
    acc::same(mint, treasury_mint)?;

    let cbump = [args.config_bump];
    cpi::create_pda(authority, config, Config::SIZE, program_id, &[Seed::from(b"config".as_ref()), Seed::from(cbump.as_ref())])?;
    let vbump = [args.vault_bump];
    cpi::create_pda(authority, vault, 165, &cpi::TOKEN_PROGRAM_ID, &[Seed::from(b"vault".as_ref()), Seed::from(vbump.as_ref())])?;
    cpi::init_token_account(vault, mint, config.address())?;

    let c = acc::init::<Config>(config)?;
    c.authority = *authority.address();
    c.mint = *mint.address();
    c.treasury = *treasury.address();
    c.vault = *vault.address();
    c.fee_bps = args.fee_bps;
    c.offers_enabled = args.offers_enabled;
    c.bump = args.config_bump;
    c.vault_bump = args.vault_bump;
    c.limits = args.limits;
    Ok(())
}

pub fn update(program_id: &Address, accounts: &[AccountView], args: &UpdateConfigArgs) -> ProgramResult {
    let [authority, config, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(authority)?;
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

/// Loads the config and checks `authority` signed as its authority.
pub(crate) fn authorized<'a>(program_id: &Address, authority: &AccountView, config: &'a AccountView) -> Result<&'a Config, ProgramError> {
    acc::signer(authority)?;
    let c = acc::load::<Config>(config, program_id)?;
    if authority.address() != &c.authority {
        return Err(OfferError::Unauthorized.into());
    }
    Ok(c)
}
