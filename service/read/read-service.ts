/**
 * The read side of the service, shared by the REST routes, the GraphQL schema, the share pages and
 * live updates: the one object they hold. It decides what is kept between requests and for whom
 * (shared anonymous results, one caller's own, ./read-cache.ts) and hands the work to the rooms
 * of the read side: settings.ts, contracts.ts, offer-queries.ts (which offers, in what order),
 * offer-shaping.ts (rows to API objects), fill-reads.ts, pool-reads.ts and share-format.ts.
 * Everything comes from the indexer's store; chain time ("now") comes from the caller (the chain's
 * clock in the local stack and tests, wall time against a cluster).
 *
 * `forCaller` gives a REST request a view of the service whose reads wait for the caller's turn
 * (read admission). A view is made per request with Object.create and shares everything with the
 * service through its prototype: so the service sets its fields once, in the constructor, and
 * keeps what changes inside objects (the clock reading), never in a field it reassigns.
 */
import { walletPicks, type WalletPick } from "./wallet-picks";
import type { Kysely } from "kysely";
import { PostgresAdapter } from "kysely";
import { deriveFill, type Database, type DerivedFill, type PoolAggregate } from "../../indexer";
import type { ChangeSet } from "../../indexer/changes";
import * as contracts from "./contracts";
import type { OfferRow } from "./contracts";
import { CompiledReads } from "./compiled-reads";
import { FillReads } from "./fill-reads";
import { OfferQueries, filterKey } from "./offer-queries";
import { OddsOrder, type OddsKey } from "./offer-odds-order";
import { OfferShaper } from "./offer-shaping";
import type { BrowseParams, MineRole, PageParams } from "./params";
import { PoolReads } from "./pool-reads";
import { ReadCache, type StoreChanges } from "./read-cache";
import {
  offsetOf,
  pagination,
  type Contract,
  type FillKey,
  type KeysetPage,
  type KeysetResult,
  type Offer,
  type OfferKey,
  type OfferList,
  type Pagination,
  type Settings,
  type ShareableOffer,
  type ViewerPosition,
} from "./read-model";
import { SettingsReader } from "./settings";
import { shareableOf } from "./share-format";

export type * from "./read-model";

export interface ReadServiceOptions {
  db: Kysely<Database>;
  /** Chain time in unix seconds. */
  now: () => Promise<number> | number;
  /** Public site base for links (shareable offers, pool canonicalUrl). */
  publicBaseUrl?: string;
  settingsTtlMs?: number;
  embedTtlMs?: number;
  /** Anonymous list/offer responses (the shared part of signed-in ones too) are reused for at
   *  most this long (default 1000 ms), and dropped when the indexer applies a write (./read-cache.ts). 0 disables. */
  anonymousTtlMs?: number;
  /** A signed-in caller's own reads (`mine`, the viewer blocks of a page or offer) are reused
   *  for that caller for at most this long (default: anonymousTtlMs), dropped like the anonymous ones. 0 disables. */
  viewerTtlMs?: number;
  /** Applied writes, heard as they commit (StoreWriter.onApplied or a ChangeFeed); without it the indexed slot is polled. */
  changes?: StoreChanges;
  /** How long a list's total is reused while no write is applied (default 5000 ms). 0 counts on every request. */
  countTtlMs?: number;
  /** How often the indexed slot is read when `changes` is absent (default 100 ms). */
  slotPollMs?: number;
  /** How long a chain clock reading is reused (default 250 ms). */
  clockCacheMs?: number;
  /** Which of these wallets are blocked from wagering (compliance); without it, none. */
  blockedWallets?: (wallets: string[]) => Promise<Set<string>>;
  /** Moves when blockedWallets' answers may have changed (custody's read cache version); without it, never. */
  blockedVersion?: () => number;
  /**
   * Runs a read the caches cannot answer when `caller`'s turn comes (service/rate/admission.ts),
   * for the views `forCaller` makes (the REST requests'); without it, and outside a view, at once.
   * Answers held in the cache never wait.
   */
  admit?: <T>(read: () => Promise<T>, caller: string) => Promise<T>;
}

