/**
 * The read side of the service, shared by the REST routes and the GraphQL schema: settings,
 * contracts, offers with their viewer, fills, the caller's offers, shareable offers, the pool
 * aggregate. Everything comes from the indexer's store; chain time ("now") comes from the
 * caller (the chain's clock in the local stack and tests, wall time against a cluster).
 */
import type { Kysely, SelectQueryBuilder } from "kysely";
import { PostgresAdapter, sql } from "kysely";
import {
  deriveFill,
  deriveOffer,
  derivePoolAggregate,
  poolState,
  iso,
  poolEligible,
  sideLabels,
  visualsOf,
  type Database,
  type DerivedFill,
  type DerivedOffer,
  type PoolAggregate,
  type ContractsTable,
  type ContractCatalogTable,
  type OffersTable,
  type PositionsTable,
  type ConfigTable,
} from "../../indexer";
import { cutoffFilter } from "../../idl/client/offers-rules";
import { ApiError } from "../api-error";
import type { ChangeSet } from "../../indexer/changes";
import type { BrowseParams, PageParams } from "./params";
import { viewerOf, type ContractResult, type Viewer, type ViewerPosition } from "./offer-viewer";
import { ReadCache, type StoreChanges } from "./read-cache";
import { searchCondition } from "./search";
import { offerOdds, type OfferOdds } from "./odds";

export type { ContractResult, CreatorSettlement, SettlementOutcome, TakeRefusal, Viewer, ViewerPosition } from "./offer-viewer";

export interface Settings {
  feeBps: number;
  offersEnabled: boolean;
  limits: {
    minimumCreatorMicros: string;
    minimumTakeMicros: string;
    maximumWagerMicros: string;
    warningRatioNumerator: string;
    warningRatioDenominator: string;
    minimumOddsNumerator: string;
    minimumOddsDenominator: string;
    maximumOddsNumerator: string;
    maximumOddsDenominator: string;
  };
}

export interface Contract {
  address: string;
  templateId: string;
  eventId: string;
  title: string;
  description: string;
  event: string;
  sport: string;
  competition: string;
  startsAt: string;
  cutoffAt: string;
  resolutionDeadline: string;
  status: string;
  /** The side that won, or void; null while the contract has no result. */
  result: ContractResult | null;
  outcomes: { side: "sideA" | "sideB"; label: string }[];
  visuals: { src: string; alt: string }[];
}

/** The spec's Offer: the indexer's chain-derived offer, joined with its contract, the creator's profile, side labels and the viewer. */
export interface Offer extends Omit<DerivedOffer, "contract" | "creator">, OfferOdds {
  contract: Contract;
  creator: { displayName: string; profileImageUrl: string };
  creatorSideLabel: string;
  takerSideLabel: string;
  viewer: Viewer;
}

export interface ShareableOffer {
  address: string;
  text: string;
  url: string;
  offer: Offer;
}

export interface Pagination {
  page: number;
  pageSize: number;
  total: number;
  hasNextPage: boolean;
}

type ContractRow = ContractsTable & ContractCatalogTable;

/** Contract and catalog columns joined to an offer row, prefixed k_ (see withContract). */
interface JoinedContract {
  k_template_id: string;
  k_event_id: string;
  k_cutoff_at: number;
  k_resolution_deadline: number;
  k_status: string;
  k_result: string;
  k_title: string;
  k_description: string;
  k_event: string;
  k_sport: string;
  k_competition: string;
  k_starts_at: number;
  k_side_a_label: string;
  k_side_b_label: string;
  k_visuals_json: string;
}

function unprefix(r: OffersTable & JoinedContract): ContractRow {
  return {
    address: r.contract,
    template_id: r.k_template_id,
    event_id: r.k_event_id,
    cutoff_at: r.k_cutoff_at,
    resolution_deadline: r.k_resolution_deadline,
    status: r.k_status,
    result: r.k_result,
    created_at: 0,
    resolved_at: null,
    slot: 0,
    write_version: 0,
    deleted: 0,
    contract: r.contract,
    title: r.k_title,
    description: r.k_description,
    event: r.k_event,
    sport: r.k_sport,
    competition: r.k_competition,
    starts_at: r.k_starts_at,
    side_a_label: r.k_side_a_label,
    side_b_label: r.k_side_b_label,
    visuals_json: r.k_visuals_json,
    updated_at: 0,
  };
}

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
}

const shortWallet = (w: string) => `${w.slice(0, 4)}…${w.slice(-4)}`;

export class ReadService {
  readonly db: Kysely<Database>;
  readonly publicBaseUrl: string;
  private settingsCache: { at: number; value: Settings | null; config: ConfigTable | null } | null = null;
  private embedCache = new Map<string, { at: number; rows: PoolRows | null; aggregate?: PoolAggregate }>();
  private readonly cache: ReadCache;
  private readonly engine: "sqlite" | "postgres";

