//! Instructions: argument layouts (Borsh-identical, after the 8-byte discriminator) and the
//! dispatcher. `@instruction` / `@accounts` / `@pda` lines are read by `scripts/gen-idl.ts` (see
//! programs/offers/src/instructions/mod.rs for their form).

mod claim;
mod config;
mod create_pool;
mod payout;
mod pick;
mod resolution;

use crate::discriminators as disc;
use kit::{pod::*, AccountView, Address, ProgramError, ProgramResult};

/// Creates the settings and the program's token vault at their canonical addresses, once; only
/// the program's upgrade authority (the deployer, who pays) may, and it names the authority.
/// @instruction initialize_config
/// @accounts deployer:mut,signer authority config:mut vault:mut mint treasury program_data token_program system_program
#[repr(C)]
pub struct InitializeConfigArgs {
    pub fee_bps: PodU16,
}

/// Changes the fee; pools keep the fee they were created with.
/// @instruction update_config
/// @accounts authority:signer config:mut
#[repr(C)]
pub struct UpdateConfigArgs {
    pub fee_bps: PodU16,
}

/// Names a new fee treasury (service authority only): a token account of the config's mint,
/// not the vault. A treasury that can no longer receive (closed by its owner, or frozen by the
/// mint's freeze authority) makes every settlement that owes a fee fail; this is the way out.
/// @instruction set_treasury
/// @accounts authority:signer config:mut treasury
#[repr(C)]
pub struct SetTreasuryArgs {}

/// Creates a pool (any user). Two outcomes with both labels empty get "For" and "Against".
/// @instruction create_pool
/// @accounts payer:mut,signer creator:signer config pool:mut system_program
/// @pda pool: "pool" creator args.nonce
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
/// @pda participant: "participant" pool user
#[repr(C)]
pub struct PlacePickArgs {
    pub outcome: u8,
    pub amount: PodU64,
    pub participant_bump: u8,
}

/// The creator proposes the outcome once picks are closed (and the resolution time reached),
/// within 72 hours; participants may dispute it for 24 hours.
/// @instruction propose_outcome
/// @accounts creator:signer pool:mut
#[repr(C)]
pub struct ProposeOutcomeArgs {
    pub outcome: u8,
}

/// A participant's vote during the dispute window, once: for the proposed outcome (support) or
/// another one (a dispute). Weighted by the voter's total stake, for display only.
/// @instruction cast_vote
/// @accounts voter:signer pool:mut participant:mut
/// @pda participant: "participant" pool voter
#[repr(C)]
pub struct CastVoteArgs {
    pub outcome: u8,
}

/// Anyone: after the dispute window (or once every participant voted), an undisputed proposal
/// resolves the pool and a disputed one escalates it to the authority; a pool without a proposal
/// 72 hours after its close (and resolution time) is escalated.
/// @instruction resolve_pool
/// @accounts caller:signer pool:mut
#[repr(C)]
pub struct ResolvePoolArgs {}

/// The config's authority decides an escalated pool within 7 days: an outcome, or 255 to cancel.
/// @instruction authority_resolve
/// @accounts authority:signer config pool:mut
#[repr(C)]
pub struct AuthorityResolveArgs {
    pub outcome: u8,
}

/// Cancels: the creator while picks are open; anyone once a pool without picks has closed, or
/// once an escalation has waited 7 days for the authority.
/// @instruction cancel_pool
/// @accounts caller:signer pool:mut
#[repr(C)]
pub struct CancelPoolArgs {}

/// Pays one participant of a resolved pool (anyone); the last one moves it to DISTRIBUTED. A
/// payout the recorded token account cannot receive goes to the user's Claim (payer pays its rent).
/// @instruction settle_participant
/// @accounts config pool:mut participant:mut vault:mut user_token:mut treasury:mut token_program payer:mut,signer user_claim:mut system_program
/// @pda user_claim: "claim" participant.user
#[repr(C)]
pub struct SettleParticipantArgs {
    pub claim_bump: u8,
}

/// Refunds one participant of a canceled pool (anyone); the last one moves it to REFUNDED. A
/// refund the recorded token account cannot receive goes to the user's Claim.
/// @instruction refund_participant
/// @accounts config pool:mut participant:mut vault:mut user_token:mut token_program payer:mut,signer user_claim:mut system_program
/// @pda user_claim: "claim" participant.user
#[repr(C)]
pub struct RefundParticipantArgs {
    pub claim_bump: u8,
}

/// The owner takes its whole claim to a token account of the mint it owns; the Claim account is
/// closed and its rent returns to whoever paid it (to the owner when that account can no longer
/// take it).
/// @instruction withdraw_claim
/// @accounts owner:mut,signer config claim:mut vault:mut destination:mut rent_payer:mut token_program
/// @pda claim: "claim" owner
#[repr(C)]
pub struct WithdrawClaimArgs {}

kit::pod!(
    InitializeConfigArgs,
    UpdateConfigArgs,
    SetTreasuryArgs,
    CreatePoolArgs,
    PlacePickArgs,
    ProposeOutcomeArgs,
    CastVoteArgs,
    ResolvePoolArgs,
    AuthorityResolveArgs,
    CancelPoolArgs,
    SettleParticipantArgs,
    RefundParticipantArgs,
    WithdrawClaimArgs,
);

#[inline(always)]
pub fn dispatch(program_id: &Address, accounts: &[AccountView], data: &[u8]) -> ProgramResult {
    kit::dispatch!(program_id, accounts, data, {
        disc::IX_PLACE_PICK => pick::process,
        disc::IX_CREATE_POOL => create_pool::process,
        disc::IX_PROPOSE_OUTCOME => resolution::propose,
        disc::IX_CAST_VOTE => resolution::cast,
        disc::IX_RESOLVE_POOL => resolution::resolve,
        disc::IX_AUTHORITY_RESOLVE => resolution::authority_resolve,
        disc::IX_CANCEL_POOL => resolution::cancel,
        disc::IX_SETTLE_PARTICIPANT => payout::settle,
        disc::IX_REFUND_PARTICIPANT => payout::refund,
        disc::IX_WITHDRAW_CLAIM => claim::withdraw,
        disc::IX_INITIALIZE_CONFIG => config::initialize,
        disc::IX_UPDATE_CONFIG => config::update,
        disc::IX_SET_TREASURY => config::set_treasury,
    })
}

/// Fails unless `config` is the program's one Config (its canonical PDA), then loads it.
#[inline(always)]
pub(crate) fn config<'a>(config: &'a AccountView, program_id: &Address) -> Result<&'a crate::state::Config, ProgramError> {
    kit::accounts::same(config, &crate::addresses::CANONICAL.config)?;
    kit::accounts::load::<crate::state::Config>(config, program_id)
}

/// Emits a PoolStateChanged event.
#[inline(never)]
pub(crate) fn emit_state(pool: &Address, state: u8, winning_outcome: u8, now: i64) {
    let ev = crate::events::PoolStateChanged { pool: *pool, state, winning_outcome, timestamp: PodI64::new(now) };
    kit::log::emit(&disc::EVENT_POOL_STATE_CHANGED, bytes_of(&ev));
}
