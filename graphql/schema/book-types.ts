/**
 * The book in GraphQL (issue 23): `Contract.book(depth)` and the root `contract(address)` to
 * reach it, answering what GET /contracts/{contractAddress}/book answers (service/read/book.ts).
 */
import type { Book, BookLevel, BookSide } from "../../service/read/book";
import { contractBook } from "../../service/read/book";
import { bookParams } from "../../service/read/book-params";
import { ApiError } from "../../service/api-error";
import type { ApiBuilder, ReadContext } from "./builder";
import { viewerWallet, type ReadDeps, type ReadTypes } from "./read-types";

/** Adds the book's types and fields; returns the Book type (the book subscription sends it too). */
export function addBook(builder: ApiBuilder, d: ReadDeps, types: ReadTypes, guard: <T>(fn: () => Promise<T>) => Promise<T>) {
  const { OddsT, ContractT, enums } = types;
  const wallet = (ctx: ReadContext) => viewerWallet(ctx, d.custody);
  const LevelT = builder.objectRef<BookLevel>("BookLevel").implement({
    description: "Offers with exactly the same taker odds.",
    fields: (t) => ({
      odds: t.expose("odds", { type: OddsT }),
      availableMicros: t.expose("availableMicros", { type: "Amount", description: "Sum of the level's remainingTakerMicros." }),
      offerCount: t.exposeInt("offerCount"),
      offers: t.exposeStringList("offers", { description: "The level's offer addresses, oldest first." }),
    }),
  });
  const SideT = builder.objectRef<BookSide>("BookSide").implement({
    fields: (t) => ({
      side: t.expose("side", { type: enums.Side, description: "The outcome a taker on this side backs." }),
      label: t.exposeString("label"),
      best: t.expose("best", { type: OddsT, nullable: true }),
      availableMicros: t.expose("availableMicros", { type: "Amount", description: "Across every level, not only the depth shown." }),
      offerCount: t.exposeInt("offerCount"),
      levels: t.expose("levels", { type: [LevelT], description: "Best (highest taker odds) first, at most `depth`." }),
    }),
  });
  const MatchT = builder.objectRef<NonNullable<Book["lastMatch"]>>("BookMatch").implement({
    fields: (t) => ({
      side: t.expose("side", { type: enums.Side, description: "The side the taker backed." }),
      odds: t.expose("odds", { type: OddsT }),
      amountMicros: t.expose("amountMicros", { type: "Amount" }),
      at: t.expose("at", { type: "DateTime" }),
    }),
  });
  const BookT = builder.objectRef<Book>("Book").implement({
    description: "A contract's book: per outcome, the offers a taker backing it can take, grouped by equal odds, best first.",
    fields: (t) => ({
      contract: t.expose("contract", { type: "Address" }),
      revision: t.exposeString("revision", { description: "Changes whenever the book changes." }),
      updatedAt: t.expose("updatedAt", { type: "DateTime", nullable: true }),
      sides: t.expose("sides", { type: [SideT] }),
      lastMatch: t.expose("lastMatch", { type: MatchT, nullable: true }),
      matchedVolumeMicros: t.expose("matchedVolumeMicros", { type: "Amount" }),
    }),
  });
  builder.objectField(ContractT, "book", (t) =>
    t.field({
      type: BookT,
      args: { depth: t.arg.int({ description: "Levels per side, 1 to 100 (default 10)." }) },
      resolve: (c, a, ctx) =>
        guard(async () => {
          const { contract, depth } = bookParams(c.address, { depth: a.depth === null || a.depth === undefined ? null : String(a.depth) });
          return contractBook(d.read, contract, depth, await wallet(ctx));
        }),
    }),
  );
  builder.queryField("contract", (t) =>
    t.field({
      type: ContractT,
      args: { address: t.arg({ type: "Address", required: true }) },
      description: "One contract by address, whatever its status.",
      resolve: (_r, a) =>
        guard(async () => {
          const c = (await d.read.contractsByAddress([a.address])).get(a.address);
          if (!c) throw new ApiError(404, "contract not found");
          return c;
        }),
    }),
  );
  return BookT;
}
