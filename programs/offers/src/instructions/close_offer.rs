use super::{
    claim::{pay, Payee, Rent, Vault},
    CloseOfferArgs,
};
use crate::{addresses::CANONICAL, discriminators as disc, error::OfferError, events::OfferClosed, state::*};
use kit::{
    accounts::{self as acc, KitError},
    cpi,
    pod::*,
    time, AccountView, Address, ProgramResult,
};

pub fn process(program_id: &Address, accounts: &[AccountView], args: &CloseOfferArgs) -> ProgramResult {
    let [caller, config, contract, offer, vault, creator_token, token_program, payer, creator_claim, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(caller)?;
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::same(config, &CANONICAL.config)?;
    let cfg = acc::load::<Config>(config, program_id)?;
    acc::same(vault, &cfg.vault)?;
    let o = acc::load_mut::<Offer>(offer, program_id)?;
    acc::same(contract, &o.contract)?;
    acc::same(creator_token, &o.creator_token)?;
    let k = acc::load::<Contract>(contract, program_id)?;

    if o.status != OFFER_OPEN {
        return Err(OfferError::OfferNotOpen.into());
    }
    if args.expected_revision.get() != o.revision.get() {
        return Err(OfferError::RevisionMismatch.into());
    }
    let now = time::now();
    // The creator may withdraw at any time; anyone once the offer has expired or the contract no
    // longer takes offers.
    if !o.expired(now) && k.accepts_offers(now).is_ok() && caller.address() != &o.creator {
        return Err(OfferError::CloseNotAllowed.into());
    }
    let refund = o.creator_total.get() - o.creator_allocated.get();
    let (v, r) = (Vault { config, cfg, vault }, Rent { program_id, payer, system_program, now });
    pay(&v, &r, &Payee { token: creator_token, owner: &o.creator, claim: creator_claim, claim_bump: args.creator_claim_bump }, refund)?;

    o.creator_refunded.set(refund);
    o.status = OFFER_CLOSED;
    o.closed_at = PodI64::new(now);
    o.revision.set(o.revision.get() + 1);
    let event =
        OfferClosed { offer: *offer.address(), closed_by: *caller.address(), refund: PodU64::new(refund), revision: o.revision, timestamp: PodI64::new(now) };
    kit::log::emit(&disc::EVENT_OFFER_CLOSED, bytes_of(&event));
    Ok(())
}
