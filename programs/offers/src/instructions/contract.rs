use super::{config::authorized, create_canonical, CreateContractArgs, NewPda, ResolveContractArgs, VoidExpiredContractArgs};
use crate::{error::OfferError, state::*};
use kit::{
    accounts::{self as acc, AccountData, KitError},
    cpi,
    pod::PodI64,
    time, AccountView, Address, ProgramResult,
};

pub fn create(program_id: &Address, accounts: &[AccountView], args: &CreateContractArgs) -> ProgramResult {
    let [authority, payer, config, contract, system_program, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    authorized(program_id, authority, config)?;
    acc::signer(payer)?;
    acc::program(system_program, &cpi::SYSTEM_PROGRAM_ID)?;
    let now = time::now();
    let (cutoff, deadline) = (args.cutoff_at.get(), args.resolution_deadline.get());
    // Upper bounds as for pools: even the authority cannot schedule a contract whose stakes no
    // one could ever void (a deadline of i64::MAX).
    if cutoff <= now
        || deadline <= cutoff
        || cutoff > now.saturating_add(MAX_CUTOFF_AHEAD_SECONDS)
        || deadline > cutoff.saturating_add(MAX_RESOLUTION_WINDOW_SECONDS)
    {
        return Err(OfferError::InvalidSchedule.into());
    }
    let seeds: [&[u8]; 3] = [b"contract", &args.template_id, &args.event_id];
    create_canonical(&NewPda { payer, account: contract, space: Contract::SIZE, program_id, seeds: &seeds, bump: args.bump })?;
    let c = acc::init::<Contract>(contract)?;
    c.template_id = args.template_id;
    c.event_id = args.event_id;
    c.cutoff_at = args.cutoff_at;
    c.resolution_deadline = args.resolution_deadline;
    c.status = CONTRACT_OPEN;
    c.result = RESULT_NONE;
    c.bump = args.bump;
    c.created_at = PodI64::new(now);
    Ok(())
}

pub fn resolve(program_id: &Address, accounts: &[AccountView], args: &ResolveContractArgs) -> ProgramResult {
    let [authority, config, contract, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    authorized(program_id, authority, config)?;
    let c = acc::load_mut::<Contract>(contract, program_id)?;
    if c.status != CONTRACT_OPEN {
        return Err(OfferError::ContractNotOpen.into());
    }
    let now = time::now();
    match args.result {
        SIDE_A | SIDE_B => {
            if now < c.cutoff_at.get() {
                return Err(OfferError::ResolveBeforeCutoff.into());
            }
            c.status = CONTRACT_RESOLVED;
        }
        RESULT_VOID => c.status = CONTRACT_VOIDED,
        _ => return Err(OfferError::InvalidResult.into()),
    }
    c.result = args.result;
    c.resolved_at = PodI64::new(now);
    Ok(())
}

pub fn void_expired(program_id: &Address, accounts: &[AccountView], _args: &VoidExpiredContractArgs) -> ProgramResult {
    let [contract, ..] = accounts else {
        return Err(KitError::NotEnoughAccounts.into());
    };
    let c = acc::load_mut::<Contract>(contract, program_id)?;
    if c.status != CONTRACT_OPEN {
        return Err(OfferError::ContractNotOpen.into());
    }
    let now = time::now();
    if now <= c.resolution_deadline.get() {
        return Err(OfferError::DeadlineNotPassed.into());
    }
    c.status = CONTRACT_VOIDED;
    c.result = RESULT_VOID;
    c.resolved_at = PodI64::new(now);
    Ok(())
}
