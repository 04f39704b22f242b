/**
 * The objects the read API answers with (REST bodies and GraphQL types alike) and the two ways a
 * list is cut into pages: numbered pages (REST) and keyset pages next to an item (GraphQL).
 */
import type { DerivedOffer } from "../../indexer";
import type { PageParams } from "./params";
import type { ContractResult, Viewer } from "./offer-viewer";
import type { OfferOdds } from "./odds";

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

/** A numbered page of offers (REST browse and mine). */
export interface OfferList {
  offers: Offer[];
  pagination: Pagination;
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

export const offsetOf = (p: PageParams) => p.offset ?? (p.page - 1) * p.pageSize;

export function pagination(p: PageParams, total: number): Pagination {
  return { page: p.page, pageSize: p.pageSize, total, hasNextPage: offsetOf(p) + p.pageSize < total };
}
