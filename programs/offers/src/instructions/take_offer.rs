use super::{create_canonical, NewPda, TakeOfferArgs};
use crate::addresses::CANONICAL;
use crate::{discriminators as disc, error::OfferError, events::OfferTaken, math::matched_for_take, state::*};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    cpi, log,
    pod::*,
    time, AccountView, Address, ProgramError, ProgramResult,
};

pub fn process(program_id: &Address, accounts: &[AccountView], args: &TakeOfferArgs) -> ProgramResult {
    let [payer, taker, taker_token, config, contract, offer, position, vault, token_program, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    let cfg = Fixed { payer, taker, config, vault, token_program, system_program }.check(program_id)?;
    let o = acc::load_mut::<Offer>(offer, program_id)?;
    acc::same(contract, &o.contract)?;
    let k = acc::load::<Contract>(contract, program_id)?;
    let now = time::now();
    open_for_takes(cfg, k, now)?;
    let t = Taker { program_id, payer, taker, taker_token, cfg, now };

    o.accepts_takes(now)?;
    if taker.address() == &o.creator {
        return Err(OfferError::SelfTake.into());
    }
    if args.expected_revision.get() != o.revision.get() {
        return Err(OfferError::RevisionMismatch.into());
    }
    let amount = args.amount.get();
    let (target, filled) = (o.taker_target.get(), o.taker_filled.get());
    let remaining = target - filled;
    if amount == 0 {
        return Err(OfferError::ZeroAmount.into());
    }
    if amount > remaining {
        return Err(OfferError::AmountExceedsRemaining.into());
    }
    if amount < o.minimum_take.get() && amount != remaining {
        return Err(OfferError::TakeBelowMinimum.into());
    }
    let matched = matched_for_take(amount, o.creator_total.get(), target, filled, o.creator_allocated.get());
    if matched == 0 {
        return Err(OfferError::TakeTooSmallToMatch.into());
    }

    let p = match existing_position(&t, offer, position)? {
        Some(p) => p,
        None => new_position(&t, offer, position, args.position_bump, o)?,
    };
    let new_total = p.taker_amount.get().checked_add(amount).ok_or(KitError::ArithmeticOverflow)?;
    if new_total > cfg.limits.maximum_wager_micros.get() {
        return Err(OfferError::PositionAboveMaximum.into());
    }
    pay_in(&t, vault, amount)?;
    record_take(&t, Fill { offer, position, o, p, amount, matched });
    Ok(())
}

// ---- the parts take_offer and take_best share (take_best.rs) ---------------------------

/// The fixed accounts of a take, pinned: both signers, the token and system programs, the one
/// canonical Config and its vault.
pub(super) struct Fixed<'a> {
    pub payer: &'a AccountView,
    pub taker: &'a AccountView,
    pub config: &'a AccountView,
    pub vault: &'a AccountView,
    pub token_program: &'a AccountView,
    pub system_program: &'a AccountView,
}

impl<'a> Fixed<'a> {
    #[inline(always)]
    pub fn check(&self, program_id: &Address) -> Result<&'a Config, ProgramError> {
        acc::signer(self.payer)?;
        acc::signer(self.taker)?;
        acc::program(self.token_program, &cpi::TOKEN_PROGRAM_ID)?;
        acc::program(self.system_program, &cpi::SYSTEM_PROGRAM_ID)?;
        acc::same(self.config, &CANONICAL.config)?;
        let cfg = acc::load::<Config>(self.config, program_id)?;
        acc::same(self.vault, &cfg.vault)?;
        Ok(cfg)
    }
}

/// Offers switched on, the contract Open and before its cutoff.
#[inline(always)]
pub(super) fn open_for_takes(cfg: &Config, k: &Contract, now: i64) -> ProgramResult {
    if cfg.offers_enabled == 0 {
        return Err(OfferError::OffersDisabled.into());
    }
    k.accepts_offers(now)?;
    Ok(())
}

/// Who takes, with what, and when.
pub(super) struct Taker<'a> {
    pub program_id: &'a Address,
    pub payer: &'a AccountView,
    pub taker: &'a AccountView,
    pub taker_token: &'a AccountView,
    pub cfg: &'a Config,
    pub now: i64,
}

