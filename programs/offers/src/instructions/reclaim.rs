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
    let [offer, rent_payer, contract, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    let o = acc::load_mut::<Offer>(offer, program_id)?;
    acc::same(rent_payer, &o.rent_payer)?;
    acc::same(contract, &o.contract)?;
    let k = acc::load::<Contract>(contract, program_id)?;
    let finished = o.status == OFFER_SETTLED || (o.status == OFFER_CLOSED && o.settled_position_count.get() == o.position_count.get());
    if !finished {
        return Err(OfferError::OfferNotFinished.into());
    }
    // No revival: the contract is in the offer's seeds and, once resolved or voided, never takes
    // offers again, so this address can never be created again.
    if k.status == CONTRACT_OPEN {
        return Err(OfferError::ContractNotResolved.into());
    }
    acc::close(offer, rent_payer)
}