  /** Compliance flags for canTake; createApp sets it from custody when the options did not. */
  blockedWallets: (wallets: string[]) => Promise<Set<string>>;
  /** Moves when blockedWallets' answers may have changed (custody's read cache version): per-caller results key on it. */
  blockedVersion: () => number = () => 0;

  constructor(private readonly o: ReadServiceOptions) {
    this.db = o.db;
    this.blockedWallets = o.blockedWallets ?? (async () => new Set());
    this.publicBaseUrl = (o.publicBaseUrl ?? "http://127.0.0.1:8080").replace(/\/$/, "");
    this.engine = o.db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
    this.cache = new ReadCache({ indexedPosition: () => this.indexedPosition(), heard: !!o.changes, pollMs: o.slotPollMs });
    this.unsubscribe = o.changes?.subscribe((c) => this.onChange(c)) ?? null;
  }

  private readonly unsubscribe: (() => void) | null;

  /** Stops hearing the store writer. */
  close(): void {
    this.unsubscribe?.();
  }

  private clock: { at: number; value: number } | null = null;

  /** Chain time, read at most every clockCacheMs (a chain clock read is a round trip to the node). */
  async now(): Promise<number> {
    if (!this.clock || Date.now() - this.clock.at > (this.o.clockCacheMs ?? 250)) this.clock = { at: Date.now(), value: Number(await this.o.now()) };
    return this.clock.value;
  }

  /**
   * Reads that do not depend on the caller are shared between callers for up to anonymousTtlMs,
   * keyed by their parameters, until the indexer applies a write (./read-cache.ts).
   */
  async anonymous<T>(key: string, load: () => Promise<T>, keep?: (value: T) => boolean): Promise<T> {
    const ttl = this.o.anonymousTtlMs ?? 1_000;
    if (ttl <= 0) return load();
    // Derived fields (canTake, open contracts) depend on chain time, a second-resolution clock.
    return this.cache.get(`a:${await this.now()}:${key}`, ttl, load, keep);
  }

  /**
   * One caller's own reads (`mine`, the caller's positions on a page), kept for that caller like
   * the anonymous ones; for the HTTP layer too (a per-caller response cache).
   */
  forViewer<T>(wallet: string, key: string, load: () => Promise<T>): Promise<T> {
    const ttl = this.o.viewerTtlMs ?? this.o.anonymousTtlMs ?? 1_000;
    if (ttl <= 0) return load();
    return this.now().then((now) => this.cache.get(`v:${wallet}:${now}:${key}`, ttl, load));
  }

  /**
   * A list's total, counted once per filter while the indexer applies no write, for at most
   * countTtlMs (catalog edits do not come through the indexer): a full count on every request
   * would cost more than the page itself.
   */
  private async total(key: string, base: SelectQueryBuilder<Database, "offers", object>): Promise<number> {
    return this.cache.get(`n:${key}`, this.o.countTtlMs ?? 5_000, async () => {
      const [{ n }] = await base.select((eb) => eb.fn.countAll<number>().as("n")).execute();
      return Number(n);
    });
  }

  // ---- settings and contracts ---------------------------------------------------------------

  /** The config row, cached about 30 s like the spec's settings refresh. */
  private async configRow(): Promise<ConfigTable | null> {
    const ttl = this.o.settingsTtlMs ?? 30_000;
    if (!this.settingsCache || Date.now() - this.settingsCache.at > ttl) {
      const config = (await this.db.selectFrom("config").selectAll().where("deleted", "=", 0).executeTakeFirst()) ?? null;
      this.settingsCache = { at: Date.now(), config, value: config ? toSettings(config) : null };
    }
    return this.settingsCache.config;
  }

  async settings(): Promise<Settings> {
    await this.configRow();
    const v = this.settingsCache?.value;
    if (!v) throw new ApiError(503, "offers are not configured yet; retry later");
    return v;
  }

  /** Open contracts before their cutoff, soonest cutoff first, with catalog metadata. */
  async openContracts(): Promise<Contract[]> {
    return this.anonymous("contracts", () => this.openContractsUncached());
  }

  private async openContractsUncached(): Promise<Contract[]> {
    const now = await this.now();
    const [op, at] = cutoffFilter("ahead", now);
    const rows = await this.contractQuery()
      .where("contracts.status", "=", "Open")
      .where("contracts.cutoff_at", op, at)
      .orderBy("contracts.cutoff_at")
      .orderBy("contracts.address")
      .execute();
    return rows.map((r) => toContract(r as ContractRow));
  }

  /** Contracts with their catalog row: a contract the catalog does not describe is never listed. */
  private contractQuery() {
    return this.db
      .selectFrom("contracts")
      .innerJoin("contract_catalog", "contract_catalog.contract", "contracts.address")
      .selectAll("contracts")
      .select([
        "contract_catalog.title",
        "contract_catalog.description",
        "contract_catalog.event",
        "contract_catalog.sport",
        "contract_catalog.competition",
        "contract_catalog.starts_at",
        "contract_catalog.side_a_label",
        "contract_catalog.side_b_label",
        "contract_catalog.visuals_json",
      ])
      .where("contracts.deleted", "=", 0);
  }

