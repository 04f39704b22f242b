//! How a pool gets its result: the creator proposes, participants may dispute for 24 hours, an
//! undisputed proposal stands, a disputed (or missing) one goes to the config's authority, and a
//! pool nobody decides in time is canceled and refunded. Stake never decides the result.

use super::{emit_state, AuthorityResolveArgs, CancelPoolArgs, CastVoteArgs, ProposeOutcomeArgs, ResolvePoolArgs};
use crate::{
    addresses::CANONICAL,
    discriminators as disc,
    error::PoolError,
    events::{OutcomeProposed, PoolEscalated, VoteCast},
    state::*,
};
use kit::{
    accounts::{self as acc, KitError},
    log,
    pod::*,
    setup, time, AccountView, Address, ProgramResult,
};

/// When the creator's time to propose ends: 72 hours after max(closes_at, resolution_at).
#[inline(always)]
fn proposal_deadline(p: &Pool) -> i64 {
    let (c, r) = (p.closes_at.get(), p.resolution_at.get());
    (if r > c { r } else { c }).saturating_add(PROPOSAL_DEADLINE_SECONDS)
}

/// When the authority's time to decide an escalated pool ends.
#[inline(always)]
fn authority_deadline(p: &Pool) -> i64 {
    p.escalated_at.get().saturating_add(AUTHORITY_DEADLINE_SECONDS)
}

/// Fails unless the pool is RESOLVING, or with the error its state calls for.
#[inline(always)]
fn settled_state(state: u8) -> Result<(), PoolError> {
    match state {
        POOL_RESOLVED | POOL_DISTRIBUTED => Err(PoolError::AlreadyResolved),
        POOL_CANCELED | POOL_REFUNDED => Err(PoolError::AlreadyCanceled),
        _ => Ok(()),
    }
}

