/**
 * A contract's book (issue 23): per outcome X, the Open offers a taker backing X can take (the
 * creator backs the other side, the contract accepts takes, something remains), grouped into
 * levels of exactly equal taker odds, best first; with the last match and the matched volume.
 * One function for REST and GraphQL. Decisions (docs/api-guide.md, "The book"):
 *
 * - Levels are grouped in TypeScript over the contract's Open offers (one query on the offers'
 *   contract index): ratios are compared exactly by cross-multiplication in bigint, which SQL
 *   would do in floating point or need per-engine 128-bit arithmetic for.
 * - A signed-in caller's book leaves out what the take rule (offers-rules.ts takeRefusal, the
 *   rule behind the viewer's takeRefusal) refuses to that caller as SelfTake ("ownOffer") or
 *   CreatorBlocked; a blocked caller still sees the market.
 * - Only the columns a book and the take rule read are selected (BOOK_COLUMNS, 11 of the offer
 *   row's 26): reading the rows is most of an uncached book's cost (BENCHMARKS.md).
 * - `revision` is a digest of what the book is made of: whether the contract takes offers, and
 *   the address and revision (the program's per-offer change counter, kept by the store) of every
 *   offer in it, and the matched volume (a fill on an offer hidden from the caller still moves
 *   lastMatch). Any take, close, new offer or cutoff changes it; nothing else does, so two
 *   processes (and REST and GraphQL) answer the same revision for the same book.
 * - An offer past its expiry (offers-rules.ts `offerExpired`, at the read's chain time) is left
 *   out like one of a contract past its cutoff: nobody can take it. Its expiry dates the book
 *   (`updatedAt`) and its leaving changes the revision.
 * - `availableMicros` and `offerCount` of a side count every level, not only the `depth` shown.
 */
import { createHash } from "node:crypto";
import { sql } from "kysely";
import type { OffersTable } from "../../indexer";
import { iso } from "../../indexer";
import { compareTakerOdds, oddsOf, type Odds } from "../../idl/client/odds";
import { contractRefusal, offerExpired, takeRefusal } from "../../idl/client/offers-rules";
import { ApiError } from "../api-error";
import type { ReadService } from "./read-service";

export type Side = "sideA" | "sideB";

export interface BookLevel {
  /** The taker's odds shared by every offer of the level. */
  odds: Odds;
  availableMicros: string;
  offerCount: number;
  /** The level's offers, oldest first. */
  offers: string[];
}

export interface BookSide {
  /** The outcome a taker on this side backs. */
  side: Side;
  label: string;
  best: Odds | null;
  availableMicros: string;
  offerCount: number;
  levels: BookLevel[];
}

export interface Book {
  contract: string;
  revision: string;
  updatedAt: string | null;
  sides: BookSide[];
  lastMatch: { side: Side; odds: Odds; amountMicros: string; at: string } | null;
  matchedVolumeMicros: string;
}

export const BOOK_DEPTH = { default: 10, max: 100 } as const;

/** The columns of an offer a book is made of, the take rule and a quote (./quote.ts) read. */
const BOOK_COLUMNS = [
  "address",
  "contract",
  "creator",
  "side",
  "status",
  "creator_total_micros",
  "creator_allocated_micros",
  "taker_target_micros",
  "taker_filled_micros",
  "minimum_take_micros",
  "revision",
  "created_at",
  "fee_bps",
  "expires_at",
] as const;
export type BookOffer = Pick<OffersTable, (typeof BOOK_COLUMNS)[number]>;

/** What a book is computed from, shared by every caller and depth until the store changes. */
interface BookInput {
  contract: string;
  outcomes: { side: Side; label: string }[];
  takeable: boolean;
  offers: BookOffer[];
  lastMatch: Book["lastMatch"];
  matchedVolumeMicros: string;
  /** Latest change the store dated: an offer created or closed, a fill, the cutoff once passed. */
  updatedAt: number | null;
}

/** The book of `contract` to `depth` levels a side, as `viewerWallet` may take it (null: anonymous). */
export async function contractBook(read: ReadService, contract: string, depth: number, viewerWallet: string | null): Promise<Book> {
  const input = await read.anonymous(
    `bookInput:${contract}`,
    () => bookInput(read, contract),
    (i) => i !== null,
  );
  if (!input) throw new ApiError(404, "contract not found");
  if (viewerWallet === null) return read.anonymous(`book:${contract}:${depth}`, async () => buildBook(input, input.offers, depth));
  const key = `book:${read.blockedVersion()}:${contract}:${depth}`;
  return read.forViewer(viewerWallet, key, async () => buildBook(input, await takeableBy(read, input, viewerWallet), depth));
}