  async contractsByAddress(addresses: readonly string[]): Promise<Map<string, Contract>> {
    if (addresses.length === 0) return new Map();
    const rows = await this.contractQuery()
      .where("contracts.address", "in", [...new Set(addresses)])
      .execute();
    return new Map(rows.map((r) => [r.address, toContract(r as ContractRow)]));
  }

  // ---- offers -------------------------------------------------------------------------------

  /**
   * The contracts whose offers are listed (those with a catalog row), narrowed by sport and text
   * search: a small set, so the offers side of a list runs on the offers' own indexes in list
   * order, and a deep page skips index entries instead of joined rows.
   */
  private listedContracts(p: Partial<BrowseParams>) {
    let q = this.db.selectFrom("contract_catalog").innerJoin("contracts", "contracts.address", "contract_catalog.contract").select("contract_catalog.contract");
    if (p.sport) q = q.where(sql`lower(${sql.ref("contract_catalog.sport")})`, "=", p.sport.toLowerCase());
    if (p.query) q = q.where(searchCondition(this.engine, p.query));
    return q;
  }

  /**
   * The offers of a list (no joins: see listedContracts); pages and totals select from it.
   * `plan`: "all" leaves out the listed-contracts test (every offer's contract is listed and no
   * sport or text narrows it, so it filters nothing); "order" makes SQLite walk the list-order
   * index and test each entry (the list is large), where it would otherwise fetch every offer of
   * the listed contracts and sort them all; "any" lets the planner choose (a small list).
   */
  private offerFilter(p: Partial<BrowseParams>, plan: "all" | "order" | "any" = "any") {
    let q = this.db.selectFrom("offers");
    // SQLite: a unary + on the column keeps the planner off the index on offers.contract.
    const contract = plan === "order" && this.engine === "sqlite" ? sql<string>`+${sql.ref("offers.contract")}` : sql.ref("offers.contract");
    if (plan !== "all") q = q.where(contract, "in", this.listedContracts(p));
    if (p.status) q = q.where("offers.status", "=", p.status);
    if (p.view === "browse") q = q.where("offers.status", "=", "Open");
    if (p.view === "results") q = q.where("offers.status", "in", ["Closed", "Settled"]);
    return q;
  }

  /**
   * offerFilter as each engine runs it best. PostgreSQL gets the listed contracts as one array
   * parameter (kept like a total), which it tests with a hash per offer; as a subquery, its
   * estimate of a text search's matches is far off and it picked nested loops or sorts of every
   * matching offer.
   */
  private async listFilter(p: Partial<BrowseParams>, plan: "all" | "order" | "any" = "any") {
    if (this.engine !== "postgres" || plan === "all") return this.offerFilter(p, plan);
    const contracts = await this.cache.get(`lc:${filterKey(p)}`, this.o.countTtlMs ?? 5_000, async () =>
      (await this.listedContracts(p).execute()).map((r) => r.contract),
    );
    return this.offerFilter(p, "all").where(sql<boolean>`${sql.ref("offers.contract")} = any(${contracts}::text[])`);
  }

  /**
   * Browse: newest first; `view` browse = Open, results = Closed or Settled. A signed-in caller
   * gets the anonymous page (shared) with only the viewer blocks derived for them.
   */
  async browse(p: BrowseParams, viewerWallet: string | null): Promise<{ offers: Offer[]; pagination: Pagination }> {
    const key = `browse:${filterKey(p)}:${p.pageSize}:${offsetOf(p)}`;
    const page = await this.anonymous(key, () => this.browsePage(p));
    return this.listResponse(viewerWallet === null ? page.offers : await this.withViewer(page, viewerWallet, key), page.pagination);
  }

  private readonly listResponses = new WeakMap<Offer[], { offers: Offer[]; pagination: Pagination }>();

  /**
   * A list's response, the same object for as long as its offers are kept (the shared page, or a
   * caller's viewer overlay): the HTTP layer serialises each such object once (read-routes.ts).
   */
  private listResponse(offers: Offer[], pagination: Pagination): { offers: Offer[]; pagination: Pagination } {
    let r = this.listResponses.get(offers);
    if (!r || r.pagination !== pagination) this.listResponses.set(offers, (r = { offers, pagination }));
    return r;
  }

  private async browsePage(p: BrowseParams): Promise<SharedPage> {
    const n = await this.total(`browse:${filterKey(p)}`, await this.listFilter(p));
    const rows = await this.pageRows(await this.listFilter(p, await this.planFor(p, n)), p);
    return { rows, offers: await this.shapeOffers(rows, null), pagination: pagination(p, n) };
  }

