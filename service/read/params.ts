/**
 * Query parameters of the read endpoints, parsed strictly: a wrong value is a 400 that says what
 * was wrong and what is allowed (never silently clamped). The rules are zod schemas: the REST
 * routes validate with them and publish them in docs/openapi.json; GraphQL parses its arguments
 * with the same functions. An empty value is the same as an absent one.
 */
import { z } from "zod";
import { addressSchema } from "../writes/validate";
import { parseWith } from "../validation";
import { SPORTS, sportOf, type Sport } from "./sports";
import { OfferStatus as OFFER_STATUSES, type OfferStatusName } from "../../idl/client/offers";

export type OfferStatus = OfferStatusName;
export const VIEWS = ["browse", "results"] as const;
export type View = (typeof VIEWS)[number];
export const MINE_ROLES = ["creator", "taker"] as const;
/** The offers list's orders: newest first (the default), or the taker's odds best first (./offer-odds-order.ts). */
export const OFFER_SORTS = ["newest", "bestOdds"] as const;
export type OfferSort = (typeof OFFER_SORTS)[number];
export type MineRole = (typeof MINE_ROLES)[number];

/** `offset`, when given, overrides `(page - 1) * pageSize` (GraphQL cursors). */
export interface PageParams {
  page: number;
  pageSize: number;
  offset?: number;
}
export interface BrowseParams extends PageParams {
  sport?: Sport;
  query?: string;
  status?: OfferStatus;
  view?: View;
  /** The offers list only (GET /, the offers connection); absent: newest. */
  sort?: OfferSort;
}

const INT = /^[1-9][0-9]{0,8}$/;
// eslint-disable-next-line no-control-regex -- finding control characters is its purpose
const CONTROL = /[\u0000-\u001f\u007f]/;
const got = (v: unknown) => JSON.stringify(String(v).slice(0, 40));

/**
 * A query parameter that is a string passing `ok` (or empty); `message` says what is allowed. The
 * document shows `doc` (an integer's range, an enum) instead of "string".
 */
function queryParam(ok: (v: string) => boolean, message: (v: unknown) => string, doc: Record<string, unknown>) {
  const error = (iss: { input?: unknown }) => message(iss.input);
  return z
    .string({ error })
    .refine((v) => v === "" || ok(v), { error })
    .optional()
    .meta(doc);
}

export function intParam(name: string, def: number, min: number, max: number, description: string) {
  return queryParam(
    (v) => INT.test(v) && Number(v) >= min && Number(v) <= max,
    (v) => `${name} must be an integer from ${min} to ${max}; got ${got(v)}`,
    { type: "integer", minimum: min, maximum: max, default: def, description },
  );
}

function oneOf(name: string, allowed: readonly string[], description: string) {
  return queryParam(
    (v) => allowed.includes(v),
    (v) => `${name} must be one of ${allowed.join(", ")}; got ${got(v)}`,
    { enum: [...allowed], description },
  );
}

export const PageQuery = z.object({
  page: intParam("page", 1, 1, 1_000_000_000, "page number, from 1"),
  pageSize: intParam("pageSize", 20, 1, 50, "items per page"),
});

export const BrowseQuery = PageQuery.extend({
  sport: queryParam(
    (v) => sportOf(v) !== null,
    (v) => `sport must be one of ${SPORTS.join(", ")} (any case); got ${got(v)}`,
    { description: `one of ${SPORTS.join(", ")} (any case)` },
  ),
  // Control characters search nothing, and PostgreSQL refuses a NUL in text outright (was a 503).
  query: queryParam(
    (v) => v.length <= 200 && !CONTROL.test(v),
    () => "query must be at most 200 characters, without control characters",
    { maxLength: 200, pattern: "^[^\\u0000-\\u001f\\u007f]*$", description: "text search over title, event, competition and side labels" },
  ),
  status: oneOf("status", OFFER_STATUSES, "offer status"),
  view: oneOf("view", VIEWS, "browse: open offers; results: Closed and Settled ones"),
});

/** GET / (browse): the browse parameters and the order. */
export const OffersQuery = BrowseQuery.extend({
  sort: oneOf("sort", OFFER_SORTS, "newest (default): newest first; bestOdds: the taker's odds best first, then oldest, then address"),
});

export const MineQuery = BrowseQuery.extend({ role: oneOf("role", MINE_ROLES, "the caller's part in the offer; both when absent") });

/** The path segment naming an offer; a malformed one is 400 (the spec's "Malformed address"). */
export const OfferAddressPath = z.object({ address: addressSchema("offer address") });

/** The path segment naming a wallet (GET /wallets/<address>/positions). */
export const WalletAddressPath = z.object({ address: addressSchema("wallet address") });

/** A wallet address path segment; a malformed one is 400. */
export function walletAddressParam(v: string): string {
  return parseWith(WalletAddressPath, { address: v }).address;
}

type Query = Record<string, string | null | undefined>;
const present = (v: string | undefined) => (v === undefined || v === "" ? undefined : v);
/** GraphQL passes null for an omitted argument: the same as absent. */
const defined = (q: Query) => Object.fromEntries(Object.entries(q).filter(([, v]) => v !== null && v !== undefined));

export function pageParams(q: Query): PageParams {
  const p = parseWith(PageQuery, defined(q));
  return { page: Number(present(p.page) ?? 1), pageSize: Number(present(p.pageSize) ?? 20) };
}

export function browseParams(q: Query): BrowseParams {
  return browseOf(parseWith(BrowseQuery, defined(q)));
}

/** GET / (browse): the browse parameters and `sort` (newest when absent). */
export function offersParams(q: Query): BrowseParams {
  const p = parseWith(OffersQuery, defined(q));
  const sort = present(p.sort) as OfferSort | undefined;
  return { ...browseOf(p), ...(sort === "bestOdds" ? { sort } : {}) };
}

/** GET /mine: the browse parameters and `role` (creator or taker; both when absent). */
export function mineParams(q: Query): BrowseParams & { role?: MineRole } {
  const p = parseWith(MineQuery, defined(q));
  return { ...browseOf(p), role: present(p.role) as MineRole | undefined };
}

/** The browse parameters of a query already checked against BrowseQuery or a schema extending it: each query is parsed once. */
function browseOf(p: z.output<typeof BrowseQuery>): BrowseParams {
  const sport = present(p.sport);
  return {
    page: Number(present(p.page) ?? 1),
    pageSize: Number(present(p.pageSize) ?? 20),
    sport: sport === undefined ? undefined : (sportOf(sport) ?? undefined),
    query: present(p.query),
    status: present(p.status) as OfferStatus | undefined,
    view: present(p.view) as View | undefined,
  };
}

/** An offer address path segment; a malformed one is 400 (the spec's "Malformed address"). */
export function offerAddress(v: string): string {
  return parseWith(OfferAddressPath, { address: v }).address;
}
