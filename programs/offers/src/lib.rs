//! Fixed-odds offers on two-sided contracts (area A of the spec).
//!
//! A creator locks a stake on one side of a contract and names the total wanted on the other
//! side; takers fill part or all of it at that fixed ratio; once the service resolves the
//! contract anyone may settle positions. Money rules are enforced here, not only in the API.
#![cfg_attr(target_arch = "bpf", no_std)]

pub mod addresses;
pub mod discriminators;
pub mod error;
pub mod events;
pub mod instructions;
pub mod math;
pub mod state;
#[cfg(test)]
mod take_best_vectors;

kit::entrypoint!(crate::instructions::dispatch);
