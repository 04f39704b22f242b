/** The indexer's public surface (the API imports from here). */
export * from "./store/schema";
export { openStore, dropPostgresSchema, isPostgresUrl, type Store, type StoreDialect } from "./store/db";
export { readNow } from "./store/sqlite-reads";
export { migrateToLatest } from "./store/migrations";
export { StoreWriter, type WriterStats } from "./store/writer";
export { LocalChangeFeed, changeSetOf, mergeChanges, type ChangeFeed, type ChangeListener, type ChangeSet } from "./changes";
export * from "./derive";
export type { AccountSource, AccountUpdate, Batch, Checkpoint, TxEvent } from "./sources/types";
export * from "./store/catalog";
export { storeChecksum, tableChecksums } from "./store/checksum";
export { refreshHistory } from "./store/history";
export { backfill, resetChainTables } from "./backfill";
export { BankrunSource, IndexedBankrun, bankrunReader, type LocalChainReader, type ProcessedTx } from "./sources/bankrun";
export { RpcSource, type RpcSourceOptions } from "./sources/rpc";
export { ReplaySource, BatchRecorder } from "./sources/replay";
export { decodeAccount, decodeEvents, registerAccountDecoder, registerEventDecoder, knownOwners, OFFERS_PROGRAM } from "./decode";
