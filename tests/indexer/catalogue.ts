/**
 * The catalog rows the indexer suites give their contracts: the read API shows a contract (and
 * its offers) only once the service catalogued it.
 */
import type { Kysely } from "kysely";
import type { PublicKey } from "@solana/web3.js";
import type { Database } from "../../indexer";
import { upsertContractCatalog } from "../../indexer/store/catalog";

/** Catalogues each of `contracts` under `title`, with sides "Home" and "Away". */
export async function catalogue(db: Kysely<Database>, contracts: readonly PublicKey[], title: string): Promise<void> {
  for (const c of contracts)
    await upsertContractCatalog(db, {
      contract: c.toBase58(),
      title,
      event: "E",
      sport: "football",
      competition: "C",
      startsAt: 1_900_000_000,
      sideALabel: "Home",
      sideBLabel: "Away",
    });
}
