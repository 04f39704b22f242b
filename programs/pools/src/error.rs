//! Program errors (after the shared account-check errors 6000..6009 of `kit::accounts::KitError`).
//! The doc comment of each variant is its message in the IDL.

use kit::ProgramError;

#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolError {
    /// Only the service authority may do this
    Unauthorized = 6010,
    /// Fee must be at most 10000 bps
    InvalidFee = 6011,
    /// The question must not be empty
    QuestionEmpty = 6012,
    /// The question is longer than 160 bytes
    QuestionTooLong = 6013,
    /// The resolution criteria are longer than 280 bytes
    CriteriaTooLong = 6014,
    /// The cover image URL is longer than 128 bytes
    CoverUrlTooLong = 6015,
    /// An outcome label is longer than 24 bytes
    LabelTooLong = 6016,
    /// An outcome label is empty (only a two-outcome pool may leave both labels empty)
    LabelEmpty = 6017,
    /// A pool has 2 to 8 outcomes
    InvalidOutcomeCount = 6018,
    /// Text must be valid UTF-8
    InvalidText = 6019,
    /// closesAt must be in the future
    ClosesAtInPast = 6020,
    /// resolutionAt must be 0 or not before closesAt
    InvalidResolutionTime = 6021,
    /// The pool is not open for picks
    PoolNotOpen = 6022,
    /// The pool's close time has passed
    PoolClosed = 6023,
    /// The outcome index is out of range
    InvalidOutcome = 6024,
    /// Amount must be positive
    ZeroAmount = 6025,
    /// The token balance does not cover the amount
    InsufficientBalance = 6026,
    /// The token account is not of the service's mint
    WrongMint = 6027,
    /// The token account is not owned by the signer
    NotTokenOwner = 6028,
    /// Picks are still open (closesAt not reached)
    PoolStillOpen = 6029,
    /// The scheduled resolution time has not been reached
    ResolutionTimeNotReached = 6030,
    /// The pool has no participants (the creator may cancel it)
    NoParticipants = 6031,
    /// The pool is not resolving
    NotResolving = 6032,
    /// The signer has no funded pick in this pool
    NotParticipant = 6033,
    /// The participant already voted
    AlreadyVoted = 6034,
    /// The voting window has closed
    VoteWindowClosed = 6035,
    /// The voting window is open and no outcome has a majority of the stake yet
    VoteWindowOpen = 6036,
    /// Votes carry less than the quorum of the stake
    QuorumNotReached = 6037,
    /// Two outcomes lead the vote with equal weight
    VoteTied = 6038,
    /// The pool is not resolved
    NotResolved = 6039,
    /// Payouts of the pool are already distributed
    AlreadyDistributed = 6040,
    /// The participant is already paid or refunded
    AlreadySettled = 6041,
    /// The pool is already resolved; it cannot be canceled
    AlreadyResolved = 6042,
    /// The pool is already canceled
    AlreadyCanceled = 6043,
    /// Only the creator may cancel (others only after a failed vote)
    CancelNotAllowed = 6044,
    /// The pool is not canceled
    NotCanceled = 6045,
    /// The pool's picks are all refunded already
    AlreadyRefunded = 6046,
}

impl From<PoolError> for ProgramError {
    #[inline(always)]
    fn from(e: PoolError) -> Self {
        ProgramError::Custom(e as u32)
    }
}
