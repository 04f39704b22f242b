//! The start both programs share: one `config` PDA owned by the program and one `vault` PDA token
//! account of the configured mint whose token owner is the config, both at their canonical
//! addresses, created once and only by the program's upgrade authority (the deployer), so that a
//! first caller cannot front-run the deployment and no second Config can ever exist.

use crate::{
    accounts::{self as acc, KitError},
    cpi, AccountView, Address, ProgramError, ProgramResult,
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
pub fn create_config_and_vault<'a>(
    program_id: &Address,
    accounts: &'a [AccountView],
    config_size: usize,
    canonical: &Canonical,
) -> Result<ConfigInit<'a>, ProgramError> {
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

/// What kit needs of a program's `Config` (implemented by [`settings!`](crate::settings)): the
/// fields every Config has, whatever the program adds after them.
pub trait Settings: acc::AccountData {
    fn authority(&self) -> &Address;
    fn mint(&self) -> &Address;
    fn vault(&self) -> &Address;
    /// The Config's canonical bump (it signs for the vault).
    fn bump(&self) -> u8;
    fn set_treasury(&mut self, treasury: &Address);
    /// Records the accounts of `initialize_config` and the canonical bumps.
    fn set_singletons(&mut self, a: &ConfigInit, canonical: &Canonical);
}

/// Declares a program's Config: an account (discriminator `account:Config`) implementing
/// [`Settings`] through its fields `authority`, `mint`, `treasury`, `vault` (`Address`) and
/// `bump`, `vault_bump` (`u8`).
#[macro_export]
macro_rules! settings {
    ($t:ty) => {
        $crate::account!($t = $crate::discriminators::ACCOUNT_CONFIG);
        impl $crate::setup::Settings for $t {
            #[inline(always)]
            fn authority(&self) -> &$crate::Address {
                &self.authority
            }
            #[inline(always)]
            fn mint(&self) -> &$crate::Address {
                &self.mint
            }
            #[inline(always)]
            fn vault(&self) -> &$crate::Address {
                &self.vault
            }
            #[inline(always)]
            fn bump(&self) -> u8 {
                self.bump
            }
            #[inline(always)]
            fn set_treasury(&mut self, treasury: &$crate::Address) {
                self.treasury = *treasury;
            }
            #[inline(always)]
            fn set_singletons(&mut self, a: &$crate::setup::ConfigInit, canonical: &$crate::setup::Canonical) {
                self.authority = *a.authority.address();
                self.mint = *a.mint.address();
                self.treasury = *a.treasury.address();
                self.vault = *a.vault.address();
                self.bump = canonical.config_bump;
                self.vault_bump = canonical.vault_bump;
            }
        }
    };
}

/// `initialize_config`'s shared part ([`create_config_and_vault`]), then the new Config with its
/// singleton fields written; the program writes its own settings.
#[inline(always)]
#[allow(clippy::mut_from_ref)]
pub fn initialize<'a, T: Settings>(program_id: &Address, accounts: &'a [AccountView], canonical: &Canonical) -> Result<&'a mut T, ProgramError> {
    let a = create_config_and_vault(program_id, accounts, T::SIZE, canonical)?;
    let c = acc::init::<T>(a.config)?;
    c.set_singletons(&a, canonical);
    Ok(c)
}

/// Fails unless `authority` signed and is the authority of `config`, the canonical Config
/// (compared with `canonical` before it is loaded); `unauthorized` is the program's own error.
#[inline(always)]
pub fn authorised<'a, T: Settings, E: Into<ProgramError>>(
    program_id: &Address,
    authority: &AccountView,
    config: &'a AccountView,
    canonical: &Address,
    unauthorized: E,
) -> Result<&'a T, ProgramError> {
    acc::signer(authority)?;
    acc::same(config, canonical)?;
    let c = acc::load::<T>(config, program_id)?;
    if authority.address() != c.authority() {
        return Err(unauthorized.into());
    }
    Ok(c)
}

/// [`authorised`], for an instruction that changes the Config (it must be writable).
#[inline(always)]
#[allow(clippy::mut_from_ref)]
pub fn authorised_mut<'a, T: Settings, E: Into<ProgramError>>(
    program_id: &Address,
    authority: &AccountView,
    config: &'a AccountView,
    canonical: &Address,
    unauthorized: E,
) -> Result<&'a mut T, ProgramError> {
    acc::signer(authority)?;
    acc::same(config, canonical)?;
    let c = acc::load_mut::<T>(config, program_id)?;
    if authority.address() != c.authority() {
        return Err(unauthorized.into());
    }
    Ok(c)
}

/// `update_config`'s accounts `[authority, config]` checked by [`authorised_mut`]; the program
/// validates and writes its settings.
#[inline(always)]
#[allow(clippy::mut_from_ref)]
pub fn update<'a, T: Settings, E: Into<ProgramError>>(
    program_id: &Address,
    accounts: &'a [AccountView],
    canonical: &Canonical,
    unauthorized: E,
) -> Result<&'a mut T, ProgramError> {
    let [authority, config, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    authorised_mut::<T, E>(program_id, authority, config, &canonical.config, unauthorized)
}

/// `set_treasury` `[authority, config, treasury]`: the authority (as in [`authorised_mut`])
/// names a new fee treasury, a sound token account of the Config's mint that is not the vault
/// ([`check_treasury`]).
#[inline(always)]
pub fn set_treasury<T: Settings, E: Into<ProgramError>>(
    program_id: &Address,
    accounts: &[AccountView],
    canonical: &Canonical,
    unauthorized: E,
) -> Result<(), ProgramError> {
    let [authority, config, treasury, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    let c = authorised_mut::<T, E>(program_id, authority, config, &canonical.config, unauthorized)?;
    check_treasury(treasury, c.mint(), c.vault())?;
    c.set_treasury(treasury.address());
    Ok(())
}

/// The vault, its Config and the Config PDA that signs for it (one argument: upstream BPF has
/// no stack arguments).
pub struct Vault<'a, T> {
    pub config: &'a AccountView,
    pub cfg: &'a T,
    pub vault: &'a AccountView,
}

/// Moves `amount` out of the vault to `to`, signed by the Config PDA (the vault's token owner).
/// Out of line: one copy of the token CPI for every payout of the program.
#[inline(never)]
pub fn send<T: Settings>(v: &Vault<T>, to: &AccountView, amount: u64) -> ProgramResult {
    let bump = [v.cfg.bump()];
    cpi::transfer(v.vault, to, v.config, amount, &[Seed::from(b"config".as_ref()), Seed::from(bump.as_ref())])
}
