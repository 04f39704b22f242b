/**
 * Which offers a list holds, and in what order: the browse filters, the caller's own offers
 * (`mine`, written once here), numbered pages and keyset pages, lookups by address. Returns rows
 * with their contract (contracts.ts); offer-shaping.ts makes API objects of them.
 *
 * The planner: the contracts whose offers are listed (those with a catalog row, narrowed by sport
 * and text search) are a small set, so a list runs on the offers' own indexes in list order and a
 * deep page skips index entries instead of joined rows.
 */
import type { Kysely } from "kysely";
import { sql } from "kysely";
import type { Database, PositionsTable } from "../../indexer";
import { offersWithContract, offerWithPosition, positionOfRow, type OfferRow } from "./contracts";
import type { BrowseParams, MineRole, PageParams } from "./params";
import type { ReadCache } from "./read-cache";
import type { CompiledReads } from "./compiled-reads";
import { offsetOf, type KeysetPage, type OfferKey } from "./read-model";
import { searchCondition } from "./search";

/** Lists up to this long are fetched whole and sorted; longer ones are walked in list order. */
const SMALL_LIST = 2_000;

/** How a list's page is best found (see offerFilter). */
type Plan = "all" | "order" | "any";

export interface OfferQueriesOptions {
  db: Kysely<Database>;
  engine: "sqlite" | "postgres";
  /** Keeps the lists' totals and listed contracts (they are dropped with every applied write). */
  cache: ReadCache;
  /** How long a list's total is reused while no write is applied; 0 counts on every request. */
  countTtlMs: number;
  /** The hot queries compiled once per shape (./compiled-reads.ts). */
  compiled: CompiledReads;
}

/** What an offer's place in the bestOdds order is made of (./offer-odds-order.ts). */
export interface OfferTerms {
  address: string;
  creator_total_micros: string;
  taker_target_micros: string;
  created_at: number | string;
  status: string;
  expires_at: number | string | null;
}

/** A list's offers as a query (offerFilter), before a page or a count selects from it. */
type Query = ReturnType<OfferQueries["offerFilter"]>;

/** The filter part of browse parameters, as a cache key. */
export const filterKey = (p: Partial<BrowseParams>) => JSON.stringify([p.status ?? "", p.view ?? "", p.sport ?? "", p.query ?? ""]);

export class OfferQueries {
  private readonly db: Kysely<Database>;
  /** Built once (kysely builders are immutable): parsing this select list was a large part of a page's cost. */
  private readonly withContract;

  constructor(private readonly o: OfferQueriesOptions) {
    this.db = o.db;
    this.withContract = offersWithContract(o.db);
  }

  /** Browse: a page of the list `p` selects, newest first, and the list's total. */
  async browse(p: BrowseParams): Promise<{ rows: OfferRow[]; total: number }> {
    const total = await this.total(`browse:${filterKey(p)}`, () => this.listFilter(p));
    const plan = await this.planFor(p, total);
    // On PostgreSQL the listed contracts are a parameter of their own (listFilter), which moves
    // with the catalog: that shape is built each time.
    const shape = this.o.engine === "sqlite" || plan === "all" ? `browse:${plan}:${filterKey(p)}` : null;
    const rows = await this.pageRows(() => this.listFilter(p, plan), p, shape);
    return { rows, total };
  }

  /** A page of the offers `wallet` created or took (`role` narrows it to one), and their total. */
  async mine(p: BrowseParams & { role?: MineRole }, wallet: string): Promise<{ rows: OfferRow[]; total: number }> {
    const base = async () => this.mineScope(await this.listFilter(p), wallet, p.role);
    // SQLite: the query's text depends on the filter and the role only, the wallet and the page are
    // its last values (mineScope). On PostgreSQL the listed contracts are a value before them (listFilter).
    const shape = this.o.engine === "sqlite" ? `mine:${p.role ?? ""}:${filterKey(p)}` : null;
    const tail = p.role === undefined ? [wallet, wallet] : [wallet];
    const [total, rows] = await Promise.all([this.total(`mine:${wallet}:${filterKey(p)}:${p.role ?? ""}`, base), this.pageRows(base, p, shape, tail)]);
    return { rows, total };
  }

