//! Account layouts. Each `@account` struct is preceded on chain by its 8-byte Anchor
//! discriminator; `scripts/gen-idl.ts` reads these definitions to write `idl/pools.json`. The
//! Claim is kit's (`kit::claim`), the same in both programs.

use crate::discriminators as disc;
pub use kit::claim::Claim;
use kit::{pod::*, Address};

/// Most outcomes a pool may have (version 4); two-outcome pools are version 3.
pub const MAX_OUTCOMES: usize = 8;
pub const MAX_QUESTION: usize = 160;
pub const MAX_CRITERIA: usize = 280;
pub const MAX_COVER_URL: usize = 128;
pub const MAX_LABEL: usize = 24;

pub const VERSION_TWO_OUTCOME: u8 = 3;
pub const VERSION_MULTI_OUTCOME: u8 = 4;

/// On-chain states (LOCKED is derived at read time: OPEN with `closes_at` in the past).
/// RESOLVING: an outcome is proposed (dispute window open or over), or the pool is escalated.
pub const POOL_OPEN: u8 = 0;
pub const POOL_RESOLVING: u8 = 1;
pub const POOL_RESOLVED: u8 = 2;
pub const POOL_DISTRIBUTED: u8 = 3;
pub const POOL_CANCELED: u8 = 4;
pub const POOL_REFUNDED: u8 = 5;

pub const NO_OUTCOME: u8 = 255;

/// The latest a new pool may close: this long after its creation. With the resolution cap below
/// and the deadlines after it, every stake is paid or refunded within a bounded time.
pub const MAX_OPEN_SECONDS: i64 = 366 * 86_400;
/// The latest a scheduled resolution may be: this long after `closes_at`.
pub const MAX_RESOLUTION_DELAY_SECONDS: i64 = 30 * 86_400;
/// The dispute window: participants may dispute a proposed outcome for this long.
pub const DISPUTE_WINDOW_SECONDS: i64 = 86_400;
/// The creator must propose within this long after max(closes_at, resolution_at); after it,
/// anyone may escalate the pool to the config's authority.
pub const PROPOSAL_DEADLINE_SECONDS: i64 = 72 * 3_600;
/// The authority must decide an escalated pool within this long; after it, anyone may cancel.
pub const AUTHORITY_DEADLINE_SECONDS: i64 = 7 * 86_400;
/// `authority_resolve` with this outcome cancels the pool (every stake refunded).
pub const CANCEL_OUTCOME: u8 = NO_OUTCOME;
pub const BPS: u64 = 10_000;

/// Service settings; PDA ["config"]. Its PDA is also the authority of the vault ["vault"].
/// @account
#[repr(C)]
pub struct Config {
    pub authority: Address,
    pub mint: Address,
    pub treasury: Address,
    pub vault: Address,
    pub fee_bps: PodU16,
    pub bump: u8,
    pub vault_bump: u8,
}

/// One outcome of a pool: label and aggregates.
/// @type
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Outcome {
    pub label_len: u8,
    pub label: [u8; 24],
    pub total_oi: PodU64,
    pub wager_count: PodU32,
    pub vote_weight: PodU64,
}

/// A pari-mutuel pool; PDA ["pool", creator, nonce (u64 LE)]. `vote_ends_at` ends the dispute
/// window of the creator's proposal (0 before one); `escalated_at` is 0 unless escalated.
/// @account
#[repr(C)]
pub struct Pool {
    pub creator: Address,
    pub nonce: PodU64,
    pub bump: u8,
    pub version: u8,
    pub state: u8,
    pub outcome_count: u8,
    pub fee_bps: PodU16,
    pub question_len: PodU16,
    pub question: [u8; 160],
    pub criteria_len: PodU16,
    pub criteria: [u8; 280],
    pub cover_url_len: u8,
    pub cover_url: [u8; 128],
    pub closes_at: PodI64,
    pub resolution_at: PodI64,
    pub vote_ends_at: PodI64,
    pub escalated_at: PodI64,
    pub outcomes: [Outcome; 8],
    pub total_oi: PodU64,
    pub participant_count: PodU32,
    pub voter_count: PodU32,
    pub vote_weight_total: PodU64,
    pub proposed_outcome: u8,
    pub escalated: u8,
    pub dispute_count: PodU32,
    pub winning_outcome: u8,
    pub settled_count: PodU32,
    pub paid_out: PodU64,
    pub fees_paid: PodU64,
    pub created_at: PodI64,
    pub updated_at: PodI64,
}

/// One user's picks in one pool; PDA ["participant", pool, user].
/// @account
#[repr(C)]
pub struct Participant {
    pub pool: Address,
    pub user: Address,
    pub user_token: Address,
    pub bump: u8,
    pub voted: u8,
    pub vote_outcome: u8,
    pub settled: u8,
    pub stakes: [PodU64; 8],
    pub total: PodU64,
    pub pick_count: PodU32,
    pub payout: PodU64,
    pub fee: PodU64,
    pub created_at: PodI64,
}

kit::pod!(Outcome);
kit::settings!(Config);
kit::account!(Pool = disc::ACCOUNT_POOL, Participant = disc::ACCOUNT_PARTICIPANT);
