/**
 * The indexer's SQL store, as kysely sees it. One schema for SQLite (better-sqlite3) and
 * PostgreSQL; the migrations in ./migrations.ts create exactly these tables.
 *
 * Conventions (the read API relies on them):
 * - Amounts (u64 micro-units, and u64 nonces) are TEXT decimal strings: `*_micros` columns. Parse
 *   with BigInt. They never go through a JS number.
 * - Counts and revisions are integers; times are integer unix seconds (`*_at`), null when unset
 *   (the chain's 0 maps to null for closed_at / resolved_at / settled_at).
 * - Booleans are integers 0/1 (portable between both engines).
 * - Addresses are base58 strings.
 * - Every row decoded from a chain account carries `slot` and `write_version` of the update that
 *   wrote it; an update whose (slot, write_version) is not newer is ignored. `deleted` = 1 is a
 *   tombstone: the account was closed on chain at that (slot, write_version); the row keeps its
 *   last content so reads of settled history still work, and stale updates stay rejected.
 * - Rows from transaction events (fills, closes, settlements, claim credits) carry the signature and slot of
 *   their transaction and are keyed so that replays insert nothing new.
 * - Off-chain catalog tables (contract_catalog, pool_catalog, profiles) are owned by the service
 *   and joined by address; the indexer never writes chain data into them, nor catalog data into
 *   chain tables.
 */
/** Columns every chain-account row has. */
export interface ChainMeta {
  slot: number;
  write_version: number;
  /** 1 when the account no longer exists on chain (closed); 0 otherwise. */
  deleted: number;
}

/** The offers program's Config (Settings of the spec). Single row in practice. */
export interface ConfigTable extends ChainMeta {
  address: string;
  authority: string;
  mint: string;
  treasury: string;
  vault: string;
  fee_bps: number;
  offers_enabled: number;
  minimum_creator_micros: string;
  minimum_take_micros: string;
  maximum_wager_micros: string;
  warning_ratio_numerator: string;
  warning_ratio_denominator: string;
  minimum_odds_numerator: string;
  minimum_odds_denominator: string;
  maximum_odds_numerator: string;
  maximum_odds_denominator: string;
}

export interface ContractsTable extends ChainMeta {
  address: string;
  template_id: string;
  event_id: string;
  cutoff_at: number;
  resolution_deadline: number;
  /** "Open" | "Resolved" | "Voided" */
  status: string;
  /** "none" | "sideA" | "sideB" | "void" */
  result: string;
  created_at: number;
  resolved_at: number | null;
}

export interface OffersTable extends ChainMeta {
  address: string;
  contract: string;
  creator: string;
  creator_token: string;
  rent_payer: string;
  nonce: string;
  /** "sideA" | "sideB": the creator's outcome */
  side: string;
  /** An OfferStatus name (idl/client/offers.ts) */
  status: string;
  fee_bps: number;
  creator_total_micros: string;
  taker_target_micros: string;
  minimum_take_micros: string;
  taker_filled_micros: string;
  creator_allocated_micros: string;
  creator_refunded_micros: string;
  revision: number;
  fill_count: number;
  position_count: number;
  settled_position_count: number;
  created_at: number;
  closed_at: number | null;
  /** Unix seconds from which the offer takes no takes; null: none. */
  expires_at: number | null;
}

export interface PositionsTable extends ChainMeta {
  address: string;
  offer: string;
  taker: string;
  taker_token: string;
  rent_payer: string;
  taker_micros: string;
  creator_matched_micros: string;
  /** A PositionStatus name (idl/client/offers.ts) */
  status: string;
  fill_count: number;
  created_at: number;
  settled_at: number | null;
  creator_payout_micros: string;
  taker_payout_micros: string;
  fee_micros: string;
}

/** Every column of `positions`, in table order (the read path joins them, the indexer benchmark writes them). */
export const POSITION_COLUMNS = [
  "address",
  "offer",
  "taker",
  "taker_token",
  "rent_payer",
  "taker_micros",
  "creator_matched_micros",
  "status",
  "fill_count",
  "created_at",
  "settled_at",
  "creator_payout_micros",
  "taker_payout_micros",
  "fee_micros",
  "slot",
  "write_version",
  "deleted",
] as const satisfies readonly (keyof PositionsTable)[];