  /**
   * A page of offers in browse order (newest first, then address) next to a key: `forward` takes
   * the items after it, otherwise the items before it (returned in browse order). A key names an
   * item, not a position, so paging stays exact while offers arrive. `mineOf` narrows to that
   * wallet's offers as mine() does.
   */
  async keyset(
    p: Partial<BrowseParams> & { role?: MineRole },
    page: KeysetPage<OfferKey>,
    mineOf?: string,
  ): Promise<{ rows: OfferRow[]; more: boolean; total: number }> {
    const scoped = (q: Query) => (mineOf ? this.mineScope(q, mineOf, p.role) : q);
    // The same list's total as a numbered page's (browse, mine): counted once per filter and kept
    // like theirs (total()), not on every page.
    const total = await this.total(mineOf ? `mine:${mineOf}:${filterKey(p)}:${p.role ?? ""}` : `browse:${filterKey(p)}`, () => scoped(this.offerFilter(p)));
    // A page of a browse list walks the list-order index as a numbered page does (planFor); the
    // caller's own offers are a small set found through their two indexes.
    const plan = mineOf ? null : await this.planFor(p, total);
    const k = page.key;
    // Built only when the shape is not compiled yet (or cannot be): see total().
    const build = async () => {
      let q = scoped(plan === null ? this.offerFilter(p) : await this.listFilter(p, plan));
      if (k)
        q = q.where((eb) =>
          eb.or([
            eb("offers.created_at", page.forward ? "<" : ">", k.createdAt),
            eb.and([eb("offers.created_at", "=", k.createdAt), eb("offers.address", page.forward ? ">" : "<", k.address)]),
          ]),
        );
      return q
        .select("offers.address")
        .orderBy("offers.created_at", page.forward ? "desc" : "asc")
        .orderBy("offers.address", page.forward ? "asc" : "desc")
        .limit(page.limit + 1);
    };
    // Compiled once per shape as numbered pages are (pageRows): the caller's wallet, the cursor and
    // the page size are the query's last values; on PostgreSQL a browse list's listed contracts
    // are a value before them (listFilter), so that shape is built each time.
    const shape =
      this.o.engine === "sqlite" || plan === null || plan === "all"
        ? `keyset:${plan ?? `mine:${p.role ?? ""}`}:${filterKey(p)}:${page.forward ? "forward" : "backward"}:${k ? "after" : "first"}`
        : null;
    const tail = [...(mineOf ? (p.role === undefined ? [mineOf, mineOf] : [mineOf]) : []), ...(k ? [k.createdAt, k.createdAt, k.address] : []), page.limit + 1];
    const keys = shape === null ? await (await build()).execute() : await this.o.compiled.rows(shape, tail, build);
    const taken = keys.slice(0, page.limit);
    if (!page.forward) taken.reverse();
    return { rows: await this.rowsOf(taken), more: keys.length > page.limit, total };
  }

  /** The terms of every offer of the list `p` selects (`mineOf`: that wallet's, as keyset narrows), unordered. */
  async terms(p: Partial<BrowseParams> & { role?: MineRole }, mineOf?: string): Promise<OfferTerms[]> {
    const q = mineOf ? this.mineScope(this.offerFilter(p), mineOf, p.role) : await this.listFilter(p);
    return q
      .select(["offers.address", "offers.creator_total_micros", "offers.taker_target_micros", "offers.created_at", "offers.status", "offers.expires_at"])
      .execute();
  }

  /** The rows with contracts of these offers, in the order given (a page another order chose). */
  rows(keys: { address: string }[]): Promise<OfferRow[]> {
    return this.rowsOf(keys);
  }

  /** One offer with its contract (listed or not). */
  async one(address: string): Promise<OfferRow | null> {
    const [row] = await this.o.compiled.rows("offer-one", [address], () => this.withContract.where("offers.address", "=", address));
    return row ?? null;
  }

  /** One offer and `taker`'s position on it (null: none), in one statement. */
  async oneWithPosition(address: string, taker: string): Promise<{ row: OfferRow; position: PositionsTable | null } | null> {
    const [row] = await this.o.compiled.rows("offer-one-position", [taker, address], () => offerWithPosition(this.db, address, taker));
    return row ? { row, position: positionOfRow(row) } : null;
  }

  /** The listed offers among `addresses` that pass the filters `p`, newest first. */
  async among(addresses: readonly string[], p: Partial<BrowseParams>): Promise<OfferRow[]> {
    if (addresses.length === 0) return [];
    return this.withContractIn(this.offerFilter(p))
      .where("offers.address", "in", [...new Set(addresses)])
      .orderBy("offers.created_at", "desc")
      .orderBy("offers.address")
      .execute();
  }

  /**
   * The offers `wallet` created (role creator), took (taker) or either, as a set of addresses from
   * the two indexes, not an OR over every offer. Either is a UNION ALL: `in` needs no distinct
   * list, and UNION sorted both sides to merge them.
   */
  private mineScope(q: Query, wallet: string, role: MineRole | undefined) {
    const created = this.db.selectFrom("offers as own").select("own.address").where("own.creator", "=", wallet);
    const took = this.db.selectFrom("positions").select("positions.offer as address").where("positions.taker", "=", wallet);
    return q.where("offers.address", "in", role === "creator" ? created : role === "taker" ? took : created.unionAll(took));
  }

