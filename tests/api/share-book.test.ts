/**
 * Issue 23's pictures over real HTTP against the programs in bankrun and the indexer, opened in
 * Debian's chromium. The contract share page (/contracts/<address>): both sides' best taker odds
 * (decimal and ratio), the book's depth per side with bars, the last match and matched volume,
 * all equal to the book the API answers; the preview tags; HTML 404s; hostile titles and labels
 * shown as text; the page once the cutoff has passed. The offer page's odds history chart, from
 * the history the API answers. Both pages at 1200 px and on a 390 px phone: screenshots written
 * to docs/screenshots, checked not blank and not wider than the screen.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { Browser, Page } from "playwright-core";
import { apiStack, type ApiStack, createBody, key, makeUser, UNIT, type TestUser } from "../support/stack";
import { getJson, post } from "../support/http";
import { until } from "../support/wait";
import { decodePng, launchBrowser, recordingPage, saveScreenshot, screenshotOf } from "./browser";

const BASE = "/api/bets-usdc/offers";
const PUBLIC = "https://offers.example"; // apiStack's publicBaseUrl
const DESKTOP = { width: 1200, height: 900 };
const PHONE = { width: 390, height: 844 };
const HOSTILE_TITLE = `</title><script>window.pwned = 1</script><img src=x onerror="alert('title')">`;
const HOSTILE_LABEL = `<i onclick=alert()>R</i>`; // the program's longest label: 24 bytes

let s: ApiStack;
let browser: Browser;
let creator: TestUser, taker: TestUser;
let derby: PublicKey, hostile: PublicKey, quiet: PublicKey;
let first: string;

async function contractWith(title: string, sideALabel = "Home"): Promise<PublicKey> {
  const now = await s.chain.gateway.now();
  return s.admin.createContract({
    title,
    event: "Red vs Blue",
    sport: "football",
    competition: "League",
    startsAt: Number(now + 3_600n),
    cutoffAt: now + 3_600n,
    resolutionDeadline: now + 90_000n,
    sideALabel,
    sideBLabel: "Away",
    visuals: [{ src: "https://example.com/crest.png", alt: "crest" }],
  });
}

/** Creator stake S backing `outcome`, taker target T: the taker's odds are (S + T) : T. */
async function offer(c: PublicKey, outcome: "sideA" | "sideB", stake: bigint, target: bigint): Promise<string> {
  const r = await post(
    s,
    "/",
    createBody(c, { creatorOutcome: outcome, creatorTotalMicros: String(stake * UNIT), takerTargetMicros: String(target * UNIT) }),
    creator.token,
  );
  expect(r.status).toBe(200);
  const address = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${BASE}/${address}`)).status === 200);
  return address;
}

const meta = (page: Page, attr: "property" | "name", k: string) => page.locator(`meta[${attr}="${k}"]`).getAttribute("content");
const rows = async (page: Page, testId: string) =>
  (await page.locator(`[data-testid="${testId}"] tbody tr`).allInnerTexts()).map((r) => r.replace(/\s+/g, " ").trim());

/** The page at `viewport`: a screenshot that is not blank, and no sideways scrolling. */
async function pictured(path: string, viewport: { width: number; height: number }, name: string) {
  const page = await browser.newPage({ viewport });
  const res = await page.goto(`${s.url}${path}`);
  expect(res!.status()).toBe(200);
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(scrollWidth).toBeLessThanOrEqual(viewport.width);
  const png = await screenshotOf(page, { fullPage: true });
  saveScreenshot(name, png);
  const shot = decodePng(png);
  expect(shot.width).toBe(viewport.width);
  // A blank page has one colour and no ink; text on the white card is a few percent of a phone's pixels.
  expect(shot.colors).toBeGreaterThan(50);
  expect(shot.inkRatio).toBeGreaterThan(0.05);
  await page.close();
  return shot;
}

beforeAll(async () => {
  s = await apiStack();
  browser = await launchBrowser();
  [creator, taker] = [await makeUser(s), await makeUser(s)];
  derby = await contractWith("Who takes the derby?");
  // A market that moves over 40 minutes (the cutoff is an hour away). Takers backing Away meet
  // the offers backing Home: 1.80 (9:5) twice, later 2.50 (5:2) for 10; takers backing Home
  // meet 1.50 (3:2) for 20.
  first = await offer(derby, "sideA", 8n, 10n);
  await s.chain.gateway.advance(600n);
  await offer(derby, "sideA", 8n, 10n);
  await s.chain.gateway.advance(600n);
  const t = await post(s, `/${first}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
  expect(t.status).toBe(200);
  await until(async () => (await getJson(s, `${BASE}/contracts/${derby.toBase58()}/book`)).body.matchedVolumeMicros === "5000000");
  await s.chain.gateway.advance(600n);
  await offer(derby, "sideA", 15n, 10n);
  await offer(derby, "sideB", 10n, 20n);
  await s.chain.gateway.advance(600n);

  hostile = await contractWith(HOSTILE_TITLE, HOSTILE_LABEL);
  await offer(hostile, "sideB", 10n, 10n);
  quiet = await contractWith("Nobody has offered yet");
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

describe("GET /contracts/<address>", () => {
  it("shows both sides' best odds, the depth, the last match and the volume the book API answers, and the preview tags", async () => {
    const address = derby.toBase58();
    const { page, requests } = await recordingPage(browser, DESKTOP);
    const res = await page.goto(`${s.url}/contracts/${address}`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()["content-type"]).toMatch(/^text\/html/);
    expect(res!.headers()["cache-control"]).toBe("public, max-age=5, s-maxage=15, stale-while-revalidate=30");
    expect(res!.headers()["content-security-policy"]).toContain("default-src 'none'");
    expect(await page.locator("h1").innerText()).toBe("Who takes the derby?");
    expect(await page.getByTestId("status").innerText()).toBe("Open");
    expect(await page.getByTestId("state").innerText()).toMatch(/^4 offers open to takers until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);

    const book = (await getJson(s, `${BASE}/contracts/${address}/book`)).body;
    const [home, away] = book.sides;
    expect([home.best.decimal, away.best.decimal]).toEqual(["1.5000", "2.5000"]);
    const bestHome = await page.getByTestId("best-sideA").innerText();
    expect(bestHome).toContain("Back Home");
    expect(bestHome).toContain("1.50");
    expect(bestHome).toContain("best odds 3:2");
    expect(bestHome).toContain("20 USDC available in 1 offer");
    const bestAway = await page.getByTestId("best-sideB").innerText();
    expect(bestAway).toContain("2.50");
    expect(bestAway).toContain(`best odds ${away.best.numerator}:${away.best.denominator}`);
    expect(bestAway).toContain("25 USDC available in 3 offers");

    expect(await rows(page, "depth-sideA")).toEqual(["1.50 (3:2) 20 USDC 1"]);
    expect(await rows(page, "depth-sideB")).toEqual(["2.50 (5:2) 10 USDC 1", "1.80 (9:5) 15 USDC 2"]);
    // Bars against the deepest level shown (20 USDC).
    const bars = await page.locator(".depth .bar span").evaluateAll((els) => els.map((e) => (e as HTMLElement).style.width));
    expect(bars).toEqual(["100%", "50%", "75%"]);
    // Both sides' best odds over the last hours, as the history API answers them.
    const chart = page.getByTestId("odds-chart");
    expect(await chart.locator(".chart-title").innerText()).toBe("Best odds on offer per side, last 24 hours");
    expect((await chart.locator(".legend").allInnerTexts()).map((t) => t.trim())).toEqual(["back Home", "back Away"]);
    expect(await chart.locator("polyline").count()).toBeGreaterThanOrEqual(2);

    expect(book.lastMatch).toMatchObject({ side: "sideB", amountMicros: "5000000", odds: { numerator: "9", denominator: "5" } });
    expect(await page.getByTestId("last-match").innerText()).toMatch(/^5 USDC on Away at 1\.80 \(9:5\), \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    expect(await page.getByTestId("matched").innerText()).toBe("5 USDC");

    const description = 'Back "Home" at 1.50 (3:2), 20 USDC available. Back "Away" at 2.50 (5:2), 25 USDC available. 5 USDC matched.';
    expect({
      ogTitle: await meta(page, "property", "og:title"),
      ogDescription: await meta(page, "property", "og:description"),
      ogUrl: await meta(page, "property", "og:url"),
      ogType: await meta(page, "property", "og:type"),
      ogImage: await meta(page, "property", "og:image"),
      twitterCard: await meta(page, "name", "twitter:card"),
      twitterDescription: await meta(page, "name", "twitter:description"),
      canonical: await page.locator('link[rel="canonical"]').getAttribute("href"),
      json: await page.locator('link[rel="alternate"][type="application/json"]').getAttribute("href"),
    }).toEqual({
      ogTitle: "Who takes the derby?",
      ogDescription: description,
      ogUrl: `${PUBLIC}/contracts/${address}`,
      ogType: "website",
      ogImage: "https://example.com/crest.png",
      twitterCard: "summary",
      twitterDescription: description,
      canonical: `${PUBLIC}/contracts/${address}`,
      json: `${PUBLIC}${BASE}/contracts/${address}/book`,
    });
    expect(await page.locator(`footer a[href="${PUBLIC}${BASE}/contracts/${address}/book"]`).count()).toBe(1);
    // Nothing fetched but the page itself: no script, font or image.
    expect(requests).toEqual([`${s.url}/contracts/${address}`]);
    expect(await page.locator("script, img").count()).toBe(0);
    await page.close();
  });

  it("fits a 1200 px screen and a 390 px phone: screenshots not blank, no sideways scrolling", async () => {
    await pictured(`/contracts/${derby.toBase58()}`, DESKTOP, "share-contract.png");
    await pictured(`/contracts/${derby.toBase58()}`, PHONE, "share-contract-phone.png");
    await pictured(`/offers/${first}`, DESKTOP, "share-offer-history.png");
    await pictured(`/offers/${first}`, PHONE, "share-offer-history-phone.png");
    // The longest words a contract page can carry (the hostile title, a long address) still fit.
    await pictured(`/contracts/${hostile.toBase58()}`, PHONE, "share-contract-hostile-phone.png");
  });

  it("says when nothing is on offer or matched", async () => {
    // The chart says it in words too.
    const { page } = await recordingPage(browser, PHONE);
    expect((await page.goto(`${s.url}/contracts/${quiet.toBase58()}`))!.status()).toBe(200);
    expect(await page.getByTestId("best-sideA").innerText()).toContain("nothing on offer");
    expect(await page.getByTestId("depth-empty").count()).toBe(2);
    expect(await page.getByTestId("last-match").innerText()).toBe("none yet");
    expect(await page.getByTestId("odds-chart-empty").innerText()).toContain("no odds history yet");
    expect(await page.locator("svg").count()).toBe(0);
    expect(await meta(page, "property", "og:description")).toBe('Nothing on offer for "Home". Nothing on offer for "Away". Nothing matched yet.');
    await page.close();
  });

  it("answers an HTML 404 for unknown and malformed addresses and other paths under /contracts", async () => {
    const { page } = await recordingPage(browser);
    for (const path of [
      "/contracts/11111111111111111111111111111111", // a valid address with no contract
      "/contracts/not-an-address",
      "/contracts/%3Cscript%3E",
      "/contracts/",
      "/contracts",
      `/contracts/${derby.toBase58()}/more`,
    ]) {
      const res = await page.goto(`${s.url}${path}`);
      expect([path, res!.status()]).toEqual([path, 404]);
      expect(res!.headers()["content-type"]).toMatch(/^text\/html/);
      expect(await page.locator("h1").innerText()).toBe("Not found");
      expect(await page.locator(".sub").innerText()).toBe("No contract is listed at this address.");
      expect(await page.locator('meta[name="robots"]').getAttribute("content")).toBe("noindex");
      expect(await page.locator('meta[property="og:title"]').count()).toBe(0);
    }
    await page.close();
  });

  it("shows a hostile title and outcome label as text: nothing runs, the tags hold the exact text", async () => {
    const { page, dialogs, requests } = await recordingPage(browser);
    const path = `/contracts/${hostile.toBase58()}`;
    expect((await page.goto(`${s.url}${path}`))!.status()).toBe(200);
    expect(await page.locator("h1").innerText()).toBe(HOSTILE_TITLE);
    expect(await page.title()).toBe(HOSTILE_TITLE);
    expect(await page.getByTestId("best-sideA").innerText()).toContain(`Back ${HOSTILE_LABEL}`);
    expect(await meta(page, "property", "og:title")).toBe(HOSTILE_TITLE);
    expect(await meta(page, "property", "og:description")).toContain(`Back "${HOSTILE_LABEL}" at 2.00 (2:1)`);
    expect(await page.locator("script, img, i").count()).toBe(0);
    await page.locator("h1").hover();
    await page.locator("h2").first().click();
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(requests).toEqual([`${s.url}${path}`]);
    const raw = await (await fetch(`${s.url}${path}`)).text();
    expect(raw).not.toContain("<script>");
    expect(raw).toContain("&lt;/title&gt;&lt;script&gt;");
    await page.close();
  });

  it("shows on the offer page its contract's odds history for the offer's takers: best on offer and matched, as the history API answers", async () => {
    const { page, requests } = await recordingPage(browser, DESKTOP);
    const res = await page.goto(`${s.url}/offers/${first}`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()["content-security-policy"]).toContain("default-src 'none'");
    const history = (await getJson(s, `${BASE}/contracts/${derby.toBase58()}/history?side=sideB&interval=5m&points=288`)).body;
    const priced = history.points.filter((p: { bestOdds: unknown }) => p.bestOdds !== null);
    // Away's best: 1.80 from the first offer on, 2.50 once the 15:10 offer came; one take at 1.80.
    expect([...new Set(priced.map((p: { bestOdds: { decimal: string } }) => p.bestOdds.decimal))]).toEqual(["1.8000", "2.5000"]);
    expect(history.points.filter((p: { lastOdds: unknown }) => p.lastOdds !== null).map((p: { lastOdds: { decimal: string } }) => p.lastOdds.decimal)).toEqual([
      "1.8000",
    ]);
    const chart = page.getByTestId("odds-chart");
    expect(await chart.locator(".chart-title").innerText()).toBe('Odds for takers backing "Away", last 24 hours');
    expect((await chart.locator(".legend").allInnerTexts()).map((t) => t.trim())).toEqual(["best on offer", "matched"]);
    // The best odds' line has a point per interval from the first priced one; the one take is a dot.
    const points = await chart.locator("polyline").first().getAttribute("points");
    const firstPriced = history.points.findIndex((p: { bestOdds: unknown }) => p.bestOdds !== null);
    expect(points!.trim().split(/\s+/).length).toBe(history.points.length - firstPriced);
    expect(await chart.locator("circle").count()).toBe(1);
    // The axis spans the prices: 1.80 to 2.50 with some room.
    const axis = (await chart.locator("svg text").allTextContents()).slice(0, 2).map(Number);
    expect(axis[0]).toBeGreaterThan(2.5);
    expect(axis[1]).toBeLessThan(1.8);
    expect(requests).toEqual([`${s.url}/offers/${first}`]);
    expect(await page.locator("script, img").count()).toBe(0);
    await page.close();
  });

  it("shows the contract closed, with nothing on offer, once its cutoff has passed", async () => {
    await s.chain.gateway.advance(3_601n);
    const address = derby.toBase58();
    await until(async () => (await getJson(s, `${BASE}/contracts/${address}/book`)).body.sides[0].best === null);
    const { page } = await recordingPage(browser);
    await until(async () => {
      await page.goto(`${s.url}/contracts/${address}`);
      return (await page.getByTestId("status").innerText()) === "Closed";
    });
    expect(await page.getByTestId("state").innerText()).toBe("Past its cutoff: no more takes");
    expect(await page.getByTestId("depth-empty").count()).toBe(2);
    // What matched before the cutoff stays.
    expect(await page.getByTestId("matched").innerText()).toBe("5 USDC");
    await page.close();
  });
});