/** A page as shared between callers: its rows (for viewer blocks), its anonymous offers, its pagination. */
interface SharedPage {
  rows: OfferRow[];
  offers: Offer[];
  pagination: Pagination;
}

export class ReadService {
  readonly db: Kysely<Database>;
  readonly publicBaseUrl: string;
  /** Its stats are on /metrics (graphql/cache-metrics.ts). */
  readonly cache: ReadCache;
  private readonly settingsReader: SettingsReader;
  private readonly queries: OfferQueries;
  private readonly oddsOrder: OddsOrder;
  private readonly shaper: OfferShaper;
  private readonly fillReads: FillReads;
  private readonly pools: PoolReads;
  private readonly unsubscribe: (() => void) | null;

  /** Compliance flags for canTake (stack/app.ts passes custody's). */
  readonly blockedWallets: (wallets: string[]) => Promise<Set<string>>;
  /** Moves when blockedWallets' answers may have changed (custody's read cache version): per-caller results key on it. */
  readonly blockedVersion: () => number;
  /** How a read the caches cannot answer runs: at once (null), or in a view, when its caller's turn comes. */
  private readonly admit: (<T>(load: () => Promise<T>) => Promise<T>) | null = null;

  constructor(private readonly o: ReadServiceOptions) {
    this.db = o.db;
    this.blockedWallets = o.blockedWallets ?? (async () => new Set());
    this.blockedVersion = o.blockedVersion ?? (() => 0);
    this.publicBaseUrl = (o.publicBaseUrl ?? "http://127.0.0.1:8080").replace(/\/$/, "");
    this.cache = new ReadCache({ indexedPosition: () => this.indexedPosition(), heard: !!o.changes, pollMs: o.slotPollMs });
    this.settingsReader = new SettingsReader(o.db, o.settingsTtlMs ?? 30_000);
    const engine = o.db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
    const compiled = new CompiledReads(o.db);
    this.queries = new OfferQueries({ db: o.db, engine, cache: this.cache, countTtlMs: o.countTtlMs ?? 5_000, compiled });
    this.oddsOrder = new OddsOrder(this.queries, this.cache, o.countTtlMs ?? 5_000, () => this.now());
    this.shaper = new OfferShaper({
      compiled,
      db: o.db,
      configRow: () => this.settingsReader.configRow(),
      now: () => this.now(),
      blockedWallets: (w) => this.blockedWallets(w),
    });
    this.fillReads = new FillReads(o.db);
    this.pools = new PoolReads(o.db, o.embedTtlMs ?? 15_000, `${this.publicBaseUrl}/polls`);
    this.unsubscribe = o.changes?.subscribe((c) => this.onChange(c)) ?? null;
  }

  /** Stops hearing the store writer. */
  close(): void {
    this.unsubscribe?.();
  }

  /** The latest chain clock reading, in an object the views share (see the class comment). */
  private readonly clock: { reading: { at: number; value: Promise<number> } | null } = { reading: null };

  /**
   * Chain time, read at most every clockCacheMs (a chain clock read is a round trip to the node).
   * The reading itself is kept, not only its value: the requests in flight when it expires share
   * one read instead of each asking the node (under issue 21's distinct-query load they made the
   * clock a sixteenth of the server's time). A failed read is not kept.
   */
  now(): Promise<number> {
    const c = this.clock;
    if (!c.reading || Date.now() - c.reading.at > (this.o.clockCacheMs ?? 250)) {
      const value = Promise.resolve(this.o.now()).then(Number);
      const reading = (c.reading = { at: Date.now(), value });
      value.catch(() => {
        if (c.reading === reading) c.reading = null;
      });
    }
    return c.reading.value;
  }

