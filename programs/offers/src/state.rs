//! Account layouts. Each `@account` struct is preceded on chain by its 8-byte Anchor
//! discriminator; `scripts/gen-idl.ts` reads these definitions to write `idl/offers.json`. The
//! Claim is kit's (`kit::claim`), the same in both programs.

use crate::{discriminators as disc, error::OfferError};
pub use kit::claim::Claim;
use kit::{pod::*, Address};

pub const SIDE_A: u8 = 1;
pub const SIDE_B: u8 = 2;

/// A contract's cutoff is at most this far ahead of its creation, and its resolution deadline
/// at most `MAX_RESOLUTION_WINDOW_SECONDS` after the cutoff: every stake can be voided by anyone
/// within a bounded time if the authority never resolves.
pub const MAX_CUTOFF_AHEAD_SECONDS: i64 = 366 * 86_400;
pub const MAX_RESOLUTION_WINDOW_SECONDS: i64 = 30 * 86_400;

pub const CONTRACT_OPEN: u8 = 0;
pub const CONTRACT_RESOLVED: u8 = 1;
pub const CONTRACT_VOIDED: u8 = 2;

pub const RESULT_NONE: u8 = 0;
pub const RESULT_VOID: u8 = 3;

pub const OFFER_OPEN: u8 = 0;
pub const OFFER_FILLED: u8 = 1;
pub const OFFER_CLOSED: u8 = 2;
pub const OFFER_SETTLED: u8 = 3;

pub const POSITION_OPEN: u8 = 0;
pub const POSITION_SETTLED_CREATOR_WIN: u8 = 1;
pub const POSITION_SETTLED_TAKER_WIN: u8 = 2;
pub const POSITION_REFUNDED: u8 = 3;

/// Limits of the spec's Settings, shared by `Config` and the config instructions.
/// @type
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Limits {
    pub minimum_creator_micros: PodU64,
    pub minimum_take_micros: PodU64,
    pub maximum_wager_micros: PodU64,
    pub warning_ratio_numerator: PodU64,
    pub warning_ratio_denominator: PodU64,
    pub minimum_odds_numerator: PodU64,
    pub minimum_odds_denominator: PodU64,
    pub maximum_odds_numerator: PodU64,
    pub maximum_odds_denominator: PodU64,
}

/// Service settings; PDA ["config"]. Its PDA is also the authority of the vault.
/// @account
#[repr(C)]
pub struct Config {
    pub authority: Address,
    pub mint: Address,
    pub treasury: Address,
    pub vault: Address,
    pub fee_bps: PodU16,
    pub offers_enabled: u8,
    pub bump: u8,
    pub vault_bump: u8,
    pub limits: Limits,
}

/// A two-sided question; PDA ["contract", template_id, event_id].
/// @account
#[repr(C)]
pub struct Contract {
    pub template_id: [u8; 16],
    pub event_id: [u8; 16],
    pub cutoff_at: PodI64,
    pub resolution_deadline: PodI64,
    pub status: u8,
    pub result: u8,
    pub bump: u8,
    pub created_at: PodI64,
    pub resolved_at: PodI64,
}

/// One side of a contract at a fixed price; PDA ["offer", contract, creator, nonce (u64 LE)].
/// @account
#[repr(C)]
pub struct Offer {
    pub contract: Address,
    pub creator: Address,
    pub creator_token: Address,
    pub rent_payer: Address,
    pub nonce: PodU64,
    pub side: u8,
    pub status: u8,
    pub bump: u8,
    pub fee_bps: PodU16,
    pub creator_total: PodU64,
    pub taker_target: PodU64,
    pub minimum_take: PodU64,
    pub taker_filled: PodU64,
    pub creator_allocated: PodU64,
    pub creator_refunded: PodU64,
    pub revision: PodU64,
    pub fill_count: PodU32,
    pub position_count: PodU32,
    pub settled_position_count: PodU32,
    pub created_at: PodI64,
    pub closed_at: PodI64,
    /// 0: no expiry; else the second from which the offer takes no more takes and anyone may
    /// close it (as at the contract's cutoff). Set at creation, at most the contract's cutoff.
    pub expires_at: PodI64,
}

/// One taker's matched amount on one offer; PDA ["position", offer, taker].
/// @account
#[repr(C)]
pub struct Position {
    pub offer: Address,
    pub taker: Address,
    pub taker_token: Address,
    pub rent_payer: Address,
    pub taker_amount: PodU64,
    pub creator_matched: PodU64,
    pub status: u8,
    pub bump: u8,
    pub fill_count: PodU32,
    pub created_at: PodI64,
    pub settled_at: PodI64,
    pub creator_payout: PodU64,
    pub taker_payout: PodU64,
    pub fee: PodU64,
}

