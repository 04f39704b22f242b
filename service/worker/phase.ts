/**
 * What a phase of the settlement worker is, and what every phase is given for one pass. A phase
 * (one file each in ./phases/) is one kind of action: its candidate query over the store, which
 * is also its "still due" rule (`WorkerFailures.prune` forgets failures by it), and its action,
 * decided from the chain. How candidates are read, tried, counted and remembered when they fail
 * is the same for every phase (./run-phase.ts).
 */
import type { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import type { Kysely, SelectQueryBuilder } from "kysely";
import type { Database } from "../../indexer/store/schema";
import { offersAccountKind, type OffersClient } from "../../idl/client/offers";
import { poolsAccountKind, type PoolsClient } from "../../idl/client/pools";
import type { ChainGateway } from "../chain/gateway";
import type { CustodyDatabase } from "../custody/schema";
import type { PassCounts } from "../observability/metrics";
import type { WorkKind } from "./failures";

export type Db = Kysely<Database & CustodyDatabase>;
// A phase's candidate query: its tables differ per phase; the keyset, exclusion and order are
// added to it as SQL fragments on named columns.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Candidates = SelectQueryBuilder<any, any, any>;

/** Counts of successful actions, one per phase (a pass with none of them found nothing to do). */
export const ACTIONS = [
  "voided",
  "closed",
  "settled",
  "reclaimedPositions",
  "reclaimedOffers",
  "poolsResolved",
  "poolsCanceled",
  "participantsSettled",
  "participantsRefunded",
] as const;

export interface Phase {
  kind: WorkKind;
  count: (typeof ACTIONS)[number];
  /** Candidate rows (store), before ordering, exclusion and keyset: the items still due. */
  query: () => Candidates;
  /** Key columns, oldest due first; the last one is the item's address (unique). */
  keys: string[];
  /** Re-reads the chain: the instructions to send, or null when the item needs nothing. */
  act: (address: string) => Promise<TransactionInstruction[] | null>;
}

/** One action on one account. */
export interface WorkItem {
  kind: WorkKind;
  address: string;
}

export interface WorkerReport extends PassCounts {
  /** `<kind> <address>: <reason>` of this pass's failures. */
  errors: string[];
}

/** The report's counts that add up over passes (`deferred` is the last pass's). */
export const COUNTS = [...ACTIONS, "skipped", "failed", "retried"] as const;
export const emptyReport = (): WorkerReport => ({
  voided: 0,
  closed: 0,
  settled: 0,
  reclaimedPositions: 0,
  reclaimedOffers: 0,
  poolsResolved: 0,
  poolsCanceled: 0,
  participantsSettled: 0,
  participantsRefunded: 0,
  skipped: 0,
  failed: 0,
  retried: 0,
  deferred: 0,
  errors: [],
});

/** What every phase of one pass is given. */
export interface Pass {
  db: Db;
  gateway: ChainGateway;
  /** The service's wallet: it signs, pays the fees and the rent it reclaims. */
  payer: Keypair;
  /** The chain's clock (unix seconds) when the pass began. */
  now: bigint;
  /** The treasury at start: used when a program's Config cannot be read. */
  treasury: PublicKey;
}

/** `f`'s promise, made on the first call and shared by the later ones. */
export function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

/** An account's data if `programId` owns it and `isKind` recognises it, else null. */
export async function programAccount(pass: Pass, address: PublicKey, programId: PublicKey, isKind: (data: Buffer) => boolean): Promise<Buffer | null> {
  const a = await pass.gateway.getAccount(address);
  if (!a || !a.owner.equals(programId) || !isKind(a.data)) return null;
  return a.data;
}

/** An offers program account of `kind` (the chain's truth for an offers phase), or null. */
export function offersAccount(pass: Pass, client: OffersClient, address: PublicKey, kind: "contract" | "offer" | "position"): Promise<Buffer | null> {
  return programAccount(pass, address, client.program.programId, (d) => offersAccountKind(d) === kind);
}

/** A pools program account of `kind` (the chain's truth for a pools phase), or null. */
export function poolsAccount(pass: Pass, pools: PoolsClient, address: PublicKey, kind: "pool" | "participant"): Promise<Buffer | null> {
  return programAccount(pass, address, pools.program.programId, (d) => poolsAccountKind(d) === kind);
}

/**
 * The fee treasury a program's Config names now: the authority may move it (set_treasury) when
 * the old one can no longer receive, and settlements must follow without a restart. Read at most
 * once per pass (the phase that pays fees makes it once per pass), not once per settlement.
 */
export function configTreasury(
  pass: Pass,
  config: PublicKey,
  programId: PublicKey,
  isConfig: (data: Buffer) => boolean,
  decode: (data: Buffer) => { treasury: PublicKey },
): () => Promise<PublicKey> {
  return once(async () => {
    const d = await programAccount(pass, config, programId, isConfig);
    return d ? decode(d).treasury : pass.treasury;
  });
}
