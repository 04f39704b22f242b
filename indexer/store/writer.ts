/**
 * The write path: batches of account updates and transaction events into the store.
 *
 * - Ordering: an account update is applied only if its (slot, write_version) is newer than the
 *   stored one. An in-memory version map (loaded from the store at open, updated after each
 *   commit) rejects stale updates before any decoding or SQL; the upsert's WHERE clause repeats
 *   the rule in SQL, so the store never regresses even if the map were wrong.
 * - Idempotency: event rows are keyed (fills by offer+revision, closes by offer, settlements by
 *   position, pool cancels by pool, claim credits by transaction + program + event index) and
 *   inserted with ON CONFLICT DO NOTHING; a row read back from the node's history (TxEvent.fromHistory) replaces a row of the same signature, and a retracted
 *   transaction's rows are deleted (both for forks: indexer/sources/rpc/delivery-ledger.ts).
 * - Atomicity: rows of the batches and the checkpoint go in one database transaction.
 * - Single writer per store: run one Indexer per database.
 */
import { sql, type Kysely, type Transaction } from "kysely";
import type { Database, AccountTable, PoolOutcomesTable } from "./schema";
import { ACCOUNT_TABLES, TABLE_KEYS } from "./schema";
import type { Store } from "./db";
import { decodeAccount, decodeEvents, type AccountRow, type DecodedEvents } from "../decode";
import { newer, type AccountUpdate, type Batch, type Checkpoint } from "../sources/types";
import { changeSetOf, type ChangeListener, type WrittenRow } from "../changes";
import { contractsOfOffers, refreshHistory } from "./history";

interface Version {
  slot: number;
  wv: number;
  table: AccountTable | null;
  deleted?: boolean;
}

export interface WriterStats {
  batches: number;
  /** Account updates written (inserted, updated or tombstoned). */
  applied: number;
  /** Account updates rejected as not newer than the stored version. */
  stale: number;
  /** Account updates of unknown type (not decodable), skipped. */
  ignored: number;
  events: number;
}

const CHUNK = 400;

/** Children rows that replace a parent's on every accepted update (pool outcomes). */
export interface AccountChildren {
  pool_outcomes?: Omit<PoolOutcomesTable, "slot" | "write_version">[];
}

export class StoreWriter {
  private readonly versions = new Map<string, Version>();
  readonly stats: WriterStats = { batches: 0, applied: 0, stale: 0, ignored: 0, events: 0 };

  /** Told what each applied write changed, after its transaction commits (live updates, cache drops). */
  private readonly listeners = new Set<ChangeListener>();

  private readonly prepared = new Map<string, { run(params: unknown[]): unknown; cols: string[] }>();

  private constructor(
    readonly store: Store,
    readonly source: string,
  ) {}

  /**
   * SQLite hot path: better-sqlite3 statements prepared once per table and column set, run per
   * row inside the kysely transaction (same single connection). Same SQL as the PostgreSQL path.
   */
  private sqliteUpsert(table: AccountTable, rows: AccountRow[]): void {
    const cols = Object.keys(rows[0]);
    const key = `${table}:${cols.join(",")}`;
    let st = this.prepared.get(key);
    if (!st) {
      const q = upsertOneQuery(this.db, table, cols);
      const stmt = this.store.sqlite!.prepare(q.sql);
      st = { run: (p) => stmt.run(...p), cols };
      this.prepared.set(key, st);
    }
    const c = st.cols;
    for (const r of rows) st.run(c.map((k) => r[k]));
  }

