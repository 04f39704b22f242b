/**
 * The share pages on a phone, and the chat text that links to them: in Debian's chromium at a
 * 390 px wide viewport, neither page is wider than the screen (no sideways scrolling), whatever
 * their long links and unbroken words; the `/shareable` chat line says the taker's terms in the page's own words
 * (amounts, decimal odds, a readable cutoff), never a raw ISO timestamp. Screenshots of both pages
 * at that size are written to docs/screenshots.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { Browser } from "playwright-core";
import { upsertPoolCatalog } from "../../indexer";
import { PoolOps } from "../../service/chain/pools-ops";
import { apiStack, type ApiStack, contract, createBody, makeUser, UNIT } from "../support/stack";
import { getJson, post } from "../support/http";
import { until } from "../support/wait";
import { decodePng, launchBrowser, saveScreenshot, screenshotOf } from "./browser";

const BASE = "/api/bets-usdc/offers";
const PHONE = { width: 390, height: 844 };
// No space to break at: without wrapping anywhere, a word this long is wider than a phone.
const LONG_QUESTION = "Supercalifragilistic-Championship-Final-Decider?";

let s: ApiStack;
let browser: Browser;
let offer: string;
let pool: PublicKey;

beforeAll(async () => {
  s = await apiStack();
  browser = await launchBrowser();
  const creator = await makeUser(s);
  const now = await s.chain.gateway.now();
  const c = await contract(s);
  const r = await post(s, "/", createBody(c, { creatorTotalMicros: String(15n * UNIT), takerTargetMicros: String(45n * UNIT) }), creator.token);
  expect(r.status).toBe(200);
  offer = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${BASE}/${offer}`)).status === 200);

  const ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
  pool = await ops.create(creator.name, { question: LONG_QUESTION, labels: ["Red", "Blue", "Draw"], closesAt: now + 600n, criteria: "Official result" });
  await ops.pick(creator.name, pool, 0, 10n * UNIT);
  await upsertPoolCatalog(s.db, { pool: pool.toBase58(), slug: "phone" });
  await until(async () => (await getJson(s, "/api/embed/v1/polls/phone")).body.data?.totalOiMicros === "10000000");
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

/** The page at phone width: how wide the document is, its og:description, and a screenshot. */
async function onPhone(path: string, screenshot: string) {
  const page = await browser.newPage({ viewport: PHONE });
  const res = await page.goto(`${s.url}${path}`);
  expect(res!.status()).toBe(200);
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  const description = await page.locator('meta[property="og:description"]').getAttribute("content");
  const png = await screenshotOf(page, { fullPage: true });
  saveScreenshot(screenshot, png);
  await page.close();
  return { scrollWidth, description, shot: decodePng(png) };
}

describe("share pages on a 390 px phone screen", () => {
  it("the offer page fits the screen", async () => {
    const { scrollWidth, shot } = await onPhone(`/offers/${offer}`, "share-offer-phone.png");
    expect(scrollWidth).toBeLessThanOrEqual(PHONE.width);
    expect(shot.width).toBe(PHONE.width);
  });

  it("the pool page fits the screen", async () => {
    const { scrollWidth, shot } = await onPhone("/polls/phone", "share-poll-phone.png");
    expect(scrollWidth).toBeLessThanOrEqual(PHONE.width);
    expect(shot.width).toBe(PHONE.width);
  });
});

describe("the chat text and the page it links", () => {
  it("say the taker's terms in the same words: amounts, decimal odds and a readable cutoff", async () => {
    const shareable = (await getJson(s, `${BASE}/shareable?pageSize=50`)).body.offers.find((o: { address: string }) => o.address === offer);
    const { description } = await onPhone(`/offers/${offer}`, "share-offer-phone.png");
    const terms = 'Take "Away": 45 USDC to win 15 USDC (odds 1.33), 45 USDC left. Open, cutoff ';
    expect(description).toContain(terms);
    expect(shareable.text).toContain(terms);
    // The page's sentence, from "Take" on, is the chat line's, which adds the contract and the link.
    const pageTerms = description!.slice(description!.indexOf("Take "));
    expect(shareable.text).toBe(`${shareable.offer.creator.displayName} backs "Home" on Will the home side win? ${pageTerms} ${shareable.url}`);
    expect(pageTerms).toMatch(/cutoff \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\.$/);
    expect(shareable.text).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:/); // no raw ISO time
  });
});