/// The taker's open position on `offer` when the account already exists (it must be the
/// program's Position of this offer and taker, still Open); None when it is yet to be created.
#[inline(always)]
pub(super) fn existing_position<'a>(t: &Taker, offer: &AccountView, position: &'a AccountView) -> Result<Option<&'a mut Position>, ProgramError> {
    if !position.owned_by(t.program_id) {
        return Ok(None);
    }
    let p = acc::load_mut::<Position>(position, t.program_id)?;
    if p.offer != *offer.address() || p.taker != *t.taker.address() {
        return Err(KitError::AccountMismatch.into());
    }
    if p.status != POSITION_OPEN {
        return Err(OfferError::PositionAlreadySettled.into());
    }
    Ok(Some(p))
}

/// The taker's position created on the first take at its canonical PDA (one per offer and
/// taker, so the per-taker cap holds).
#[inline(always)]
pub(super) fn new_position<'a>(t: &Taker, offer: &AccountView, position: &'a AccountView, bump: u8, o: &mut Offer) -> Result<&'a mut Position, ProgramError> {
    let seeds: [&[u8]; 3] = [b"position", offer.address().as_ref(), t.taker.address().as_ref()];
    create_canonical(&NewPda { payer: t.payer, account: position, space: Position::SIZE, program_id: t.program_id, seeds: &seeds, bump })?;
    let p = acc::init::<Position>(position)?;
    p.offer = *offer.address();
    p.taker = *t.taker.address();
    p.taker_token = *t.taker_token.address();
    p.rent_payer = *t.payer.address();
    p.bump = bump;
    p.created_at = PodI64::new(t.now);
    o.position_count.set(o.position_count.get() + 1);
    Ok(p)
}

/// Moves `amount` from the taker's token account (of the Config's mint, owned by the taker,
/// holding enough) into the vault. Later takes may pay from another token account of the
/// taker; payouts go to the one recorded in the position.
#[inline(always)]
pub(super) fn pay_in(t: &Taker, vault: &AccountView, amount: u64) -> ProgramResult {
    let (mint, owner, balance) = acc::token_account(t.taker_token, &cpi::TOKEN_PROGRAM_ID)?;
    if mint != &t.cfg.mint {
        return Err(OfferError::WrongMint.into());
    }
    if owner != t.taker.address() {
        return Err(OfferError::NotTokenOwner.into());
    }
    if balance < amount {
        log::msg("insufficient balance: needed, available");
        log::msg_u64(amount, balance, 0, 0, 0);
        return Err(OfferError::InsufficientBalance.into());
    }
    super::claim::deposit(t.taker_token, vault, t.taker, amount)
}

/// One take of an offer, checked: its accounts, the amount and the creator stake matched.
pub(super) struct Fill<'a, 'b> {
    pub offer: &'a AccountView,
    pub position: &'a AccountView,
    pub o: &'b mut Offer,
    pub p: &'b mut Position,
    pub amount: u64,
    pub matched: u64,
}

/// Books a take on the position and the offer (a new revision; Filled once nothing is left)
/// and emits its OfferTaken, from which the indexer derives fills and positions.
#[inline(always)]
pub(super) fn record_take(t: &Taker, f: Fill) {
    let (o, p, amount, matched) = (f.o, f.p, f.amount, f.matched);
    p.taker_amount.set(p.taker_amount.get() + amount);
    p.creator_matched.set(p.creator_matched.get() + matched);
    p.fill_count.set(p.fill_count.get() + 1);
    let filled = o.taker_filled.get() + amount;
    o.taker_filled.set(filled);
    o.creator_allocated.set(o.creator_allocated.get() + matched);
    o.fill_count.set(o.fill_count.get() + 1);
    o.revision.set(o.revision.get() + 1);
    if filled == o.taker_target.get() {
        o.status = OFFER_FILLED;
    }
    let event = OfferTaken {
        offer: *f.offer.address(),
        taker: *t.taker.address(),
        position: *f.position.address(),
        take_amount: PodU64::new(amount),
        creator_matched: PodU64::new(matched),
        taker_filled: o.taker_filled,
        creator_allocated: o.creator_allocated,
        revision: o.revision,
        timestamp: PodI64::new(t.now),
    };
    kit::log::emit(&disc::EVENT_OFFER_TAKEN, bytes_of(&event));
}
