//! Payouts of resolved pools and refunds of canceled ones. The recorded token account is the
//! payee's to close, freeze or re-own, so a payout never depends on it: what it cannot receive is
//! credited to the payee's Claim instead, and the instruction succeeds.

use super::{emit_state, RefundParticipantArgs, SettleParticipantArgs};
use crate::{discriminators as disc, error::PoolError, events::ParticipantSettled, state::*};
use kit::{
    accounts::{self as acc, KitError},
    claim, cpi, log,
    pod::*,
    setup::{send, Vault},
    time, wide, AccountView, Address, ProgramResult,
};

/// The accounts a payout to a participant needs (one argument: upstream BPF has no stack arguments).
struct Payee<'a> {
    program_id: &'a Address,
    vault: &'a Vault<'a, Config>,
    user_token: &'a AccountView,
    user: &'a Address,
    payer: &'a AccountView,
    claim: &'a AccountView,
    claim_bump: u8,
    now: i64,
}

/// Pays `amount` to the participant's recorded token account if it can receive it, else credits
/// the participant's Claim (created on demand, rent from `payer`).
#[inline(never)]
fn pay_participant(t: &Payee, amount: u64) -> ProgramResult {
    if amount == 0 {
        return Ok(());
    }
    if acc::can_receive(t.user_token, &t.vault.cfg.mint, t.user) {
        return send(t.vault, t.user_token, amount);
    }
    let c = claim::Credit { program_id: t.program_id, payer: t.payer, claim: t.claim, owner: t.user, bump: t.claim_bump, amount, now: t.now };
    claim::credit(&c, || claim::create(&c))
}

#[inline(never)]
fn emit_settled(pool: &Address, user: &Address, payout: u64, fee: u64, now: i64) {
    let ev = ParticipantSettled { pool: *pool, user: *user, payout: PodU64::new(payout), fee: PodU64::new(fee), timestamp: PodI64::new(now) };
    log::emit(&disc::EVENT_PARTICIPANT_SETTLED, bytes_of(&ev));
}

pub fn settle(program_id: &Address, accounts: &[AccountView], args: &SettleParticipantArgs) -> ProgramResult {
    let [config, pool, participant, vault, user_token, treasury, token_program, payer, user_claim, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::program(system_program, &cpi::SYSTEM_PROGRAM_ID)?;
    acc::signer(payer)?;
    let cfg = super::config(config, program_id)?;
    acc::same(vault, &cfg.vault)?;
    acc::same(treasury, &cfg.treasury)?;
    let p = acc::load_mut::<Pool>(pool, program_id)?;
    let part = acc::load_mut::<Participant>(participant, program_id)?;
    acc::same(pool, &part.pool)?;
    acc::same(user_token, &part.user_token)?;
    match p.state {
        POOL_RESOLVED => {}
        POOL_DISTRIBUTED => return Err(PoolError::AlreadyDistributed.into()),
        _ => return Err(PoolError::NotResolved.into()),
    }
    if part.settled != 0 {
        return Err(PoolError::AlreadySettled.into());
    }
    let w = p.winning_outcome as usize;
    let (total, winner_total) = (p.total_oi.get(), p.outcomes[w].total_oi.get());
    let (payout, fee) = if winner_total == 0 {
        // Nobody backed the winner: every stake goes back, no fee.
        (part.total.get(), 0)
    } else {
        let stake = part.stakes[w].get();
        let gross = wide::mul_div_floor(stake, total, winner_total).ok_or(KitError::ArithmeticOverflow)?;
        let fee = wide::mul_div_floor(gross - stake, p.fee_bps.get() as u64, BPS).ok_or(KitError::ArithmeticOverflow)?;
        (gross - fee, fee)
    };
    let now = time::now();
    part.settled = 1;
    part.payout.set(payout);
    part.fee.set(fee);
    let paid_out = p.paid_out.get() + payout;
    let mut fees = p.fees_paid.get() + fee;
    let settled = p.settled_count.get() + 1;
    let mut to_treasury = fee;
    if settled == p.participant_count.get() {
        // Last one: the floor-rounding remainder goes to the treasury, so the pool ends empty.
        let dust = total - paid_out - fees;
        to_treasury += dust;
        fees += dust;
        p.state = if winner_total == 0 { POOL_REFUNDED } else { POOL_DISTRIBUTED };
    }
    p.paid_out.set(paid_out);
    p.fees_paid.set(fees);
    p.settled_count.set(settled);
    p.updated_at = PodI64::new(now);
    let v = Vault { config, cfg, vault };
    let payee = Payee { program_id, vault: &v, user_token, user: &part.user, payer, claim: user_claim, claim_bump: args.claim_bump, now };
    pay_participant(&payee, payout)?;
    send(&v, treasury, to_treasury)?;
    emit_settled(pool.address(), &part.user, payout, fee, now);
    if p.state != POOL_RESOLVED {
        emit_state(pool.address(), p.state, p.winning_outcome, now);
    }
    Ok(())
}

pub fn refund(program_id: &Address, accounts: &[AccountView], args: &RefundParticipantArgs) -> ProgramResult {
    let [config, pool, participant, vault, user_token, token_program, payer, user_claim, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::program(token_program, &cpi::TOKEN_PROGRAM_ID)?;
    acc::program(system_program, &cpi::SYSTEM_PROGRAM_ID)?;
    acc::signer(payer)?;
    let cfg = super::config(config, program_id)?;
    acc::same(vault, &cfg.vault)?;
    let p = acc::load_mut::<Pool>(pool, program_id)?;
    let part = acc::load_mut::<Participant>(participant, program_id)?;
    acc::same(pool, &part.pool)?;
    acc::same(user_token, &part.user_token)?;
    match p.state {
        POOL_CANCELED => {}
        POOL_REFUNDED => return Err(PoolError::AlreadyRefunded.into()),
        _ => return Err(PoolError::NotCanceled.into()),
    }
    if part.settled != 0 {
        return Err(PoolError::AlreadySettled.into());
    }
    let now = time::now();
    let amount = part.total.get();
    part.settled = 1;
    part.payout.set(amount);
    let settled = p.settled_count.get() + 1;
    p.paid_out.set(p.paid_out.get() + amount);
    p.settled_count.set(settled);
    p.updated_at = PodI64::new(now);
    if settled == p.participant_count.get() {
        p.state = POOL_REFUNDED;
    }
    let v = Vault { config, cfg, vault };
    let payee = Payee { program_id, vault: &v, user_token, user: &part.user, payer, claim: user_claim, claim_bump: args.claim_bump, now };
    pay_participant(&payee, amount)?;
    emit_settled(pool.address(), &part.user, amount, 0, now);
    if p.state == POOL_REFUNDED {
        emit_state(pool.address(), POOL_REFUNDED, NO_OUTCOME, now);
    }
    Ok(())
}
