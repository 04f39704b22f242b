use super::{create_canonical, CreateOfferArgs, NewPda};
use crate::addresses::CANONICAL;
use crate::{error::OfferError, math::ratio_le, state::*};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    cpi, log,
    pod::*,
    time, AccountView, Address, ProgramResult,
};

pub fn process(program_id: &Address, accounts: &[AccountView], args: &CreateOfferArgs) -> ProgramResult {
    let [payer, creator, creator_token, config, contract, offer, vault, token_program, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(payer)?;
    acc::signer(creator)?;
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::program(system_program, &cpi::SYSTEM_PROGRAM_ID)?;
    acc::same(config, &CANONICAL.config)?;
    let cfg = acc::load::<Config>(config, program_id)?;
    acc::same(vault, &cfg.vault)?;
    let k = acc::load::<Contract>(contract, program_id)?;

    if cfg.offers_enabled == 0 {
        return Err(OfferError::OffersDisabled.into());
    }
    if args.expected_fee_bps.get() != cfg.fee_bps.get() {
        return Err(OfferError::FeeChanged.into());
    }
    let now = time::now();
    k.accepts_offers(now)?;
    if !valid_expiry(args.expires_at.get(), now, k.cutoff_at.get()) {
        return Err(OfferError::InvalidExpiry.into());
    }
    if args.side != SIDE_A && args.side != SIDE_B {
        return Err(OfferError::InvalidSide.into());
    }
    let l = &cfg.limits;
    let (total, target, min_take) = (args.creator_total.get(), args.taker_target.get(), args.minimum_take.get());
    if total < l.minimum_creator_micros.get() {
        return Err(OfferError::StakeBelowMinimum.into());
    }
    if total > l.maximum_wager_micros.get() {
        return Err(OfferError::StakeAboveMaximum.into());
    }
    if target == 0 {
        return Err(OfferError::InvalidTarget.into());
    }
    // min_num / min_den <= total / target <= max_num / max_den, cross-multiplied.
    if !ratio_le(l.minimum_odds_numerator.get(), target, total, l.minimum_odds_denominator.get()) {
        return Err(OfferError::OddsBelowMinimum.into());
    }
    if !ratio_le(total, l.maximum_odds_denominator.get(), l.maximum_odds_numerator.get(), target) {
        return Err(OfferError::OddsAboveMaximum.into());
    }
    if min_take < l.minimum_take_micros.get() {
        return Err(OfferError::MinimumTakeTooSmall.into());
    }
    if min_take > target {
        return Err(OfferError::MinimumTakeAboveTarget.into());
    }
    let (mint, owner, balance) = acc::token_account(creator_token, &cpi::TOKEN_PROGRAM_ID)?;
    if mint != &cfg.mint {
        return Err(OfferError::WrongMint.into());
    }
    if owner != creator.address() {
        return Err(OfferError::NotTokenOwner.into());
    }
    if balance < total {
        log::msg("insufficient balance: needed, available");
        log::msg_u64(total, balance, 0, 0, 0);
        return Err(OfferError::InsufficientBalance.into());
    }

    let nonce = args.nonce.0;
    let seeds: [&[u8]; 4] = [b"offer", contract.address().as_ref(), creator.address().as_ref(), &nonce];
    create_canonical(&NewPda { payer, account: offer, space: Offer::SIZE, program_id, seeds: &seeds, bump: args.bump })?;
    super::claim::deposit(creator_token, vault, creator, total)?;

    let o = acc::init::<Offer>(offer)?;
    o.contract = *contract.address();
    o.creator = *creator.address();
    o.creator_token = *creator_token.address();
    o.rent_payer = *payer.address();
    o.nonce = args.nonce;
    o.side = args.side;
    o.status = OFFER_OPEN;
    o.bump = args.bump;
    o.fee_bps = cfg.fee_bps;
    o.creator_total = args.creator_total;
    o.taker_target = args.taker_target;
    o.minimum_take = args.minimum_take;
    o.revision = PodU64::new(1);
    o.created_at = PodI64::new(now);
    o.expires_at = args.expires_at;
    Ok(())
}
