/**
 * The browse `query` parameter as the store's own text search (indexes of migration 0003): the
 * query is cut into words (runs of letters and digits, lower-cased), and an offer matches when
 * every word begins a word of its contract's title, event, competition or side labels, in any of
 * them. "home side" finds "Will the home side win?", "hom" finds "Home", "ome" does not (words
 * match from their start, not inside). Nothing is stemmed ("wins" does not find "win") and
 * accents are kept ("é" is not "e"), the same on SQLite (FTS5) and PostgreSQL (tsvector
 * 'simple'). A query without any word matches nothing.
 */
import { sql, type Expression, type SqlBool } from "kysely";
import { PG_SEARCH_DOCUMENT } from "../../indexer/store/migrations";

/** At most this many words are used (the rest are ignored): a longer query only narrows further. */
export const MAX_QUERY_WORDS = 8;

export function queryWords(query: string): string[] {
  return [...new Set((query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_QUERY_WORDS))];
}

/** The condition on contract_catalog rows for `query`; words are quoted, so no FTS syntax gets through. */
export function searchCondition(engine: "sqlite" | "postgres", query: string): Expression<SqlBool> {
  const words = queryWords(query);
  if (words.length === 0) return sql<SqlBool>`1 = 0`;
  if (engine === "postgres") return sql<SqlBool>`${sql.raw(PG_SEARCH_DOCUMENT)} @@ to_tsquery('simple', ${words.map((w) => `'${w}':*`).join(" & ")})`;
  const match = words.map((w) => `"${w}"*`).join(" ");
  return sql<SqlBool>`contract_catalog.contract in (select contract from contract_search where contract_search match ${match})`;
}
