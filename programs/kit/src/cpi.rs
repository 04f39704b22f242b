//! Cross-program calls the programs make: account creation and SPL token movements.

use pinocchio::{
    cpi::{Seed, Signer},
    error::ProgramError,
    AccountView, Address,
};
use pinocchio_system::instructions::CreateAccount;
use pinocchio_token::instructions::{InitializeAccount3, Transfer};

pub use pinocchio_token::ID as TOKEN_PROGRAM_ID;
pub use pinocchio_system::ID as SYSTEM_PROGRAM_ID;

/// Creates `new` (a PDA signed by `seeds`) with `space` bytes owned by `owner`, rent paid by
/// `payer`. Fails if the address does not match the seeds or already holds lamports.
#[inline(always)]
pub fn create_pda(payer: &AccountView, new: &AccountView, space: usize, owner: &Address, seeds: &[Seed]) -> Result<(), ProgramError> {
    let lamports = rent_exempt_minimum(space)?;
    CreateAccount { from: payer, to: new, lamports, space: space as u64, owner }.invoke_signed(&[Signer::from(seeds)])
}

/// Moves `amount` tokens; `seeds` sign for a PDA authority (empty when the authority signed the
/// transaction).
#[inline(always)]
pub fn transfer(from: &AccountView, to: &AccountView, authority: &AccountView, amount: u64, seeds: &[Seed]) -> Result<(), ProgramError> {
    if amount == 0 {
        return Ok(());
    }
    let ix = Transfer::new(from, to, authority, amount);
    if seeds.is_empty() { ix.invoke() } else { ix.invoke_signed(&[Signer::from(seeds)]) }
}

/// Initialises a token account (already created, owned by the token program).
#[inline(always)]
pub fn init_token_account(account: &AccountView, mint: &AccountView, owner: &Address) -> Result<(), ProgramError> {
    InitializeAccount3::new(account, mint, owner).invoke()
}

extern "C" {
    fn sol_get_rent_sysvar(out: *mut u8) -> u64;
}

/// Rent-exempt minimum of an account of `space` bytes, from the Rent sysvar (the 1.18 runtime
/// has no generic `sol_get_sysvar`, which pinocchio's helper calls). Integer-only: the exemption
/// threshold is 2 years on runtime 1.18 and 1 year (with the per-byte rate doubled, SIMD-0194)
/// on current runtimes; any other value is refused rather than approximated with floats.
#[inline(always)]
pub fn rent_exempt_minimum(space: usize) -> Result<u64, ProgramError> {
    // Rent: lamports_per_byte_year u64, exemption_threshold f64, burn_percent u8.
    let mut rent = [0u8; 17];
    unsafe { sol_get_rent_sysvar(rent.as_mut_ptr()) };
    let per_byte_year = u64::from_le_bytes([rent[0], rent[1], rent[2], rent[3], rent[4], rent[5], rent[6], rent[7]]);
    let years = match u64::from_le_bytes([rent[8], rent[9], rent[10], rent[11], rent[12], rent[13], rent[14], rent[15]]) {
        0x4000_0000_0000_0000 => 2, // 2.0f64
        0x3ff0_0000_0000_0000 => 1, // 1.0f64
        _ => return Err(ProgramError::InvalidArgument),
    };
    Ok((128 + space as u64) * per_byte_year * years)
}
