/**
 * Writes of the off-chain catalog (service-owned data joined to chain rows by address):
 * contract titles/sport/labels/visuals, pool slug and moderation flags, public profiles.
 * Upserts; the chain tables are never touched here.
 */
import type { Kysely } from "kysely";
import type { Database } from "./schema";

const now = () => Math.floor(Date.now() / 1000);

export interface ContractCatalogInput {
  contract: string;
  title: string;
  description?: string;
  event: string;
  sport: string;
  competition: string;
  startsAt: number;
  sideALabel: string;
  sideBLabel: string;
  visuals?: { src: string; alt: string }[];
}

export async function upsertContractCatalog(db: Kysely<Database>, c: ContractCatalogInput): Promise<void> {
  const row = {
    contract: c.contract,
    title: c.title,
    description: c.description ?? "",
    event: c.event,
    sport: c.sport,
    competition: c.competition,
    starts_at: c.startsAt,
    side_a_label: c.sideALabel,
    side_b_label: c.sideBLabel,
    visuals_json: JSON.stringify(c.visuals ?? []),
    updated_at: now(),
  };
  const { contract: _k, ...set } = row;
  await db
    .insertInto("contract_catalog")
    .values(row)
    .onConflict((oc) => oc.column("contract").doUpdateSet(set))
    .execute();
}

export interface PoolCatalogInput {
  pool: string;
  slug?: string | null;
  isPublic?: boolean;
  deleted?: boolean;
  flagged?: boolean;
}

export async function upsertPoolCatalog(db: Kysely<Database>, p: PoolCatalogInput): Promise<void> {
  const row = {
    pool: p.pool,
    slug: p.slug ?? null,
    is_public: p.isPublic === false ? 0 : 1,
    deleted: p.deleted ? 1 : 0,
    flagged: p.flagged ? 1 : 0,
    updated_at: now(),
  };
  const { pool: _k, ...set } = row;
  await db
    .insertInto("pool_catalog")
    .values(row)
    .onConflict((oc) => oc.column("pool").doUpdateSet(set))
    .execute();
}

export async function upsertProfile(db: Kysely<Database>, p: { wallet: string; displayName: string; profileImageUrl?: string }): Promise<void> {
  const row = { wallet: p.wallet, display_name: p.displayName, profile_image_url: p.profileImageUrl ?? "", updated_at: now() };
  const { wallet: _k, ...set } = row;
  await db
    .insertInto("profiles")
    .values(row)
    .onConflict((oc) => oc.column("wallet").doUpdateSet(set))
    .execute();
}

/** Parsed visuals of a catalog row. */
export function visualsOf(row: { visuals_json: string }): { src: string; alt: string }[] {
  try {
    const v = JSON.parse(row.visuals_json) as unknown;
    return Array.isArray(v) ? (v as { src: string; alt: string }[]) : [];
  } catch {
    return [];
  }
}
