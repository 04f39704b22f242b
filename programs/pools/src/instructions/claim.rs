//! Claimable balances (`kit::claim`): what the vault owes a user whose token account could not
//! receive a payout or refund. One Claim per owner (PDA ["claim", owner]), whatever the pool.

use super::WithdrawClaimArgs;
use crate::{addresses::CANONICAL, error::PoolError, state::Config};
use kit::{claim, AccountView, Address, ProgramResult};

pub fn withdraw(program_id: &Address, accounts: &[AccountView], _args: &WithdrawClaimArgs) -> ProgramResult {
    claim::withdraw::<Config, _>(program_id, accounts, &CANONICAL, PoolError::WrongMint, PoolError::NotTokenOwner)
}
