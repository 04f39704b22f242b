/**
 * The offers list by price (issue 23, sort=bestOdds) over real HTTP, REST and GraphQL, on one
 * stack: the taker's odds best first compared as exact ratios (a reference sorts by
 * cross-multiplication), equal odds oldest first then by address, numbered pages and cursors
 * that give the same order; paging across a page boundary while offers are added, taken in full
 * and closed returns no offer twice and skips none that stayed; a cursor of the other order and
 * an unknown sort are refused.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { apiStack, type ApiStack, makeUser, contract as makeContract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { getJson, gql, post } from "../support/http";
import { until } from "../support/wait";

const BASE = "/api/bets-usdc/offers";
let s: ApiStack;
let creator: TestUser, taker: TestUser;
let contract: PublicKey;

interface Listed {
  address: string;
  createdAt: string;
  takerOdds: { numerator: string; denominator: string };
}

/** Stake S and target T of each offer made here: several share a ratio (8:10, 16:20, 4:5). */
const TERMS: [bigint, bigint][] = [
  [8n, 10n],
  [12n, 10n],
  [16n, 20n],
  [4n, 10n],
  [6n, 10n],
  [4n, 5n],
  [21n, 10n],
  [9n, 7n],
];

async function create(stake: bigint, target: bigint): Promise<string> {
  const body = createBody(contract, { creatorTotalMicros: String(stake * UNIT), takerTargetMicros: String(target * UNIT), minimumTakeMicros: String(UNIT) });
  const r = await post(s, "/", body, creator.token);
  expect(r.status, r.text).toBe(200);
  await until(async () => (await getJson(s, `${BASE}/${r.body.offerAddress}`)).status === 200);
  return r.body.offerAddress as string;
}

/** The reference order: exact ratios by cross-multiplication, then creation time, then address. */
function reference(offers: Listed[]): string[] {
  return [...offers]
    .sort((a, b) => {
      const l = BigInt(a.takerOdds.numerator) * BigInt(b.takerOdds.denominator);
      const r = BigInt(b.takerOdds.numerator) * BigInt(a.takerOdds.denominator);
      if (l !== r) return l > r ? -1 : 1;
      const t = Date.parse(a.createdAt) - Date.parse(b.createdAt);
      return t || (a.address < b.address ? -1 : 1);
    })
    .map((o) => o.address);
}

async function restList(q: string): Promise<Listed[]> {
  const out: Listed[] = [];
  for (let page = 1; ; page++) {
    const r = await getJson(s, `${BASE}?${q}&pageSize=3&page=${page}`);
    expect(r.status, r.text).toBe(200);
    out.push(...r.body.offers);
    if (!r.body.pagination.hasNextPage) return out;
  }
}

const PAGE = `edges { cursor node { address createdAt takerOdds { numerator denominator } } } pageInfo { hasNextPage hasPreviousPage endCursor startCursor } totalCount`;

async function gqlPage(args: string) {
  const r = await gql(s, `{ offers(sort: bestOdds, ${args}) { ${PAGE} } }`);
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  return r.body.data.offers;
}

beforeAll(async () => {
  s = await apiStack();
  [creator, taker] = [await makeUser(s, 10_000n * UNIT), await makeUser(s, 10_000n * UNIT)];
  contract = await makeContract(s);
  for (const [stake, target] of TERMS) await create(stake, target);
});
afterAll(async () => s?.stop());

it("REST: the taker's odds best first as exact ratios, ties oldest first then address, in numbered pages", async () => {
  const all = await restList("sort=bestOdds");
  expect(all).toHaveLength(TERMS.length);
  expect(all.map((o) => o.address)).toEqual(reference(all));
  // The default order is unchanged: newest first.
  const newest = (await getJson(s, `${BASE}?pageSize=50`)).body.offers as Listed[];
  expect(newest.map((o) => o.address)).not.toEqual(all.map((o) => o.address));
  expect([...newest.map((o) => o.createdAt)]).toEqual([...newest.map((o) => o.createdAt)].sort().reverse());
  // Three offers share 8:10 (taker 9:5): together, the oldest first.
  const level = all.filter((o) => o.takerOdds.numerator === "9" && o.takerOdds.denominator === "5");
  expect(level).toHaveLength(3);
  expect(all.findIndex((o) => o.address === level[0].address) + 2).toBe(all.findIndex((o) => o.address === level[2].address));
  const bad = await getJson(s, `${BASE}?sort=best`);
  expect(bad.status).toBe(400);
  expect(bad.body.error).toContain("sort must be one of newest, bestOdds");
});