/** The contracts of `offers` (those the store knows): which books a change to these offers may move. */
export async function contractsOfOffers(db: ReadService["db"], offers: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  // Chunks keep a large change set under every engine's bound on bound parameters.
  for (let i = 0; i < offers.length; i += 500) {
    const rows = await db
      .selectFrom("offers")
      .select("contract")
      .distinct()
      .where("address", "in", offers.slice(i, i + 500))
      .execute();
    for (const r of rows) out.add(r.contract);
  }
  return out;
}

/** The offers of the book `wallet` could take: the take rule's refusals for the caller's own offers and blocked creators. */
async function takeableBy(read: ReadService, input: BookInput, wallet: string): Promise<BookOffer[]> {
  if (input.offers.length === 0) return [];
  const blocked = await read.blockedWallets([...new Set(input.offers.map((o) => o.creator))]);
  return input.offers.filter((o) => {
    const takerTarget = BigInt(o.taker_target_micros);
    const takerFilled = BigInt(o.taker_filled_micros);
    // No config, no position, the contract open: only the caller-specific refusals (and none of the limits) can apply.
    const refused = takeRefusal({
      offer: {
        status: o.status,
        creator: o.creator,
        creatorTotal: BigInt(o.creator_total_micros),
        creatorAllocated: BigInt(o.creator_allocated_micros),
        takerTarget,
        takerFilled,
        minimumTake: BigInt(o.minimum_take_micros),
        revision: BigInt(o.revision),
        expiresAt: o.expires_at,
      },
      contract: { status: "Open", cutoffAt: Number.MAX_SAFE_INTEGER },
      taker: { wallet, blocked: false, held: 0n },
      creatorBlocked: blocked.has(o.creator),
      amount: takerTarget - takerFilled,
      now: 0,
      config: null,
    });
    return refused !== "SelfTake" && refused !== "CreatorBlocked";
  });
}

async function bookInput(read: ReadService, contract: string): Promise<BookInput | null> {
  const [c, now] = await Promise.all([read.contractsByAddress([contract]).then((m) => m.get(contract)), read.now()]);
  if (!c) return null;
  const cutoff = Math.floor(Date.parse(c.cutoffAt) / 1000);
  const takeable = contractRefusal({ status: c.status, cutoffAt: cutoff }, now) === null;
  const db = read.db;
  const [open, fills, last, closed] = await Promise.all([
    takeable
      ? db.selectFrom("offers").select(BOOK_COLUMNS).where("contract", "=", contract).where("status", "=", "Open").where("deleted", "=", 0).execute()
      : Promise.resolve([] as BookOffer[]),
    // Summed here, not in SQL: amounts are u64 text, and an exact sum needs numeric in PostgreSQL and overflows SQLite's integer.
    db.selectFrom("fills").innerJoin("offers", "offers.address", "fills.offer").select("fills.take_micros").where("offers.contract", "=", contract).execute(),
    db
      .selectFrom("fills")
      .innerJoin("offers", "offers.address", "fills.offer")
      .select(["fills.take_micros", "fills.filled_at", "offers.side", "offers.creator_total_micros", "offers.taker_target_micros"])
      .where("offers.contract", "=", contract)
      .orderBy("fills.filled_at", "desc")
      .orderBy("fills.slot", "desc")
      .orderBy("fills.revision", "desc")
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom("offers")
      .select(sql<number | null>`max(${sql.ref("closed_at")})`.as("at"))
      .where("contract", "=", contract)
      .executeTakeFirst(),
  ]);
  const live = open.filter((o) => BigInt(o.taker_target_micros) > BigInt(o.taker_filled_micros));
  const offers = live.filter((o) => !offerExpired({ expiresAt: o.expires_at }, now));
  const expired = live.filter((o) => offerExpired({ expiresAt: o.expires_at }, now)).map((o) => Number(o.expires_at));
  const lastMatch = last
    ? {
        side: (last.side === "sideA" ? "sideB" : "sideA") as Side,
        odds: takerOddsOf(last),
        amountMicros: last.take_micros,
        at: iso(last.filled_at)!,
      }
    : null;
  const times = [
    ...offers.map((o) => Number(o.created_at)),
    last ? Number(last.filled_at) : null,
    closed?.at == null ? null : Number(closed.at),
    takeable ? null : cutoff,
    ...expired,
  ];
  const dated = times.filter((t): t is number => t !== null && Number.isFinite(t));
  return {
    contract,
    outcomes: c.outcomes,
    takeable,
    offers,
    lastMatch,
    matchedVolumeMicros: fills.reduce((s, f) => s + BigInt(f.take_micros), 0n).toString(),
    updatedAt: dated.length ? Math.max(...dated) : null,
  };
}

