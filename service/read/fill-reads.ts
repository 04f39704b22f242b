/**
 * An offer's fills in revision order. One query shape pages them both ways the API does: REST's
 * numbered pages (an offset from the first) and GraphQL's keyset pages (next to a revision).
 */
import type { Kysely } from "kysely";
import { deriveFill, type Database, type DerivedFill, type FillsTable } from "../../indexer";
import { ApiError } from "../api-error";
import type { FillKey, KeysetPage } from "./read-model";

/** A window of an offer's fills: a keyset page, from its key or from `offset` items off the start. */
export type FillWindow = KeysetPage<FillKey> & { offset?: number };

export class FillReads {
  constructor(private readonly db: Kysely<Database>) {}

  /** The fills in `w` (in revision order), whether more lie beyond it, and the offer's total; 404 for an unknown offer. */
  async page(address: string, w: FillWindow): Promise<{ rows: FillsTable[]; more: boolean; total: number }> {
    const exists = await this.db.selectFrom("offers").select("address").where("address", "=", address).executeTakeFirst();
    if (!exists) throw new ApiError(404, "offer not found");
    let q = this.db.selectFrom("fills").selectAll().where("offer", "=", address);
    if (w.key) q = q.where("revision", w.forward ? ">" : "<", w.key.revision);
    const [rows, [{ n }]] = await Promise.all([
      q
        .orderBy("revision", w.forward ? "asc" : "desc")
        .limit(w.limit + 1)
        .offset(w.offset ?? 0)
        .execute(),
      this.db
        .selectFrom("fills")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("offer", "=", address)
        .execute(),
    ]);
    const taken = rows.slice(0, w.limit);
    if (!w.forward) taken.reverse();
    return { rows: taken, more: rows.length > w.limit, total: Number(n) };
  }

  /** One fill by its offer and revision. */
  async one(offer: string, revision: number): Promise<DerivedFill | null> {
    const row = await this.db.selectFrom("fills").selectAll().where("offer", "=", offer).where("revision", "=", revision).executeTakeFirst();
    return row ? deriveFill(row) : null;
  }

  /** An offer's fills of the given revisions, oldest first (the fills a change announced). */
  async at(address: string, revisions: readonly number[]): Promise<DerivedFill[]> {
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
}
