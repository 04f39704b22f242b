//! Program errors (after the shared account-check errors 6000..6009 of `kit::accounts::KitError`).
//! The doc comment of each variant is its message in the IDL.

#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OfferError {
    /// Offers are switched off
    OffersDisabled = 6010,
    /// The fee differs from expected_fee_bps
    FeeChanged = 6011,
    /// The contract is not open
    ContractNotOpen = 6012,
    /// The contract's cutoff has passed
    CutoffPassed = 6013,
    /// Side must be sideA (1) or sideB (2)
    InvalidSide = 6014,
    /// Creator stake is below the minimum
    StakeBelowMinimum = 6015,
    /// Creator stake is above the maximum wager
    StakeAboveMaximum = 6016,
    /// Taker target must be positive
    InvalidTarget = 6017,
    /// Ratio of creator stake to taker target is below the minimum odds
    OddsBelowMinimum = 6018,
    /// Ratio of creator stake to taker target is above the maximum odds
    OddsAboveMaximum = 6019,
    /// Minimum take is below the configured minimum
    MinimumTakeTooSmall = 6020,
    /// Minimum take exceeds the taker target
    MinimumTakeAboveTarget = 6021,
    /// The token balance does not cover the amount
    InsufficientBalance = 6022,
    /// The offer is not open
    OfferNotOpen = 6023,
    /// The creator cannot take their own offer
    SelfTake = 6024,
    /// The offer changed since expected_revision
    RevisionMismatch = 6025,
    /// The take exceeds the remaining amount
    AmountExceedsRemaining = 6026,
    /// The take is below the offer's minimum and is not the exact remainder
    TakeBelowMinimum = 6027,
    /// The taker's position would exceed the maximum wager
    PositionAboveMaximum = 6028,
    /// The take is too small to be matched with any creator stake
    TakeTooSmallToMatch = 6029,
    /// Only the creator may close before the cutoff
    CloseNotAllowed = 6030,
    /// The contract is not resolved yet
    ContractNotResolved = 6031,
    /// The offer must be filled or closed before its positions settle
    OfferStillOpen = 6032,
    /// The position is already settled
    PositionAlreadySettled = 6033,
    /// The position is not settled yet
    PositionNotSettled = 6034,
    /// The offer still has unsettled positions or is open
    OfferNotFinished = 6035,
    /// Only the service authority may do this
    Unauthorized = 6036,
    /// Result must be sideA (1), sideB (2) or void (3)
    InvalidResult = 6037,
    /// A side can win only after the cutoff
    ResolveBeforeCutoff = 6038,
    /// The resolution deadline has not passed
    DeadlineNotPassed = 6039,
    /// Settings are inconsistent (fee above 100%, zero denominator, min above max)
    InvalidConfig = 6040,
    /// Cutoff must be in the future (at most 366 days ahead) and before the resolution deadline (at most 30 days after the cutoff)
    InvalidSchedule = 6041,
    /// Amount must be positive
    ZeroAmount = 6042,
    /// The token account is not of the service's mint
    WrongMint = 6043,
    /// The token account is not owned by the signer
    NotTokenOwner = 6044,
    /// A payee's token account cannot receive and the payee's claim account was not passed
    ClaimAccountMissing = 6045,
    /// Mode must be fill-and-kill (0) or fill-or-kill (1)
    InvalidTakeMode = 6046,
    /// The worst odds need a positive denominator
    InvalidOddsLimit = 6047,
    /// The list must hold 1 to 16 (offer, position) pairs
    InvalidOfferList = 6048,
    /// An offer appears twice in the list
    DuplicateOffer = 6049,
    /// No offer of the list could be taken within the limit
    NothingTaken = 6050,
    /// Fill-or-kill: the offers cannot fill the whole amount within the limit
    NotFilled = 6051,
    /// Expiry must be after now and no later than the contract's cutoff (0: none)
    InvalidExpiry = 6052,
    /// The offer has expired
    OfferExpired = 6053,
}

kit::program_error!(OfferError);
