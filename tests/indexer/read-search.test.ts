/**
 * The browse `query` on the store's own text search (FTS5 on SQLite, tsvector on PostgreSQL),
 * through ReadService on both engines: each searchable column finds its offer, words match from
 * their start in any case, all words must match, catalog edits are searched as soon as they are
 * written, and a deep page and the total agree with the rows. Semantics: service/read/search.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PublicKey } from "@solana/web3.js";
import { randomBytes } from "node:crypto";
import { openStore, type Store } from "../../indexer/store/db";
import { upsertContractCatalog } from "../../indexer/store/catalog";
import { ReadService } from "../../service/read/read-service";
import { scaleRows } from "../../scripts/bench-read-scale";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

const addr = () => new PublicKey(randomBytes(32)).toBase58();

describe.each(ENGINES)("text search and lists on %s", (engine) => {
  let target: StoreTarget;
  let store: Store;
  let read: ReadService;
  const offerOf = new Map<string, string>();

  beforeAll(async () => {
    target = freshStore(engine, "search");
    store = await openStore(target.url);
    // 300 ordinary offers (words: Match, Lions, League...), then one contract per searchable column with a word of its own.
    const base = scaleRows(300, 30, 10);
    await store.db.insertInto("config").values(base.config).execute();
    await store.db.insertInto("contracts").values(base.contracts).execute();
    await store.db.insertInto("contract_catalog").values(base.catalog).execute();
    await store.db.insertInto("offers").values(base.offers).execute();
    const columns = { title: "Zebra crossing final", event: "Quokka derby", competition: "Narwhal Cup", side_a_label: "Ocelots", side_b_label: "Pangolins" };
    for (const [column, text] of Object.entries(columns)) {
      const contract = { ...base.contracts[0], address: addr() };
      await store.db.insertInto("contracts").values(contract).execute();
      await store.db
        .insertInto("contract_catalog")
        .values({
          ...base.catalog[0],
          contract: contract.address,
          title: "plain",
          event: "plain",
          competition: "plain",
          side_a_label: "A",
          side_b_label: "B",
          [column]: text,
        })
        .execute();
      const offer = { ...base.offers[0], address: addr(), contract: contract.address, created_at: base.offers[0].created_at - 1 };
      await store.db.insertInto("offers").values(offer).execute();
      offerOf.set(column, offer.address);
    }
    read = new ReadService({ db: store.db, now: () => 1_900_000_000, anonymousTtlMs: 0, countTtlMs: 0 });
  });
  afterAll(async () => {
    read?.close();
    await store?.close();
    await target?.drop();
  });

  const search = async (query: string, page = 1, pageSize = 20) => read.browse({ page, pageSize, query }, null);
  const found = async (query: string) => (await search(query, 1, 50)).offers.map((o) => o.address);

  it.each([
    ["title", "zebra"],
    ["event", "quokka"],
    ["competition", "narwhal"],
    ["side_a_label", "ocelots"],
    ["side_b_label", "pangolins"],
  ])("finds an offer by its contract's %s", async (column, word) => {
    expect(await found(word)).toEqual([offerOf.get(column)]);
  });

  it("matches words from their start, in any case, all words of the query", async () => {
    expect(await found("ZEB")).toEqual([offerOf.get("title")]);
    expect(await found("Zebra Final")).toEqual([offerOf.get("title")]);
    expect(await found("ebra")).toEqual([]); // not inside a word
    expect(await found("zebra quokka")).toEqual([]); // words of two different contracts
    expect(await found("narwhal-cup!")).toEqual([offerOf.get("competition")]); // punctuation separates words
    expect(await found("?!")).toEqual([]); // no word at all
    // Words only: read as "zebra", "or", "match" (none has all three); as FTS syntax it would find 301 offers.
    expect(await found(`zebra" OR "match*`)).toEqual([]);
    expect(await found("zebra*")).toEqual([offerOf.get("title")]);
  });

  it("searches a catalog edit as soon as it is written", async () => {
    const contract = (await store.db.selectFrom("offers").select("contract").where("address", "=", offerOf.get("event")!).executeTakeFirstOrThrow()).contract;
    await upsertContractCatalog(store.db, {
      contract,
      title: "Axolotl rematch",
      event: "plain",
      sport: "football",
      competition: "plain",
      startsAt: 0,
      sideALabel: "A",
      sideBLabel: "B",
    });
    expect(await found("axolotl")).toEqual([offerOf.get("event")]);
    expect(await found("quokka")).toEqual([]);
  });

  it("lists a creator's offers (mine) with their total and role", async () => {
    const creator = (await store.db.selectFrom("offers").select("creator").orderBy("created_at", "desc").executeTakeFirstOrThrow()).creator;
    const r = await read.mine({ page: 1, pageSize: 50, query: "match" }, creator);
    expect(r.pagination.total).toBe(30);
    expect(r.offers).toHaveLength(30);
    expect(r.offers.every((o) => o.viewer.role === "creator")).toBe(true);
    expect((await read.mine({ page: 1, pageSize: 50, role: "taker" }, creator)).offers).toEqual([]);
  });

  it("without the writer's announcements, keeps a page until the indexed slot moves (read every slotPollMs)", async () => {
    await store.db.insertInto("checkpoints").values({ source: "test", slot: 5, write_version: 0, cursor: "", updated_at: 0 }).execute();
    const cached = new ReadService({ db: store.db, now: () => 1_900_000_000, anonymousTtlMs: 60_000, countTtlMs: 60_000, slotPollMs: 50 });
    let added = "";
    try {
      const first = await cached.browse({ page: 1, pageSize: 5 }, null);
      const newest = { ...(await store.db.selectFrom("offers").selectAll().orderBy("created_at", "desc").executeTakeFirstOrThrow()) };
      const row = { ...newest, address: (added = addr()), created_at: newest.created_at + 1 };
      await store.db.insertInto("offers").values(row).execute();
      await new Promise((r) => setTimeout(r, 120));
      // Same slot: the shared page and its total are still the ones read before.
      expect(await cached.browse({ page: 1, pageSize: 5 }, null)).toEqual(first);
      const { slot } = await store.db.selectFrom("checkpoints").select("slot").executeTakeFirstOrThrow();
      await store.db
        .updateTable("checkpoints")
        .set({ slot: Number(slot) + 1 })
        .execute();
      await new Promise((r) => setTimeout(r, 120));
      const after = await cached.browse({ page: 1, pageSize: 5 }, null);
      expect(after.offers[0].address).toBe(added);
      expect(after.pagination.total).toBe(first.pagination.total + 1);
    } finally {
      cached.close();
      await store.db.deleteFrom("offers").where("address", "=", added).execute();
    }
  });

  it("pages a search result and the whole list in order, with their totals", async () => {
    // "match" is in every ordinary title (300 offers); then a deep page of the whole list.
    const all = await search("match", 1, 50);
    expect(all.pagination.total).toBe(300);
    const pages = [];
    for (let page = 1; page <= 6; page++) pages.push(...(await search("match", page, 50)).offers);
    expect(new Set(pages.map((o) => o.address)).size).toBe(300);
    const created = pages.map((o) => Date.parse(o.createdAt));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    const browse = await read.browse({ page: 15, pageSize: 20 }, null);
    expect(browse.pagination.total).toBe(305);
    expect(browse.offers.map((o) => o.address)).toEqual(
      (await store.db.selectFrom("offers").select("address").orderBy("created_at", "desc").orderBy("address").limit(20).offset(280).execute()).map(
        (r) => r.address,
      ),
    );
  });
});