  /**
   * This service as `caller`'s request sees it: the reads the caches cannot answer wait for the
   * caller's turn (the `admit` option); a read the request makes while one of its own runs does
   * not wait again (a read inside another, as withViewer's: waiting there could hold every slot
   * with reads waiting for themselves). Without `admit`, the service itself. Cheap: one object.
   */
  forCaller(caller: string): ReadService {
    const admit = this.o.admit;
    if (!admit) return this;
    let running = 0;
    const own = <T>(load: () => Promise<T>): Promise<T> =>
      running > 0
        ? load()
        : admit(async () => {
            running++;
            try {
              return await load();
            } finally {
              running--;
            }
          }, caller);
    return Object.create(this, { admit: { value: own } }) as ReadService;
  }

  /**
   * Reads that do not depend on the caller are shared between callers for up to anonymousTtlMs,
   * keyed by their parameters, until the indexer applies a write (./read-cache.ts).
   */
  async anonymous<T>(key: string, load: () => Promise<T>, keep?: (value: T) => boolean): Promise<T> {
    const ttl = this.anonymousTtl();
    if (ttl <= 0) return this.admit ? this.admit(load) : load();
    // Derived fields (canTake, open contracts) depend on chain time, a second-resolution clock.
    return this.cached(`a:${await this.now()}:${key}`, ttl, load, keep);
  }

  /**
   * The cache's answer, or its load when the caller's turn comes (`admit`): the turn is taken
   * before the cache's shared load, never inside it, so a read let through never waits on one
   * that is still queued.
   */
  private cached<T>(key: string, ttl: number, load: () => Promise<T>, keep?: (value: T) => boolean): Promise<T> {
    const admit = this.admit;
    if (!admit || this.cache.holds(key, ttl)) return this.cache.get(key, ttl, load, keep);
    return admit(() => this.cache.get(key, ttl, load, keep));
  }

  /**
   * One caller's own reads (`mine`, the caller's positions on a page), kept for that caller like
   * the anonymous ones; for the HTTP layer too (a per-caller response cache).
   */
  forViewer<T>(wallet: string, key: string, load: () => Promise<T>): Promise<T> {
    const ttl = this.viewerTtl();
    if (ttl <= 0) return this.admit ? this.admit(load) : load();
    return this.now().then((now) => this.cached(`v:${wallet}:${now}:${key}`, ttl, load));
  }

  /**
   * Whether an answer may be handed out again (a kept page, a caller's kept overlay): with both
   * TTLs at 0 every answer is a new object, and a per-object memo of its JSON would only cost.
   */
  get keepsAnswers(): boolean {
    return this.anonymousTtl() > 0 || this.viewerTtl() > 0;
  }

  private anonymousTtl(): number {
    return this.o.anonymousTtlMs ?? 1_000;
  }

  private viewerTtl(): number {
    return this.o.viewerTtlMs ?? this.anonymousTtl();
  }

  // ---- settings and contracts ---------------------------------------------------------------

  settings(): Promise<Settings> {
    return this.settingsReader.settings();
  }

  /** Open contracts before their cutoff, soonest cutoff first, with catalog metadata. */
  openContracts(): Promise<Contract[]> {
    return this.anonymous("contracts", async () => contracts.openContracts(this.db, await this.now()));
  }

  contractsByAddress(addresses: readonly string[]): Promise<Map<string, Contract>> {
    return contracts.contractsByAddress(this.db, addresses);
  }

  // ---- offers: numbered pages (REST) -------------------------------------------------------

  /**
   * Browse: newest first; `view` browse = Open, results = Closed or Settled. A signed-in caller
   * gets the anonymous page (shared) with only the viewer blocks derived for them.
   */
  async browse(p: BrowseParams, viewerWallet: string | null): Promise<OfferList> {
    const list = async () => {
      if (p.sort !== "bestOdds") return this.queries.browse(p);
      const { keys, total } = await this.oddsOrder.page(p, offsetOf(p));
      return { rows: await this.queries.rows(keys), total };
    };
    if (this.anonymousTtl() <= 0) return this.listFor(await list(), p, viewerWallet);
    const key = `browse:${filterKey(p)}:${p.sort === "bestOdds" ? "bestOdds:" : ""}${p.pageSize}:${offsetOf(p)}`;
    const page = await this.anonymous(key, async () => this.sharedPage(await list(), p));
    return this.listResponse(viewerWallet === null ? page.offers : await this.withViewer(page, viewerWallet, key), page.pagination);
  }