  /** How a list's page is best found (offerFilter), from its total and whether every offer is listed. */
  private async planFor(p: Partial<BrowseParams>, total: number): Promise<"all" | "order" | "any"> {
    if (!p.sport && !p.query) {
      const [all, listed] = await Promise.all([
        this.total("offers", this.db.selectFrom("offers")),
        this.listFilter({}).then((q) => this.total(`browse:${filterKey({})}`, q)),
      ]);
      if (all === listed) return "all";
    }
    return total > SMALL_LIST ? "order" : "any";
  }

  /** A page of a list: its addresses in list order (index order, no joins), then their rows with contracts. */
  private async pageRows(base: ReturnType<ReadService["offerFilter"]>, p: PageParams) {
    const keys = await base
      .select("offers.address")
      .orderBy("offers.created_at", "desc")
      .orderBy("offers.address")
      .limit(p.pageSize)
      .offset(offsetOf(p))
      .execute();
    if (keys.length === 0) return [];
    const rows = await this.withContract()
      .where(
        "offers.address",
        "in",
        keys.map((k) => k.address),
      )
      .execute();
    const byAddress = new Map(rows.map((r) => [r.address, r]));
    return keys.map((k) => byAddress.get(k.address)).filter((r) => r !== undefined);
  }

  /** Offers with their contract and catalog columns (prefixed k_), in the same query. */
  private withContract() {
    // Built once (kysely builders are immutable): parsing this select list was a large part of a page's cost.
    return (this.withContractQuery ??= this.buildWithContract());
  }

  private withContractQuery: ReturnType<ReadService["buildWithContract"]> | undefined;

  /** withContract over the offers a filter selects (the filter's addresses as a subquery). */
  private withContractIn(base: ReturnType<ReadService["offerFilter"]>) {
    return this.withContract().where("offers.address", "in", base.select("offers.address"));
  }

  private buildWithContract() {
    return this.db
      .selectFrom("offers")
      .innerJoin("contracts", "contracts.address", "offers.contract")
      .innerJoin("contract_catalog", "contract_catalog.contract", "offers.contract")
      .selectAll("offers")
      .select([
        "contracts.template_id as k_template_id",
        "contracts.event_id as k_event_id",
        "contracts.cutoff_at as k_cutoff_at",
        "contracts.resolution_deadline as k_resolution_deadline",
        "contracts.status as k_status",
        "contracts.result as k_result",
        "contract_catalog.title as k_title",
        "contract_catalog.description as k_description",
        "contract_catalog.event as k_event",
        "contract_catalog.sport as k_sport",
        "contract_catalog.competition as k_competition",
        "contract_catalog.starts_at as k_starts_at",
        "contract_catalog.side_a_label as k_side_a_label",
        "contract_catalog.side_b_label as k_side_b_label",
        "contract_catalog.visuals_json as k_visuals_json",
      ]);
  }

  /**
   * Offers the viewer created or holds a position on, newest first; `role` narrows it to one of
   * the two. Each carries the viewer block of its role (settlement summary or position).
   */
  async mine(p: BrowseParams & { role?: "creator" | "taker" }, wallet: string): Promise<{ offers: Offer[]; pagination: Pagination }> {
    // The caller's offers as a set of addresses from the two indexes (creator, taker), not an OR over every offer.
    const created = this.db.selectFrom("offers as own").select("own.address").where("own.creator", "=", wallet);
    const took = this.db.selectFrom("positions").select("positions.offer as address").where("positions.taker", "=", wallet);
    const base = (await this.listFilter(p)).where("offers.address", "in", p.role === "creator" ? created : p.role === "taker" ? took : created.union(took));
    const key = `${filterKey(p)}:${p.role ?? ""}`;
    const pageKey = `mine:${key}:${p.pageSize}:${offsetOf(p)}`;
    const page = await this.forViewer(wallet, pageKey, async (): Promise<SharedPage> => {
      const [n, rows] = await Promise.all([this.total(`mine:${wallet}:${key}`, base), this.pageRows(base, p)]);
      return { rows, offers: await this.shapeOffers(rows, null), pagination: pagination(p, n) };
    });
    return this.listResponse(await this.withViewer(page, wallet, pageKey), page.pagination);
  }

  /** The offers `wallet` created (role creator), took (taker) or either. */
  private mineScope(q: ReturnType<ReadService["offerFilter"]>, wallet: string, role: "creator" | "taker" | undefined) {
    return q.where((eb) => {
      const created = eb("offers.creator", "=", wallet);
      const took = eb.exists(
        eb.selectFrom("positions").select("positions.address").whereRef("positions.offer", "=", "offers.address").where("positions.taker", "=", wallet),
      );
      return role === "creator" ? created : role === "taker" ? took : eb.or([created, took]);
    });
  }

  /** One offer; signed in, the shared anonymous offer with the caller's viewer block. */
  async offer(address: string, viewerWallet: string | null): Promise<Offer | null> {
    // A miss is not kept: an address asked for just before its offer is indexed must not stay 404.
    const page = await this.anonymous(
      `offer:${address}`,
      () => this.offerPage(address),
      (p) => p !== null,
    );
    if (!page) return null;
    if (viewerWallet === null) return page.offers[0];
    return (await this.withViewer(page, viewerWallet, `offer:${address}`))[0];
  }

