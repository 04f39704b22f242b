use super::{InitializeConfigArgs, SetTreasuryArgs, UpdateConfigArgs};
use crate::addresses::CANONICAL;
use crate::{error::PoolError, state::{Config, BPS}};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    setup, AccountView, Address, ProgramResult,
};

pub fn initialize(program_id: &Address, accounts: &[AccountView], args: &InitializeConfigArgs) -> ProgramResult {
    if args.fee_bps.get() as u64 > BPS {
        return Err(PoolError::InvalidFee.into());
    }
    let a = setup::create_config_and_vault(program_id, accounts, Config::SIZE, &CANONICAL)?;
    let c = acc::init::<Config>(a.config)?;
    c.authority = *a.authority.address();
    c.mint = *a.mint.address();
    c.treasury = *a.treasury.address();
    c.vault = *a.vault.address();
    c.fee_bps = args.fee_bps;
    c.bump = CANONICAL.config_bump;
    c.vault_bump = CANONICAL.vault_bump;
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
        return Err(PoolError::Unauthorized.into());
    }
    if args.fee_bps.get() as u64 > BPS {
        return Err(PoolError::InvalidFee.into());
    }
    c.fee_bps = args.fee_bps;
    Ok(())
}

pub fn set_treasury(program_id: &Address, accounts: &[AccountView], _args: &SetTreasuryArgs) -> ProgramResult {
    let [authority, config, treasury, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(authority)?;
    acc::same(config, &CANONICAL.config)?;
    let c = acc::load_mut::<Config>(config, program_id)?;
    if authority.address() != &c.authority {
        return Err(PoolError::Unauthorized.into());
    }
    setup::check_treasury(treasury, &c.mint, &c.vault)?;
    c.treasury = *treasury.address();
    Ok(())
}
