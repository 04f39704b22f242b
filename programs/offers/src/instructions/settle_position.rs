use super::{
    claim::{pay, Payee, Rent, Vault},
    SettlePositionArgs,
};
use crate::{addresses::CANONICAL, discriminators as disc, error::OfferError, events::PositionSettled, math::payouts, state::*};
use kit::{
    accounts::{self as acc, KitError},
    cpi,
    pod::*,
    time, AccountView, Address, ProgramResult,
};

pub fn process(program_id: &Address, accounts: &[AccountView], args: &SettlePositionArgs) -> ProgramResult {
    let [config, contract, offer, position, vault, creator_token, taker_token, treasury, token_program, payer, creator_claim, taker_claim, system_program, ..] =
        accounts
    else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::same(config, &CANONICAL.config)?;
    let cfg = acc::load::<Config>(config, program_id)?;
    acc::same(vault, &cfg.vault)?;
    acc::same(treasury, &cfg.treasury)?;
    let o = acc::load_mut::<Offer>(offer, program_id)?;
    acc::same(contract, &o.contract)?;
    acc::same(creator_token, &o.creator_token)?;
    let p = acc::load_mut::<Position>(position, program_id)?;
    acc::same(offer, &p.offer)?;
    acc::same(taker_token, &p.taker_token)?;
    let k = acc::load::<Contract>(contract, program_id)?;

    if k.status == CONTRACT_OPEN {
        return Err(OfferError::ContractNotResolved.into());
    }
    if o.status == OFFER_OPEN {
        return Err(OfferError::OfferStillOpen.into());
    }
    if p.status != POSITION_OPEN {
        return Err(OfferError::PositionAlreadySettled.into());
    }
    let creator_wins = if k.result == RESULT_VOID { None } else { Some(k.result == o.side) };
    let [to_creator, to_taker, fee] = payouts(creator_wins, o.fee_bps.get(), p.creator_matched.get(), p.taker_amount.get());
    let now = time::now();
    let (v, r) = (Vault { config, cfg, vault }, Rent { program_id, payer, system_program, now });
    pay(&v, &r, &Payee { token: creator_token, owner: &o.creator, claim: creator_claim, claim_bump: args.creator_claim_bump }, to_creator)?;
    pay(&v, &r, &Payee { token: taker_token, owner: &p.taker, claim: taker_claim, claim_bump: args.taker_claim_bump }, to_taker)?;
    // The treasury is the service's own account, named by the authority: paid directly.
    if fee > 0 {
        kit::setup::send(&v, treasury, fee)?;
    }

    p.status = match creator_wins {
        None => POSITION_REFUNDED,
        Some(true) => POSITION_SETTLED_CREATOR_WIN,
        Some(false) => POSITION_SETTLED_TAKER_WIN,
    };
    p.creator_payout.set(to_creator);
    p.taker_payout.set(to_taker);
    p.fee.set(fee);
    p.settled_at = PodI64::new(now);
    let settled = o.settled_position_count.get() + 1;
    o.settled_position_count.set(settled);
    if settled == o.position_count.get() {
        o.status = OFFER_SETTLED;
    }
    let event = PositionSettled {
        offer: *offer.address(),
        position: *position.address(),
        status: p.status,
        creator_payout: p.creator_payout,
        taker_payout: p.taker_payout,
        fee: p.fee,
        timestamp: PodI64::new(now),
    };
    kit::log::emit(&disc::EVENT_POSITION_SETTLED, bytes_of(&event));
    Ok(())
}