  private async offerPage(address: string): Promise<SharedPage | null> {
    const row = await this.withContract().where("offers.address", "=", address).executeTakeFirst();
    if (!row) return null;
    return { rows: [row], offers: await this.shapeOffers([row], null), pagination: pagination({ page: 1, pageSize: 1 }, 1) };
  }

  async fills(address: string, p: PageParams): Promise<{ fills: DerivedFill[]; pagination: Pagination }> {
    const exists = await this.db.selectFrom("offers").select("address").where("address", "=", address).executeTakeFirst();
    if (!exists) throw new ApiError(404, "offer not found");
    const [{ n }] = await this.db
      .selectFrom("fills")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("offer", "=", address)
      .execute();
    const rows = await this.db.selectFrom("fills").selectAll().where("offer", "=", address).orderBy("revision").limit(p.pageSize).offset(offsetOf(p)).execute();
    return { fills: rows.map(deriveFill), pagination: pagination(p, Number(n)) };
  }

  /**
   * The offers among `addresses` that pass the browse filters `p`, newest first, shaped for the
   * viewer: which of the offers a change touched a filtered list shows (live updates).
   */
  async offersAmong(addresses: readonly string[], p: Partial<BrowseParams>, viewerWallet: string | null): Promise<Offer[]> {
    if (addresses.length === 0) return [];
    const rows = await this.withContractIn(this.offerFilter(p))
      .where("offers.address", "in", [...new Set(addresses)])
      .orderBy("offers.created_at", "desc")
      .orderBy("offers.address")
      .execute();
    return this.shapeOffers(rows, viewerWallet);
  }

  /** An offer's fills of the given revisions, oldest first (the fills a change announced). */
  async fillsAt(address: string, revisions: readonly number[]): Promise<DerivedFill[]> {
    if (revisions.length === 0) return [];
    const rows = await this.db
      .selectFrom("fills")
      .selectAll()
      .where("offer", "=", address)
      .where("revision", "in", [...new Set(revisions)])
      .orderBy("revision")
      .execute();
    return rows.map(deriveFill);
  }

  /** Open offers formatted for sharing into a chat: one text line and a link each. */
  async shareable(p: BrowseParams): Promise<{ offers: ShareableOffer[]; pagination: Pagination }> {
    const { offers, pagination: pg } = await this.browse({ ...p, view: "browse" }, null);
    return {
      offers: offers.map((o) => this.shareableOf(o)),
      pagination: pg,
    };
  }

  /** One offer as a line of chat text and its link. */
  shareableOf(o: Offer): ShareableOffer {
    const url = `${this.publicBaseUrl}/offers/${o.address}`;
    const text =
      `${o.creator.displayName} backs "${o.creatorSideLabel}" on ${o.contract.title || o.contract.address}: ` +
      `take "${o.takerSideLabel}" at ${units(BigInt(o.takerTargetMicros))} to ${units(BigInt(o.creatorTotalMicros))}, ` +
      `${units(BigInt(o.remainingTakerMicros))} left, cutoff ${o.contract.cutoffAt}. ${url}`;
    return { address: o.address, text, url, offer: o };
  }

  /**
   * The shared offers of a page with the viewer blocks of `wallet`: the caller's positions on the
   * page's offers (one query) and, on the offers the caller created, their positions (one more),
   * kept for the caller (`key`); the blocks derived from them are kept under the version of the
   * blocked set too, so a compliance block (custody's cache) shows at once.
   */
  private async withViewer(page: SharedPage, wallet: string, key: string): Promise<Offer[]> {
    return this.forViewer(wallet, `offers:${this.blockedVersion()}:${key}`, async () => {
      const held = await this.forViewer(wallet, `held:${key}`, () => this.viewerPositions(page.rows, wallet));
      const viewers = await this.viewers(page.rows, wallet, held);
      return page.offers.map((o, i) => ({ ...o, viewer: viewers[i] }));
    });
  }

  private async viewerPositions(rows: (OffersTable & JoinedContract)[], wallet: string | null): Promise<HeldPositions> {
    const own = wallet === null ? [] : rows.filter((r) => r.creator === wallet).map((r) => r.address);
    const [positions, creatorPositions] = await Promise.all([
      wallet === null || rows.length === 0
        ? ([] as PositionsTable[])
        : this.db
            .selectFrom("positions")
            .selectAll()
            .where("taker", "=", wallet)
            .where(
              "offer",
              "in",
              rows.map((r) => r.address),
            )
            .execute(),
      own.length === 0 ? ([] as PositionsTable[]) : this.db.selectFrom("positions").selectAll().where("offer", "in", own).execute(),
    ]);
    return { positionOf: new Map(positions.map((p) => [p.offer, p])), creatorPositions };
  }

