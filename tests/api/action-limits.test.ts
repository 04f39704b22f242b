/**
 * The Solana Actions routes' own rate limits (service/rate/request-limits.ts
 * DEFAULT_ACTION_LIMITS, set low here through their settings, --action-ip-burst and the others): per address on GET and POST, per wallet `account` on
 * POST, each answering 429 in the Actions spec's error shape (`{message, code}`) with
 * `Retry-After` and the Actions CORS headers, while the rest of the API keeps its own buckets.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keypair } from "@solana/web3.js";
import { Command } from "commander";
import { REQUEST_SETTINGS, addSettings, requestLimitsOf, settingsOf } from "../../stack/config/settings";
import { apiStack, type ApiStack, contract as makeContract, createBody, makeUser } from "../support/stack";
import { getJson, post } from "../support/http";
import { until } from "../support/wait";

const BASE = "/api/bets-usdc/offers";
let s: ApiStack;
let offer: string;

beforeAll(async () => {
  // Set as an operator sets them (stack/config/settings.ts), so the numbers shown reach the limiter.
  const cmd = addSettings(new Command().exitOverride(), REQUEST_SETTINGS);
  const flags = {
    "--ip-burst": 1_000,
    "--ip-per-minute": 60_000,
    "--token-burst": 1_000,
    "--token-per-minute": 60_000,
    "--action-ip-burst": 6,
    "--action-ip-per-minute": 1,
    "--action-account-burst": 2,
    "--action-account-per-minute": 1,
  };
  cmd.parse(
    Object.entries(flags).flatMap(([f, v]) => [f, String(v)]),
    { from: "user" },
  );
  s = await apiStack({ requestLimits: requestLimitsOf(settingsOf(cmd, REQUEST_SETTINGS)) });
  const creator = await makeUser(s);
  const r = await post(s, "/", createBody(await makeContract(s)), creator.token);
  expect(r.status).toBe(200);
  offer = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${BASE}/${offer}`)).status === 200);
});
afterAll(async () => {
  await s?.stop();
});

const actionPost = (path: string, account: string) =>
  fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: "https://wallet.example" },
    body: JSON.stringify({ account }),
  });

async function expectRefused(r: Response, what: string) {
  expect(r.status).toBe(429);
  expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(r.headers.get("access-control-allow-origin")).toBe("*");
  expect(r.headers.get("x-action-version")).toBeTruthy();
  expect(await r.json()).toEqual({ message: expect.stringContaining(`too many action requests for this ${what}`), code: "TOO_MANY_REQUESTS" });
}

describe("the action routes' own limits", () => {
  it("refuses a wallet's third POST, then the address's next GET, in the spec's shape with the Actions headers; the rest of the API still answers", async () => {
    const wallet = Keypair.generate().publicKey.toBase58();
    const path = `/api/actions/offers/${offer}?amount=1`;
    // The wallet holds no stablecoin: each POST is refused on its merits, and each counts.
    for (let i = 0; i < 2; i++) expect((await actionPost(path, wallet)).status).toBe(400);
    await expectRefused(await actionPost(path, wallet), "account");
    // Another wallet from the same address still has its bucket.
    expect((await actionPost(path, Keypair.generate().publicKey.toBase58())).status).toBe(400);
    // The address's action bucket (6 at once) is spent by the next GETs.
    const statuses: number[] = [];
    let last: Response | null = null;
    for (let i = 0; i < 4; i++) {
      last = await fetch(`${s.url}/api/actions/offers/${offer}`, { headers: { origin: "https://wallet.example" } });
      statuses.push(last.status);
      if (last.status === 429) break;
    }
    expect(statuses).toEqual([200, 200, 429]);
    await expectRefused(last!, "address");
    // Only the action routes' bucket is empty.
    expect((await getJson(s, `${BASE}/${offer}`)).status).toBe(200);
  });
});
