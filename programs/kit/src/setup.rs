//! The start both programs share: a `config` PDA owned by the program and a `vault` PDA token
//! account of the configured mint whose token owner is the config, paid by the authority.

use crate::{
    accounts::{self as acc, KitError},
    cpi, AccountView, Address, ProgramError,
};
use pinocchio::cpi::Seed;

/// The accounts of an `initialize_config` instruction, checked and with config and vault created.
pub struct ConfigInit<'a> {
    pub authority: &'a AccountView,
    pub config: &'a AccountView,
    pub vault: &'a AccountView,
    pub mint: &'a AccountView,
    pub treasury: &'a AccountView,
}

/// Checks `[authority, config, vault, mint, treasury, token_program, system_program]` (signer,
/// program ids, config not yet created, an SPL mint, a treasury token account of that mint),
/// then creates the config (`config_size` bytes, owned by `program_id`) and the vault. The caller
/// writes its own config fields afterwards.
#[inline(always)] // upstream BPF passes at most 5 arguments in registers; no stack arguments
pub fn create_config_and_vault<'a>(program_id: &Address, accounts: &'a [AccountView], config_size: usize, config_bump: u8, vault_bump: u8) -> Result<ConfigInit<'a>, ProgramError> {
    let [authority, config, vault, mint, treasury, token_program, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(authority)?;
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::program(system_program, &cpi::SYSTEM_PROGRAM_ID)?;
    if !config.is_data_empty() || config.lamports() != 0 {
        return Err(KitError::AlreadyInitialized.into());
    }
    // 82 bytes: an SPL Token mint (not a Token-2022 mint with extensions).
    if !mint.owned_by(&cpi::TOKEN_PROGRAM_ID) || mint.data_len() != 82 {
        return Err(KitError::WrongAccountType.into());
    }
    let (treasury_mint, _, _) = acc::token_account(treasury, &cpi::TOKEN_PROGRAM_ID)?;
    acc::same(mint, treasury_mint)?;

    let cbump = [config_bump];
    cpi::create_pda(authority, config, config_size, program_id, &[Seed::from(b"config".as_ref()), Seed::from(cbump.as_ref())])?;
    let vbump = [vault_bump];
    cpi::create_pda(authority, vault, 165, &cpi::TOKEN_PROGRAM_ID, &[Seed::from(b"vault".as_ref()), Seed::from(vbump.as_ref())])?;
    cpi::init_token_account(vault, mint, config.address())?;
    Ok(ConfigInit { authority, config, vault, mint, treasury })
}
