/**
 * What every source delivers to the indexer: batches of account updates and transaction events,
 * ordered by (slot, writeVersion). A batch is the unit of atomicity: its rows and the checkpoint
 * (slot, writeVersion, cursor) of its last item are written in one database transaction.
 */

/** One account write. `data` null means the account was deleted (closed) at this version. */
export interface AccountUpdate {
  slot: number;
  /** Orders writes within a slot; sources without one use an arrival counter (see each source). */
  writeVersion: number;
  pubkey: string;
  /** Owner program (base58); for deletions, the owner it had. */
  owner: string;
  data: Buffer | null;
}

/** One processed transaction: its log messages carry the programs' events. */
export interface TxEvent {
  signature: string;
  slot: number;
  writeVersion: number;
  /** Failed transactions are delivered with err set; their events are ignored. */
  err: string | null;
  logs: string[];
  /**
   * Read back from the node's transaction history (getTransaction at the source's finality), not
   * from a live notification: the authority on the transaction's slot and events. Its event rows
   * replace rows of the same signature (a live notification can name the bank of another fork;
   * see indexer/sources/rpc/delivery-ledger.ts, "Forks").
   */
  fromHistory?: boolean;
  /**
   * A transaction delivered live as the chain does not have it (an abandoned fork's bank): its
   * event rows are removed, before the batch's other rows go in (the chain's version, read back
   * from history, may follow in the same batch). Carries no logs.
   */
  retracted?: boolean;
}

export interface Batch {
  slot: number;
  writeVersion: number;
  accounts: AccountUpdate[];
  transactions: TxEvent[];
  /** Source-specific resume data stored with the checkpoint. */
  cursor?: string;
}

export interface Checkpoint {
  source: string;
  slot: number;
  writeVersion: number;
  cursor: string;
}

export type BatchSink = (batch: Batch) => Promise<void>;

export interface AccountSource {
  /** Stable name: the checkpoint row's key. */
  readonly name: string;
  /**
   * A full snapshot of current program accounts (and, where the source has history, past
   * transactions' events), for backfill and for reconciling after a gap. `onTotal` reports the
   * number of accounts when known (progress bars).
   */
  snapshot(sink: BatchSink, onTotal?: (n: number) => void): Promise<void>;
  /** Delivers live batches after `from` until stop() is called. */
  start(from: Checkpoint | null, sink: BatchSink): Promise<void>;
  stop(): Promise<void>;
  /**
   * Whether, while started, every transaction of the programs up to `slot` has been applied
   * through the sink (the service's lag monitor: service/observability/lag.ts).
   */
  caughtUpTo?(slot: number): Promise<boolean>;
}

/** (slot, writeVersion) lexicographic comparison. */
export function newer(aSlot: number, aWv: number, bSlot: number, bWv: number): boolean {
  return aSlot > bSlot || (aSlot === bSlot && aWv > bWv);
}