  /** Returns the unsubscribe function. */
  onApplied(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  static async open(store: Store, source: string): Promise<StoreWriter> {
    const w = new StoreWriter(store, source);
    await w.loadVersions();
    return w;
  }

  get db(): Kysely<Database> {
    return this.store.db;
  }

  private async loadVersions(): Promise<void> {
    this.versions.clear();
    for (const table of ACCOUNT_TABLES) {
      const rows = await this.db.selectFrom(table).select(["address", "slot", "write_version", "deleted"]).execute();
      for (const r of rows) this.versions.set(r.address, { slot: Number(r.slot), wv: Number(r.write_version), table, deleted: Number(r.deleted) === 1 });
    }
  }

  /** Accounts the store holds live (not tombstoned). */
  knownAccounts(): string[] {
    return [...this.versions].filter(([, v]) => v.table !== null && !v.deleted).map(([k]) => k);
  }

  /** The stored version of an account, if any. */
  version(pubkey: string): { slot: number; writeVersion: number } | null {
    const v = this.versions.get(pubkey);
    return v ? { slot: v.slot, writeVersion: v.wv } : null;
  }

  async checkpoint(source = this.source): Promise<Checkpoint | null> {
    const r = await this.db.selectFrom("checkpoints").selectAll().where("source", "=", source).executeTakeFirst();
    return r ? { source: r.source, slot: Number(r.slot), writeVersion: Number(r.write_version), cursor: r.cursor } : null;
  }

  /** Applies one or more batches atomically, with the checkpoint of the last one. */
  async apply(batches: Batch | Batch[]): Promise<void> {
    const list = Array.isArray(batches) ? batches : [batches];
    if (list.length === 0) return;

    // 1. Stale rejection against stored and in-flight versions (no decoding, no SQL).
    const pending = new Map<string, AccountUpdate>();
    for (const b of list) {
      for (const u of b.accounts) {
        const p = pending.get(u.pubkey);
        const cur = p ? { slot: p.slot, wv: p.writeVersion } : this.versions.get(u.pubkey);
        if (cur && !newer(u.slot, u.writeVersion, cur.slot, cur.wv)) {
          this.stats.stale++;
          continue;
        }
        pending.set(u.pubkey, u);
      }
    }

    // 2. Decode.
    const upserts = new Map<AccountTable, AccountRow[]>();
    const tombstones: { table: AccountTable; u: AccountUpdate }[] = [];
    const children: { pool: string; u: AccountUpdate; rows: NonNullable<AccountChildren["pool_outcomes"]> }[] = [];
    const accepted: [string, Version][] = [];
    const written: WrittenRow[] = [];
    for (const u of pending.values()) {
      if (u.data === null) {
        const table = this.versions.get(u.pubkey)?.table ?? null;
        accepted.push([u.pubkey, { slot: u.slot, wv: u.writeVersion, table, deleted: true }]);
        if (table) {
          tombstones.push({ table, u });
          written.push({ table, address: u.pubkey, row: null });
        }
        continue;
      }
      const d = decodeAccount(u);
      if (!d) {
        this.stats.ignored++;
        continue;
      }
      let rows = upserts.get(d.table);
      if (!rows) upserts.set(d.table, (rows = []));
      rows.push({ address: u.pubkey, ...d.row, slot: u.slot, write_version: u.writeVersion, deleted: 0 });
      const ch = (d as { children?: AccountChildren }).children;
      if (ch?.pool_outcomes) children.push({ pool: u.pubkey, u, rows: ch.pool_outcomes });
      accepted.push([u.pubkey, { slot: u.slot, wv: u.writeVersion, table: d.table }]);
      written.push({ table: d.table, address: u.pubkey, row: d.row as Record<string, unknown> });
    }
    const txs = list.flatMap((b) => b.transactions);
    const retracted = txs.filter((t) => t.retracted).map((t) => t.signature);
    const liveEvents = decodeEvents(txs.filter((t) => !t.fromHistory && !t.retracted));
    const historyEvents = decodeEvents(txs.filter((t) => t.fromHistory && !t.retracted));
    const events = mergeEvents(liveEvents, historyEvents);
    // What retracted rows named: announced as changed like what the batch wrote.
    const gone = { offers: new Set<string>(), wallets: new Set<string>(), positions: new Set<string>(), pools: new Set<string>() };
    const last = list[list.length - 1];

    // 3. One transaction: rows, children, events, checkpoint.
    await this.db.transaction().execute(async (trx) => {
      for (const [table, rows] of upserts) {
        if (this.store.sqlite) this.sqliteUpsert(table, rows);
        else await upsertNewer(trx, table, rows);
      }
      for (const { table, u } of tombstones) {
        await trx
          .updateTable(table)
          .set({ deleted: 1, slot: u.slot, write_version: u.writeVersion } as never)
          .where("address", "=", u.pubkey)
          .where(sql<boolean>`(slot < ${u.slot} OR (slot = ${u.slot} AND write_version < ${u.writeVersion}))`)
          .execute();
      }
      for (const c of children) {
        await trx.deleteFrom("pool_outcomes").where("pool", "=", c.pool).execute();
        if (c.rows.length) {
          await trx
            .insertInto("pool_outcomes")
            .values(c.rows.map((r) => ({ ...r, pool: c.pool, slot: c.u.slot, write_version: c.u.writeVersion })))
            .execute();
        }
      }
      // Rows of retracted transactions (delivered live as the chain does not have them) go first,
      // so the history read delivered with a retraction inserts the chain's rows under their keys.
      for (const sig of retracted) {
        for (const r of await trx.deleteFrom("fills").where("signature", "=", sig).returning(["offer", "taker", "position"]).execute()) {
          gone.offers.add(r.offer);
          gone.wallets.add(r.taker);
          gone.positions.add(r.position);
        }
        for (const r of await trx.deleteFrom("offer_closes").where("signature", "=", sig).returning("offer").execute()) gone.offers.add(r.offer);
        for (const r of await trx.deleteFrom("settlements").where("signature", "=", sig).returning(["offer", "position"]).execute()) {
          gone.offers.add(r.offer);
          gone.positions.add(r.position);
        }
        for (const r of await trx.deleteFrom("pool_cancels").where("signature", "=", sig).returning("pool").execute()) gone.pools.add(r.pool);
        await trx.deleteFrom("claim_credits").where("signature", "=", sig).execute();
      }
      // Live rows: the first row of a key stays. History rows: the first row of a key stays too,
      // but a row of the same transaction is replaced (its slot and time are the chain's).
      for (const [rows, fromHistory] of [
        [liveEvents, false],
        [historyEvents, true],
      ] as const) {
        await insertEvents(trx, "fills", rows.fills, fromHistory);
        await insertEvents(trx, "offer_closes", rows.closes, fromHistory);
        await insertEvents(trx, "settlements", rows.settlements, fromHistory);
        await insertEvents(trx, "pool_cancels", rows.poolCancels, fromHistory);
        await insertEvents(trx, "claim_credits", rows.claimCredits, fromHistory);
      }
      const touched = await touchedContracts(trx, upserts, tombstones, liveEvents, historyEvents, gone.offers, (a) => {
        const v = this.versions.get(a);
        return v !== undefined && !v.deleted;
      });
      await refreshHistory(trx, touched.contracts, touched.since);
      await writeCheckpoint(trx, { source: this.source, slot: last.slot, writeVersion: last.writeVersion, cursor: last.cursor ?? "" });
    });

    for (const [k, v] of accepted) this.versions.set(k, v);
    this.stats.batches += list.length;
    this.stats.applied += accepted.length;
    this.stats.events += events.fills.length + events.closes.length + events.settlements.length + events.poolCancels.length + events.claimCredits.length;
    if (this.listeners.size) {
      const change = changeSetOf(last, written, events, gone);
      for (const l of this.listeners) {
        try {
          l(change);
        } catch {
          // A listener's failure must not fail a write that has committed.
        }
      }
    }
  }
}

/**
 * The contracts whose history (./history.ts) a batch may change, and for those whose every change
 * is dated, the earliest: an offer created (new to the store) or closed, a live take. The
 * contract's own row, an offer's account gone, a take read back from history (it may move a
 * live row's time) or retracted: the whole history again.
 */
async function touchedContracts(
  trx: Transaction<Database>,
  upserts: Map<AccountTable, AccountRow[]>,
  tombstones: { table: AccountTable; u: AccountUpdate }[],
  live: DecodedEvents,
  fromHistory: DecodedEvents,
  retractedOffers: Set<string>,
  known: (offer: string) => boolean,
): Promise<{ contracts: string[]; since: Map<string, number> }> {
  const whole = new Set((upserts.get("contracts") ?? []).map((r) => String(r.address)));
  const since = new Map<string, number>();
  const dated = (contract: string, at: number) => since.set(contract, Math.min(at, since.get(contract) ?? at));
  for (const r of upserts.get("offers") ?? []) {
    const contract = String(r.contract);
    if (!known(String(r.address))) dated(contract, Number(r.created_at));
    if (r.closed_at !== null && r.closed_at !== undefined) dated(contract, Number(r.closed_at));
  }
  const undated = new Set(retractedOffers);
  for (const t of tombstones) if (t.table === "offers") undated.add(t.u.pubkey);
  for (const f of fromHistory.fills) undated.add(f.offer);
  for (const c of await contractsOfOffers(trx, undated)) whole.add(c);
  const liveAt = new Map<string, number>();
  for (const f of live.fills) liveAt.set(f.offer, Math.min(Number(f.filled_at), liveAt.get(f.offer) ?? Number(f.filled_at)));
  if (liveAt.size) {
    for (let i = 0, list = [...liveAt.keys()]; i < list.length; i += CHUNK) {
      const rows = await trx
        .selectFrom("offers")
        .select(["address", "contract"])
        .where("address", "in", list.slice(i, i + CHUNK))
        .execute();
      for (const r of rows) dated(r.contract, liveAt.get(r.address)!);
    }
  }
  for (const c of whole) since.delete(c);
  return { contracts: [...whole, ...since.keys()], since };
}

type EventTable = "fills" | "offer_closes" | "settlements" | "pool_cancels" | "claim_credits";

/**
 * Inserts event rows under their table's key (TABLE_KEYS): a key already stored keeps its row,
 * except that a row read back from history replaces a stored row of the same transaction (a live
 * notification that named another fork's bank recorded that bank's slot and time).
 */
async function insertEvents<T extends EventTable>(trx: Transaction<Database>, table: T, rows: readonly object[], fromHistory: boolean): Promise<void> {
  const key = TABLE_KEYS[table];
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const cols = Object.keys(chunk[0]).filter((c) => !key.includes(c));
    await trx
      .insertInto(table)
      .values(chunk as never)
      .onConflict((oc) => {
        const target = oc.columns(key as never);
        if (!fromHistory) return target.doNothing();
        return target
          .doUpdateSet(Object.fromEntries(cols.map((c) => [c, sql.ref(`excluded.${c}`)])) as never)
          .where(sql.ref(`${table}.signature`), "=", sql.ref("excluded.signature"));
      })
      .execute();
  }
}

