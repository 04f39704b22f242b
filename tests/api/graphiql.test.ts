/**
 * GraphiQL at /graphql, self-hosted (@graphql-yoga/render-graphiql): opened in Debian's chromium
 * against the real stack, the editor renders, a query typed into it runs and its result shows,
 * and no request leaves the server's origin (the CDN build showed "Loading..." offline).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { createApp, listen } from "../../graphql/server";
import { apiStack, type ApiStack } from "../support/stack";
import { decodePng, launchBrowser, recordingPage, saveScreenshot, screenshotOf } from "./browser";

let s: ApiStack;
let srv: Awaited<ReturnType<typeof listen>>;
let browser: Browser;

beforeAll(async () => {
  s = await apiStack();
  // The suites' stack turns GraphiQL off; this server is the same parts with it on.
  srv = await listen(createApp({ read: s.read, custody: s.custody, writes: s.writes, graphiql: true }));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
  await s?.stop();
});

describe("GraphiQL", () => {
  it("renders from the server alone and runs a query typed into its editor", async () => {
    const { page, requests } = await recordingPage(browser, { width: 1280, height: 800 });
    const res = await page.goto(`${srv.url}/graphql`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()["content-type"]).toMatch(/^text\/html/);
    const editor = page.locator(".graphiql-query-editor .monaco-editor").first();
    await editor.waitFor({ state: "visible", timeout: 60_000 });
    expect(await page.locator("body").innerText()).not.toMatch(/Loading/);

    await editor.click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.press("Delete");
    await page.keyboard.insertText("{ settings { feeBps offersEnabled } }");
    const answered = page.waitForResponse(
      (r) => r.url() === `${srv.url}/graphql` && r.request().method() === "POST" && r.request().postData()!.includes("feeBps"),
    );
    await page.locator(".graphiql-execute-button").click();
    const answer = await answered;
    expect(answer.status()).toBe(200);
    expect(await answer.json()).toEqual({ data: { settings: { feeBps: 1000, offersEnabled: true } } });
    const response = page.locator(".graphiql-response");
    await expect.poll(async () => (await response.innerText()).replace(/\s+/g, " "), { timeout: 30_000 }).toContain('"feeBps": 1000');

    const png = await screenshotOf(page);
    saveScreenshot("graphiql.png", png);
    const shot = decodePng(png);
    expect([shot.width, shot.height]).toEqual([1280, 800]);
    expect(shot.colors).toBeGreaterThan(50);
    expect(shot.inkRatio).toBeGreaterThan(0.05);

    // Nothing was fetched from anywhere but the server (workers are blob: URLs of this page).
    const origin = new URL(srv.url).origin;
    const offOrigin = requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith(`blob:${origin}/`) && !u.startsWith("data:"));
    expect(offOrigin).toEqual([]);
    expect(requests.filter((u) => u.startsWith(`${origin}/graphql`)).length).toBeGreaterThanOrEqual(2); // the page, then the query (and introspection)
    await page.close();
  });
});
