/**
 * Query parameters of the read endpoints, parsed strictly: a wrong value is a 400 that says what
 * was wrong and what is allowed (never silently clamped).
 */
import { ApiError } from "../api-error";
import { parseAddress } from "../writes/validate";

export const OFFER_STATUSES = ["Open", "Filled", "Closed", "Settled"] as const;
export type OfferStatus = (typeof OFFER_STATUSES)[number];
export const VIEWS = ["browse", "results"] as const;
export type View = (typeof VIEWS)[number];

/** `offset`, when given, overrides `(page - 1) * pageSize` (GraphQL cursors). */
export interface PageParams {
  page: number;
  pageSize: number;
  offset?: number;
}
export interface BrowseParams extends PageParams {
  sport?: string;
  query?: string;
  status?: OfferStatus;
  view?: View;
}

const INT = /^[1-9][0-9]{0,8}$/;

function intParam(v: string | undefined, name: string, def: number, min: number, max: number): number {
  if (v === undefined || v === "") return def;
  if (!INT.test(v) || Number(v) < min || Number(v) > max)
    throw new ApiError(400, `${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(v.slice(0, 40))}`);
  return Number(v);
}

export function pageParams(q: Record<string, string | undefined>): PageParams {
  return { page: intParam(q.page, "page", 1, 1, 1_000_000_000), pageSize: intParam(q.pageSize, "pageSize", 20, 1, 50) };
}

function oneOf<T extends string>(v: string | undefined, name: string, allowed: readonly T[]): T | undefined {
  if (v === undefined || v === "") return undefined;
  if (!(allowed as readonly string[]).includes(v))
    throw new ApiError(400, `${name} must be one of ${allowed.join(", ")}; got ${JSON.stringify(v.slice(0, 40))}`);
  return v as T;
}

function text(v: string | undefined, name: string, max: number): string | undefined {
  if (v === undefined || v === "") return undefined;
  if (v.length > max) throw new ApiError(400, `${name} must be at most ${max} characters`);
  return v;
}

export function browseParams(q: Record<string, string | undefined>): BrowseParams {
  return {
    ...pageParams(q),
    sport: text(q.sport, "sport", 64),
    query: text(q.query, "query", 200),
    status: oneOf(q.status, "status", OFFER_STATUSES),
    view: oneOf(q.view, "view", VIEWS),
  };
}

/** An offer address path segment; a malformed one is 400 (the spec's "Malformed address"). */
export function offerAddress(v: string): string {
  return parseAddress(v, "offer address").toBase58();
}
