use super::{InitializeConfigArgs, SetTreasuryArgs, UpdateConfigArgs};
use crate::addresses::CANONICAL;
use crate::{
    error::PoolError,
    state::{Config, BPS},
};
use kit::{setup, AccountView, Address, ProgramResult};

pub fn initialize(program_id: &Address, accounts: &[AccountView], args: &InitializeConfigArgs) -> ProgramResult {
    if args.fee_bps.get() as u64 > BPS {
        return Err(PoolError::InvalidFee.into());
    }
    let c = setup::initialize::<Config>(program_id, accounts, &CANONICAL)?;
    c.fee_bps = args.fee_bps;
    Ok(())
}

pub fn update(program_id: &Address, accounts: &[AccountView], args: &UpdateConfigArgs) -> ProgramResult {
    let c = setup::update::<Config, _>(program_id, accounts, &CANONICAL, PoolError::Unauthorized)?;
    if args.fee_bps.get() as u64 > BPS {
        return Err(PoolError::InvalidFee.into());
    }
    c.fee_bps = args.fee_bps;
    Ok(())
}

pub fn set_treasury(program_id: &Address, accounts: &[AccountView], _args: &SetTreasuryArgs) -> ProgramResult {
    setup::set_treasury::<Config, _>(program_id, accounts, &CANONICAL, PoolError::Unauthorized)
}