  /**
   * Offers the viewer created or holds a position on, newest first; `role` narrows it to one of
   * the two. Each carries the viewer block of its role (settlement summary or position).
   */
  async mine(p: BrowseParams & { role?: MineRole }, wallet: string): Promise<OfferList> {
    if (this.viewerTtl() <= 0) return this.listFor(await this.queries.mine(p, wallet), p, wallet);
    const pageKey = `mine:${filterKey(p)}:${p.role ?? ""}:${p.pageSize}:${offsetOf(p)}`;
    const page = await this.forViewer(wallet, pageKey, async () => this.sharedPage(await this.queries.mine(p, wallet), p));
    return this.listResponse(await this.withViewer(page, wallet, pageKey), page.pagination);
  }

  /**
   * Any wallet's positions (the offers it took, each with that wallet's position) and pool picks:
   * positions are public on chain, and a taker who keeps their own keys has no token for `mine`.
   * Anyone may ask, so nothing in it depends on the wallet's compliance state (shape's publicRead).
   */
  async walletPositions(p: BrowseParams, wallet: string): Promise<OfferList & { picks: WalletPick[] }> {
    const [r, picks] = await Promise.all([this.queries.mine({ ...p, role: "taker" }, wallet), walletPicks(this.db, wallet, await this.now())]);
    return { offers: await this.shaper.shape(r.rows, wallet, { publicRead: true }), pagination: pagination(p, r.total), picks };
  }

  /** A wallet's pool picks (./wallet-picks.ts). */
  async walletPicks(wallet: string): Promise<WalletPick[]> {
    return walletPicks(this.db, wallet, await this.now());
  }

  /** Open offers formatted for sharing into a chat: one text line and a link each. */
  async shareable(p: BrowseParams): Promise<{ offers: ShareableOffer[]; pagination: Pagination }> {
    const { offers, pagination: pg } = await this.browse({ ...p, view: "browse" }, null);
    return { offers: offers.map((o) => this.shareableOf(o)), pagination: pg };
  }

  /** One offer as a line of chat text and its link. */
  shareableOf(o: Offer): ShareableOffer {
    return shareableOf(o, this.publicBaseUrl);
  }

  /** One offer; signed in, the shared anonymous offer with the caller's viewer block. */
  async offer(address: string, viewerWallet: string | null): Promise<Offer | null> {
    if (this.anonymousTtl() <= 0) {
      if (viewerWallet === null) {
        const row = await this.queries.one(address);
        return row ? (await this.shaper.shape([row], null))[0] : null;
      }
      // The caller's position comes with the row. Its creator's view also lists every position
      // on the offer: shaping reads those itself.
      const found = await this.queries.oneWithPosition(address, viewerWallet);
      if (!found) return null;
      const held =
        found.row.creator === viewerWallet ? undefined : { positionOf: new Map(found.position ? [[address, found.position]] : []), creatorPositions: [] };
      return (await this.shaper.shape([found.row], viewerWallet, { held }))[0];
    }
    // A miss is not kept: an address asked for just before its offer is indexed must not stay 404.
    const page = await this.anonymous(
      `offer:${address}`,
      async () => {
        const row = await this.queries.one(address);
        return row ? this.sharedPage({ rows: [row], total: 1 }, { page: 1, pageSize: 1 }) : null;
      },
      (p) => p !== null,
    );
    if (!page) return null;
    if (viewerWallet === null) return page.offers[0];
    return (await this.withViewer(page, viewerWallet, `offer:${address}`))[0];
  }

