/**
 * The roles one service process can take (`scripts/start.ts --role`), and what each runs:
 *
 * - `api`: the HTTP API (REST, GraphQL, writes) over the shared store; stateless, any number of
 *   replicas. Its read caches follow the indexer's changes through PostgreSQL NOTIFY.
 * - `indexer`: the chain -> store indexer. Any number may run; one acts (leadership), the others
 *   stand by and take over when it dies, resuming from the store's checkpoint.
 * - `worker`: the settlement worker, the same way: one acts, the others stand by.
 * - `all` (default): the three in one process, as the local stack runs. On PostgreSQL its indexer
 *   and worker still campaign, so an `all` process can be joined by replicas of any role.
 *
 * On SQLite (a file only one process writes) only `all` is valid, without leadership.
 */
import type { Logger } from "pino";
import { LocalChangeFeed, type ChangeFeed } from "../indexer/changes";
import { isPostgresUrl, openStore, type Store } from "../indexer/store/db";
import { StoreWriter } from "../indexer/store/writer";
import type { BatchSink, Checkpoint } from "../indexer/sources/types";
import { PgChangeFeed } from "../service/changes/pg-change-feed";
import { CompiledQuery } from "kysely";
import { Leadership, leaderPid, type Duty, type LeaderRole, type LeadershipOptions } from "../service/leadership/leadership";
import { AdminConflict } from "../graphql/admin-http";
import type { ServiceChain } from "../service/chain/service-chain";
import type { ServiceKey } from "../service/custody/crypto";
import { assembleStack, observabilityOf, type AppBuilder, type AppParts, type ServicePartsOptions } from "./service-parts";
import { ConfigError } from "./config/cli";
import { ROLES, type Role } from "./config/roles";

// The names live apart (./config/roles.ts) so the entry points parse --role without loading this.
export { ROLES, type Role } from "./config/roles";

/** The role named on the command line, or a clear refusal. */
export function parseRole(v: string | undefined, storeUrl: string): Role {
  const role = (v ?? "all") as Role;
  if (!ROLES.includes(role)) throw new ConfigError(`--role must be one of ${ROLES.join(", ")}, got ${JSON.stringify(v)}`);
  if (role !== "all" && !isPostgresUrl(storeUrl))
    throw new ConfigError(`--role ${role} needs a PostgreSQL store (--store postgres://...): a SQLite store belongs to one process, which runs --role all`);
  return role;
}

export const runs = (role: Role, part: "api" | LeaderRole) => role === "all" || role === part;

/** A logger call in the shape the leadership and the feed take. */
export function logTo(log: Pick<Logger, "info">): (msg: string, extra?: Record<string, unknown>) => void {
  return (msg, extra) => log.info(extra ?? {}, msg);
}

/**
 * The change feed of a process: in-process on SQLite or when `shared` is off; else PostgreSQL
 * NOTIFY, listening (resolved once LISTEN is in effect) when the process serves reads.
 */
export async function changeFeedFor(store: Store, o: { listen: boolean; publish: boolean; shared: boolean; log?: Pick<Logger, "info"> }): Promise<ChangeFeed> {
  if (store.engine !== "postgres" || !o.shared) return new LocalChangeFeed();
  const feed = new PgChangeFeed({ storeUrl: store.url, log: o.log ? logTo(o.log) : undefined });
  if (o.listen) await feed.listen();
  return feed;
}

/** A duty under leadership on PostgreSQL; started at once (and alone) on SQLite. */
export function leadOrRun(
  store: Store,
  role: LeaderRole,
  duty: Duty,
  o: Omit<LeadershipOptions, "storeUrl" | "role"> = {},
): { leadership: Leadership | null; start(): Promise<void>; stop(): Promise<void> } {
  if (store.engine !== "postgres") return { leadership: null, start: () => duty.start(), stop: () => duty.stop() };
  const leadership = new Leadership({ ...o, storeUrl: store.url, role }, duty);
  return { leadership, start: async () => leadership.start(), stop: () => leadership.stop() };
}

/**
 * The operator endpoint's `run-worker` (graphql/admin-http.ts) in a process of `role`: a pass of
 * this process's settlement worker, only where that worker acts. An `api` process has no worker of
 * its own, and a standby's pass would run beside the leader's; both are refused (AdminConflict,
 * 409) with the reason and, for a standby, which session leads (the `sessionPid` of the leader's
 * "leadership: acquired, acting" log line). Leadership is checked again by the pass itself: an
 * item it is about to send after losing the lead stops it (stack/cluster-stack.ts).
 */
export function operatorRunWorker(o: {
  role: Role;
  worker: { drain(): Promise<unknown> };
  /** The worker's campaign (null on SQLite, where the one process runs it). */
  leadership: Leadership | null;
  store: Store;
}): () => Promise<unknown> {
  return async () => {
    if (!runs(o.role, "worker"))
      throw new AdminConflict(
        `run-worker: this process runs role ${o.role}, without the settlement worker; the acting worker (role worker or all) runs its passes by itself`,
      );
    if (o.leadership && !o.leadership.active) {
      const pid = await leaderPid((q, p) => o.store.db.executeQuery<{ pid: number }>(CompiledQuery.raw(q, p)), o.store.url, "worker").catch(() => null);
      throw new AdminConflict(
        `run-worker: this process's settlement worker stands by (not the leader); ${
          pid === null
            ? "no worker leads at the moment (a takeover is under way)"
            : `the acting worker is the process whose leadership session is server pid ${pid}`
        }, and it runs its passes by itself`,
      );
    }
    return o.worker.drain();
  };
}

