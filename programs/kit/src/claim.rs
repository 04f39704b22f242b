//! Claimable balances, the same in every program: what the vault owes a user whose recorded
//! token account could not receive a payout or refund. One Claim per owner (PDA
//! `["claim", owner]`, canonical bump); the tokens stay in the vault until the owner withdraws
//! them to any token account of the mint it holds. `scripts/gen-idl.ts` reads the `@account` and
//! `@event` structs below into each program's IDL, after the program's own.

use crate::{
    accounts::{self as acc, AccountData, KitError},
    cpi, discriminators as disc, log,
    pod::*,
    setup::{self, Canonical, Settings},
    time, AccountView, Address, ProgramError, ProgramResult,
};

/// Tokens owed to a user whose recorded token account could not receive a payout (closed,
/// frozen, re-owned); they stay in the vault until the owner withdraws them. PDA ["claim", owner].
/// @account
#[repr(C)]
pub struct Claim {
    pub owner: Address,
    pub amount: PodU64,
    pub rent_payer: Address,
    pub bump: u8,
}

/// A payout that could not be delivered to the recorded token account, credited to the owner's
/// Claim instead (`total` is the claim's balance after the credit).
/// @event
#[repr(C)]
pub struct ClaimCredited {
    pub owner: Address,
    pub amount: PodU64,
    pub total: PodU64,
    pub timestamp: PodI64,
}

/// A claim paid out to a token account of its owner; the Claim account was closed.
/// @event
#[repr(C)]
pub struct ClaimWithdrawn {
    pub owner: Address,
    pub amount: PodU64,
    pub timestamp: PodI64,
}

crate::account!(Claim = disc::ACCOUNT_CLAIM);
crate::pod!(ClaimCredited, ClaimWithdrawn);

/// The seeds of `owner`'s Claim, without the bump.
#[inline(always)]
pub fn seeds(owner: &Address) -> [&[u8]; 2] {
    [b"claim", owner.as_ref()]
}

/// A credit to one owner's Claim (one argument: upstream BPF has no stack arguments).
pub struct Credit<'a> {
    pub program_id: &'a Address,
    /// Pays the rent of a Claim created here; recorded as its `rent_payer`.
    pub payer: &'a AccountView,
    pub claim: &'a AccountView,
    pub owner: &'a Address,
    /// The Claim's canonical bump, used only when it is created.
    pub bump: u8,
    pub amount: u64,
    pub now: i64,
}

/// Creates `c.claim` at the canonical PDA of `["claim", owner]` (see `kit::cpi::create_canonical`).
#[inline(always)]
pub fn create(c: &Credit) -> ProgramResult {
    cpi::create_canonical(c.payer, c.claim, Claim::SIZE, c.program_id, &seeds(c.owner), c.bump)
}

/// Adds `c.amount` to the owner's Claim and emits `ClaimCredited`. An existing Claim must be the
/// owner's; a missing one is created by `create` (the program's checks, then [`create`] or its
/// own out-of-line copy) and recorded with its rent payer and bump.
#[inline(always)]
pub fn credit<F: FnOnce() -> ProgramResult>(c: &Credit, create: F) -> ProgramResult {
    let claim = if c.claim.owned_by(c.program_id) {
        let claim = acc::load_mut::<Claim>(c.claim, c.program_id)?;
        if &claim.owner != c.owner {
            return Err(KitError::AccountMismatch.into());
        }
        claim
    } else {
        create()?;
        let claim = acc::init::<Claim>(c.claim)?;
        claim.owner = *c.owner;
        claim.rent_payer = *c.payer.address();
        claim.bump = c.bump;
        claim
    };
    let total = claim.amount.get().checked_add(c.amount).ok_or(KitError::ArithmeticOverflow)?;
    claim.amount.set(total);
    let event = ClaimCredited { owner: *c.owner, amount: PodU64::new(c.amount), total: claim.amount, timestamp: PodI64::new(c.now) };
    log::emit(&disc::EVENT_CLAIM_CREDITED, bytes_of(&event));
    Ok(())
}

/// `withdraw_claim` `[owner, config, claim, vault, destination, rent_payer, token_program]`: the
/// owner signs; config is the canonical Config and vault its vault; the claim is the owner's and
/// `rent_payer` the one it records; the destination is an initialised token account of the
/// Config's mint held by the owner (`wrong_mint`, `not_token_owner`: the program's errors). Pays
/// the whole claim and closes it, its rent back to whoever paid it, or to the owner when that
/// account can no longer take it (`close_or_fallback`: no rent payer holds a withdrawal hostage).
#[inline(always)]
pub fn withdraw<T: Settings, E: Into<ProgramError>>(
    program_id: &Address,
    accounts: &[AccountView],
    canonical: &Canonical,
    wrong_mint: E,
    not_token_owner: E,
) -> ProgramResult {
    let [owner, config, claim, vault, destination, rent_payer, token_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(owner)?;
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::same(config, &canonical.config)?;
    let cfg = acc::load::<T>(config, program_id)?;
    acc::same(vault, cfg.vault())?;
    let c = acc::load_mut::<Claim>(claim, program_id)?;
    acc::same(owner, &c.owner)?;
    acc::same(rent_payer, &c.rent_payer)?;
    let (mint, holder, _) = acc::token_account(destination, &cpi::TOKEN_PROGRAM_ID)?;
    if mint != cfg.mint() {
        return Err(wrong_mint.into());
    }
    if holder != owner.address() {
        return Err(not_token_owner.into());
    }
    setup::send(&setup::Vault { config, cfg, vault }, destination, c.amount.get())?;
    let event = ClaimWithdrawn { owner: c.owner, amount: c.amount, timestamp: PodI64::new(time::now()) };
    acc::close_or_fallback(claim, rent_payer, owner)?;
    log::emit(&disc::EVENT_CLAIM_WITHDRAWN, bytes_of(&event));
    Ok(())
}
