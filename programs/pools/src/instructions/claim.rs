//! Claimable balances: what the vault owes a user whose token account could not receive a payout
//! or refund. One Claim per owner (PDA ["claim", owner]), whatever the pool; the tokens stay in
//! the vault until the owner withdraws them.

use super::{payout::pay, WithdrawClaimArgs};
use crate::{
    discriminators as disc,
    error::PoolError,
    events::{ClaimCredited, ClaimWithdrawn},
    state::*,
};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    cpi, log, pod::*, time, AccountView, Address, ProgramResult,
};

/// A credit to one owner's Claim (one argument: upstream BPF has no stack arguments).
pub(crate) struct Credit<'a> {
    pub program_id: &'a Address,
    pub payer: &'a AccountView,
    pub claim: &'a AccountView,
    pub owner: &'a Address,
    pub bump: u8,
    pub amount: u64,
    pub now: i64,
}

/// Adds `amount` to the owner's Claim, creating it at its canonical address when it does not
/// exist (rent from `payer`, recorded as the claim's `rent_payer`).
#[inline(always)]
pub(crate) fn credit(c: &Credit) -> ProgramResult {
    let claim = if c.claim.owned_by(c.program_id) {
        let claim = acc::load_mut::<Claim>(c.claim, c.program_id)?;
        if claim.owner != *c.owner {
            return Err(KitError::AccountMismatch.into());
        }
        claim
    } else {
        cpi::create_canonical(c.payer, c.claim, Claim::SIZE, c.program_id, &[b"claim", c.owner.as_ref()], c.bump)?;
        let claim = acc::init::<Claim>(c.claim)?;
        claim.owner = *c.owner;
        claim.rent_payer = *c.payer.address();
        claim.bump = c.bump;
        claim
    };
    let total = claim.amount.get().checked_add(c.amount).ok_or(KitError::ArithmeticOverflow)?;
    claim.amount.set(total);
    let ev = ClaimCredited { owner: *c.owner, amount: PodU64::new(c.amount), total: PodU64::new(total), timestamp: PodI64::new(c.now) };
    log::emit(&disc::EVENT_CLAIM_CREDITED, bytes_of(&ev));
    Ok(())
}

pub fn withdraw(program_id: &Address, accounts: &[AccountView], _args: &WithdrawClaimArgs) -> ProgramResult {
    let [owner, config, claim, vault, destination, rent_payer, token_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(owner)?;
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    let cfg = super::config(config, program_id)?;
    acc::same(vault, &cfg.vault)?;
    let c = acc::load_mut::<Claim>(claim, program_id)?;
    acc::same(owner, &c.owner)?;
    acc::same(rent_payer, &c.rent_payer)?;
    let (mint, token_owner, _) = acc::token_account(destination, &cpi::TOKEN_PROGRAM_ID)?;
    if mint != &cfg.mint {
        return Err(PoolError::WrongMint.into());
    }
    if token_owner != owner.address() {
        return Err(PoolError::NotTokenOwner.into());
    }
    let amount = c.amount.get();
    let ev = ClaimWithdrawn { owner: c.owner, amount: c.amount, timestamp: PodI64::new(time::now()) };
    pay(vault, destination, config, amount)?;
    // Closed: zeroed, lamports to whoever paid the rent. A later credit creates it afresh.
    // The rent goes back to whoever paid it, unless that account can no longer take it: then
    // to the owner, so that no rent payer can hold a withdrawal hostage.
    acc::close_or_fallback(claim, rent_payer, owner)?;
    log::emit(&disc::EVENT_CLAIM_WITHDRAWN, bytes_of(&ev));
    Ok(())
}