/** What the runner needs of an indexer source. */
export interface RunnableSource {
  start(from: Checkpoint | null, sink: BatchSink): Promise<void>;
  stop(): Promise<void>;
  caughtUpTo?(slot: number): Promise<boolean>;
}

/**
 * The indexer as a duty: on start it opens a writer (its version map loaded from the store as it is
 * now, the previous leader's writes included) and starts a source from the stored checkpoint; on
 * stop the source stops. The lag watch asks the current source.
 */
export class IndexerRunner<S extends RunnableSource> implements Duty {
  source: S | null = null;
  writer: StoreWriter | null = null;
  private starting: Promise<void> | null = null;
  /** Starts (ms, performance.now()) and how long each took to resume (the takeover's own share). */
  readonly starts: { at: number; ms: number; from: number | null }[] = [];

  constructor(
    private readonly store: Store,
    private readonly name: string,
    private readonly make: (writer: StoreWriter) => S,
    private readonly sink: (writer: StoreWriter) => BatchSink,
    private readonly onWriter?: (writer: StoreWriter) => void,
  ) {}

  start(): Promise<void> {
    this.starting = (async () => {
      const t0 = performance.now();
      const writer = await StoreWriter.open(this.store, this.name);
      this.onWriter?.(writer);
      const source = this.make(writer);
      this.writer = writer;
      this.source = source;
      const from = await writer.checkpoint();
      const sink = this.sink(writer);
      // Fenced: once stopped (leadership lost), a batch the source still delivers is refused.
      await source.start(from, async (batch) => {
        if (this.source !== source) throw new Error("the indexer is no longer active here (leadership lost)");
        await sink(batch);
      });
      this.starts.push({ at: t0, ms: performance.now() - t0, from: from?.slot ?? null });
    })();
    return this.starting;
  }

  async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    const s = this.source;
    this.source = null;
    await s?.stop();
  }

  /** Whether this runner indexes now (it leads), rather than standing by. */
  acting(): boolean {
    return this.source !== null;
  }

  /**
   * A standby has no lag of its own: the active indexer's /readyz reports the lag (and an `all`
   * standby, which serves the API, reads it from the store: stack/service-parts.ts `lagFrom`).
   */
  async caughtUpTo(slot: number): Promise<boolean> {
    if (!this.source) return true;
    return (await this.source.caughtUpTo?.(slot)) ?? false;
  }

  async checkpoint(): Promise<Checkpoint | null> {
    return this.writer?.checkpoint() ?? null;
  }
}

/** A gateway's head slot reader, when it has one: the local engine's clock, or an RPC gateway's getSlot at its commitment. */
function headSlotOf(gateway: object): (() => Promise<number>) | null {
  const g = gateway as { getSlot?: () => Promise<bigint | number>; connection?: { getSlot(c?: string): Promise<number> }; commitment?: string };
  if (typeof g.getSlot === "function") return async () => Number(await g.getSlot!());
  if (g.connection) return () => g.connection!.getSlot(g.commitment);
  return null;
}

/**
 * An `api` process on a chain the caller already has (the local stack's, in tests; the cluster
 * stack builds its own the same way): the service parts and HTTP app over the PostgreSQL store at
 * `storeUrl`, no indexer, its read caches following the store's NOTIFY feed, its readiness the
 * lag the acting indexer recorded in the store against this chain's head.
 */
export async function startApiReplica<C extends ServiceChain>(
  o: Omit<ServicePartsOptions, "observability"> & {
    chain: C;
    storeUrl: string;
    serviceKey: ServiceKey;
    observability?: ServicePartsOptions["observability"];
    app?: AppBuilder<AppParts & { store: Store }>;
    port?: number;
    /** The chain's head slot for the readiness lag (default: the gateway's `getSlot`, where it has one). */
    headSlot?: () => Promise<number>;
  },
) {
  if (!isPostgresUrl(o.storeUrl)) throw new Error("an API replica needs a PostgreSQL store");
  const obs = observabilityOf(o);
  const store = await openStore(o.storeUrl);
  const changes = await changeFeedFor(store, { listen: true, publish: false, shared: true, log: obs.log });
  const idle = { stop: async () => undefined, caughtUpTo: async () => true, checkpoint: async () => null };
  // Readiness: the lag of the indexer behind it, from the progress the acting indexer records in the store.
  return assembleStack(
    { chain: o.chain, store, source: idle, writer: idle, changes },
    { ...o, obs, headSlot: o.headSlot ?? headSlotOf(o.chain.gateway), lagFrom: "store", app: o.app as never },
  );
}
