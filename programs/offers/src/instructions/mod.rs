//! Instructions: argument layouts (Borsh-identical, after the 8-byte discriminator) and the
//! dispatcher. `@instruction` / `@accounts` / `@pda` lines are read by `scripts/gen-idl.ts`; an
//! account is `name`, `name:mut`, `name:signer` or `name:mut,signer`, in the order the handler
//! takes them; `@pda name: seeds` gives the seeds of a PDA account the handler creates or
//! derives (config, vault and program_data need none: the script knows the singletons).

mod claim;
mod close_offer;
mod config;
mod contract;
mod create_offer;
mod reclaim;
mod settle_position;
mod take_best;
mod take_offer;

use crate::{discriminators as disc, state::Limits};
use kit::{pod::*, AccountView, Address, ProgramResult};

/// Creates the settings and the program's token vault at their canonical addresses, once; only
/// the program's upgrade authority (the deployer, who pays) may, and it names the authority.
/// @instruction initialize_config
/// @accounts deployer:mut,signer authority config:mut vault:mut mint treasury program_data token_program system_program
#[repr(C)]
pub struct InitializeConfigArgs {
    pub fee_bps: PodU16,
    pub offers_enabled: u8,
    pub limits: Limits,
}

/// Changes fee, switch and limits; offers keep the fee they were created with.
/// @instruction update_config
/// @accounts authority:signer config:mut
#[repr(C)]
pub struct UpdateConfigArgs {
    pub fee_bps: PodU16,
    pub offers_enabled: u8,
    pub limits: Limits,
}

/// Names a new fee treasury (service authority only): a token account of the config's mint,
/// not the vault. A treasury that can no longer receive (closed by its owner, or frozen by the
/// mint's freeze authority) makes every settlement that owes a fee fail; this is the way out.
/// @instruction set_treasury
/// @accounts authority:signer config:mut treasury
#[repr(C)]
pub struct SetTreasuryArgs {}

/// Publishes a contract (service authority only) at its canonical PDA.
/// @instruction create_contract
/// @accounts authority:signer payer:mut,signer config contract:mut system_program
/// @pda contract: "contract" args.template_id args.event_id
#[repr(C)]
pub struct CreateContractArgs {
    pub template_id: [u8; 16],
    pub event_id: [u8; 16],
    pub cutoff_at: PodI64,
    pub resolution_deadline: PodI64,
    pub bump: u8,
}

/// Resolves a contract: 1 sideA wins, 2 sideB wins, 3 void (service authority only).
/// @instruction resolve_contract
/// @accounts authority:signer config contract:mut
#[repr(C)]
pub struct ResolveContractArgs {
    pub result: u8,
}

/// Voids a contract left unresolved past its resolution deadline (anyone).
/// @instruction void_expired_contract
/// @accounts contract:mut
#[repr(C)]
pub struct VoidExpiredContractArgs {}

/// Posts an offer and locks the creator's stake in the vault. The offer's PDA is
/// `["offer", contract, creator, nonce]` with the canonical `bump`. `expires_at` (unix seconds)
/// is 0 for none, else after now and no later than the contract's cutoff: from that second the
/// offer takes no takes and anyone may close it.
/// @instruction create_offer
/// @accounts payer:mut,signer creator:signer creator_token:mut config contract offer:mut vault:mut token_program system_program
/// @pda offer: "offer" contract creator args.nonce
#[repr(C)]
pub struct CreateOfferArgs {
    pub nonce: PodU64,
    pub bump: u8,
    pub side: u8,
    pub creator_total: PodU64,
    pub taker_target: PodU64,
    pub minimum_take: PodU64,
    pub expected_fee_bps: PodU16,
    pub expires_at: PodI64,
}

/// Takes part or all of an offer (Open and not expired); creates (canonical PDA) or increases the
/// taker's open position.
/// @instruction take_offer
/// @accounts payer:mut,signer taker:signer taker_token:mut config contract offer:mut position:mut vault:mut token_program system_program
/// @pda position: "position" offer taker
#[repr(C)]
pub struct TakeOfferArgs {
    pub amount: PodU64,
    pub expected_revision: PodU64,
    pub position_bump: u8,
}

/// Sweeps offers of one contract for the taker, in the order given, up to `amount` (taker
/// micro-units) and no worse than the taker odds `worst_odds_numerator : worst_odds_denominator`
/// (an offer's taker odds are `(taker_target + creator_total) : taker_target`). `side` is the
/// outcome the taker backs (1 sideA, 2 sideB): offers whose creator backs it are passed over.
/// `mode` 0 fill-and-kill takes what qualifies and leaves the rest; 1 fill-or-kill fails unless
/// the whole amount is taken. Each offer is taken by take_offer's rules; one that no longer
/// qualifies (an expired offer among them) or has less left is passed over or taken in part. The remaining accounts are up to
/// 16 (offer mut, position mut) pairs, the position being `["position", offer, taker]`;
/// `position_bumps[i]` is the canonical bump of pair i's position, used only when it is created.
/// One OfferTaken per offer taken; nothing taken fails.
/// @instruction take_best
/// @accounts payer:mut,signer taker:signer taker_token:mut config contract vault:mut token_program system_program
#[repr(C)]
pub struct TakeBestArgs {
    pub side: u8,
    pub amount: PodU64,
    pub worst_odds_numerator: PodU64,
    pub worst_odds_denominator: PodU64,
    pub mode: u8,
    pub position_bumps: [u8; 16],
}

