use super::{emit_state, CastVoteArgs, ResolvePoolArgs, StartVoteArgs};
use crate::{discriminators as disc, error::PoolError, events::VoteCast, state::*};
use kit::{
    accounts::{self as acc, KitError},
    log, pod::*, time, wide, AccountView, Address, ProgramResult,
};

pub fn start(program_id: &Address, accounts: &[AccountView], _args: &StartVoteArgs) -> ProgramResult {
    let [caller, pool, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(caller)?;
    let p = acc::load_mut::<Pool>(pool, program_id)?;
    let now = time::now();
    if p.state != POOL_OPEN {
        return Err(PoolError::PoolNotOpen.into());
    }
    if now < p.closes_at.get() {
        return Err(PoolError::PoolStillOpen.into());
    }
    if now < p.resolution_at.get() {
        return Err(PoolError::ResolutionTimeNotReached.into());
    }
    if p.participant_count.get() == 0 {
        return Err(PoolError::NoParticipants.into());
    }
    p.state = POOL_RESOLVING;
    p.vote_ends_at = PodI64::new(now + VOTE_WINDOW_SECONDS);
    p.updated_at = PodI64::new(now);
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
    let o = &mut p.outcomes[args.outcome as usize];
    o.vote_weight.set(o.vote_weight.get() + weight);
    p.vote_weight_total.set(p.vote_weight_total.get() + weight);
    p.voter_count.set(p.voter_count.get() + 1);
    p.updated_at = PodI64::new(now);
    part.voted = 1;
    part.vote_outcome = args.outcome;
    let ev = VoteCast { pool: *pool.address(), user: *voter.address(), outcome: args.outcome, weight: PodU64::new(weight), timestamp: PodI64::new(now) };
    log::emit(&disc::EVENT_VOTE_CAST, bytes_of(&ev));
    Ok(())
}

/// The vote's verdict at `now`: the winning outcome, or why there is none yet / at all.
#[inline(always)]
pub(crate) fn verdict(p: &Pool, now: i64) -> Result<u8, PoolError> {
    let (mut leader, mut best, mut tied) = (0u8, 0u64, false);
    let mut i = 0;
    while i < p.outcome_count as usize {
        let w = p.outcomes[i].vote_weight.get();
        if w > best {
            (leader, best, tied) = (i as u8, w, false);
        } else if w == best {
            tied = true;
        }
        i += 1;
    }
    let total = p.total_oi.get();
    // An absolute majority of the pot's stake cannot be overturned: resolve at once.
    if best > total / 2 {
        return Ok(leader);
    }
    if now < p.vote_ends_at.get() {
        return Err(PoolError::VoteWindowOpen);
    }
    // Quorum: vote weight * 10000 >= total * QUORUM_BPS.
    if !wide::product_le(total, QUORUM_BPS, p.vote_weight_total.get(), BPS) || best == 0 {
        return Err(PoolError::QuorumNotReached);
    }
    if tied {
        return Err(PoolError::VoteTied);
    }
    Ok(leader)
}

pub fn resolve(program_id: &Address, accounts: &[AccountView], _args: &ResolvePoolArgs) -> ProgramResult {
    let [caller, pool, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    acc::signer(caller)?;
    let p = acc::load_mut::<Pool>(pool, program_id)?;
    if p.state != POOL_RESOLVING {
        return Err(PoolError::NotResolving.into());
    }
    let now = time::now();
    let winner = verdict(p, now)?;
    p.state = POOL_RESOLVED;
    p.winning_outcome = winner;
    p.updated_at = PodI64::new(now);
    emit_state(pool.address(), POOL_RESOLVED, winner, now);
    Ok(())
}
