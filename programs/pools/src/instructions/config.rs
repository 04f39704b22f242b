use super::{InitializeConfigArgs, UpdateConfigArgs};
use crate::{error::PoolError, state::{Config, BPS}};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    cpi, AccountView, Address, ProgramResult,
};
use pinocchio::cpi::Seed;

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
    if args.fee_bps.get() as u64 > BPS {
        return Err(PoolError::InvalidFee.into());
    }
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
    c.bump = args.config_bump;
    c.vault_bump = args.vault_bump;
    Ok(())
}

pub fn update(program_id: &Address, accounts: &[AccountView], args: &UpdateConfigArgs) -> ProgramResult {
    let [authority, config, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(authority)?;
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