  private async viewers(rows: (OffersTable & JoinedContract)[], wallet: string | null, held?: HeldPositions): Promise<Viewer[]> {
    if (rows.length === 0) return [];
    const [config, now, { positionOf, creatorPositions }, blocked] = await Promise.all([
      this.configRow(),
      this.now(),
      held ?? this.viewerPositions(rows, wallet),
      this.blockedWallets([...new Set([...rows.map((r) => r.creator), ...(wallet ? [wallet] : [])])]),
    ]);
    return rows.map((r) =>
      viewerOf({
        offer: r,
        wallet,
        position: positionOf.get(r.address) ?? null,
        creatorPositions: creatorPositions.filter((p) => p.offer === r.address),
        contract: { status: r.k_status, cutoffAt: r.k_cutoff_at },
        result: RESULTS.includes(r.k_result) ? (r.k_result as ContractResult) : null,
        now,
        config,
        callerBlocked: wallet !== null && blocked.has(wallet),
        creatorBlocked: blocked.has(r.creator),
      }),
    );
  }

  /** Rows -> spec Offers, with contracts, profiles and the viewer's positions loaded in batches. */
  async shapeOffers(rows: (OffersTable & JoinedContract)[], viewerWallet: string | null): Promise<Offer[]> {
    if (rows.length === 0) return [];
    const config = await this.configRow();
    const contracts = new Map(rows.map((r) => [r.contract, toContract(unprefix(r))]));
    const [profiles, viewers] = await Promise.all([
      this.db
        .selectFrom("profiles")
        .selectAll()
        .where("wallet", "in", [...new Set(rows.map((r) => r.creator))])
        .execute(),
      this.viewers(rows, viewerWallet),
    ]);
    const profileOf = new Map(profiles.map((p) => [p.wallet, p]));
    return rows.map((r, i) => {
      const d = deriveOffer(r, config);
      const contract = contracts.get(r.contract)!;
      const labels = sideLabels(d.creatorOutcome, { side_a_label: contract.outcomes[0].label, side_b_label: contract.outcomes[1].label });
      const prof = profileOf.get(r.creator);
      const { contract: _c, creator: _cr, ...fields } = d;
      return {
        ...fields,
        address: r.address,
        contract,
        creator: { displayName: prof?.display_name ?? shortWallet(r.creator), profileImageUrl: prof?.profile_image_url ?? "" },
        ...labels,
        ...offerOdds(r),
        viewer: viewers[i],
      } as Offer;
    });
  }

  // ---- pools --------------------------------------------------------------------------------