  async fills(address: string, p: PageParams): Promise<{ fills: DerivedFill[]; pagination: Pagination }> {
    const r = await this.fillReads.page(address, { key: null, forward: true, limit: p.pageSize, offset: offsetOf(p) });
    return { fills: r.rows.map(deriveFill), pagination: pagination(p, r.total) };
  }

  // ---- keyset pages and lookups by id (GraphQL connections, node(id:), live updates) ----------

  /** A keyset page of offers (OfferQueries.keyset) with the viewer block for `viewerWallet`. */
  async offersKeyset(
    p: Omit<BrowseParams, "page" | "pageSize" | "offset"> & { role?: MineRole },
    page: KeysetPage<OfferKey>,
    opts: { viewerWallet: string | null; mineOf?: string; publicRead?: boolean },
  ): Promise<KeysetResult<Offer, OfferKey>> {
    const r = await this.queries.keyset(p, page, opts.mineOf);
    return {
      items: await this.shaper.shape(r.rows, opts.viewerWallet, { publicRead: opts.publicRead }),
      keys: r.rows.map((row) => ({ createdAt: Number(row.created_at), address: row.address })),
      more: r.more,
      total: r.total,
    };
  }

  /** A keyset page of offers in bestOdds order (./offer-odds-order.ts), as offersKeyset. */
  async offersByOddsKeyset(
    p: Omit<BrowseParams, "page" | "pageSize" | "offset"> & { role?: MineRole },
    page: KeysetPage<OddsKey>,
    opts: { viewerWallet: string | null; mineOf?: string },
  ): Promise<KeysetResult<Offer, OddsKey>> {
    const r = await this.oddsOrder.keyset(p, page, opts.mineOf);
    const rows = await this.queries.rows(r.keys);
    // An offer gone between the two reads is left out with its key.
    const kept = new Set(rows.map((row) => row.address));
    return { items: await this.shaper.shape(rows, opts.viewerWallet), keys: r.keys.filter((k) => kept.has(k.address)), more: r.more, total: r.total };
  }

  /** A page of an offer's fills in revision order next to a key (see offersKeyset). */
  async fillsKeyset(address: string, page: KeysetPage<FillKey>): Promise<KeysetResult<DerivedFill, FillKey>> {
    const r = await this.fillReads.page(address, page);
    return { items: r.rows.map(deriveFill), keys: r.rows.map((f) => ({ revision: Number(f.revision) })), more: r.more, total: r.total };
  }

  /** Offers by address in one query (absent ones left out), with the viewer block. */
  async offersByAddress(addresses: readonly string[], viewerWallet: string | null): Promise<Map<string, Offer>> {
    const offers = await this.shaper.shape(await this.queries.among(addresses, {}), viewerWallet);
    return new Map(offers.map((o) => [o.address, o]));
  }

  /**
   * The offers among `addresses` that pass the browse filters `p`, newest first, shaped for the
   * viewer: which of the offers a change touched a filtered list shows (live updates).
   */
  async offersAmong(addresses: readonly string[], p: Partial<BrowseParams>, viewerWallet: string | null): Promise<Offer[]> {
    return this.shaper.shape(await this.queries.among(addresses, p), viewerWallet);
  }

  /** One fill by its offer and revision. */
  fill(offer: string, revision: number): Promise<DerivedFill | null> {
    return this.fillReads.one(offer, revision);
  }

  /** An offer's fills of the given revisions, oldest first (the fills a change announced). */
  fillsAt(address: string, revisions: readonly number[]): Promise<DerivedFill[]> {
    return this.fillReads.at(address, revisions);
  }

  /** A position as its taker sees it; null for anyone else (positions are shown to their taker only). */
  async positionOf(address: string, viewerWallet: string | null): Promise<{ offer: string; position: ViewerPosition } | null> {
    if (!viewerWallet) return null;
    const row = await this.db.selectFrom("positions").select(["offer", "taker"]).where("address", "=", address).executeTakeFirst();
    if (!row || row.taker !== viewerWallet) return null;
    const position = (await this.offer(row.offer, viewerWallet))?.viewer.position ?? null;
    return position ? { offer: row.offer, position } : null;
  }

