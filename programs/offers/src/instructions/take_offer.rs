use super::{create_canonical, NewPda, TakeOfferArgs};
use crate::addresses::CANONICAL;
use crate::{discriminators as disc, error::OfferError, events::OfferTaken, math::matched_for_take, state::*};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    cpi, log,
    pod::*,
    time, AccountView, Address, ProgramResult,
};

pub fn process(program_id: &Address, accounts: &[AccountView], args: &TakeOfferArgs) -> ProgramResult {
    let [payer, taker, taker_token, config, contract, offer, position, vault, token_program, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(payer)?;
    acc::signer(taker)?;
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::program(system_program, &cpi::SYSTEM_PROGRAM_ID)?;
    acc::same(config, &CANONICAL.config)?;
    let cfg = acc::load::<Config>(config, program_id)?;
    acc::same(vault, &cfg.vault)?;
    let o = acc::load_mut::<Offer>(offer, program_id)?;
    acc::same(contract, &o.contract)?;
    let k = acc::load::<Contract>(contract, program_id)?;

    if cfg.offers_enabled == 0 {
        return Err(OfferError::OffersDisabled.into());
    }
    let now = time::now();
    k.accepts_offers(now)?;
    if o.status != OFFER_OPEN {
        return Err(OfferError::OfferNotOpen.into());
    }
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

    // The taker's position: created on the first take at its canonical PDA (one per offer and
    // taker, so the per-taker cap holds), increased on later ones while it is open.
    let p = if position.owned_by(program_id) {
        let p = acc::load_mut::<Position>(position, program_id)?;
        if p.offer != *offer.address() || p.taker != *taker.address() {
            return Err(KitError::AccountMismatch.into());
        }
        if p.status != POSITION_OPEN {
            return Err(OfferError::PositionAlreadySettled.into());
        }
        p
    } else {
        let seeds: [&[u8]; 3] = [b"position", offer.address().as_ref(), taker.address().as_ref()];
        create_canonical(&NewPda { payer, account: position, space: Position::SIZE, program_id, seeds: &seeds, bump: args.position_bump })?;
        let p = acc::init::<Position>(position)?;
        p.offer = *offer.address();
        p.taker = *taker.address();
        p.taker_token = *taker_token.address();
        p.rent_payer = *payer.address();
        p.bump = args.position_bump;
        p.created_at = PodI64::new(now);
        o.position_count.set(o.position_count.get() + 1);
        p
    };
    let new_total = p.taker_amount.get().checked_add(amount).ok_or(KitError::ArithmeticOverflow)?;
    if new_total > cfg.limits.maximum_wager_micros.get() {
        return Err(OfferError::PositionAboveMaximum.into());
    }
    let (mint, owner, balance) = acc::token_account(taker_token, &cpi::TOKEN_PROGRAM_ID)?;
    if mint != &cfg.mint {
        return Err(OfferError::WrongMint.into());
    }
    if owner != taker.address() {
        return Err(OfferError::NotTokenOwner.into());
    }
    if balance < amount {
        log::msg("insufficient balance: needed, available");
        log::msg_u64(amount, balance, 0, 0, 0);
        return Err(OfferError::InsufficientBalance.into());
    }
    // Later takes may pay from another token account of the taker; payouts go to the first one.
    super::claim::deposit(taker_token, vault, taker, amount)?;

    p.taker_amount.set(new_total);
    p.creator_matched.set(p.creator_matched.get() + matched);
    p.fill_count.set(p.fill_count.get() + 1);
    o.taker_filled.set(filled + amount);
    o.creator_allocated.set(o.creator_allocated.get() + matched);
    o.fill_count.set(o.fill_count.get() + 1);
    o.revision.set(o.revision.get() + 1);
    if filled + amount == target {
        o.status = OFFER_FILLED;
    }
    let event = OfferTaken {
        offer: *offer.address(),
        taker: *taker.address(),
        position: *position.address(),
        take_amount: args.amount,
        creator_matched: PodU64::new(matched),
        taker_filled: o.taker_filled,
        creator_allocated: o.creator_allocated,
        revision: o.revision,
        timestamp: PodI64::new(now),
    };
    kit::log::emit(&disc::EVENT_OFFER_TAKEN, bytes_of(&event));
    Ok(())
}