  /** The aggregate of a public pool by slug or address; null for unknown/ineligible alike. */
  async poolAggregate(identifier: string): Promise<PoolAggregate | null> {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(identifier)) return null;
    const ttl = this.o.embedTtlMs ?? 15_000;
    let hit = this.embedCache.get(identifier);
    if (!hit || Date.now() - hit.at > ttl) {
      hit = { at: Date.now(), rows: await this.poolRows(identifier) };
      this.embedCache.set(identifier, hit);
      if (this.embedCache.size > 10_000) this.embedCache.delete(this.embedCache.keys().next().value!);
    }
    if (!hit.rows) return null;
    // State (LOCKED) is derived at request time; the rows may be up to the TTL old. The derived
    // payload is reused while the derived state is the same (the same object, so the route can
    // reuse its serialisation too).
    const nowUnix = await this.now();
    const state = poolState(hit.rows.pool.state, hit.rows.pool.closes_at, nowUnix);
    if (!hit.aggregate || hit.aggregate.state !== state)
      hit.aggregate = derivePoolAggregate({ ...hit.rows, nowUnix, canonicalBase: `${this.publicBaseUrl}/polls` });
    return hit.aggregate;
  }

  private async poolRows(identifier: string): Promise<PoolRows | null> {
    const bySlug = await this.db.selectFrom("pool_catalog").selectAll().where("slug", "=", identifier).executeTakeFirst();
    const address = bySlug?.pool ?? identifier;
    const catalog = bySlug ?? (await this.db.selectFrom("pool_catalog").selectAll().where("pool", "=", address).executeTakeFirst()) ?? null;
    if (!poolEligible(catalog)) return null;
    const pool = await this.db.selectFrom("pools").selectAll().where("address", "=", address).where("deleted", "=", 0).executeTakeFirst();
    if (!pool) return null;
    const outcomes = await this.db.selectFrom("pool_outcomes").selectAll().where("pool", "=", address).orderBy("outcome_index").execute();
    let participantCount: number | undefined;
    if (pool.participant_count === null) {
      const [{ n }] = await this.db
        .selectFrom("pool_wagers")
        .select((eb) => eb.fn.count<number>("owner").distinct().as("n"))
        .where("pool", "=", address)
        .where("deleted", "=", 0)
        .execute();
      participantCount = Number(n);
    }
    const cancel = await this.db.selectFrom("pool_cancels").select("canceled_at").where("pool", "=", address).executeTakeFirst();
    return { pool, outcomes, catalog, participantCount, canceledAt: cancel ? Number(cancel.canceled_at) : null };
  }

  // ---- keyset pages and lookups by id (GraphQL connections and node(id:)) ----------------------

  /**
   * A page of offers in browse order (newest first, then address) next to a key: `forward`
   * takes the items after it, otherwise the items before it (returned in browse order). A key
   * names an item, not a position, so paging stays exact while offers arrive. `mineOf` narrows to
   * that wallet's offers as mine() does; the viewer block is for `viewerWallet`.
   */
  async offersKeyset(
    p: Omit<BrowseParams, "page" | "pageSize" | "offset"> & { role?: "creator" | "taker" },
    page: KeysetPage<OfferKey>,
    opts: { viewerWallet: string | null; mineOf?: string },
  ): Promise<KeysetResult<Offer, OfferKey>> {
    let base = this.offerFilter(p);
    if (opts.mineOf) base = this.mineScope(base, opts.mineOf, p.role);
    const k = page.key;
    let q = this.withContractIn(base);
    if (k)
      q = q.where((eb) =>
        eb.or([
          eb("offers.created_at", page.forward ? "<" : ">", k.createdAt),
          eb.and([eb("offers.created_at", "=", k.createdAt), eb("offers.address", page.forward ? ">" : "<", k.address)]),
        ]),
      );
    const [rows, [{ n }]] = await Promise.all([
      q
        .orderBy("offers.created_at", page.forward ? "desc" : "asc")
        .orderBy("offers.address", page.forward ? "asc" : "desc")
        .limit(page.limit + 1)
        .execute(),
      base.select((eb) => eb.fn.countAll<number>().as("n")).execute(),
    ]);
    const more = rows.length > page.limit;
    const taken = rows.slice(0, page.limit);
    if (!page.forward) taken.reverse();
    return {
      items: await this.shapeOffers(taken, opts.viewerWallet),
      keys: taken.map((r) => ({ createdAt: Number(r.created_at), address: r.address })),
      more,
      total: Number(n),
    };
  }

  /** A page of an offer's fills in revision order next to a key (see offersKeyset). */
  async fillsKeyset(address: string, page: KeysetPage<FillKey>): Promise<KeysetResult<DerivedFill, FillKey>> {
    const exists = await this.db.selectFrom("offers").select("address").where("address", "=", address).executeTakeFirst();
    if (!exists) throw new ApiError(404, "offer not found");
    let q = this.db.selectFrom("fills").selectAll().where("offer", "=", address);
    if (page.key) q = q.where("revision", page.forward ? ">" : "<", page.key.revision);
    const [rows, [{ n }]] = await Promise.all([
      q
        .orderBy("revision", page.forward ? "asc" : "desc")
        .limit(page.limit + 1)
        .execute(),
      this.db
        .selectFrom("fills")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("offer", "=", address)
        .execute(),
    ]);
    const taken = rows.slice(0, page.limit);
    if (!page.forward) taken.reverse();
    return { items: taken.map(deriveFill), keys: taken.map((r) => ({ revision: Number(r.revision) })), more: rows.length > page.limit, total: Number(n) };
  }

  /** Offers by address in one query (absent ones left out), with the viewer block. */
  async offersByAddress(addresses: readonly string[], viewerWallet: string | null): Promise<Map<string, Offer>> {
    if (addresses.length === 0) return new Map();
    const rows = await this.withContractIn(this.offerFilter({}))
      .where("offers.address", "in", [...new Set(addresses)])
      .execute();
    return new Map((await this.shapeOffers(rows, viewerWallet)).map((o) => [o.address, o]));
  }

  /** One fill by its offer and revision. */
  async fill(offer: string, revision: number): Promise<DerivedFill | null> {
    const row = await this.db.selectFrom("fills").selectAll().where("offer", "=", offer).where("revision", "=", revision).executeTakeFirst();
    return row ? deriveFill(row) : null;
  }

  /** A position as its taker sees it; null for anyone else (positions are shown to their taker only). */
  async positionOf(address: string, viewerWallet: string | null): Promise<{ offer: string; position: ViewerPosition } | null> {
    if (!viewerWallet) return null;
    const row = await this.db.selectFrom("positions").select(["offer", "taker"]).where("address", "=", address).executeTakeFirst();
    if (!row || row.taker !== viewerWallet) return null;
    const position = (await this.offer(row.offer, viewerWallet))?.viewer.position ?? null;
    return position ? { offer: row.offer, position } : null;
  }

  /**
   * The store's generation as this process knows it (./read-cache.ts): it moves with every write
   * heard, or when the polled indexer position moves. Other response caches key on it.
   */
  generation(): Promise<number> {
    return this.cache.sync();
  }

  /** The highest checkpoint slot and write version, as "slot.writeVersion". */
  private async indexedPosition(): Promise<string> {
    const r = await this.db
      .selectFrom("checkpoints")
      .select((eb) => [eb.fn.max<number>("slot").as("slot"), eb.fn.max<number>("write_version").as("wv")])
      .executeTakeFirst();
    return `${r?.slot ?? 0}.${r?.wv ?? 0}`;
  }

  /** The highest slot the indexer has applied (freshness for clients). */
  async indexedSlot(): Promise<number> {
    const r = await this.db
      .selectFrom("checkpoints")
      .select((eb) => eb.fn.max<number>("slot").as("slot"))
      .executeTakeFirst();
    return Number(r?.slot ?? 0);
  }

  /**
   * A change the indexer announced (through the change feed, possibly from another process): the
   * shared anonymous responses go at once, pool embeds of the pools it names (all, when it does not
   * say), and the settings when the Config changed. Heard through the `changes` option.
   */
  private onChange(change: ChangeSet): void {
    this.cache.drop();
    if (change.config || change.everything) this.settingsCache = null;
    if (change.everything) this.embedCache.clear();
    else if (change.pools.length) {
      const pools = new Set(change.pools);
      for (const [k, v] of this.embedCache) if (!v.rows || pools.has(v.rows.pool.address)) this.embedCache.delete(k);
    }
  }
}

