//! Shared building blocks of the on-chain programs.
//!
//! Account and instruction layouts are `#[repr(C)]` structs whose fields all have alignment 1
//! (`[u8; N]`-backed integers below), so the in-memory layout has no padding and is byte for
//! byte the Borsh encoding Anchor clients expect. Accounts are read in place (zero copy).
#![no_std]

pub mod accounts;
pub mod claim;
pub mod cpi;
pub mod discriminators;
pub mod log;
pub mod pda;
pub mod pod;
pub mod program;
pub mod setup;
pub mod time;
pub mod wide;

pub use pinocchio::{error::ProgramError, AccountView, Address, ProgramResult};

/// For the macros of [`program`]: programs invoke pinocchio's entrypoint through kit.
#[doc(hidden)]
pub use pinocchio;
