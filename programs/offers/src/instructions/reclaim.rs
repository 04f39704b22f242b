//! Rent reclaim: finished accounts are closed and their lamports go back to whoever paid them.

use super::{CloseOfferAccountArgs, ClosePositionArgs};
use crate::{error::OfferError, state::*};
use kit::{
    accounts::{self as acc, KitError},
    AccountView, Address, ProgramResult,
};

pub fn close_position(program_id: &Address, accounts: &[AccountView], _args: &ClosePositionArgs) -> ProgramResult {
    let [position, rent_payer, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    let p = acc::load_mut::<Position>(position, program_id)?;
    acc::same(rent_payer, &p.rent_payer)?;
    if p.status == POSITION_OPEN {
        return Err(OfferError::PositionNotSettled.into());
    }
    acc::close(position, rent_payer)
}

pub fn close_offer_account(program_id: &Address, accounts: &[AccountView], _args: &CloseOfferAccountArgs) -> ProgramResult {
    let [offer, rent_payer, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    let o = acc::load_mut::<Offer>(offer, program_id)?;
    acc::same(rent_payer, &o.rent_payer)?;
    let finished = o.status == OFFER_SETTLED || (o.status == OFFER_CLOSED && o.settled_position_count.get() == o.position_count.get());
    if !finished {
        return Err(OfferError::OfferNotFinished.into());
    }
    acc::close(offer, rent_payer)
}