/** One OfferTaken event; key (offer, revision): the revision after the take. */
export interface FillsTable {
  offer: string;
  revision: number;
  taker: string;
  position: string;
  take_micros: string;
  creator_matched_micros: string;
  /** The offer's totals after this fill. */
  taker_filled_micros: string;
  creator_allocated_micros: string;
  /** Chain time of the take (unix seconds). */
  filled_at: number;
  signature: string;
  slot: number;
}

/** One OfferClosed event; key offer (an offer closes once). */
export interface OfferClosesTable {
  offer: string;
  closed_by: string;
  refund_micros: string;
  revision: number;
  closed_at: number;
  signature: string;
  slot: number;
}

/**
 * The cancel of a pool (its PoolStateChanged event to CANCELED, or to REFUNDED when nobody had
 * picked); key pool (a pool is canceled once). The account's updated_at moves on with every
 * refund, so this is the one record of when the cancel happened: with the escalation time it
 * tells the authority's cancel from the timeout cancel (indexer/derive/pools.ts).
 */
export interface PoolCancelsTable {
  pool: string;
  canceled_at: number;
  signature: string;
  slot: number;
}

/**
 * One ClaimCredited event of either program: a payout or refund the recorded token account could
 * not receive (closed, frozen, re-owned), credited to the owner's Claim instead. Keyed by the
 * transaction, the program and the event's position among that program's events in it: one
 * transaction may credit several claims (a settlement paying both parties), and a re-read of the
 * same transaction derives the same keys.
 */
export interface ClaimCreditsTable {
  signature: string;
  program: string;
  event_index: number;
  slot: number;
  owner: string;
  amount_micros: string;
  /** The claim's balance after this credit. */
  total_micros: string;
  credited_at: number;
}

/** One PositionSettled event; key position (a position settles once). */
export interface SettlementsTable {
  position: string;
  offer: string;
  /** A SETTLEMENT_STATUSES name (idl/client/offers.ts) */
  status: string;
  creator_payout_micros: string;
  taker_payout_micros: string;
  fee_micros: string;
  settled_at: number;
  signature: string;
  slot: number;
}

/**
 * A pool (pari-mutuel market) of the pools program. Fields the program does not hold are null.
 * `state` is the on-chain state name in the spec's vocabulary (OPEN, RESOLVING, RESOLVED,
 * DISTRIBUTED, CANCELED, REFUNDED); LOCKED is derived at read time from closes_at (see
 * indexer/derive).
 */
export interface PoolsTable extends ChainMeta {
  address: string;
  /** Program version: 2 or 3 for two-outcome pools, 4 for multi-outcome pools. */
  version: number;
  creator: string | null;
  question: string;
  state: string;
  outcome_count: number;
  total_oi_micros: string;
  /** Distinct people with a funded pick, when the program counts them; else derived from pool_wagers. */
  participant_count: number | null;
  closes_at: number | null;
  resolution_at: number | null;
  resolution_criteria: string | null;
  cover_image_url: string | null;
  /** Winning outcome index once resolved, else null. */
  winning_outcome: number | null;
  /** Chain time of the last change to the pool record (unix seconds), when known. */
  updated_at: number | null;
  /** End of the proposal's dispute window (unix seconds); null before a proposal. */
  vote_ends_at: number | null;
  /** When the pool went to the authority (unix seconds); null unless escalated (stays set once escalated). */
  escalated_at: number | null;
  /** Participants who voted on the proposal, when the program counts them. */
  voter_count: number | null;
}

/** Per-outcome figures of a pool; written with its pool row (same slot / write_version). */
export interface PoolOutcomesTable {
  pool: string;
  outcome_index: number;
  label: string | null;
  total_oi_micros: string;
  wager_count: number;
  slot: number;
  write_version: number;
}

/** One funded pick account of the pools program, when the program has such accounts. */
export interface PoolWagersTable extends ChainMeta {
  address: string;
  pool: string;
  owner: string;
  outcome_index: number;
  amount_micros: string;
}

/**
 * One Participant record of the pools program (a user's picks in one pool). Not part of the
 * aggregate (which never exposes participants): the settlement worker reads it to settle or
 * refund every participant of a finished pool.
 */
