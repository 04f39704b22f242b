/**
 * The pages shared links open (/offers/<address>, /polls/<slug>), over real HTTP against the
 * programs in bankrun and the indexer, opened in Debian's chromium: the visible offer (sides,
 * odds, remaining, status) and pool (question, outcomes, shares, state), the Open Graph and
 * Twitter tags as the browser's DOM holds them, the JSON link, screenshots written to
 * docs/screenshots and checked not to be blank, HTML 404s, and hostile titles, names, questions
 * and labels shown as text, never run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import type { Browser, Page } from "playwright-core";
import { openStore, upsertPoolCatalog } from "../../indexer";
import { ReadService } from "../../service/read/read-service";
import { createApp, listen } from "../../graphql/server";
import { PoolOps } from "../../service/chain/pools-ops";
import { decimalOdds, formatMicros } from "../../service/read/share-format";
import { apiStack, type ApiStack, createBody, key, makeUser, UNIT, type TestUser } from "../support/stack";
import { getJson, post } from "../support/http";
import { until } from "../support/wait";
import { decodePng, launchBrowser, recordingPage, saveScreenshot, screenshotOf } from "./browser";

const BASE = "/api/bets-usdc/offers";
const PUBLIC = "https://offers.example"; // apiStack's publicBaseUrl
const HOSTILE_TITLE = `</title><script>window.pwned = 1</script><img src=x onerror="alert('title')">`;
const HOSTILE_NAME = `"><img src=x onerror=alert('name')>`;
const HOSTILE_QUESTION = `Who wins? "><script>window.pwned = 2</script>`;
const HOSTILE_LABEL = `<i onclick=alert()>R</i>`; // the program's longest label: 24 bytes

let s: ApiStack;
let browser: Browser;
let creator: TestUser, taker: TestUser;
let offer: string, hostileOffer: string;
let contract: PublicKey;
let pool: PublicKey, hostilePool: PublicKey, privatePool: PublicKey;

async function createOffer(contract: PublicKey, token: string): Promise<string> {
  const r = await post(s, "/", createBody(contract, { creatorTotalMicros: String(8n * UNIT), takerTargetMicros: String(10n * UNIT) }), token);
  expect(r.status).toBe(200);
  const address = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${BASE}/${address}`)).status === 200);
  return address;
}

async function contractTitled(title: string): Promise<PublicKey> {
  const now = await s.chain.gateway.now();
  return s.admin.createContract({
    title,
    event: "Home vs Away",
    sport: "football",
    competition: "League",
    startsAt: Number(now + 3_600n),
    cutoffAt: now + 3_600n,
    resolutionDeadline: now + 90_000n,
    sideALabel: "Home",
    sideBLabel: "Away",
    visuals: [{ src: "https://example.com/a.png", alt: "crest" }],
  });
}

/** The content of a meta tag as the browser parsed it. */
const meta = (page: Page, attr: "property" | "name", key: string) => page.locator(`meta[${attr}="${key}"]`).getAttribute("content");

/** Every share tag of the page, as the DOM holds them. */
async function shareTags(page: Page) {
  return {
    ogTitle: await meta(page, "property", "og:title"),
    ogDescription: await meta(page, "property", "og:description"),
    ogUrl: await meta(page, "property", "og:url"),
    ogType: await meta(page, "property", "og:type"),
    twitterCard: await meta(page, "name", "twitter:card"),
    twitterTitle: await meta(page, "name", "twitter:title"),
    twitterDescription: await meta(page, "name", "twitter:description"),
    json: await page.locator('link[rel="alternate"][type="application/json"]').getAttribute("href"),
  };
}

/** A screenshot that shows something: the viewport's size, many colours, and ink on a good part of it, unlike about:blank. */
async function checkedScreenshot(page: Page, name: string) {
  const png = await screenshotOf(page, { fullPage: false });
  saveScreenshot(name, png);
  const shot = decodePng(png);
  expect([shot.width, shot.height]).toEqual([900, 700]);
  const blankPage = await browser.newPage({ viewport: { width: 900, height: 700 } });
  await blankPage.goto("about:blank");
  const blank = decodePng(await blankPage.screenshot());
  await blankPage.close();
  expect(blank.colors).toBe(1); // the reader sees a blank page as blank
  expect(shot.colors).toBeGreaterThan(50);
  expect(shot.inkRatio).toBeGreaterThan(0.2);
  return shot;
}

