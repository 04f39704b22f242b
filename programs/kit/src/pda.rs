//! Canonical program-derived addresses.
//!
//! A PDA is `sha256(seeds || bump || program_id || "ProgramDerivedAddress")` for a bump that
//! makes the hash an invalid ed25519 point; every such bump gives a different, equally valid
//! address. Only the highest one (the canonical bump, the one `find_program_address` returns)
//! is accepted here, so each seed tuple names exactly one account.
//!
//! Creation proves `address == PDA(seeds, bump)` already (the runtime derives the signer of
//! `invoke_signed`, and `kit::cpi::create_pda` refuses an account that signs by itself); what is left is to prove that no higher bump yields a PDA. Each higher bump
//! costs one `sol_sha256` and one `sol_curve_validate_point` (about 320 CU together) instead of
//! the 1,500 CU of `sol_create_program_address`; a canonical bump is 255 half of the time, so a
//! creation checks one higher bump on average.

use crate::accounts::KitError;
use pinocchio::{error::ProgramError, Address};

const PDA_MARKER: &[u8; 21] = b"ProgramDerivedAddress";
/// Most seeds (bump excluded) a caller may pass.
pub const MAX_SEEDS: usize = 4;

/// The `(address, length)` pairs `sol_sha256` reads.
#[repr(C)]
#[derive(Clone, Copy)]
struct Bytes {
    ptr: *const u8,
    len: u64,
}

#[cfg(target_arch = "bpf")]
extern "C" {
    fn sol_sha256(vals: *const u8, val_len: u64, hash_result: *mut u8) -> u64;
    fn sol_curve_validate_point(curve_id: u64, point_addr: *const u8, result: *mut u8) -> u64;
}

/// Whether `bytes` would be a PDA, i.e. not a point of the ed25519 curve.
#[cfg(target_arch = "bpf")]
#[inline(always)]
fn off_curve(parts: &[Bytes]) -> bool {
    let mut hash = [0u8; 32];
    let mut unused = 0u8;
    // SAFETY: `parts` are valid (address, length) pairs; the hash is 32 bytes.
    unsafe {
        sol_sha256(parts.as_ptr() as *const u8, parts.len() as u64, hash.as_mut_ptr());
        // 0: a valid curve point (not a PDA); 1: not on the curve. Curve id 0 = edwards25519.
        sol_curve_validate_point(0, hash.as_ptr(), &mut unused) != 0
    }
}

#[cfg(not(target_arch = "bpf"))]
fn off_curve(_parts: &[Bytes]) -> bool {
    unimplemented!("PDA checks run on chain only")
}

/// Fails with `AccountMismatch` unless `bump` is the canonical bump of `seeds` under
/// `program_id`. Does not check that the address is `PDA(seeds, bump)`: the `invoke_signed` that
/// creates it does, given that the account does not sign by itself (see `kit::cpi::create_pda`).
#[inline(never)]
pub fn verify_canonical(seeds: &[&[u8]], bump: u8, program_id: &Address) -> Result<(), ProgramError> {
    let n = seeds.len();
    if n > MAX_SEEDS {
        return Err(KitError::InvalidInstructionData.into());
    }
    let mut higher = [bump];
    let hp = higher.as_mut_ptr();
    let empty = Bytes { ptr: PDA_MARKER.as_ptr(), len: 0 };
    let mut parts = [empty; MAX_SEEDS + 3];
    let mut i = 0;
    while i < n {
        parts[i] = Bytes { ptr: seeds[i].as_ptr(), len: seeds[i].len() as u64 };
        i += 1;
    }
    parts[n] = Bytes { ptr: hp as *const u8, len: 1 };
    parts[n + 1] = Bytes { ptr: program_id.as_array().as_ptr(), len: 32 };
    parts[n + 2] = Bytes { ptr: PDA_MARKER.as_ptr(), len: 21 };
    while bump < 255 && unsafe { *hp } < 255 {
        // SAFETY: `hp` points at `higher`, which `parts[n]` reads through the same raw pointer.
        unsafe { *hp += 1 };
        if off_curve(&parts[..n + 3]) {
            return Err(KitError::AccountMismatch.into());
        }
    }
    Ok(())
}