  /**
   * A list's total, counted once per filter while the indexer applies no write, for at most
   * countTtlMs (catalog edits do not come through the indexer): a full count on every request
   * would cost more than the page itself. `base` is built only when it is counted: building a
   * kysely query is work (immutable nodes, frozen on each step) that a kept total does not need.
   */
  private total(key: string, base: () => Query | Promise<Query>): Promise<number> {
    return this.o.cache.get(`n:${key}`, this.o.countTtlMs, async () => {
      const [{ n }] = await (await base()).select((eb) => eb.fn.countAll<number>().as("n")).execute();
      return Number(n);
    });
  }

  /** The contracts whose offers are listed (those with a catalog row), narrowed by sport and text search. */
  private listedContracts(p: Partial<BrowseParams>) {
    let q = this.db.selectFrom("contract_catalog").innerJoin("contracts", "contracts.address", "contract_catalog.contract").select("contract_catalog.contract");
    if (p.sport) q = q.where(sql`lower(${sql.ref("contract_catalog.sport")})`, "=", p.sport.toLowerCase());
    if (p.query) q = q.where(searchCondition(this.o.engine, p.query));
    return q;
  }

  /**
   * The offers of a list (no joins: see listedContracts); pages and totals select from it.
   * `plan`: "all" leaves out the listed-contracts test (every offer's contract is listed and no
   * sport or text narrows it, so it filters nothing); "order" makes SQLite walk the list-order
   * index and test each entry (the list is large), where it would otherwise fetch every offer of
   * the listed contracts and sort them all; "any" lets the planner choose (a small list).
   */
  private offerFilter(p: Partial<BrowseParams>, plan: Plan = "any") {
    let q = this.db.selectFrom("offers");
    // SQLite: a unary + on the column keeps the planner off the index on offers.contract.
    const contract = plan === "order" && this.o.engine === "sqlite" ? sql<string>`+${sql.ref("offers.contract")}` : sql.ref("offers.contract");
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
  private async listFilter(p: Partial<BrowseParams>, plan: Plan = "any") {
    if (this.o.engine !== "postgres" || plan === "all") return this.offerFilter(p, plan);
    const contracts = await this.o.cache.get(`lc:${filterKey(p)}`, this.o.countTtlMs, async () =>
      (await this.listedContracts(p).execute()).map((r) => r.contract),
    );
    return this.offerFilter(p, "all").where(sql<boolean>`${sql.ref("offers.contract")} = any(${contracts}::text[])`);
  }

  /** How a list's page is best found (offerFilter), from its total and whether every offer is listed. */
  private async planFor(p: Partial<BrowseParams>, total: number): Promise<Plan> {
    if (!p.sport && !p.query) {
      const [all, listed] = await Promise.all([
        this.total("offers", () => this.db.selectFrom("offers")),
        this.total(`browse:${filterKey({})}`, () => this.listFilter({})),
      ]);
      if (all === listed) return "all";
    }
    return total > SMALL_LIST ? "order" : "any";
  }

  /**
   * A numbered page of a list: its addresses in list order (index order, no joins), then their
   * rows with contracts. `base` is built only when the page's query is (see total).
   */
  private async pageRows(base: () => Query | Promise<Query>, p: PageParams, shape: string | null = null, values: unknown[] = []): Promise<OfferRow[]> {
    const page = async () =>
      (await base()).select("offers.address").orderBy("offers.created_at", "desc").orderBy("offers.address").limit(p.pageSize).offset(offsetOf(p));
    // `shape` names everything the list's filter puts in the query but `values` (its last values
    // before the page's); the page is its last two values.
    const keys = shape === null ? await (await page()).execute() : await this.o.compiled.rows(`page-keys:${shape}`, [...values, p.pageSize, offsetOf(p)], page);
    return this.rowsOf(keys);
  }

  /** The rows with contracts of these offers, in the order given. */
  private async rowsOf(keys: { address: string }[]): Promise<OfferRow[]> {
    if (keys.length === 0) return [];
    const addresses = keys.map((k) => k.address);
    const rows = await this.o.compiled.rows(`offer-rows:${addresses.length}`, addresses, () => this.withContract.where("offers.address", "in", addresses));
    const byAddress = new Map(rows.map((r) => [r.address, r]));
    return keys.map((k) => byAddress.get(k.address)).filter((r) => r !== undefined);
  }

  /** withContract over the offers a filter selects (the filter's addresses as a subquery). */
  private withContractIn(base: Query) {
    return this.withContract.where("offers.address", "in", base.select("offers.address"));
  }
}
