use super::PlacePickArgs;
use crate::{discriminators as disc, error::PoolError, events::PickPlaced, state::*};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    cpi, log,
    pod::*,
    time, AccountView, Address, ProgramResult,
};

pub fn process(program_id: &Address, accounts: &[AccountView], args: &PlacePickArgs) -> ProgramResult {
    let [payer, user, user_token, config, pool, participant, vault, token_program, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(payer)?;
    acc::signer(user)?;
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::program(system_program, &cpi::SYSTEM_PROGRAM_ID)?;
    let cfg = super::config(config, program_id)?;
    acc::same(vault, &cfg.vault)?;
    let p = acc::load_mut::<Pool>(pool, program_id)?;

    let now = time::now();
    if p.state != POOL_OPEN {
        return Err(PoolError::PoolNotOpen.into());
    }
    if now >= p.closes_at.get() {
        return Err(PoolError::PoolClosed.into());
    }
    let outcome = args.outcome as usize;
    if outcome >= p.outcome_count as usize {
        return Err(PoolError::InvalidOutcome.into());
    }
    let amount = args.amount.get();
    if amount == 0 {
        return Err(PoolError::ZeroAmount.into());
    }
    // Token supply bounds every sum, but overflow is refused explicitly all the same.
    let total_oi = p.total_oi.get().checked_add(amount).ok_or(KitError::ArithmeticOverflow)?;
    let (mint, owner, balance) = acc::token_account(user_token, &cpi::TOKEN_PROGRAM_ID)?;
    if mint != &cfg.mint {
        return Err(PoolError::WrongMint.into());
    }
    if owner != user.address() {
        return Err(PoolError::NotTokenOwner.into());
    }
    if balance < amount {
        log::msg("insufficient balance: needed, available");
        log::msg_u64(amount, balance, 0, 0, 0);
        return Err(PoolError::InsufficientBalance.into());
    }

    // The participant record: created on the first pick, so a participant is counted once.
    let part = if participant.owned_by(program_id) {
        let part = acc::load_mut::<Participant>(participant, program_id)?;
        if part.pool != *pool.address() || part.user != *user.address() {
            return Err(KitError::AccountMismatch.into());
        }
        part
    } else {
        // The one record of (pool, user): canonical bump, not existing yet, pre-funding tolerated.
        cpi::create_canonical(
            payer,
            participant,
            Participant::SIZE,
            program_id,
            &[b"participant", pool.address().as_ref(), user.address().as_ref()],
            args.participant_bump,
        )?;
        let part = acc::init::<Participant>(participant)?;
        part.pool = *pool.address();
        part.user = *user.address();
        part.user_token = *user_token.address();
        part.bump = args.participant_bump;
        part.vote_outcome = NO_OUTCOME;
        part.created_at = PodI64::new(now);
        p.participant_count.set(p.participant_count.get() + 1);
        part
    };
    // Payouts and refunds go to the token account of the first pick.
    cpi::transfer(user_token, vault, user, amount, &[])?;

    let o = &mut p.outcomes[outcome];
    let outcome_total = o.total_oi.get() + amount; // <= total_oi, checked above
    o.total_oi.set(outcome_total);
    o.wager_count.set(o.wager_count.get() + 1);
    p.total_oi.set(total_oi);
    p.updated_at = PodI64::new(now);
    part.stakes[outcome].set(part.stakes[outcome].get() + amount);
    part.total.set(part.total.get() + amount);
    part.pick_count.set(part.pick_count.get() + 1);

    let ev = PickPlaced {
        pool: *pool.address(),
        user: *user.address(),
        outcome: args.outcome,
        amount: args.amount,
        outcome_total: PodU64::new(outcome_total),
        total_oi: PodU64::new(total_oi),
        participant_count: p.participant_count,
        timestamp: PodI64::new(now),
    };
    log::emit(&disc::EVENT_PICK_PLACED, bytes_of(&ev));
    Ok(())
}
