//! Explicit account checks and zero-copy access to program-owned accounts.
//!
//! Every check fails with a named error of [`KitError`]; each program's own error enum starts
//! after these codes, and the IDL lists both.

use crate::pod::Pod;
use pinocchio::{error::ProgramError, AccountView, Address};

/// Errors of the shared account checks (Anchor's custom range starts at 6000).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KitError {
    /// A required signature is missing
    MissingSignature = 6000,
    /// An account that must be writable is read-only
    AccountNotWritable = 6001,
    /// An account is owned by the wrong program
    WrongAccountOwner = 6002,
    /// An account is not of the expected type or not initialised
    WrongAccountType = 6003,
    /// An account is not the one this instruction expects
    AccountMismatch = 6004,
    /// A program account is not the expected program
    WrongProgram = 6005,
    /// Not enough accounts were passed
    NotEnoughAccounts = 6006,
    /// Instruction data is malformed or has the wrong length
    InvalidInstructionData = 6007,
    /// An amount computation overflowed
    ArithmeticOverflow = 6008,
    /// The account already exists
    AlreadyInitialized = 6009,
}

crate::program_error!(KitError);

/// Account data of a program: an 8-byte Anchor discriminator followed by the [`Pod`] body.
pub trait AccountData: Pod {
    const DISCRIMINATOR: [u8; 8];
    /// Full account size, discriminator included.
    const SIZE: usize = 8 + Self::LEN;
}

#[inline(always)]
pub fn signer(acc: &AccountView) -> Result<(), ProgramError> {
    if acc.is_signer() {
        Ok(())
    } else {
        Err(KitError::MissingSignature.into())
    }
}

#[inline(always)]
pub fn writable(acc: &AccountView) -> Result<(), ProgramError> {
    if acc.is_writable() {
        Ok(())
    } else {
        Err(KitError::AccountNotWritable.into())
    }
}

#[inline(always)]
pub fn same(acc: &AccountView, expected: &Address) -> Result<(), ProgramError> {
    if acc.address() == expected {
        Ok(())
    } else {
        Err(KitError::AccountMismatch.into())
    }
}

#[inline(always)]
pub fn program(acc: &AccountView, id: &Address) -> Result<(), ProgramError> {
    if acc.address() == id {
        Ok(())
    } else {
        Err(KitError::WrongProgram.into())
    }
}

/// Checks owner, size and discriminator; returns a pointer to the body.
#[inline(always)]
fn body<T: AccountData>(acc: &AccountView, program_id: &Address) -> Result<*mut T, ProgramError> {
    if !acc.owned_by(program_id) {
        return Err(KitError::WrongAccountOwner.into());
    }
    if acc.data_len() != T::SIZE {
        return Err(KitError::WrongAccountType.into());
    }
    let data = acc.data_ptr();
    // SAFETY: data_len bytes are mapped at data_ptr.
    if unsafe { *(data as *const [u8; 8]) } != T::DISCRIMINATOR {
        return Err(KitError::WrongAccountType.into());
    }
    Ok(unsafe { data.add(8) } as *mut T)
}

/// Checks owner, size and discriminator, and returns the body in place.
#[inline(always)]
pub fn load<'a, T: AccountData>(acc: &'a AccountView, program_id: &Address) -> Result<&'a T, ProgramError> {
    // SAFETY: alignment 1, every bit pattern valid, length checked.
    Ok(unsafe { &*body::<T>(acc, program_id)? })
}

/// Like [`load`], for an account the instruction changes (must be writable).
#[inline(always)]
#[allow(clippy::mut_from_ref)]
pub fn load_mut<'a, T: AccountData>(acc: &'a AccountView, program_id: &Address) -> Result<&'a mut T, ProgramError> {
    writable(acc)?;
    // SAFETY: as `load`; the runtime maps a writable account's data writable, and handlers
    // never hold two views of one account (distinct roles are checked by address).
    Ok(unsafe { &mut *body::<T>(acc, program_id)? })
}

/// Writes the discriminator into a freshly created account and returns its body.
#[inline(always)]
#[allow(clippy::mut_from_ref)]
pub fn init<T: AccountData>(acc: &AccountView) -> Result<&mut T, ProgramError> {
    let mut view = *acc;
    let data = unsafe { view.borrow_unchecked_mut() };
    if data.len() != T::SIZE {
        return Err(KitError::WrongAccountType.into());
    }
    data[..8].copy_from_slice(&T::DISCRIMINATOR);
    Ok(unsafe { &mut *(data.as_mut_ptr().add(8) as *mut T) })
}

/// Closes a program-owned account: its lamports go to `receiver`, its data is zeroed.
#[inline(always)]
pub fn close(acc: &AccountView, receiver: &AccountView) -> Result<(), ProgramError> {
    writable(receiver)?;
    let (mut acc, mut receiver) = (*acc, *receiver);
    let lamports = acc.lamports();
    let total = receiver.lamports().checked_add(lamports).ok_or(KitError::ArithmeticOverflow)?;
    receiver.set_lamports(total);
    acc.set_lamports(0);
    unsafe { acc.borrow_unchecked_mut().fill(0) };
    acc.close()
}

/// Closes `acc` into `receiver` when the runtime will accept the credit, else into `fallback`.
/// A rent payer recorded long ago may since have become a program (runtimes before SIMD-0162
/// refuse any balance change of an executable account) or an account the credit would leave
/// rent-paying (refused by every runtime); neither may hold up what the close is for, such as
/// an owner withdrawing a claim a stranger paid the rent of.
pub fn close_or_fallback(acc: &AccountView, receiver: &AccountView, fallback: &AccountView) -> Result<(), ProgramError> {
    let credit = receiver.lamports().saturating_add(acc.lamports());
    let accepts = !receiver.executable() && crate::cpi::rent_exempt_minimum(receiver.data_len()).map_or(true, |min| credit >= min);
    close(acc, if accepts { receiver } else { fallback })
}

/// Reads an SPL token account's (mint, owner, amount) without copying.
#[inline(always)]
pub fn token_account<'a>(acc: &'a AccountView, token_program: &Address) -> Result<(&'a Address, &'a Address, u64), ProgramError> {
    if !acc.owned_by(token_program) {
        return Err(KitError::WrongAccountOwner.into());
    }
    let data = unsafe { acc.borrow_unchecked() };
    if data.len() != 165 || data[108] != 1 {
        // 108: account state; 1 = Initialized (0 uninitialised, 2 frozen).
        return Err(KitError::WrongAccountType.into());
    }
    let mint = unsafe { &*(data.as_ptr() as *const Address) };
    let owner = unsafe { &*(data.as_ptr().add(32) as *const Address) };
    let amount = u64::from_le_bytes([data[64], data[65], data[66], data[67], data[68], data[69], data[70], data[71]]);
    Ok((mint, owner, amount))
}

/// Whether `acc` can receive a payout of `mint` for `owner` right now: an initialised (not
/// frozen) SPL token account of that mint owned by that wallet. Payees control their token
/// accounts (they can close, freeze-by-delegate or re-own them), so a payout never assumes this:
/// callers credit a claimable balance instead of failing when it is false.
#[inline(always)]
pub fn can_receive(acc: &AccountView, mint: &Address, owner: &Address) -> bool {
    match token_account(acc, &crate::cpi::TOKEN_PROGRAM_ID) {
        Ok((m, o, _)) => m == mint && o == owner,
        Err(_) => false,
    }
}
