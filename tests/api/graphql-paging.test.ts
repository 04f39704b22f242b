/**
 * A Relay-style client pages through 1,000 offers over real HTTP while new offers arrive between
 * its pages: keyset cursors neither repeat nor skip an offer that existed when it started.
 *
 * The 1,000 are cheap copies of one offer the program created, inserted straight into the store
 * (new addresses, creation times with ties); the API still derives everything it shows from the
 * stored rows. Offers arriving meanwhile are both copies and real ones created through the program.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keypair } from "@solana/web3.js";
import type { OffersTable } from "../../indexer";
import { apiStack, type ApiStack, makeUser, contract as makeContract, createBody, UNIT, type TestUser } from "../support/stack";
import { getJson, gql, post } from "../support/http";
import { until } from "../support/wait";

const BASE = "/api/bets-usdc/offers";
const PAGE = `query($first: PageSize, $after: Cursor, $last: PageSize, $before: Cursor) {
  offers(first: $first, after: $after, last: $last, before: $before) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id address createdAt } }
  }
}`;
interface Page {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  edges: { cursor: string; node: { id: string; address: string; createdAt: string } }[];
}

let s: ApiStack;
let creator: TestUser;
let template: OffersTable;
let contract: Awaited<ReturnType<typeof makeContract>>;

async function realOffer(): Promise<string> {
  const r = await post(s, "/", createBody(contract), creator.token);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const a = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${BASE}/${a}`)).status === 200);
  return a;
}

/**
 * Copies of the program-made offer with new addresses, created at the given unix seconds, by
 * another creator (the service numbers a creator's offers from the store).
 */
const copier = Keypair.generate().publicKey.toBase58();
let copied = 0;
async function copies(createdAt: number[]): Promise<string[]> {
  const rows = createdAt.map((t) => ({
    ...template,
    address: Keypair.generate().publicKey.toBase58(),
    creator: copier,
    nonce: String(++copied),
    created_at: t,
  }));
  for (let i = 0; i < rows.length; i += 100)
    await s.db
      .insertInto("offers")
      .values(rows.slice(i, i + 100))
      .execute();
  return rows.map((r) => r.address);
}

async function page(vars: Record<string, unknown>): Promise<Page> {
  const r = await gql(s, PAGE, vars);
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  return r.body.data.offers;
}

beforeAll(async () => {
  s = await apiStack();
  creator = await makeUser(s, 1_000n * UNIT);
  contract = await makeContract(s);
  const first = await realOffer();
  template = await s.db.selectFrom("offers").selectAll().where("address", "=", first).executeTakeFirstOrThrow();
  // 1,000 more, three to a second (ties are ordered by address), all older than the first.
  await copies(Array.from({ length: 1_000 }, (_, i) => template.created_at - 1 - Math.floor(i / 3)));
}, 120_000);
afterAll(async () => s?.stop());

describe("keyset pagination", () => {
  it("pages through 1,000 offers while new ones arrive, with no offer seen twice or missed", async () => {
    const atStart = new Set((await s.db.selectFrom("offers").select("address").execute()).map((r) => r.address));
    expect(atStart.size).toBeGreaterThanOrEqual(1_001);
    const seen: string[] = [];
    const keys: [number, string][] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const p: Page = await page({ first: 50, after });
      pages++;
      expect(p.pageInfo.hasPreviousPage).toBe(after !== null);
      expect(p.pageInfo.startCursor).toBe(p.edges[0]?.cursor ?? null);
      expect(p.pageInfo.endCursor).toBe(p.edges.at(-1)?.cursor ?? null);
      seen.push(...p.edges.map((e) => e.node.address));
      keys.push(...p.edges.map((e) => [Date.parse(e.node.createdAt), e.node.address] as [number, string]));
      if (!p.pageInfo.hasNextPage) break;
      after = p.pageInfo.endCursor;
      // Arrivals between pages: newer offers (they shift every offset), and one at the very
      // second of the page's last item (it sorts around the cursor).
      const last = Date.parse(p.edges.at(-1)!.node.createdAt) / 1000;
      await copies([template.created_at + pages, last]);
      if (pages % 7 === 0) await realOffer();
    }
    expect(new Set(seen).size).toBe(seen.length);
    const missed = [...atStart].filter((a) => !seen.includes(a));
    expect(missed).toEqual([]);
    // Browse order throughout: newest first, then by address.
    const sorted = [...keys].sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : 1));
    expect(keys).toEqual(sorted);
  }, 120_000);

  it("pages backward with last/before to the same items", async () => {
    const forward = await page({ first: 10 });
    const next = await page({ first: 10, after: forward.pageInfo.endCursor });
    const back = await page({ last: 10, before: next.pageInfo.startCursor });
    expect(back.edges.map((e) => e.node.address)).toEqual(forward.edges.map((e) => e.node.address));
    expect(back.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const r = await gql(s, PAGE, { first: 5, before: next.pageInfo.startCursor });
    expect(r.body.errors[0].extensions).toMatchObject({ code: "BAD_REQUEST", status: 400 });
  });
});