  // ---- pools --------------------------------------------------------------------------------

  /** The aggregate of a public pool by slug or address; null for unknown/ineligible alike. */
  poolAggregate(identifier: string): Promise<PoolAggregate | null> {
    return this.pools.aggregate(identifier, () => this.now());
  }

  // ---- the store's position -----------------------------------------------------------------

  /**
   * The store's generation as this process knows it (./read-cache.ts): it moves with every write
   * heard, or when the polled indexer position moves. Other response caches key on it.
   */
  generation(): Promise<number> {
    return this.cache.sync();
  }

  /** The highest slot the indexer has applied (freshness for clients). */
  async indexedSlot(): Promise<number> {
    const r = await this.db
      .selectFrom("checkpoints")
      .select((eb) => eb.fn.max<number>("slot").as("slot"))
      .executeTakeFirst();
    return Number(r?.slot ?? 0);
  }

  /** The highest checkpoint slot and write version, as "slot.writeVersion". */
  private async indexedPosition(): Promise<string> {
    const r = await this.db
      .selectFrom("checkpoints")
      .select((eb) => [eb.fn.max<number>("slot").as("slot"), eb.fn.max<number>("write_version").as("wv")])
      .executeTakeFirst();
    return `${r?.slot ?? 0}.${r?.wv ?? 0}`;
  }

  /**
   * A change the indexer announced (through the change feed, possibly from another process): the
   * shared anonymous responses go at once, pool embeds of the pools it names (all, when it does not
   * say), and the settings when the Config changed. Heard through the `changes` option.
   */
  private onChange(change: ChangeSet): void {
    this.cache.drop();
    if (change.config || change.everything) this.settingsReader.drop();
    this.pools.onChange(change);
  }

  // ---- shared pages and the caller's overlay --------------------------------------------------

  /**
   * A page's rows shaped once, for this caller: what a read does when nothing of it is kept (no
   * shared page to lay the caller's viewer blocks over, so no second pass over the rows).
   */
  private async listFor(r: { rows: OfferRow[]; total: number }, p: PageParams, wallet: string | null): Promise<OfferList> {
    return { offers: await this.shaper.shape(r.rows, wallet), pagination: pagination(p, r.total) };
  }

  /** A page's rows shaped once for everyone (anonymous viewer blocks), with its pagination. */
  private async sharedPage(r: { rows: OfferRow[]; total: number }, p: PageParams): Promise<SharedPage> {
    return { rows: r.rows, offers: await this.shaper.shape(r.rows, null), pagination: pagination(p, r.total) };
  }

  private readonly listResponses = new WeakMap<Offer[], OfferList>();

  /**
   * A list's response, the same object for as long as its offers are kept (the shared page, or a
   * caller's viewer overlay): the HTTP layer serialises each such object once (read-routes.ts).
   */
  private listResponse(offers: Offer[], pagination: Pagination): OfferList {
    let r = this.listResponses.get(offers);
    if (!r || r.pagination !== pagination) this.listResponses.set(offers, (r = { offers, pagination }));
    return r;
  }

  /**
   * The shared offers of a page with the viewer blocks of `wallet`: the caller's positions on the
   * page's offers (one query) and, on the offers the caller created, their positions (one more),
   * kept for the caller (`key`); the blocks derived from them are kept under the version of the
   * blocked set too, so a compliance block (custody's cache) shows at once.
   */
  private async withViewer(page: SharedPage, wallet: string, key: string): Promise<Offer[]> {
    return this.forViewer(wallet, `offers:${this.blockedVersion()}:${key}`, async () => {
      const held = await this.forViewer(wallet, `held:${key}`, () => this.shaper.positions(page.rows, wallet));
      const viewers = await this.shaper.viewers(page.rows, wallet, held);
      return page.offers.map((o, i) => ({ ...o, viewer: viewers[i] }));
    });
  }
}
