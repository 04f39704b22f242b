/**
 * What the browser suites share: Debian's chromium driven by playwright-core (scripts/setup.sh
 * installs it), every request the page makes recorded, and a small PNG reader so a test can tell
 * a rendered screenshot from a blank one.
 */
import { inflateSync } from "node:zlib";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const SCREENSHOTS = join(import.meta.dirname, "..", "..", "docs", "screenshots");

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM });
}

/** A page that records the URL of every request it makes, and every dialog (alert) it opens. */
export async function recordingPage(browser: Browser, viewport = { width: 900, height: 700 }): Promise<{ page: Page; requests: string[]; dialogs: string[] }> {
  const page = await browser.newPage({ viewport });
  const requests: string[] = [];
  const dialogs: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return { page, requests, dialogs };
}

export interface DecodedPng {
  width: number;
  height: number;
  /** How many different RGBA values the image holds. */
  colors: number;
  /** Share of pixels that differ from the most common one (the background). */
  inkRatio: number;
}

/** Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what chromium's screenshots are). */
export function decodePng(png: Buffer): DecodedPng {
  if (png.subarray(0, 8).toString("hex") !== "89504e470d0a1a0a") throw new Error("not a PNG");
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const len = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, colorType, , , interlace] = data.subarray(8, 13);
      if (depth !== 8 || interlace !== 0 || (colorType !== 2 && colorType !== 6)) throw new Error(`unsupported PNG: depth ${depth}, color type ${colorType}`);
      channels = colorType === 6 ? 4 : 3;
    } else if (type === "IDAT") idat.push(data);
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const px = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? px[y * stride + x - channels] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? px[(y - 1) * stride + x - channels] : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter];
      if (predictor === undefined) throw new Error(`bad PNG filter ${filter}`);
      px[y * stride + x] = (line[x] + predictor) & 0xff;
    }
  }
  const counts = new Map<number, number>();
  for (let i = 0; i < px.length; i += channels) {
    const v = ((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]) * 256 + (channels === 4 ? px[i + 3] : 255);
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  const background = Math.max(...counts.values());
  return { width, height, colors: counts.size, inkRatio: 1 - background / (width * height) };
}

/**
 * The page's screenshot. Headless Chromium sometimes answers a capture with "Unable to capture
 * screenshot" while the machine is busy (seen in CI, a full-page capture of a page that had
 * rendered): that protocol error is retried, up to three captures; any other error, and any
 * assertion on the picture, stands.
 */
export async function screenshotOf(page: Page, opts: { fullPage?: boolean } = {}): Promise<Buffer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await page.screenshot(opts);
    } catch (e) {
      if (attempt >= 3 || !String(e).includes("Unable to capture screenshot")) throw e;
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
  }
}

/** Writes a screenshot where the docs link it (the test regenerates the committed file). */
export function saveScreenshot(name: string, png: Buffer): string {
  const path = join(SCREENSHOTS, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, png);
  return path;
}