const takerOddsOf = (o: Pick<OffersTable, "creator_total_micros" | "taker_target_micros">) =>
  oddsOf(BigInt(o.creator_total_micros) + BigInt(o.taker_target_micros), BigInt(o.taker_target_micros));

/** An offer with its amounts parsed once (a sort compares each offer many times). */
interface Parsed {
  row: BookOffer;
  terms: { creatorTotal: bigint; takerTarget: bigint };
  remaining: bigint;
  createdAt: number;
}

/** Best odds first; within a level, oldest first (then address), the order a taker meets them in. */
function bookOrder(a: Parsed, b: Parsed): number {
  return compareTakerOdds(a.terms, b.terms) || a.createdAt - b.createdAt || (a.row.address < b.row.address ? -1 : a.row.address > b.row.address ? 1 : 0);
}

/** The levels of one side from its offers, every level (callers cut to depth). */
export function bookLevels(offers: BookOffer[]): BookLevel[] {
  const sorted = offers
    .map((row): Parsed => {
      const takerTarget = BigInt(row.taker_target_micros);
      return {
        row,
        terms: { creatorTotal: BigInt(row.creator_total_micros), takerTarget },
        remaining: takerTarget - BigInt(row.taker_filled_micros),
        createdAt: Number(row.created_at),
      };
    })
    .sort(bookOrder);
  const levels: { first: Parsed; available: bigint; offers: string[] }[] = [];
  for (const o of sorted) {
    const top = levels[levels.length - 1];
    if (top && compareTakerOdds(top.first.terms, o.terms) === 0) {
      top.available += o.remaining;
      top.offers.push(o.row.address);
    } else levels.push({ first: o, available: o.remaining, offers: [o.row.address] });
  }
  return levels.map((l) => ({ odds: takerOddsOf(l.first.row), availableMicros: l.available.toString(), offerCount: l.offers.length, offers: l.offers }));
}

function buildBook(input: BookInput, offers: BookOffer[], depth: number): Book {
  const sides = input.outcomes.map(({ side, label }): BookSide => {
    const levels = bookLevels(offers.filter((o) => o.side !== side));
    return {
      side,
      label,
      best: levels[0]?.odds ?? null,
      availableMicros: levels.reduce((s, l) => s + BigInt(l.availableMicros), 0n).toString(),
      offerCount: levels.reduce((n, l) => n + l.offerCount, 0),
      levels: levels.slice(0, depth),
    };
  });
  // Sorted as Array.prototype.sort sorts the pairs (by "address,revision"), with each pair's text
  // made once instead of at every comparison (most of buildBook's time in a CPU profile); the digest is unchanged.
  const pairs = offers
    .map((o) => ({ key: `${o.address},${o.revision}`, pair: [o.address, String(o.revision)] }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((x) => x.pair);
  const digest = createHash("sha256").update(JSON.stringify([input.takeable, input.matchedVolumeMicros, pairs]));
  return {
    contract: input.contract,
    revision: digest.digest("hex").slice(0, 16),
    updatedAt: iso(input.updatedAt),
    sides,
    lastMatch: input.lastMatch,
    matchedVolumeMicros: input.matchedVolumeMicros,
  };
}

/**
 * The offers a taker backing `side` meets on the book, in the book's order (best taker odds first,
 * oldest first within a level), as `viewerWallet` may take them (null: anonymous): what a quote
 * and a take-best plan over (./quote.ts). Null for an unknown contract.
 */
export async function bookOffers(read: ReadService, contract: string, side: Side, viewerWallet: string | null): Promise<BookOffer[] | null> {
  const input = await read.anonymous(
    `bookInput:${contract}`,
    () => bookInput(read, contract),
    (i) => i !== null,
  );
  if (!input) return null;
  const offers = viewerWallet === null ? input.offers : await takeableBy(read, input, viewerWallet);
  const order = new Map(
    bookLevels(offers.filter((o) => o.side !== side))
      .flatMap((l) => l.offers)
      .map((a, i) => [a, i]),
  );
  return offers.filter((o) => order.has(o.address)).sort((a, b) => order.get(a.address)! - order.get(b.address)!);
}

/**
 * The addresses of the indexed Open offers a taker backing `side` meets on `contract`, in the
 * book's order, whatever the caller: the take-best write (service/writes/take-best.ts) reads
 * each from the chain and leaves out what its rules refuse.
 */
export async function indexedBookOrder(db: ReadService["db"], contract: string, side: Side): Promise<string[]> {
  const open = await db
    .selectFrom("offers")
    .selectAll()
    .where("contract", "=", contract)
    .where("status", "=", "Open")
    .where("deleted", "=", 0)
    .where("side", "!=", side)
    .execute();
  return bookLevels(open.filter((o) => BigInt(o.taker_target_micros) > BigInt(o.taker_filled_micros))).flatMap((l) => l.offers);
}
