/**
 * Contracts as the read API shows them: a contract joined with its catalog row (a contract the
 * catalog does not describe is never listed). The joined columns are listed once, here: the
 * contracts query selects them as they are, the offers query selects them beside each offer
 * prefixed `k_` (one row per offer, no second query for its contract).
 */
import type { Kysely } from "kysely";
import {
  iso,
  POSITION_COLUMNS,
  visualsOf,
  type ContractCatalogTable,
  type ContractsTable,
  type Database,
  type OffersTable,
  type PositionsTable,
} from "../../indexer";
import { cutoffFilter } from "../../idl/client/offers-rules";
import type { Contract } from "./read-model";
import type { ContractResult } from "./offer-viewer";

/** The contract's own columns the API shows (its address is the offer's `contract`). */
const CONTRACT_COLUMNS = ["template_id", "event_id", "cutoff_at", "resolution_deadline", "status", "result"] as const;
/** The catalog's columns the API shows. */
const CATALOG_COLUMNS = ["title", "description", "event", "sport", "competition", "starts_at", "side_a_label", "side_b_label", "visuals_json"] as const;

/**
 * The offer's own columns the read path uses (its chain bookkeeping, token accounts and nonce are
 * left out): reading fewer columns of each row was 10-15 % of a page's query (BENCHMARKS.md, issue 21).
 */
const OFFER_COLUMNS = [
  "address",
  "contract",
  "creator",
  "side",
  "status",
  "fee_bps",
  "creator_total_micros",
  "taker_target_micros",
  "minimum_take_micros",
  "taker_filled_micros",
  "creator_allocated_micros",
  "creator_refunded_micros",
  "revision",
  "fill_count",
  "position_count",
  "settled_position_count",
  "created_at",
  "closed_at",
  "expires_at",
] as const satisfies readonly (keyof OffersTable)[];

/** An offer as the read path reads it (OFFER_COLUMNS). */
export type OfferFields = Pick<OffersTable, (typeof OFFER_COLUMNS)[number]>;

type ContractColumn = (typeof CONTRACT_COLUMNS)[number];
type CatalogColumn = (typeof CATALOG_COLUMNS)[number];

/** A contract with its catalog columns, as toContract reads it. */
export type ContractRow = { address: string } & Pick<ContractsTable, ContractColumn> & Pick<ContractCatalogTable, CatalogColumn>;

/** The joined contract columns beside an offer's own (see offersWithContract). */
export type JoinedContract = { [K in ContractColumn | CatalogColumn as `k_${K}`]: ContractRow[K] };

/** The creator's profile beside an offer's columns (null: the creator set none). */
export interface JoinedProfile {
  p_display_name: string | null;
  p_profile_image_url: string | null;
}

/** An offer row with its contract and its creator's profile: what the offer queries return and shaping reads. */
export type OfferRow = OfferFields & JoinedContract & JoinedProfile;

/** Contracts with their catalog row, not deleted. */
export function contractsWithCatalog(db: Kysely<Database>) {
  return db
    .selectFrom("contracts")
    .innerJoin("contract_catalog", "contract_catalog.contract", "contracts.address")
    .select(["contracts.address", ...CONTRACT_COLUMNS.map((c) => `contracts.${c}` as const), ...CATALOG_COLUMNS.map((c) => `contract_catalog.${c}` as const)])
    .where("contracts.deleted", "=", 0)
    .$castTo<ContractRow>();
}

/**
 * Offers with their contract and catalog columns (prefixed k_) and their creator's profile
 * (prefixed p_), in the same query: a separate query for a page's profiles was one more statement
 * on every read, a sixth of one offer's SQL time (BENCHMARKS.md, issue 21).
 */
export function offersWithContract(db: Kysely<Database>) {
  return db
    .selectFrom("offers")
    .innerJoin("contracts", "contracts.address", "offers.contract")
    .innerJoin("contract_catalog", "contract_catalog.contract", "offers.contract")
    .leftJoin("profiles", "profiles.wallet", "offers.creator")
    .select([
      ...OFFER_COLUMNS.map((c) => `offers.${c}` as const),
      ...CONTRACT_COLUMNS.map((c) => `contracts.${c} as k_${c}` as const),
      ...CATALOG_COLUMNS.map((c) => `contract_catalog.${c} as k_${c}` as const),
      "profiles.display_name as p_display_name",
      "profiles.profile_image_url as p_profile_image_url",
    ])
    .$castTo<OfferRow>();
}