kit::pod!(Limits);
kit::settings!(Config);
impl Contract {
    /// Whether the contract takes offers and takes at `now`: Open, then before its cutoff (the
    /// cutoff second itself is past). create_offer and take_offer refuse with this error;
    /// close_offer lets anyone close once it fails. One rule, mirrored by `contractRefusal` in
    /// idl/client/offers-rules.ts.
    #[inline(always)]
    pub fn accepts_offers(&self, now: i64) -> Result<(), OfferError> {
        if self.status != CONTRACT_OPEN {
            return Err(OfferError::ContractNotOpen);
        }
        if now >= self.cutoff_at.get() {
            return Err(OfferError::CutoffPassed);
        }
        Ok(())
    }
}

impl Offer {
    /// Whether the offer's expiry has come at `now` (the `expires_at` second itself is past, as
    /// for the cutoff); an offer without expiry (0) never expires.
    #[inline(always)]
    pub fn expired(&self, now: i64) -> bool {
        let at = self.expires_at.get();
        at != 0 && now >= at
    }

    /// Whether the offer takes takes at `now`: Open, then not expired. take_offer refuses with
    /// this error, take_best passes the offer over (as not open), close_offer lets anyone close
    /// an expired offer. One rule, mirrored by `offerRefusal` in idl/client/offers-rules.ts.
    #[inline(always)]
    pub fn accepts_takes(&self, now: i64) -> Result<(), OfferError> {
        if self.status != OFFER_OPEN {
            return Err(OfferError::OfferNotOpen);
        }
        if self.expired(now) {
            return Err(OfferError::OfferExpired);
        }
        Ok(())
    }
}

/// create_offer's expiry: 0 (none), or after `now` and no later than the contract's cutoff.
/// Mirrored by `expiryRefusal` in idl/client/offers-rules.ts.
#[inline(always)]
pub fn valid_expiry(expires_at: i64, now: i64, cutoff_at: i64) -> bool {
    expires_at == 0 || (expires_at > now && expires_at <= cutoff_at)
}

kit::account!(Contract = disc::ACCOUNT_CONTRACT, Offer = disc::ACCOUNT_OFFER, Position = disc::ACCOUNT_POSITION,);

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(status: u8, cutoff: i64) -> Contract {
        let z = PodI64::new(0);
        Contract {
            template_id: [0; 16],
            event_id: [0; 16],
            cutoff_at: PodI64::new(cutoff),
            resolution_deadline: z,
            status,
            result: 0,
            bump: 0,
            created_at: z,
            resolved_at: z,
        }
    }

    #[test]
    fn accepts_offers_checks_status_then_cutoff() {
        assert_eq!(contract(CONTRACT_OPEN, 1_000).accepts_offers(999), Ok(()));
        // The cutoff second itself is past.
        assert_eq!(contract(CONTRACT_OPEN, 1_000).accepts_offers(1_000), Err(OfferError::CutoffPassed));
        // Not Open is named first, whatever the time.
        assert_eq!(contract(CONTRACT_RESOLVED, 1_000).accepts_offers(5_000), Err(OfferError::ContractNotOpen));
        assert_eq!(contract(CONTRACT_VOIDED, 1_000).accepts_offers(0), Err(OfferError::ContractNotOpen));
    }

    fn offer(status: u8, expires_at: i64) -> Offer {
        let mut o: Offer = unsafe { core::mem::zeroed() };
        o.status = status;
        o.expires_at = PodI64::new(expires_at);
        o
    }

    #[test]
    fn accepts_takes_checks_status_then_expiry() {
        assert_eq!(offer(OFFER_OPEN, 1_000).accepts_takes(999), Ok(()));
        // The expiry second itself is past.
        assert_eq!(offer(OFFER_OPEN, 1_000).accepts_takes(1_000), Err(OfferError::OfferExpired));
        // No expiry: open for ever (the contract's cutoff still applies).
        assert_eq!(offer(OFFER_OPEN, 0).accepts_takes(i64::MAX), Ok(()));
        assert_eq!(offer(OFFER_FILLED, 1_000).accepts_takes(0), Err(OfferError::OfferNotOpen));
        assert_eq!(offer(OFFER_CLOSED, 1_000).accepts_takes(5_000), Err(OfferError::OfferNotOpen));
    }

    #[test]
    fn valid_expiry_is_none_or_after_now_up_to_the_cutoff() {
        assert!(valid_expiry(0, 500, 1_000));
        assert!(valid_expiry(501, 500, 1_000));
        assert!(valid_expiry(1_000, 500, 1_000));
        assert!(!valid_expiry(500, 500, 1_000));
        assert!(!valid_expiry(-1, 500, 1_000));
        assert!(!valid_expiry(1_001, 500, 1_000));
    }
}
