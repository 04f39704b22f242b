//! Token movements in and out of the vault: payouts that never depend on an account the payee
//! controls (#15.1), the claimable balances they fall back to, and the deposits of stakes.
//!
//! A payee records its token account when it creates an offer or takes one, and can later close
//! it or hand it to another owner (and a mint's freeze authority can freeze it). A transfer to
//! such an account would fail, or pay someone else, and a failure would block the whole
//! instruction, and with it the other side's payout. So every payout first checks
//! `kit::accounts::can_receive`; when that fails the amount stays in the vault and is credited to
//! the payee's Claim (`["claim", owner]`), which only the owner can withdraw, to any token
//! account it holds.

use super::{create_canonical, NewPda, WithdrawClaimArgs};
use crate::{
    addresses::CANONICAL,
    config_signer, discriminators as disc,
    error::OfferError,
    events::{ClaimCredited, ClaimWithdrawn},
    state::{Claim, Config},
};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    cpi, pod::*, time, AccountView, Address, ProgramResult,
};

/// The vault, and the config PDA that signs for it (one argument: upstream BPF has no stack
/// arguments).
pub(crate) struct Vault<'a> {
    pub config: &'a AccountView,
    pub cfg: &'a Config,
    pub vault: &'a AccountView,
}

/// Moves `amount` out of the vault to `to`, signed by the config PDA. Out of line: one copy of
/// the token CPI for every payout.
#[inline(never)]
pub(crate) fn send(v: &Vault, to: &AccountView, amount: u64) -> ProgramResult {
    cpi::transfer(v.vault, to, v.config, amount, &config_signer!(&v.cfg.bump))
}

/// Moves `amount` from a user's token account into the vault, signed by the user (`authority`).
/// Inlined (out of line it would save 760 bytes of code and cost 9 CU per create and take).
#[inline(always)]
pub(crate) fn deposit(from: &AccountView, vault: &AccountView, authority: &AccountView, amount: u64) -> ProgramResult {
    cpi::transfer(from, vault, authority, amount, &[])
}

/// What creating a claim on demand needs.
pub(crate) struct Rent<'a> {
    pub program_id: &'a Address,
    /// Pays the rent of a claim created on demand; recorded as its `rent_payer`.
    pub payer: &'a AccountView,
    pub system_program: &'a AccountView,
    pub now: i64,
}

/// Who is paid: the recorded token account, its expected owner, and the owner's claim account
/// (with its canonical bump, used only when the claim is created).
pub(crate) struct Payee<'a> {
    pub token: &'a AccountView,
    pub owner: &'a Address,
    pub claim: &'a AccountView,
    pub claim_bump: u8,
}

/// Pays `amount` from the vault to the payee's recorded token account, or credits the payee's
/// claim when that account cannot receive (closed, frozen, another mint or owner).
#[inline(never)]
pub(crate) fn pay(v: &Vault, r: &Rent, to: &Payee, amount: u64) -> ProgramResult {
    if amount == 0 {
        return Ok(());
    }
    if acc::can_receive(to.token, &v.cfg.mint, to.owner) {
        return send(v, to.token, amount);
    }
    credit(r, to, amount)
}

/// The rare path of [`pay`]: the tokens stay in the vault, owed to the payee's claim.
#[inline(never)]
fn credit(r: &Rent, to: &Payee, amount: u64) -> ProgramResult {
    // Clients that do not know the payee pass the program id in its place (Anchor's "no account").
    if to.claim.address() == r.program_id {
        return Err(OfferError::ClaimAccountMissing.into());
    }
    let c = if to.claim.owned_by(r.program_id) {
        // Claims exist only at their canonical PDA (created below), one per owner.
        let c = acc::load_mut::<Claim>(to.claim, r.program_id)?;
        if &c.owner != to.owner {
            return Err(KitError::AccountMismatch.into());
        }
        c
    } else {
        acc::signer(r.payer)?;
        acc::writable(to.claim)?;
        acc::program(r.system_program, &cpi::SYSTEM_PROGRAM_ID)?;
        let seeds: [&[u8]; 2] = [b"claim", to.owner.as_ref()];
        create_canonical(&NewPda { payer: r.payer, account: to.claim, space: Claim::SIZE, program_id: r.program_id, seeds: &seeds, bump: to.claim_bump })?;
        let c = acc::init::<Claim>(to.claim)?;
        c.owner = *to.owner;
        c.rent_payer = *r.payer.address();
        c.bump = to.claim_bump;
        c
    };
    let total = c.amount.get().checked_add(amount).ok_or(KitError::ArithmeticOverflow)?;
    c.amount.set(total);
    let event = ClaimCredited { owner: *to.owner, amount: PodU64::new(amount), total: c.amount, timestamp: PodI64::new(r.now) };
    kit::log::emit(&disc::EVENT_CLAIM_CREDITED, bytes_of(&event));
    Ok(())
}

pub fn withdraw(program_id: &Address, accounts: &[AccountView], _args: &WithdrawClaimArgs) -> ProgramResult {
    let [owner, config, claim, vault, destination, rent_payer, token_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(owner)?;
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::same(config, &CANONICAL.config)?;
    let cfg = acc::load::<Config>(config, program_id)?;
    acc::same(vault, &cfg.vault)?;
    let c = acc::load_mut::<Claim>(claim, program_id)?;
    if &c.owner != owner.address() {
        return Err(KitError::AccountMismatch.into());
    }
    acc::same(rent_payer, &c.rent_payer)?;
    let (mint, holder, _) = acc::token_account(destination, &cpi::TOKEN_PROGRAM_ID)?;
    if mint != &cfg.mint {
        return Err(OfferError::WrongMint.into());
    }
    if holder != owner.address() {
        return Err(OfferError::NotTokenOwner.into());
    }
    let amount = c.amount.get();
    send(&Vault { config, cfg, vault }, destination, amount)?;
    let event = ClaimWithdrawn { owner: *owner.address(), amount: c.amount, timestamp: PodI64::new(time::now()) };
    // The rent goes back to whoever paid it, unless that account can no longer take it: then
    // to the owner, so that no rent payer can hold a withdrawal hostage.
    acc::close_or_fallback(claim, rent_payer, owner)?;
    kit::log::emit(&disc::EVENT_CLAIM_WITHDRAWN, bytes_of(&event));
    Ok(())
}
