//! Program errors (after the shared account-check errors 6000..6009 of `kit::accounts::KitError`).
//! The doc comment of each variant is its message in the IDL.

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
    /// The pool has no participants (cancel it instead)
    NoParticipants = 6031,
    /// The pool is not resolving
    NotResolving = 6032,
    /// The signer has no funded pick in this pool
    NotParticipant = 6033,
    /// The participant already voted
    AlreadyVoted = 6034,
    /// The voting window has closed
    VoteWindowClosed = 6035,
    /// The dispute window is still open (and not every participant has voted)
    DisputeWindowOpen = 6036,
    /// Retired (stake-weighted verdicts are gone); the code stays reserved
    QuorumNotReached = 6037,
    /// Retired (stake-weighted verdicts are gone); the code stays reserved
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
    /// Only the creator may cancel, and only before closesAt (anyone: a closed pool without picks, or an escalation unanswered for 7 days)
    CancelNotAllowed = 6044,
    /// The pool is not canceled
    NotCanceled = 6045,
    /// The pool's picks are all refunded already
    AlreadyRefunded = 6046,
    /// Only the pool's creator may propose its outcome
    NotCreator = 6047,
    /// An outcome is already proposed, or the pool is escalated
    AlreadyProposed = 6048,
    /// The creator's 72 hours to propose have passed; the pool can only be escalated
    ProposalDeadlinePassed = 6049,
    /// The creator may still propose (72 hours after closesAt and resolutionAt)
    ProposalDeadlineNotPassed = 6050,
    /// The pool is not escalated to the authority
    NotEscalated = 6051,
    /// The pool awaits the authority's decision (7 days after escalation)
    EscalationPending = 6052,
    /// The authority's 7 days to decide have passed; anyone may cancel
    AuthorityDeadlinePassed = 6053,
    /// closesAt must be at most 366 days after the pool's creation
    ClosesAtTooFar = 6054,
    /// resolutionAt must be at most 30 days after closesAt
    ResolutionTooLate = 6055,
}

kit::program_error!(PoolError);
