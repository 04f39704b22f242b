//! Instructions: argument layouts (Borsh-identical, after the 8-byte discriminator) and the
//! dispatcher. `@instruction` / `@accounts` lines are read by `scripts/gen-idl.ts`.

mod config;
mod create_pool;
mod payout;
mod pick;
mod vote;

use crate::discriminators as disc;
use kit::{accounts::KitError, pod::*, AccountView, Address, ProgramError, ProgramResult};

/// Creates the settings and the program's token vault (once).
/// @instruction initialize_config
/// @accounts authority:mut,signer config:mut vault:mut mint treasury token_program system_program
#[repr(C)]
pub struct InitializeConfigArgs {
    pub config_bump: u8,
    pub vault_bump: u8,
    pub fee_bps: PodU16,
}

/// Changes the fee; pools keep the fee they were created with.
/// @instruction update_config
/// @accounts authority:signer config:mut
#[repr(C)]
pub struct UpdateConfigArgs {
    pub fee_bps: PodU16,
}

/// Creates a pool (any user). Two outcomes with both labels empty get "For" and "Against".
/// @instruction create_pool
/// @accounts payer:mut,signer creator:signer config pool:mut system_program
#[repr(C)]
pub struct CreatePoolArgs {
    pub nonce: PodU64,
    pub bump: u8,
    pub outcome_count: u8,
    pub closes_at: PodI64,
    pub resolution_at: PodI64,
    pub question_len: PodU16,
    pub question: [u8; 160],
    pub criteria_len: PodU16,
    pub criteria: [u8; 280],
    pub cover_url_len: u8,
    pub cover_url: [u8; 128],
    pub label_lens: [u8; 8],
    pub labels: [u8; 192],
}

/// A funded pick on one outcome; creates the participant record on the user's first pick.
/// @instruction place_pick
/// @accounts payer:mut,signer user:signer user_token:mut config pool:mut participant:mut vault:mut token_program system_program
#[repr(C)]
pub struct PlacePickArgs {
    pub outcome: u8,
    pub amount: PodU64,
    pub participant_bump: u8,
}

/// Opens the vote once picks are closed (and the scheduled resolution time reached); anyone.
/// @instruction start_vote
/// @accounts caller:signer pool:mut
#[repr(C)]
pub struct StartVoteArgs {}

/// A participant's vote, weighted by their total stake in the pool; once per participant.
/// @instruction cast_vote
/// @accounts voter:signer pool:mut participant:mut
#[repr(C)]
pub struct CastVoteArgs {
    pub outcome: u8,
}

/// Decides the winner from the vote (anyone): early on an absolute stake majority, else after
/// the window with quorum and no tie.
/// @instruction resolve_pool
/// @accounts caller:signer pool:mut
#[repr(C)]
pub struct ResolvePoolArgs {}

/// Cancels before resolution: the creator any time, anyone after a failed vote.
/// @instruction cancel_pool
/// @accounts caller:signer pool:mut
#[repr(C)]
pub struct CancelPoolArgs {}

/// Pays one participant of a resolved pool (anyone); the last one moves it to DISTRIBUTED.
/// @instruction settle_participant
/// @accounts config pool:mut participant:mut vault:mut user_token:mut treasury:mut token_program
#[repr(C)]
pub struct SettleParticipantArgs {}

/// Refunds one participant of a canceled pool (anyone); the last one moves it to REFUNDED.
/// @instruction refund_participant
/// @accounts config pool:mut participant:mut vault:mut user_token:mut token_program
#[repr(C)]
pub struct RefundParticipantArgs {}

unsafe impl Pod for InitializeConfigArgs {}
unsafe impl Pod for UpdateConfigArgs {}
unsafe impl Pod for CreatePoolArgs {}
unsafe impl Pod for PlacePickArgs {}
unsafe impl Pod for StartVoteArgs {}
unsafe impl Pod for CastVoteArgs {}
unsafe impl Pod for ResolvePoolArgs {}
unsafe impl Pod for CancelPoolArgs {}
unsafe impl Pod for SettleParticipantArgs {}
unsafe impl Pod for RefundParticipantArgs {}

#[inline(always)]
fn parse<T: Pod>(data: &[u8]) -> Result<&T, ProgramError> {
    args::<T>(data).ok_or_else(|| KitError::InvalidInstructionData.into())
}

#[inline(always)]
pub fn dispatch(program_id: &Address, accounts: &[AccountView], data: &[u8]) -> ProgramResult {
    if data.len() < 8 {
        return Err(KitError::InvalidInstructionData.into());
    }
    let (tag, rest) = data.split_at(8);
    let tag = u64::from_le_bytes([tag[0], tag[1], tag[2], tag[3], tag[4], tag[5], tag[6], tag[7]]);
    match tag {
        disc::IX_PLACE_PICK => pick::process(program_id, accounts, parse(rest)?),
        disc::IX_CREATE_POOL => create_pool::process(program_id, accounts, parse(rest)?),
        disc::IX_START_VOTE => vote::start(program_id, accounts, parse(rest)?),
        disc::IX_CAST_VOTE => vote::cast(program_id, accounts, parse(rest)?),
        disc::IX_RESOLVE_POOL => vote::resolve(program_id, accounts, parse(rest)?),
        disc::IX_CANCEL_POOL => payout::cancel(program_id, accounts, parse(rest)?),
        disc::IX_SETTLE_PARTICIPANT => payout::settle(program_id, accounts, parse(rest)?),
        disc::IX_REFUND_PARTICIPANT => payout::refund(program_id, accounts, parse(rest)?),
        disc::IX_INITIALIZE_CONFIG => config::initialize(program_id, accounts, parse(rest)?),
        disc::IX_UPDATE_CONFIG => config::update(program_id, accounts, parse(rest)?),
        _ => Err(KitError::InvalidInstructionData.into()),
    }
}

/// Emits a PoolStateChanged event.
#[inline(never)]
pub(crate) fn emit_state(pool: &Address, state: u8, winning_outcome: u8, now: i64) {
    let ev = crate::events::PoolStateChanged { pool: *pool, state, winning_outcome, timestamp: PodI64::new(now) };
    kit::log::emit(&disc::EVENT_POOL_STATE_CHANGED, bytes_of(&ev));
}