export interface PoolParticipantsTable extends ChainMeta {
  address: string;
  pool: string;
  /** The participant's wallet. */
  user: string;
  /** The token account its first pick recorded (payouts and refunds go there, or to its Claim). */
  user_token: string;
  total_micros: string;
  /** 1 once settled (paid or marked a loser) or refunded. */
  settled: number;
  created_at: number;
}

/** Off-chain: the service's catalog data of a contract, joined by address. */
export interface ContractCatalogTable {
  contract: string;
  title: string;
  description: string;
  event: string;
  sport: string;
  competition: string;
  starts_at: number;
  side_a_label: string;
  side_b_label: string;
  /** JSON array of {src, alt}. */
  visuals_json: string;
  updated_at: number;
}

/** Off-chain: the service's catalog and moderation data of a pool, joined by address. */
export interface PoolCatalogTable {
  pool: string;
  slug: string | null;
  is_public: number;
  deleted: number;
  flagged: number;
  updated_at: number;
}

/** Off-chain: public profile of a wallet (creator display in offers). */
export interface ProfilesTable {
  wallet: string;
  display_name: string;
  profile_image_url: string;
  updated_at: number;
}

/**
 * A contract's price history (issue 23): per taker side ("sideA" | "sideB", the outcome the
 * taker backs) and interval ("1m" | "5m" | "1h" | "1d"), one row per interval holding a change.
 * Derived from offers and fills only (indexer/derive/history.ts), rewritten with them.
 */
export interface ContractHistoryTable {
  contract: string;
  side: string;
  interval: string;
  /** Start of the interval (unix seconds, a multiple of its length). */
  bucket_at: number;
  /** Σ take_micros of the interval's fills. */
  volume_micros: string;
  /** Σ creator_matched_micros of the same fills. */
  creator_matched_micros: string;
  fill_count: number;
  /** Taker odds (reduced ratio) of the interval's last fill; null without fills. */
  last_numerator: string | null;
  last_denominator: string | null;
  /** Best taker odds of the book in the interval's last second; null when that side is empty. */
  best_numerator: string | null;
  best_denominator: string | null;
}

/** One row per source (e.g. "bankrun", "rpc:<url>", "replay:<file>"): where ingestion resumes. */
export interface CheckpointsTable {
  source: string;
  slot: number;
  write_version: number;
  /** Source-specific resume data (e.g. last signature); may be empty. */
  cursor: string;
  updated_at: number;
}

export interface Database {
  config: ConfigTable;
  contracts: ContractsTable;
  offers: OffersTable;
  positions: PositionsTable;
  fills: FillsTable;
  offer_closes: OfferClosesTable;
  settlements: SettlementsTable;
  pool_cancels: PoolCancelsTable;
  claim_credits: ClaimCreditsTable;
  contract_history: ContractHistoryTable;
  pools: PoolsTable;
  pool_outcomes: PoolOutcomesTable;
  pool_wagers: PoolWagersTable;
  pool_participants: PoolParticipantsTable;
  contract_catalog: ContractCatalogTable;
  pool_catalog: PoolCatalogTable;
  profiles: ProfilesTable;
  checkpoints: CheckpointsTable;
}

/** Chain-account tables and their primary key column. */
export const ACCOUNT_TABLES = ["config", "contracts", "offers", "positions", "pools", "pool_wagers", "pool_participants"] as const;
export type AccountTable = (typeof ACCOUNT_TABLES)[number];

/** Every table with its primary key columns, in a stable order (checksums, dumps). */
export const TABLE_KEYS: Record<keyof Database, string[]> = {
  config: ["address"],
  contracts: ["address"],
  offers: ["address"],
  positions: ["address"],
  fills: ["offer", "revision"],
  offer_closes: ["offer"],
  settlements: ["position"],
  pool_cancels: ["pool"],
  claim_credits: ["signature", "program", "event_index"],
  contract_history: ["contract", "side", "interval", "bucket_at"],
  pools: ["address"],
  pool_outcomes: ["pool", "outcome_index"],
  pool_wagers: ["address"],
  pool_participants: ["address"],
  contract_catalog: ["contract"],
  pool_catalog: ["pool"],
  profiles: ["wallet"],
  checkpoints: ["source"],
};