/**
 * The contract part of a joined offer row. One literal, each column named (the type holds it to
 * the column lists above): a loop over the names with keys built per row made a dictionary object
 * at several times the cost, once per contract of every page read.
 */
export function contractOfRow(r: OfferRow): ContractRow {
  return {
    address: r.contract,
    template_id: r.k_template_id,
    event_id: r.k_event_id,
    cutoff_at: r.k_cutoff_at,
    resolution_deadline: r.k_resolution_deadline,
    status: r.k_status,
    result: r.k_result,
    title: r.k_title,
    description: r.k_description,
    event: r.k_event,
    sport: r.k_sport,
    competition: r.k_competition,
    starts_at: r.k_starts_at,
    side_a_label: r.k_side_a_label,
    side_b_label: r.k_side_b_label,
    visuals_json: r.k_visuals_json,
  };
}

/** The caller's position beside an offer row: every column null when the caller holds none. */
export type JoinedPosition = { [K in (typeof POSITION_COLUMNS)[number] as `v_${K}`]: PositionsTable[K] | null };

/**
 * One offer (offersWithContract) with `taker`'s position on it in the same statement (left join:
 * a taker holds at most one position per offer, its address derived from both). A single offer
 * read by a signed-in caller ran a second statement for it, a tenth of that read's time under
 * load (BENCHMARKS.md, issue 21).
 */
export function offerWithPosition(db: Kysely<Database>, address: string, taker: string) {
  return offersWithContract(db)
    .leftJoin("positions as vp", (j) => j.onRef("vp.offer", "=", "offers.address").on("vp.taker", "=", taker))
    .select(POSITION_COLUMNS.map((c) => `vp.${c} as v_${c}` as const))
    .where("offers.address", "=", address)
    .$castTo<OfferRow & JoinedPosition>();
}

/** The position part of a row of offerWithPosition; null when the caller holds none. One literal, each column named. */
export function positionOfRow(r: JoinedPosition): PositionsTable | null {
  if (r.v_address === null) return null;
  return {
    address: r.v_address,
    offer: r.v_offer!,
    taker: r.v_taker!,
    taker_token: r.v_taker_token!,
    rent_payer: r.v_rent_payer!,
    taker_micros: r.v_taker_micros!,
    creator_matched_micros: r.v_creator_matched_micros!,
    status: r.v_status!,
    fill_count: r.v_fill_count!,
    created_at: r.v_created_at!,
    settled_at: r.v_settled_at,
    creator_payout_micros: r.v_creator_payout_micros!,
    taker_payout_micros: r.v_taker_payout_micros!,
    fee_micros: r.v_fee_micros!,
    slot: r.v_slot!,
    write_version: r.v_write_version!,
    deleted: r.v_deleted!,
  };
}

/** Open contracts before their cutoff at `now`, soonest cutoff first. */
export async function openContracts(db: Kysely<Database>, now: number): Promise<Contract[]> {
  const [op, at] = cutoffFilter("ahead", now);
  const rows = await contractsWithCatalog(db)
    .where("contracts.status", "=", "Open")
    .where("contracts.cutoff_at", op, at)
    .orderBy("contracts.cutoff_at")
    .orderBy("contracts.address")
    .execute();
  return rows.map(toContract);
}

export async function contractsByAddress(db: Kysely<Database>, addresses: readonly string[]): Promise<Map<string, Contract>> {
  if (addresses.length === 0) return new Map();
  const rows = await contractsWithCatalog(db)
    .where("contracts.address", "in", [...new Set(addresses)])
    .execute();
  return new Map(rows.map((r) => [r.address, toContract(r)]));
}

const RESULTS: readonly string[] = ["sideA", "sideB", "void"];

/** A contract's result, or null while it has none ("none" in the store). */
export const resultOf = (result: string): ContractResult | null => (RESULTS.includes(result) ? (result as ContractResult) : null);

export function toContract(r: ContractRow): Contract {
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
    result: resultOf(r.result),
    outcomes: [
      { side: "sideA", label: r.side_a_label ?? "Side A" },
      { side: "sideB", label: r.side_b_label ?? "Side B" },
    ],
    visuals: r.visuals_json ? visualsOf({ visuals_json: r.visuals_json }) : [],
  };
}
