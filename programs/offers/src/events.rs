//! Anchor-style events, logged with `sol_log_data` (discriminator = sha256("event:<Name>")[..8]).
//! The claim events are kit's (`kit::claim`).

use kit::{pod::*, Address};

/// A take matched against an offer.
/// @event
#[repr(C)]
pub struct OfferTaken {
    pub offer: Address,
    pub taker: Address,
    pub position: Address,
    pub take_amount: PodU64,
    pub creator_matched: PodU64,
    pub taker_filled: PodU64,
    pub creator_allocated: PodU64,
    pub revision: PodU64,
    pub timestamp: PodI64,
}

/// An offer withdrawn; the unmatched creator stake went back to the creator.
/// @event
#[repr(C)]
pub struct OfferClosed {
    pub offer: Address,
    pub closed_by: Address,
    pub refund: PodU64,
    pub revision: PodU64,
    pub timestamp: PodI64,
}

/// A position paid out after its contract was resolved or voided.
/// @event
#[repr(C)]
pub struct PositionSettled {
    pub offer: Address,
    pub position: Address,
    pub status: u8,
    pub creator_payout: PodU64,
    pub taker_payout: PodU64,
    pub fee: PodU64,
    pub timestamp: PodI64,
}

kit::pod!(OfferTaken, OfferClosed, PositionSettled);
