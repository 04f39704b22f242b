//! The scaffolding every program repeats, as macros (the linker allows no `dyn`, no function
//! pointer tables and no `core::fmt`, so the shared shape is expanded in each program rather
//! than called through a table): the entrypoint, the instruction dispatcher, the `Pod` and
//! account impls of the layouts, and the conversion of a program's error enum.

use crate::{accounts::KitError, pod::Pod, ProgramError};

/// Splits instruction data into its 8-byte discriminator (read as a little-endian u64, the form
/// of the `IX_*` constants) and the arguments after it.
#[inline(always)]
pub fn split(data: &[u8]) -> Result<(u64, &[u8]), ProgramError> {
    if data.len() < 8 {
        return Err(KitError::InvalidInstructionData.into());
    }
    let (tag, rest) = data.split_at(8);
    Ok((u64::from_le_bytes([tag[0], tag[1], tag[2], tag[3], tag[4], tag[5], tag[6], tag[7]]), rest))
}

/// The arguments of an instruction, in place; their length must match exactly.
#[inline(always)]
pub fn parse<T: Pod>(data: &[u8]) -> Result<&T, ProgramError> {
    if data.len() != T::LEN {
        return Err(KitError::InvalidInstructionData.into());
    }
    T::from_bytes(data).ok_or_else(|| KitError::InvalidInstructionData.into())
}

/// The program's entrypoint (with the `bpf-entrypoint` feature of the invoking crate): no
/// allocator, a `no_std` panic handler, every instruction handed to `$dispatch`.
#[macro_export]
macro_rules! entrypoint {
    ($dispatch:path) => {
        #[cfg(feature = "bpf-entrypoint")]
        // pinocchio's handlers test `target_os = "solana"`, which the upstream BPF target lacks.
        #[allow(unexpected_cfgs)]
        mod entrypoint {
            use $crate::{AccountView, Address, ProgramResult};
            $crate::pinocchio::program_entrypoint!(process);
            $crate::pinocchio::no_allocator!();
            $crate::pinocchio::nostd_panic_handler!();

            fn process(program_id: &Address, accounts: &mut [AccountView], data: &[u8]) -> ProgramResult {
                $dispatch(program_id, accounts, data)
            }
        }
    };
}

/// Routes instruction data to its handler by discriminator:
/// `dispatch!(program_id, accounts, data, { disc::IX_A => a::process, ... })`. Each handler
/// takes `(program_id, accounts, &Args)`, the arguments parsed in place by [`parse`]; an unknown
/// discriminator or a wrong argument length is `InvalidInstructionData`. Expanded inside the
/// program's `dispatch` (inlined into the entrypoint: upstream BPF has no stack arguments).
#[macro_export]
macro_rules! dispatch {
    ($program_id:expr, $accounts:expr, $data:expr, { $($tag:path => $handler:path),+ $(,)? }) => {
        match $crate::program::split($data) {
            Ok((tag, rest)) => match tag {
                $($tag => $handler($program_id, $accounts, $crate::program::parse(rest)?),)+
                _ => Err($crate::accounts::KitError::InvalidInstructionData.into()),
            },
            Err(e) => Err(e),
        }
    };
}

/// Declares each type [`Pod`](crate::pod::Pod), refusing at compile time any whose alignment is
/// not 1. The caller vouches for the rest of the contract: `#[repr(C)]` and fields whose every
/// bit pattern is valid (the `Pod*` integers, `u8`, byte arrays, `Address`, other such types).
#[macro_export]
macro_rules! pod {
    ($($t:ty),+ $(,)?) => {
        $(
            const _: () = assert!(core::mem::align_of::<$t>() == 1);
            unsafe impl $crate::pod::Pod for $t {}
        )+
    };
}

/// Declares each type an account body ([`Pod`](crate::pod::Pod) and
/// [`AccountData`](crate::accounts::AccountData) with its discriminator):
/// `account!(Config = disc::ACCOUNT_CONFIG, ...)`.
#[macro_export]
macro_rules! account {
    ($($t:ty = $d:expr),+ $(,)?) => {
        $(
            $crate::pod!($t);
            impl $crate::accounts::AccountData for $t {
                const DISCRIMINATOR: [u8; 8] = $d;
            }
        )+
    };
}

/// A program's error enum (`#[repr(u32)]`, codes from 6010) as a `ProgramError::Custom`.
#[macro_export]
macro_rules! program_error {
    ($t:ty) => {
        impl From<$t> for $crate::ProgramError {
            #[inline(always)]
            fn from(e: $t) -> Self {
                $crate::ProgramError::Custom(e as u32)
            }
        }
    };
}
