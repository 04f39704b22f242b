//! The start both programs share: one `config` PDA owned by the program and one `vault` PDA token
//! account of the configured mint whose token owner is the config, both at their canonical
//! addresses, created once and only by the program's upgrade authority (the deployer), so that a
//! first caller cannot front-run the deployment and no second Config can ever exist.

use crate::{
    accounts::{self as acc, KitError},
    cpi, AccountView, Address, ProgramError,
};
use pinocchio::cpi::Seed;

/// The BPF upgradeable loader (loader v3), owner of every upgradeable program's ProgramData.
pub const LOADER_V3_ID: Address = Address::from_str_const("BPFLoaderUpgradeab1e11111111111111111111111");

/// A program's singleton addresses, generated from its id into `src/addresses.rs` by
/// `scripts/gen-idl.ts` (canonical bumps of `["config"]` and `["vault"]`, and the ProgramData
/// address `PDA([program_id], loader v3)`).
pub struct Canonical {
    pub config: Address,
    pub config_bump: u8,
    pub vault: Address,
    pub vault_bump: u8,
    pub program_data: Address,
}

/// The accounts of an `initialize_config` instruction, checked and with config and vault created.
pub struct ConfigInit<'a> {
    pub deployer: &'a AccountView,
    pub authority: &'a AccountView,
    pub config: &'a AccountView,
    pub vault: &'a AccountView,
    pub mint: &'a AccountView,
    pub treasury: &'a AccountView,
}

/// Fails unless `program_data` is this program's ProgramData and names `deployer` as the upgrade
/// authority. Layout (bincode of `UpgradeableLoaderState::ProgramData`): u32 tag 3, u64 slot,
/// `Option<Pubkey>` (1-byte tag, 32 bytes).
#[inline(always)]
fn check_upgrade_authority(program_data: &AccountView, deployer: &AccountView, expected: &Address) -> Result<(), ProgramError> {
    acc::same(program_data, expected)?;
    if !program_data.owned_by(&LOADER_V3_ID) {
        return Err(KitError::WrongAccountOwner.into());
    }
    // SAFETY: read-only view of the account's data; its length is checked first.
    let data = unsafe { program_data.borrow_unchecked() };
    if data.len() < 45 || data[..4] != [3, 0, 0, 0] {
        return Err(KitError::WrongAccountType.into());
    }
    if data[12] != 1 || &data[13..45] != deployer.address().as_array().as_slice() {
        return Err(KitError::MissingSignature.into());
    }
    Ok(())
}

/// A fee treasury: an initialised, unfrozen SPL token account of `mint`, never the vault (fees
/// paid into the vault would be owed to nobody).
#[inline(always)]
pub fn check_treasury(treasury: &AccountView, mint: &Address, vault: &Address) -> Result<(), ProgramError> {
    let (treasury_mint, _, _) = acc::token_account(treasury, &cpi::TOKEN_PROGRAM_ID)?;
    if treasury_mint != mint || treasury.address() == vault {
        return Err(KitError::AccountMismatch.into());
    }
    Ok(())
}

/// Checks `[deployer, authority, config, vault, mint, treasury, program_data, token_program,
/// system_program]`: the deployer signs and is the program's upgrade authority; config and vault
/// are the canonical addresses; the mint is an SPL mint and the treasury a token account of it.
/// Then creates the config (`config_size` bytes, owned by `program_id`) and the vault, both
/// paid by the deployer and safe against pre-funding. The caller writes its config fields.
#[inline(always)] // upstream BPF passes at most 5 arguments in registers; no stack arguments
pub fn create_config_and_vault<'a>(program_id: &Address, accounts: &'a [AccountView], config_size: usize, canonical: &Canonical) -> Result<ConfigInit<'a>, ProgramError> {
    let [deployer, authority, config, vault, mint, treasury, program_data, token_program, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(deployer)?;
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::program(system_program, &cpi::SYSTEM_PROGRAM_ID)?;
    check_upgrade_authority(program_data, deployer, &canonical.program_data)?;
    acc::same(config, &canonical.config)?;
    acc::same(vault, &canonical.vault)?;
    if config.owned_by(program_id) || !config.is_data_empty() || !vault.is_data_empty() {
        return Err(KitError::AlreadyInitialized.into());
    }
    // 82 bytes: an SPL Token mint (not a Token-2022 mint with extensions).
    if !mint.owned_by(&cpi::TOKEN_PROGRAM_ID) || mint.data_len() != 82 {
        return Err(KitError::WrongAccountType.into());
    }
    check_treasury(treasury, mint.address(), &canonical.vault)?;

    let cbump = [canonical.config_bump];
    cpi::create_pda(deployer, config, config_size, program_id, &[Seed::from(b"config".as_ref()), Seed::from(cbump.as_ref())])?;
    let vbump = [canonical.vault_bump];
    cpi::create_pda(deployer, vault, 165, &cpi::TOKEN_PROGRAM_ID, &[Seed::from(b"vault".as_ref()), Seed::from(vbump.as_ref())])?;
    cpi::init_token_account(vault, mint, config.address())?;
    Ok(ConfigInit { deployer, authority, config, vault, mint, treasury })
}
