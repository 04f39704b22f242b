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
    error::OfferError,
    state::{Claim, Config},
};
use kit::{
    accounts::{self as acc, AccountData},
    claim, cpi, setup, AccountView, Address, ProgramResult,
};

/// The vault, the Config and the Config PDA that signs for it.
pub(crate) type Vault<'a> = setup::Vault<'a, Config>;

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
        return setup::send(v, to.token, amount);
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
    let c = claim::Credit { program_id: r.program_id, payer: r.payer, claim: to.claim, owner: to.owner, bump: to.claim_bump, amount, now: r.now };
    claim::credit(&c, || {
        acc::signer(r.payer)?;
        acc::writable(to.claim)?;
        acc::program(r.system_program, &cpi::SYSTEM_PROGRAM_ID)?;
        create_canonical(&NewPda {
            payer: r.payer,
            account: to.claim,
            space: Claim::SIZE,
            program_id: r.program_id,
            seeds: &claim::seeds(to.owner),
            bump: to.claim_bump,
        })
    })
}

pub fn withdraw(program_id: &Address, accounts: &[AccountView], _args: &WithdrawClaimArgs) -> ProgramResult {
    claim::withdraw::<Config, _>(program_id, accounts, &CANONICAL, OfferError::WrongMint, OfferError::NotTokenOwner)
}
