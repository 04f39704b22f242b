//! PDA creation that cannot be blocked by pre-funding: anyone may send lamports to a PDA
//! address before it exists, and `CreateAccount` then fails. An address that already holds
//! lamports (and no data, still owned by the system program) is topped up to the rent-exempt
//! minimum, allocated and assigned instead.

use kit::{cpi, AccountView, Address, ProgramResult};
use pinocchio::cpi::{Seed, Signer};
use pinocchio_system::instructions::{Allocate, Assign, Transfer};

#[inline(always)]
pub fn create_pda(payer: &AccountView, new: &AccountView, space: usize, owner: &Address, seeds: &[Seed]) -> ProgramResult {
    let held = new.lamports();
    if held == 0 {
        return cpi::create_pda(payer, new, space, owner, seeds);
    }
    let need = cpi::rent_exempt_minimum(space)?;
    if need > held {
        Transfer { from: payer, to: new, lamports: need - held }.invoke()?;
    }
    let signer = [Signer::from(seeds)];
    Allocate { account: new, space: space as u64 }.invoke_signed(&signer)?;
    Assign { account: new, owner }.invoke_signed(&signer)
}
