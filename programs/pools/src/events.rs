//! Anchor-style events, logged with `sol_log_data` (discriminator = sha256("event:<Name>")[..8]).
//! The claim events are kit's (`kit::claim`).

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

/// A participant's vote on the proposed outcome, weighted by their stake in the pool; a vote for
/// any other outcome is a dispute (`dispute` = 1).
/// @event
#[repr(C)]
pub struct VoteCast {
    pub pool: Address,
    pub user: Address,
    pub outcome: u8,
    pub dispute: u8,
    pub weight: PodU64,
    pub timestamp: PodI64,
}

/// The creator proposed the outcome; participants may dispute it until `vote_ends_at`.
/// @event
#[repr(C)]
pub struct OutcomeProposed {
    pub pool: Address,
    pub outcome: u8,
    pub vote_ends_at: PodI64,
    pub timestamp: PodI64,
}

/// The pool went to the config's authority: its proposal was disputed, or nobody proposed in time.
/// The authority decides by `decide_by`; after it anyone may cancel.
/// @event
#[repr(C)]
pub struct PoolEscalated {
    pub pool: Address,
    pub proposed_outcome: u8,
    pub dispute_count: PodU32,
    pub decide_by: PodI64,
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

kit::pod!(PickPlaced, VoteCast, OutcomeProposed, PoolEscalated, PoolStateChanged, ParticipantSettled);