beforeAll(async () => {
  s = await apiStack();
  browser = await launchBrowser();
  [creator, taker] = [await makeUser(s), await makeUser(s)];
  contract = await contractTitled("Will the home side win?");
  offer = await createOffer(contract, creator.token);
  const t = await post(s, `/${offer}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
  expect(t.status).toBe(200);
  await until(async () => (await getJson(s, `${BASE}/${offer}`)).body.revision === "2");

  const villain = await s.admin.createUser(`villain_${Date.now()}`, HOSTILE_NAME);
  await s.admin.fund(villain.name, 100n * UNIT);
  const { token } = await s.custody.issueToken(villain.id, { scopes: ["bet:write"], ttlSeconds: 3600 });
  hostileOffer = await createOffer(await contractTitled(HOSTILE_TITLE), token);

  const ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
  const now = await s.chain.gateway.now();
  pool = await ops.create(creator.name, {
    question: "Who wins the derby?",
    labels: ["Red", "Blue", "Draw"],
    closesAt: now + 600n,
    criteria: "Official result",
  });
  await ops.pick(creator.name, pool, 0, 10n * UNIT);
  await ops.pick(taker.name, pool, 1, 20n * UNIT);
  await upsertPoolCatalog(s.db, { pool: pool.toBase58(), slug: "derby" });
  hostilePool = await ops.create(creator.name, { question: HOSTILE_QUESTION, labels: [HOSTILE_LABEL, "Blue"], closesAt: now + 600n });
  await upsertPoolCatalog(s.db, { pool: hostilePool.toBase58(), slug: "hostile" });
  privatePool = await ops.create(creator.name, { question: "Private?", closesAt: now + 600n });
  await upsertPoolCatalog(s.db, { pool: privatePool.toBase58(), slug: "private", isPublic: false });
  await until(async () => (await getJson(s, "/api/embed/v1/polls/hostile")).status === 200);
  await until(async () => (await getJson(s, `/api/embed/v1/polls/derby`)).body.data?.totalOiMicros === "30000000");
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

describe("amounts and odds on the pages", () => {
  it("formats micro-unit strings exactly, beyond a JS number's precision", () => {
    expect(formatMicros("0")).toBe("0 USDC");
    expect(formatMicros("5000000")).toBe("5 USDC");
    expect(formatMicros("1234500000")).toBe("1,234.5 USDC");
    expect(formatMicros("1")).toBe("0.000001 USDC");
    expect(formatMicros("18446744073709551615")).toBe("18,446,744,073,709.551615 USDC");
    expect(decimalOdds("10000000", "8000000")).toBe("1.80");
    expect(decimalOdds("8000000", "10000000")).toBe("2.25");
    expect(decimalOdds("3", "1")).toBe("1.33"); // rounded down
  });
});

describe("GET /offers/<address>", () => {
  it("shows the offer with its sides, odds, remaining amount and status, and the preview tags", async () => {
    const { page, requests } = await recordingPage(browser);
    const res = await page.goto(`${s.url}/offers/${offer}`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()["content-type"]).toMatch(/^text\/html/);
    expect(res!.headers()["cache-control"]).toBe("public, max-age=5, s-maxage=15, stale-while-revalidate=30");
    expect(await page.locator("h1").innerText()).toBe("Will the home side win?");
    expect(await page.getByTestId("status").innerText()).toBe("Open");
    const creatorSide = await page.getByTestId("creator-side").innerText();
    expect(creatorSide).toContain("Home");
    expect(creatorSide).toContain("stake 8 USDC");
    expect(creatorSide).toContain("odds 2.25");
    const takerSide = await page.getByTestId("taker-side").innerText();
    expect(takerSide).toContain("Away");
    expect(takerSide).toContain("up to 10 USDC");
    expect(takerSide).toContain("odds 1.80");
    expect(await page.getByTestId("remaining").innerText()).toBe("5 USDC");
    const text = await page.locator("body").innerText();
    expect(text).toContain("Home vs Away");
    expect(text).toContain("5 USDC by 1 taker");

    const tags = await shareTags(page);
    const shareable = (await getJson(s, `${BASE}/shareable?pageSize=50`)).body.offers.find((o: { address: string }) => o.address === offer);
    expect(tags).toEqual({
      ogTitle: "Will the home side win?",
      ogDescription: expect.stringContaining('backs "Home". Take "Away": 10 USDC to win 8 USDC (odds 1.80), 5 USDC left. Open'),
      ogUrl: shareable.url, // the link /shareable hands out is the page's own address
      ogType: "website",
      twitterCard: "summary",
      twitterTitle: "Will the home side win?",
      twitterDescription: expect.stringContaining("5 USDC left"),
      json: `${PUBLIC}${BASE}/${offer}`,
    });
    expect(tags.ogUrl).toBe(`${PUBLIC}/offers/${offer}`);
    expect(tags.twitterDescription).toBe(tags.ogDescription);
    expect(await meta(page, "property", "og:image")).toBe("https://example.com/a.png");
    // The visible link is the API resource, and it answers with this offer.
    expect(await page.locator(`footer a[href="${tags.json}"]`).count()).toBe(1);
    const api = await getJson(s, tags.json!.replace(PUBLIC, ""));
    expect([api.status, api.body.address, api.body.remainingTakerMicros]).toEqual([200, offer, "5000000"]);

    const shot = await checkedScreenshot(page, "share-offer.png");
    expect(shot.width).toBe(900);
    // The page fetched nothing but itself (no scripts, fonts or images from elsewhere).
    expect(requests).toEqual([`${s.url}/offers/${offer}`]);
    await page.close();
  });
});

describe("GET /polls/<slug-or-address>", () => {
  it("shows the pool aggregate with its question, outcomes, shares and state, and the preview tags", async () => {
    const { page, requests } = await recordingPage(browser);
    const res = await page.goto(`${s.url}/polls/derby`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()["cache-control"]).toBe("public, max-age=5, s-maxage=15, stale-while-revalidate=30");
    expect(await page.locator("h1").innerText()).toBe("Who wins the derby?");
    expect(await page.getByTestId("status").innerText()).toBe("OPEN");
    const rows = await page.locator('[data-testid="outcomes"] tbody tr').allInnerTexts();
    expect(rows.map((r) => r.replace(/\s+/g, " ").trim())).toEqual(["Red 33.33% 10 USDC 1", "Blue 66.67% 20 USDC 1", "Draw 0.00% 0 USDC 0"]);
    expect(await page.getByTestId("total").innerText()).toBe("30 USDC");
    expect(await page.locator("body").innerText()).toContain("Official result");

    const tags = await shareTags(page);
    const embed = (await getJson(s, "/api/embed/v1/polls/derby")).body.data;
    expect(tags).toEqual({
      ogTitle: "Who wins the derby?",
      ogDescription: "Red 33.33% · Blue 66.67% · Draw 0.00%. 30 USDC from 2 people. Picks are open.",
      ogUrl: embed.canonicalUrl,
      ogType: "website",
      twitterCard: "summary",
      twitterTitle: "Who wins the derby?",
      twitterDescription: "Red 33.33% · Blue 66.67% · Draw 0.00%. 30 USDC from 2 people. Picks are open.",
      json: `${PUBLIC}/api/embed/v1/polls/derby`,
    });
    expect(tags.ogUrl).toBe(`${PUBLIC}/polls/derby`);
    expect(await page.locator(`footer a[href="${tags.json}"]`).count()).toBe(1);

    await checkedScreenshot(page, "share-poll.png");
    expect(requests).toEqual([`${s.url}/polls/derby`]);

    // By address: the same pool, pointing at its canonical (slug) address.
    const byAddress = await page.goto(`${s.url}/polls/${pool.toBase58()}`);
    expect(byAddress!.status()).toBe(200);
    expect(await page.locator("h1").innerText()).toBe("Who wins the derby?");
    expect(await meta(page, "property", "og:url")).toBe(`${PUBLIC}/polls/derby`);
    expect(await page.locator('link[rel="canonical"]').getAttribute("href")).toBe(`${PUBLIC}/polls/derby`);
    await page.close();
  });

  it("shows LOCKED once picks have closed, as the embed does", async () => {
    const { page } = await recordingPage(browser);
    await s.chain.gateway.advance(601n);
    await page.goto(`${s.url}/polls/derby`);
    expect(await page.getByTestId("status").innerText()).toBe("LOCKED");
    expect(await meta(page, "property", "og:description")).toContain("Picks are closed");
    await page.close();
  });
});

describe("pages that do not exist", () => {
  it("answers an HTML 404 for unknown, malformed and other paths, and for private pools", async () => {
    const { page } = await recordingPage(browser);
    const unknownOffer = "11111111111111111111111111111111"; // a valid address with no offer
    for (const path of [
      `/offers/${unknownOffer}`,
      "/offers/not-an-address",
      "/offers/",
      `/offers/${offer}/more`,
      "/polls/no-such-poll",
      "/polls/private",
      `/polls/${privatePool.toBase58()}`,
      "/polls/",
      "/polls/derby/more",
      "/polls/%3Cscript%3E",
    ]) {
      const res = await page.goto(`${s.url}${path}`);
      expect([path, res!.status()]).toEqual([path, 404]);
      expect(res!.headers()["content-type"]).toMatch(/^text\/html/);
      expect(await page.locator("h1").innerText()).toBe("Not found");
      expect(await page.locator('meta[name="robots"]').getAttribute("content")).toBe("noindex");
      expect(await page.locator('meta[property="og:title"]').count()).toBe(0);
    }
    await page.close();
  });
});

describe("a store that cannot be read", () => {
  it("answers an HTML 503 with Retry-After that no cache keeps", async () => {
    const store = await openStore(":memory:");
    const logged: unknown[] = [];
    const srv = await listen(createApp({ read: new ReadService({ db: store.db, now: () => 0 }), custody: null, graphiql: false, log: (e) => logged.push(e) }));
    await store.close(); // every query now fails
    for (const path of [`/offers/${offer}`, "/polls/derby"]) {
      const r = await fetch(`${srv.url}${path}`);
      expect([path, r.status, r.headers.get("retry-after"), r.headers.get("cache-control")]).toEqual([path, 503, "5", "no-store"]);
      expect(r.headers.get("content-type")).toMatch(/^text\/html/);
      expect(await r.text()).toContain("Temporarily unavailable");
    }
    await srv.close();
    expect(logged.length).toBe(2);
  });
});

describe("hostile text", () => {
  it("shows a hostile contract title and display name as text: nothing runs, the tags hold the exact text", async () => {
    const { page, dialogs, requests } = await recordingPage(browser);
    const res = await page.goto(`${s.url}/offers/${hostileOffer}`);
    expect(res!.status()).toBe(200);
    expect(await page.locator("h1").innerText()).toBe(HOSTILE_TITLE);
    expect(await page.title()).toBe(HOSTILE_TITLE);
    expect(await page.getByTestId("creator-side").innerText()).toContain(`backed by ${HOSTILE_NAME}`);
    expect(await meta(page, "property", "og:title")).toBe(HOSTILE_TITLE);
    expect(await meta(page, "property", "og:description")).toContain(HOSTILE_NAME);
    expect(await page.locator("script, img").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    await page.locator("h1").hover();
    expect(dialogs).toEqual([]);
    expect(requests).toEqual([`${s.url}/offers/${hostileOffer}`]); // no img src=x fetched
    const raw = await (await fetch(`${s.url}/offers/${hostileOffer}`)).text();
    expect(raw).not.toContain("<script>");
    expect(raw).toContain("&lt;/title&gt;&lt;script&gt;");
    await page.close();
  });

  it("shows a hostile pool question and label as text", async () => {
    const { page, dialogs } = await recordingPage(browser);
    const res = await page.goto(`${s.url}/polls/hostile`);
    expect(res!.status()).toBe(200);
    expect(await page.locator("h1").innerText()).toBe(HOSTILE_QUESTION);
    expect(await meta(page, "property", "og:title")).toBe(HOSTILE_QUESTION);
    expect(await meta(page, "name", "twitter:description")).toContain(HOSTILE_LABEL);
    expect(await page.locator('[data-testid="outcomes"] tbody tr').first().innerText()).toContain(HOSTILE_LABEL);
    expect(await page.locator("script, i").count()).toBe(0);
    await page.locator("td").first().click();
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    const r = await fetch(`${s.url}/polls/hostile`);
    expect(r.headers.get("content-security-policy")).toContain("default-src 'none'");
    await page.close();
  });
});

describe("after settlement", () => {
  it("shows the offer Settled with its contract's result and nothing left to take", async () => {
    await s.chain.gateway.advance(3_601n);
    await s.admin.resolveContract(contract, "sideB");
    await s.worker.drain();
    await until(async () => (await getJson(s, `${BASE}/${offer}`)).body.status === "Settled");
    const { page } = await recordingPage(browser);
    expect((await page.goto(`${s.url}/offers/${offer}`))!.status()).toBe(200);
    expect(await page.getByTestId("status").innerText()).toBe("Settled");
    expect(await page.getByTestId("remaining").innerText()).toBe("0 USDC");
    expect(await page.locator("body").innerText()).toContain("Settled · Away won");
    expect(await meta(page, "property", "og:description")).toContain("0 USDC left. Settled");
    await page.close();
  });
});