/// Withdraws the unmatched creator stake: the creator any time; anyone once the offer has expired
/// or the contract takes no more offers (its cutoff passed, or it is resolved or voided). When the creator's recorded
/// token account cannot receive, the refund is credited to the creator's Claim (`["claim",
/// creator]`, canonical `creator_claim_bump`, created on demand, rent paid by `payer`).
/// @instruction close_offer
/// @accounts caller:signer config contract offer:mut vault:mut creator_token:mut token_program payer:mut,signer creator_claim:mut system_program
/// @pda creator_claim: "claim" offer.creator
#[repr(C)]
pub struct CloseOfferArgs {
    pub expected_revision: PodU64,
    pub creator_claim_bump: u8,
}

/// Pays out one position of a resolved or voided contract (anyone). A side whose recorded token
/// account cannot receive is credited to its Claim instead (as in close_offer); the other side is
/// paid normally.
/// @instruction settle_position
/// @accounts config contract offer:mut position:mut vault:mut creator_token:mut taker_token:mut treasury:mut token_program payer:mut,signer creator_claim:mut taker_claim:mut system_program
/// @pda creator_claim: "claim" offer.creator
/// @pda taker_claim: "claim" position.taker
#[repr(C)]
pub struct SettlePositionArgs {
    pub creator_claim_bump: u8,
    pub taker_claim_bump: u8,
}

/// Closes a settled position and returns its rent to whoever paid it.
/// @instruction close_position
/// @accounts position:mut rent_payer:mut
#[repr(C)]
pub struct ClosePositionArgs {}

/// Closes a finished offer (settled, or closed with every position settled) of a resolved or
/// voided contract and returns its rent. The contract joins the offer's seeds and never takes
/// offers again, so the closed offer's address can never be created again.
/// @instruction close_offer_account
/// @accounts offer:mut rent_payer:mut contract
#[repr(C)]
pub struct CloseOfferAccountArgs {}

/// Pays the whole of the owner's claim to a token account of the service's mint that the owner
/// holds, and closes the claim (its rent goes back to whoever paid it, or to the owner when that
/// account can no longer take it).
/// @instruction withdraw_claim
/// @accounts owner:mut,signer config claim:mut vault:mut destination:mut rent_payer:mut token_program
/// @pda claim: "claim" owner
#[repr(C)]
pub struct WithdrawClaimArgs {}

kit::pod!(
    InitializeConfigArgs,
    UpdateConfigArgs,
    SetTreasuryArgs,
    CreateContractArgs,
    ResolveContractArgs,
    VoidExpiredContractArgs,
    CreateOfferArgs,
    TakeOfferArgs,
    TakeBestArgs,
    CloseOfferArgs,
    SettlePositionArgs,
    ClosePositionArgs,
    CloseOfferAccountArgs,
    WithdrawClaimArgs,
);

// Five register arguments with the returned Result's pointer: inlined into the entrypoint, since
// upstream BPF has no stack arguments.
#[inline(always)]
pub fn dispatch(program_id: &Address, accounts: &[AccountView], data: &[u8]) -> ProgramResult {
    kit::dispatch!(program_id, accounts, data, {
        disc::IX_CREATE_OFFER => create_offer::process,
        disc::IX_TAKE_OFFER => take_offer::process,
        disc::IX_TAKE_BEST => take_best::process,
        disc::IX_CLOSE_OFFER => close_offer::process,
        disc::IX_SETTLE_POSITION => settle_position::process,
        disc::IX_CLOSE_POSITION => reclaim::close_position,
        disc::IX_CLOSE_OFFER_ACCOUNT => reclaim::close_offer_account,
        disc::IX_WITHDRAW_CLAIM => claim::withdraw,
        disc::IX_CREATE_CONTRACT => contract::create,
        disc::IX_RESOLVE_CONTRACT => contract::resolve,
        disc::IX_VOID_EXPIRED_CONTRACT => contract::void_expired,
        disc::IX_INITIALIZE_CONFIG => config::initialize,
        disc::IX_UPDATE_CONFIG => config::update,
        disc::IX_SET_TREASURY => config::set_treasury,
    })
}

/// An account to create at its canonical PDA (one argument: upstream BPF has no stack arguments).
pub(crate) struct NewPda<'a> {
    pub payer: &'a AccountView,
    pub account: &'a AccountView,
    pub space: usize,
    pub program_id: &'a Address,
    /// Seeds without the bump.
    pub seeds: &'a [&'a [u8]],
    pub bump: u8,
}

/// `kit::cpi::create_canonical` (refuses an existing account and a non-canonical bump, survives
/// pre-funding), kept out of line: one copy for the four kinds of PDA this program creates.
#[inline(never)]
pub(crate) fn create_canonical(n: &NewPda) -> ProgramResult {
    kit::cpi::create_canonical(n.payer, n.account, n.space, n.program_id, n.seeds, n.bump)
}
