//! Pari-mutuel pools (area B of the spec): everyone's picks go into one pot per pool, split by
//! outcome; after the close the creator proposes the outcome, participants may dispute it for a
//! day, and a disputed (or missing) proposal goes to the config's authority; winners share the pot
//! pro rata to their stake on the winning outcome. The aggregate of the spec derives from `Pool`
//! alone. Rules: programs/pools/README.md; account checks: programs/SECURITY.md.
#![cfg_attr(target_arch = "bpf", no_std)]

pub mod addresses;
pub mod discriminators;
pub mod error;
pub mod events;
pub mod instructions;
pub mod state;

kit::entrypoint!(crate::instructions::dispatch);