it("GraphQL: the same order forward and backward; a cursor of the other order is refused", async () => {
  const rest = (await restList("sort=bestOdds")).map((o) => o.address);
  const seen: string[] = [];
  let after: string | null = null;
  for (;;) {
    const p = await gqlPage(`first: 3${after ? `, after: "${after}"` : ""}`);
    expect(p.totalCount).toBe(rest.length);
    seen.push(...p.edges.map((e: { node: Listed }) => e.node.address));
    if (!p.pageInfo.hasNextPage) break;
    after = p.pageInfo.endCursor;
  }
  expect(seen).toEqual(rest);
  const back = await gqlPage(`last: 3, before: "${(await gqlPage("first: 6")).pageInfo.endCursor}"`);
  expect(back.edges.map((e: { node: Listed }) => e.node.address)).toEqual(rest.slice(2, 5));
  expect(back.pageInfo.hasPreviousPage).toBe(true);
  const newestCursor = (await gql(s, `{ offers(first: 1) { pageInfo { endCursor } } }`)).body.data.offers.pageInfo.endCursor;
  const mixed = await gql(s, `{ offers(sort: bestOdds, first: 2, after: "${newestCursor}") { totalCount } }`);
  expect(mixed.body.errors[0].extensions.code).toBe("BAD_REQUEST");
});

it("paging across a page boundary while offers are added, taken in full and closed: no duplicates, nothing that stayed skipped", async () => {
  const q = `view: browse, first: 4`;
  const first = await gqlPage(q);
  const page1: string[] = first.edges.map((e: { node: Listed }) => e.node.address);
  const before = (await restList("sort=bestOdds&view=browse")).map((o) => o.address);
  const rest = before.slice(4);
  expect(rest.length).toBeGreaterThan(3);
  // Between the pages: a best-priced offer (sorts before the cursor), a worst-priced one (after it);
  // after the cursor, one offer taken in part (it stays), one taken in full (Filled: it leaves
  // browse) and one closed (it leaves too).
  const best = await create(40n, 10n);
  const worst = await create(2n, 10n);
  const [part, full, closed] = rest;
  const takeOf = async (offer: string, all: boolean) => {
    const d = (await getJson(s, `${BASE}/${offer}`)).body;
    const amount = all ? d.takerTargetMicros : String(UNIT);
    const r = await post(s, `/${offer}/take`, { takeAmountMicros: amount, expectedRevision: d.revision, idempotencyKey: key() }, taker.token);
    expect(r.status, r.text).toBe(200);
  };
  await takeOf(part, false);
  await takeOf(full, true);
  const cl = await post(s, `/${closed}/close`, { expectedRevision: "1", idempotencyKey: key() }, creator.token);
  expect(cl.status, cl.text).toBe(200);
  await until(async () => {
    const listed = (await restList("sort=bestOdds&view=browse")).map((o) => o.address);
    return !listed.includes(closed) && !listed.includes(full) && listed.includes(worst);
  });

  const next: string[] = [];
  let after = first.pageInfo.endCursor as string;
  for (;;) {
    const p = await gqlPage(`view: browse, first: 4, after: "${after}"`);
    next.push(...p.edges.map((e: { node: Listed }) => e.node.address));
    if (!p.pageInfo.hasNextPage) break;
    after = p.pageInfo.endCursor;
  }
  const walked = [...page1, ...next];
  expect(new Set(walked).size).toBe(walked.length);
  for (const a of rest.filter((x) => x !== closed && x !== full)) expect(next).toContain(a);
  expect(next).toContain(part);
  expect(next).not.toContain(closed);
  expect(next).not.toContain(full);
  expect(next).toContain(worst);
  expect(walked).not.toContain(best);
  // What follows the cursor is exactly the list now, after the cursor's item.
  const now = (await restList("sort=bestOdds&view=browse")).map((o) => o.address);
  expect(next).toEqual(now.slice(now.indexOf(page1[3]) + 1));
});