function mergeEvents(a: DecodedEvents, b: DecodedEvents): DecodedEvents {
  return {
    fills: [...a.fills, ...b.fills],
    closes: [...a.closes, ...b.closes],
    settlements: [...a.settlements, ...b.settlements],
    poolCancels: [...a.poolCancels, ...b.poolCancels],
    claimCredits: [...a.claimCredits, ...b.claimCredits],
  };
}

/** The same upsert as upsertNewer, for one row: SQL compiled by kysely, prepared once. */
function upsertOneQuery(db: Kysely<Database>, table: AccountTable, cols: string[]) {
  const row = Object.fromEntries(cols.map((c) => [c, null]));
  const rest = cols.filter((c) => c !== "address");
  return db
    .insertInto(table)
    .values(row as never)
    .onConflict((oc) =>
      oc
        .column("address")
        .doUpdateSet(Object.fromEntries(rest.map((c) => [c, sql.ref(`excluded.${c}`)])) as never)
        .where(
          sql<boolean>`(excluded.slot > ${sql.ref(`${table}.slot`)} OR (excluded.slot = ${sql.ref(`${table}.slot`)} AND excluded.write_version > ${sql.ref(`${table}.write_version`)}))`,
        ),
    )
    .compile();
}

async function upsertNewer(trx: Transaction<Database>, table: AccountTable, rows: AccountRow[]): Promise<void> {
  const cols = Object.keys(rows[0]).filter((c) => c !== "address");
  for (let i = 0; i < rows.length; i += CHUNK) {
    await trx
      .insertInto(table)
      .values(rows.slice(i, i + CHUNK) as never)
      .onConflict((oc) =>
        oc
          .column("address")
          .doUpdateSet(Object.fromEntries(cols.map((c) => [c, sql.ref(`excluded.${c}`)])) as never)
          .where(
            sql<boolean>`(excluded.slot > ${sql.ref(`${table}.slot`)} OR (excluded.slot = ${sql.ref(`${table}.slot`)} AND excluded.write_version > ${sql.ref(`${table}.write_version`)}))`,
          ),
      )
      .execute();
  }
}

export async function writeCheckpoint(trx: Kysely<Database> | Transaction<Database>, c: Checkpoint): Promise<void> {
  const row = { source: c.source, slot: c.slot, write_version: c.writeVersion, cursor: c.cursor, updated_at: Math.floor(Date.now() / 1000) };
  await trx
    .insertInto("checkpoints")
    .values(row)
    .onConflict((oc) => oc.column("source").doUpdateSet({ slot: row.slot, write_version: row.write_version, cursor: row.cursor, updated_at: row.updated_at }))
    .execute();
}
