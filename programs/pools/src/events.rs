//! Anchor-style events, logged with `sol_log_data` (discriminator = sha256("event:<Name>")[..8]).

use kit::{pod::*, Address};

/// A funded pick added to one outcome.
/// @event
#[repr(C)]
pub struct PickPlaced {
    pub pool: Address,
    pub user: Address,
    pub outcome: u8,
    pub amount: PodU64,
    pub outcome_total: PodU64,
    pub total_oi: PodU64,
    pub participant_count: PodU32,
    pub timestamp: PodI64,
}

/// A participant's vote, weighted by their stake in the pool.
/// @event
#[repr(C)]
pub struct VoteCast {
    pub pool: Address,
    pub user: Address,
    pub outcome: u8,
    pub weight: PodU64,
    pub timestamp: PodI64,
}

/// The pool moved to another state (RESOLVING, RESOLVED, CANCELED, DISTRIBUTED, REFUNDED).
/// @event
#[repr(C)]
pub struct PoolStateChanged {
    pub pool: Address,
    pub state: u8,
    pub winning_outcome: u8,
    pub timestamp: PodI64,
}

/// One participant paid (winnings minus fee) or refunded.
/// @event
#[repr(C)]
pub struct ParticipantSettled {
    pub pool: Address,
    pub user: Address,
    pub payout: PodU64,
    pub fee: PodU64,
    pub timestamp: PodI64,
}

unsafe impl Pod for PickPlaced {}
unsafe impl Pod for VoteCast {}
unsafe impl Pod for PoolStateChanged {}
unsafe impl Pod for ParticipantSettled {}