pub fn propose(program_id: &Address, accounts: &[AccountView], args: &ProposeOutcomeArgs) -> ProgramResult {
    let [creator, pool, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(creator)?;
    let p = acc::load_mut::<Pool>(pool, program_id)?;
    if creator.address() != &p.creator {
        return Err(PoolError::NotCreator.into());
    }
    let now = time::now();
    match p.state {
        POOL_OPEN => {}
        POOL_RESOLVING => return Err(PoolError::AlreadyProposed.into()),
        s => return Err(settled_state(s).err().unwrap_or(PoolError::PoolNotOpen).into()),
    }
    if now < p.closes_at.get() {
        return Err(PoolError::PoolStillOpen.into());
    }
    if now < p.resolution_at.get() {
        return Err(PoolError::ResolutionTimeNotReached.into());
    }
    if now >= proposal_deadline(p) {
        return Err(PoolError::ProposalDeadlinePassed.into());
    }
    if p.participant_count.get() == 0 {
        return Err(PoolError::NoParticipants.into());
    }
    if args.outcome >= p.outcome_count {
        return Err(PoolError::InvalidOutcome.into());
    }
    let ends = now + DISPUTE_WINDOW_SECONDS;
    p.state = POOL_RESOLVING;
    p.proposed_outcome = args.outcome;
    p.vote_ends_at = PodI64::new(ends);
    p.updated_at = PodI64::new(now);
    let ev = OutcomeProposed { pool: *pool.address(), outcome: args.outcome, vote_ends_at: PodI64::new(ends), timestamp: PodI64::new(now) };
    log::emit(&disc::EVENT_OUTCOME_PROPOSED, bytes_of(&ev));
    emit_state(pool.address(), POOL_RESOLVING, NO_OUTCOME, now);
    Ok(())
}

pub fn cast(program_id: &Address, accounts: &[AccountView], args: &CastVoteArgs) -> ProgramResult {
    let [voter, pool, participant, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(voter)?;
    let p = acc::load_mut::<Pool>(pool, program_id)?;
    // No record of this (pool, voter): not a participant.
    if !participant.owned_by(program_id) {
        return Err(PoolError::NotParticipant.into());
    }
    let part = acc::load_mut::<Participant>(participant, program_id)?;
    if part.pool != *pool.address() || part.user != *voter.address() {
        return Err(PoolError::NotParticipant.into());
    }
    let now = time::now();
    if p.state != POOL_RESOLVING {
        return Err(PoolError::NotResolving.into());
    }
    // An escalated pool's window is over (escalation happens only after it, or without one).
    if now >= p.vote_ends_at.get() {
        return Err(PoolError::VoteWindowClosed.into());
    }
    if args.outcome >= p.outcome_count {
        return Err(PoolError::InvalidOutcome.into());
    }
    if part.voted != 0 {
        return Err(PoolError::AlreadyVoted.into());
    }
    let weight = part.total.get(); // sum of weights <= total_oi: no overflow
    let dispute = args.outcome != p.proposed_outcome;
    let o = &mut p.outcomes[args.outcome as usize];
    o.vote_weight.set(o.vote_weight.get() + weight);
    p.vote_weight_total.set(p.vote_weight_total.get() + weight);
    p.voter_count.set(p.voter_count.get() + 1); // <= participant_count
    if dispute {
        p.dispute_count.set(p.dispute_count.get() + 1);
    }
    p.updated_at = PodI64::new(now);
    part.voted = 1;
    part.vote_outcome = args.outcome;
    let ev = VoteCast {
        pool: *pool.address(),
        user: *voter.address(),
        outcome: args.outcome,
        dispute: dispute as u8,
        weight: PodU64::new(weight),
        timestamp: PodI64::new(now),
    };
    log::emit(&disc::EVENT_VOTE_CAST, bytes_of(&ev));
    Ok(())
}

/// Hands the pool to the config's authority (state RESOLVING, whatever it was).
#[inline(never)]
fn escalate(pool: &Address, p: &mut Pool, now: i64) {
    let was_open = p.state == POOL_OPEN;
    p.state = POOL_RESOLVING;
    p.escalated = 1;
    p.escalated_at = PodI64::new(now);
    p.updated_at = PodI64::new(now);
    let ev = PoolEscalated {
        pool: *pool,
        proposed_outcome: p.proposed_outcome,
        dispute_count: p.dispute_count,
        decide_by: PodI64::new(now.saturating_add(AUTHORITY_DEADLINE_SECONDS)),
        timestamp: PodI64::new(now),
    };
    log::emit(&disc::EVENT_POOL_ESCALATED, bytes_of(&ev));
    if was_open {
        emit_state(pool, POOL_RESOLVING, NO_OUTCOME, now);
    }
}

pub fn resolve(program_id: &Address, accounts: &[AccountView], _args: &ResolvePoolArgs) -> ProgramResult {
    let [caller, pool, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(caller)?;
    let p = acc::load_mut::<Pool>(pool, program_id)?;
    let now = time::now();
    match p.state {
        POOL_OPEN => {
            // Nobody proposed: after the creator's deadline, the authority decides.
            if p.participant_count.get() == 0 {
                return Err(PoolError::NoParticipants.into());
            }
            if now < proposal_deadline(p) {
                return Err(PoolError::ProposalDeadlineNotPassed.into());
            }
            escalate(pool.address(), p, now);
            return Ok(());
        }
        POOL_RESOLVING => {}
        s => return Err(settled_state(s).err().unwrap_or(PoolError::NotResolving).into()),
    }
    if p.escalated != 0 {
        return Err(PoolError::EscalationPending.into());
    }
    // The window may end early once every participant has voted: no dispute can come any more.
    if now < p.vote_ends_at.get() && p.voter_count.get() < p.participant_count.get() {
        return Err(PoolError::DisputeWindowOpen.into());
    }
    if p.dispute_count.get() != 0 {
        escalate(pool.address(), p, now);
        return Ok(());
    }
    p.state = POOL_RESOLVED;
    p.winning_outcome = p.proposed_outcome;
    p.updated_at = PodI64::new(now);
    emit_state(pool.address(), POOL_RESOLVED, p.winning_outcome, now);
    Ok(())
}

pub fn authority_resolve(program_id: &Address, accounts: &[AccountView], args: &AuthorityResolveArgs) -> ProgramResult {
    let [authority, config, pool, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    setup::authorised::<Config, _>(program_id, authority, config, &CANONICAL.config, PoolError::Unauthorized)?;
    let p = acc::load_mut::<Pool>(pool, program_id)?;
    if p.state != POOL_RESOLVING || p.escalated == 0 {
        return Err(PoolError::NotEscalated.into());
    }
    let now = time::now();
    if now >= authority_deadline(p) {
        return Err(PoolError::AuthorityDeadlinePassed.into());
    }
    if args.outcome == CANCEL_OUTCOME {
        // An escalated pool always has participants: their stakes are refunded.
        p.state = POOL_CANCELED;
    } else if args.outcome < p.outcome_count {
        p.state = POOL_RESOLVED;
        p.winning_outcome = args.outcome;
    } else {
        return Err(PoolError::InvalidOutcome.into());
    }
    p.updated_at = PodI64::new(now);
    emit_state(pool.address(), p.state, p.winning_outcome, now);
    Ok(())
}

pub fn cancel(program_id: &Address, accounts: &[AccountView], _args: &CancelPoolArgs) -> ProgramResult {
    let [caller, pool, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(caller)?;
    let p = acc::load_mut::<Pool>(pool, program_id)?;
    let now = time::now();
    settled_state(p.state)?;
    let empty = p.participant_count.get() == 0;
    let allowed = if now < p.closes_at.get() {
        // Picks open (the pool is OPEN): its creator may withdraw it.
        caller.address() == &p.creator
    } else if p.escalated != 0 {
        // The authority left it undecided for 7 days: anyone, so no stake stays locked.
        if now < authority_deadline(p) {
            return Err(PoolError::EscalationPending.into());
        }
        true
    } else {
        // Closed without a single pick: nothing to decide, anyone may retire it.
        empty
    };
    if !allowed {
        return Err(PoolError::CancelNotAllowed.into());
    }
    // Nothing to refund: every pick (none) is refunded already.
    p.state = if empty { POOL_REFUNDED } else { POOL_CANCELED };
    p.updated_at = PodI64::new(now);
    emit_state(pool.address(), p.state, NO_OUTCOME, now);
    Ok(())
}