/** Where a keyset page starts: after `key` (forward) or before it, `limit` items. */
export interface KeysetPage<K> {
  key: K | null;
  forward: boolean;
  limit: number;
}
export interface KeysetResult<T, K> {
  items: T[];
  /** The sort key of each item, for its cursor. */
  keys: K[];
  /** Whether more items lie beyond the page in its direction. */
  more: boolean;
  total: number;
}
/** Browse order: created_at (unix seconds) descending, then address. */
export interface OfferKey {
  createdAt: number;
  address: string;
}
export interface FillKey {
  revision: number;
}

type PoolRows = Omit<Parameters<typeof derivePoolAggregate>[0], "nowUnix" | "canonicalBase">;

/** The caller's positions on a page's offers, and every position of the offers the caller created. */
interface HeldPositions {
  positionOf: Map<string, PositionsTable>;
  creatorPositions: PositionsTable[];
}

/** Lists up to this long are fetched whole and sorted; longer ones are walked in list order. */
const SMALL_LIST = 2_000;

/** A page as shared between callers: its rows (for viewer blocks), its anonymous offers, its pagination. */
interface SharedPage {
  rows: (OffersTable & JoinedContract)[];
  offers: Offer[];
  pagination: Pagination;
}

/** The filter part of browse parameters, as a cache key. */
const filterKey = (p: Partial<BrowseParams>) => JSON.stringify([p.status ?? "", p.view ?? "", p.sport ?? "", p.query ?? ""]);

const offsetOf = (p: PageParams) => p.offset ?? (p.page - 1) * p.pageSize;

function pagination(p: PageParams, total: number): Pagination {
  return { page: p.page, pageSize: p.pageSize, total, hasNextPage: offsetOf(p) + p.pageSize < total };
}

function units(micros: bigint): string {
  const whole = micros / 1_000_000n;
  const frac = (micros % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : `${whole}`;
}

function toSettings(c: ConfigTable): Settings {
  return {
    feeBps: Number(c.fee_bps),
    offersEnabled: Number(c.offers_enabled) === 1,
    limits: {
      minimumCreatorMicros: c.minimum_creator_micros,
      minimumTakeMicros: c.minimum_take_micros,
      maximumWagerMicros: c.maximum_wager_micros,
      warningRatioNumerator: c.warning_ratio_numerator,
      warningRatioDenominator: c.warning_ratio_denominator,
      minimumOddsNumerator: c.minimum_odds_numerator,
      minimumOddsDenominator: c.minimum_odds_denominator,
      maximumOddsNumerator: c.maximum_odds_numerator,
      maximumOddsDenominator: c.maximum_odds_denominator,
    },
  };
}

function toContract(r: ContractRow): Contract {
  return {
    address: r.address,
    templateId: r.template_id,
    eventId: r.event_id,
    title: r.title ?? "",
    description: r.description ?? "",
    event: r.event ?? "",
    sport: r.sport,
    competition: r.competition ?? "",
    startsAt: iso(r.starts_at)!,
    cutoffAt: iso(r.cutoff_at)!,
    resolutionDeadline: iso(r.resolution_deadline)!,
    status: r.status,
    result: RESULTS.includes(r.result as ContractResult) ? (r.result as ContractResult) : null,
    outcomes: [
      { side: "sideA", label: r.side_a_label ?? "Side A" },
      { side: "sideB", label: r.side_b_label ?? "Side B" },
    ],
    visuals: r.visuals_json ? visualsOf({ visuals_json: r.visuals_json }) : [],
  };
}

const RESULTS: readonly string[] = ["sideA", "sideB", "void"];
