/**
 * Solana Actions over real HTTP against the programs in bankrun and the indexer: /actions.json,
 * the offer and pool actions' GET (checked at run time by zod schemas whose types are checked
 * against @solana/actions-spec's at compile time), the card icon (a real PNG), the Actions CORS
 * headers and preflight (and the allow-list kept on the rest of the API, in chromium too), every
 * refusal a spec-shaped error with nothing built, and a fresh keypair's take and pick: POST,
 * sign with its own key, send, indexed under that wallet, the completion action, settled by the
 * worker to its own token account. Dialect's blinks client loads the action and builds the POST.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from "@solana/web3.js";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { z } from "zod";
import type { ActionGetResponse, ActionPostResponse, ActionsJson, CompletedAction, TransactionResponse } from "@solana/actions-spec";
import { BlinkInstance, SingleValueActionComponent, ButtonActionComponent } from "@dialectlabs/blinks-core";
import { upsertPoolCatalog } from "../../indexer";
import { PoolOps } from "../../service/chain/pools-ops";
import { sendAndConfirm } from "../../service/chain/submitter";
import { OFFERS_PROGRAM_ID } from "../../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../../idl/client/pools";
import { payouts } from "../../idl/client/offers-rules";
import { ACTION_VERSION } from "../../graphql/actions/actions-cors";
import { SOLANA_CLUSTERS } from "../../service/actions/blockchain-id";
import { apiStack, type ApiStack, balance, contract as makeContract, createBody, key, makeUser, UNIT, type TestUser } from "../support/stack";
import { getJson, gql, post } from "../support/http";
import { until } from "../support/wait";
import { decodePng, launchBrowser } from "./browser";

const BASE = "/api/bets-usdc/offers";
const ACTIONS = "/api/actions";

// ---- the spec's shapes at run time, held to the spec's types at compile time -------------------

const ParameterBase = { name: z.string().min(1), label: z.string().optional(), required: z.boolean().optional() };
const Parameter = z.union([
  z.strictObject({ ...ParameterBase, type: z.literal("number"), min: z.number().optional(), max: z.number().optional() }),
  z.strictObject({
    ...ParameterBase,
    type: z.enum(["select", "radio", "checkbox"]),
    options: z.array(z.strictObject({ label: z.string(), value: z.string() })).min(1),
  }),
]);
const Linked = z.object({
  type: z.enum(["transaction", "message", "post", "external-link"]),
  href: z.string().startsWith("/"),
  label: z.string().min(1),
  parameters: z.array(Parameter).optional(),
});
const GetResponse = z.strictObject({
  type: z.literal("action"),
  icon: z.url({ protocol: /^https?$/ }),
  title: z.string().min(1),
  description: z.string().min(1),
  label: z.string().min(1),
  disabled: z.boolean().optional(),
  links: z.object({ actions: z.array(Linked).min(1) }).optional(),
  error: z.object({ message: z.string().min(1) }).optional(),
});
const TxResponse = z.strictObject({
  type: z.literal("transaction"),
  transaction: z.base64(),
  message: z.string().min(1),
  links: z.object({ next: z.object({ type: z.literal("post"), href: z.string().startsWith("/") }) }),
});
const Completed = z.strictObject({
  type: z.literal("completed"),
  icon: z.string(),
  title: z.string(),
  description: z.string(),
  label: z.string(),
  error: z.object({ message: z.string() }).optional(),
});
const DoneResponse = z.strictObject({
  type: z.literal("post"),
  message: z.string(),
  links: z.object({ next: z.object({ type: z.literal("inline"), action: Completed }) }),
});
const ActionErrorBody = z.strictObject({ message: z.string().min(1), code: z.string() });
const Rules = z.strictObject({ rules: z.array(z.strictObject({ pathPattern: z.string(), apiPath: z.string() })) });

/**
 * Compile-time: what the run-time schemas accept is assignable to the spec's types (tsc checks
 * these conversions; a field the spec does not allow, or a wrong literal, fails the type check).
 */
export const specTypes = {
  get: (x: z.infer<typeof GetResponse>): ActionGetResponse => x,
  transaction: (x: z.infer<typeof TxResponse>): TransactionResponse => x,
  post: (x: z.infer<typeof TxResponse> | z.infer<typeof DoneResponse>): ActionPostResponse => x,
  completed: (x: z.infer<typeof Completed>): CompletedAction => x,
  rules: (x: z.infer<typeof Rules>): ActionsJson => x,
};

// ---- the stack ---------------------------------------------------------------------------------

let s: ApiStack;
let creator: TestUser;
let contract: PublicKey;
let offer: string, closedOffer: string;
let pool: PublicKey;
let ops: PoolOps;
/** The pool stays open past the contract's cutoff (the offer's settlement moves the clock 3,601 s). */
const POOL_OPEN = 100_000n;
const wallet = Keypair.generate();
let browser: Browser;
let frontend: { server: Server; origin: string };

async function createOffer(): Promise<string> {
  const r = await post(s, "/", createBody(contract), creator.token);
  expect(r.status).toBe(200);
  const address = r.body.offerAddress as string;
  await until(async () => (await getJson(s, `${BASE}/${address}`)).status === 200);
  return address;
}

async function actionPost(path: string, body: unknown) {
  const r = await fetch(`${s.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: JSON.parse(text) as Record<string, unknown> };
}

/** Signs the action's transaction with the wallet's own key and sends it to the chain; the signature once confirmed. */
async function signAndSend(base64: string, signer: Keypair): Promise<string> {
  const tx = Transaction.from(Buffer.from(base64, "base64"));
  tx.partialSign(signer);
  const signature = await s.chain.gateway.submit(tx);
  expect((await s.chain.gateway.waitFor(signature, 20_000)).state).toBe("confirmed");
  return signature;
}

beforeAll(async () => {
  s = await apiStack({ embedTtlMs: 0 });
  creator = await makeUser(s);
  contract = await makeContract(s);
  offer = await createOffer();
  closedOffer = await createOffer();
  const rev = (await getJson(s, `${BASE}/${closedOffer}`)).body.revision;
  expect((await post(s, `/${closedOffer}/close`, { expectedRevision: rev, idempotencyKey: key() }, creator.token)).status).toBe(200);
  await until(async () => (await getJson(s, `${BASE}/${closedOffer}`)).body.status === "Closed");
  const now = await s.chain.gateway.now();
  ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
  pool = await ops.create(creator.name, { question: "Who wins the derby?", labels: ["Red", "Blue"], closesAt: now + POOL_OPEN });
  await ops.pick(creator.name, pool, 0, 2n * UNIT);
  await upsertPoolCatalog(s.db, { pool: pool.toBase58(), slug: "derby" });
  await until(async () => (await getJson(s, "/api/embed/v1/polls/derby")).status === 200);
  await s.admin.fundWallet(wallet.publicKey, 100n * UNIT, BigInt(LAMPORTS_PER_SOL));
  const server = createServer((_q, r) => r.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>a chat</title>"));
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  frontend = { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  frontend?.server.close();
  await s?.stop();
});

// ---- discovery, headers, CORS ------------------------------------------------------------------

describe("discovery and headers", () => {
  it("serves /actions.json mapping the share pages to the action routes, with the Actions headers", async () => {
    const r = await getJson(s, "/actions.json");
    expect(r.status).toBe(200);
    expect(Rules.parse(r.body).rules).toEqual(
      expect.arrayContaining([
        { pathPattern: "/offers/*", apiPath: `${ACTIONS}/offers/*` },
        { pathPattern: "/polls/*", apiPath: `${ACTIONS}/polls/*` },
      ]),
    );
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("answers OPTIONS preflights on action routes from any origin, and not on the rest of the API", async () => {
    for (const path of ["/actions.json", `${ACTIONS}/offers/${offer}`, `${ACTIONS}/polls/derby`, `${ACTIONS}/offers/${offer}/done`]) {
      const r = await fetch(`${s.url}${path}`, {
        method: "OPTIONS",
        headers: { origin: "https://wallet.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
      });
      expect(r.status, path).toBe(204);
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      expect(r.headers.get("access-control-allow-methods")).toContain("POST");
      expect(r.headers.get("access-control-allow-headers")).toContain("Content-Type");
      expect(r.headers.get("x-action-version")).toBe(ACTION_VERSION);
      expect(r.headers.get("x-blockchain-ids")).toBe(SOLANA_CLUSTERS.devnet);
    }
    for (const path of [`${BASE}/${offer}`, `${BASE}/${offer}/take`, "/graphql"]) {
      const r = await fetch(`${s.url}${path}`, { method: "OPTIONS", headers: { origin: "https://wallet.example", "access-control-request-method": "POST" } });
      expect(r.headers.get("access-control-allow-origin"), path).toBeNull();
    }
  });

  it("lets a page on another origin fetch an action in chromium, and still not the rest of the API", async () => {
    const page = await browser.newPage();
    await page.goto(`${frontend.origin}/`);
    const out = await page.evaluate(
      async ([api, offerAddress]) => {
        const attempt = async (path: string, init?: RequestInit) => {
          try {
            const r = await fetch(`${api}${path}`, init);
            return { status: r.status, body: await r.json(), version: r.headers.get("x-action-version") };
          } catch (e) {
            return { error: String(e) };
          }
        };
        return {
          get: await attempt(`/api/actions/offers/${offerAddress}`),
          post: await attempt(`/api/actions/offers/${offerAddress}?amount=1`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ account: "nope" }),
          }),
          rest: await attempt(`/api/bets-usdc/offers/${offerAddress}`),
        };
      },
      [s.url, offer] as const,
    );
    await page.close();
    expect(out.get).toMatchObject({ status: 200, version: ACTION_VERSION });
    expect(out.post).toMatchObject({ status: 400, body: { message: expect.stringContaining("account") } });
    expect(out.rest).toEqual({ error: expect.stringContaining("Failed to fetch") });
  });
});

// ---- a client of the ecosystem -----------------------------------------------------------------

describe("a contract's action", () => {
  it("takes the best offer of each side through that offer's own action; 400 and 404 otherwise", async () => {
    const json = Rules.parse((await getJson(s, "/actions.json")).body);
    expect(json.rules).toContainEqual({ pathPattern: "/contracts/*", apiPath: `${ACTIONS}/contracts/*` });
    const r = await getJson(s, `${ACTIONS}/contracts/${contract.toBase58()}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    const a = GetResponse.parse(r.body);
    expect(a.disabled).toBeFalsy();
    expect(a.icon).toContain(`${ACTIONS}/offers/${offer}/card.png`);
    // The creator backs Home (sideA): the only side a taker can back is Away, at 18/10.
    expect(a.links!.actions).toEqual([
      {
        type: "transaction",
        label: 'Back "Away" at 1.80',
        href: `${ACTIONS}/offers/${offer}?amount={amount}`,
        parameters: [{ type: "number", name: "amount", label: 'USDC on "Away"', required: true }],
      },
    ]);
    expect((await getJson(s, `${ACTIONS}/contracts/not-an-address`)).status).toBe(400);
    expect((await getJson(s, `${ACTIONS}/contracts/${Keypair.generate().publicKey.toBase58()}`)).status).toBe(404);
  });
});

describe("Dialect's blinks client", () => {
  it("loads the offer's action from the running server and builds the POST for a wallet", async () => {
    const fresh = await createOffer();
    const blink = await BlinkInstance.fetch(`${s.url}${ACTIONS}/offers/${fresh}`);
    expect(blink.title).toContain("backs");
    expect(blink.disabled).toBe(false);
    const buttons = blink.actions.filter((x) => x instanceof ButtonActionComponent);
    expect(buttons.map((b) => b.label)).toEqual(["Take 1 USDC", "Take 5.5 USDC", "Take 10 USDC"]);
    const input = blink.actions.find((x) => x instanceof SingleValueActionComponent) as SingleValueActionComponent;
    input.setValue("2.5");
    const answer = await input.post(wallet.publicKey.toBase58());
    expect(answer.type).toBe("transaction");
    const tx = Transaction.from(Buffer.from((answer as TransactionResponse).transaction, "base64"));
    expect(tx.feePayer!.equals(wallet.publicKey)).toBe(true);
  });
});

// ---- the public wallet read ---------------------------------------------------------------------

describe("a wallet's public positions", () => {
  it("do not reveal that the wallet is blocked: the read is the same before and after a block, REST and GraphQL", async () => {
    const open = await createOffer();
    const taker = await makeUser(s, 10n * UNIT);
    const w = taker.user.wallet.toBase58();
    const took = await post(s, `/${open}/take`, { takeAmountMicros: String(UNIT), expectedRevision: "1", idempotencyKey: key() }, taker.token);
    expect(took.status, took.text).toBe(200);
    await until(async () => (await getJson(s, `${BASE}/wallets/${w}/positions`)).body.offers?.length === 1);
    const query = `query($w: Address!) { walletPositions(wallet: $w) { totalCount edges { node { address viewer { role canTake maxTakeMicros takeLimit takeRefusal canClose position { takerAmountMicros status } } } } } }`;
    const read = async () => ({ rest: (await getJson(s, `${BASE}/wallets/${w}/positions`)).body, graphql: (await gql(s, query, { w })).body });
    const before = await read();
    expect(before.rest.offers[0].viewer).toMatchObject({ role: "taker", canTake: true, takeRefusal: null, position: { takerAmountMicros: String(UNIT) } });

    await s.custody.setBlocked(taker.user.id, true, "compliance");
    try {
      // The block is in force for the wallet itself: its own signed-in read says so.
      await until(async () => (await getJson(s, `${BASE}/${open}`, { token: taker.token })).body.viewer?.takeRefusal === "callerBlocked");
      // The public read of the same wallet is unchanged, field for field.
      expect(await read()).toEqual(before);
    } finally {
      await s.custody.setBlocked(taker.user.id, false);
    }
    // Closed, so the contract's book is the other tests' again.
    const rev = (await getJson(s, `${BASE}/${open}`)).body.revision;
    expect((await post(s, `/${open}/close`, { expectedRevision: rev, idempotencyKey: key() }, creator.token)).status).toBe(200);
    await until(async () => (await getJson(s, `${BASE}/${open}`)).body.status === "Closed");
  });
});

// ---- the offer action --------------------------------------------------------------------------

describe("an offer's action", () => {
  it("describes the offer: contract, both sides, the taker's odds, what is left, presets and a bounded amount", async () => {
    const r = await getJson(s, `${ACTIONS}/offers/${offer}`);
    expect(r.status).toBe(200);
    const a = GetResponse.parse(r.body);
    expect(a.disabled).toBeUndefined();
    expect(a.icon).toBe(`https://offers.example${ACTIONS}/offers/${offer}/card.png`);
    expect(a.description).toContain("Will the home side win?");
    expect(a.description).toContain('backs "Home"');
    expect(a.description).toContain('Take "Away"');
    expect(a.description).toContain("odds 1.80"); // the taker stakes 10 to win 8
    expect(a.description).toContain("10 USDC left");
    const links = a.links!.actions;
    expect(links.filter((l) => !l.parameters).map((l) => l.href)).toEqual([
      `${ACTIONS}/offers/${offer}?amount=1`,
      `${ACTIONS}/offers/${offer}?amount=5.5`,
      `${ACTIONS}/offers/${offer}?amount=10`,
    ]);
    const custom = links.find((l) => l.parameters)!;
    expect(custom.href).toBe(`${ACTIONS}/offers/${offer}?amount={amount}`);
    expect(custom.parameters![0]).toMatchObject({ name: "amount", type: "number", required: true, min: 1, max: 10 });
  });

  it("serves the offer card as a square PNG", async () => {
    const r = await fetch(`${s.url}${ACTIONS}/offers/${offer}/card.png`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/png");
    const png = decodePng(Buffer.from(await r.arrayBuffer()));
    expect([png.width, png.height]).toEqual([600, 600]);
  });

  it("is disabled with a reason when the offer cannot be taken", async () => {
    const a = GetResponse.parse((await getJson(s, `${ACTIONS}/offers/${closedOffer}`)).body);
    expect(a.disabled).toBe(true);
    expect(a.links).toBeUndefined();
    expect(a.error!.message).toMatch(/no longer open/);
  });

  it("refuses bad input with the spec's error body and builds nothing", async () => {
    const noToken = Keypair.generate();
    await s.admin.fundWallet(noToken.publicKey, 0n, 0n); // token account, no stablecoin, no SOL
    const solOnly = Keypair.generate();
    await sendAndConfirm(
      s.chain.gateway,
      [SystemProgram.transfer({ fromPubkey: s.chain.service.publicKey, toPubkey: solOnly.publicKey, lamports: LAMPORTS_PER_SOL })],
      [s.chain.service],
    );
    const poorWallet = Keypair.generate();
    await s.admin.fundWallet(poorWallet.publicKey, 0n, BigInt(LAMPORTS_PER_SOL));
    const [pda] = PublicKey.findProgramAddressSync([Buffer.from("x")], OFFERS_PROGRAM_ID);
    const cases: [string, string, unknown, number, RegExp][] = [
      ["not an address", `${ACTIONS}/offers/${offer}?amount=2`, { account: "not-a-wallet" }, 400, /account must be/],
      ["a program address", `${ACTIONS}/offers/${offer}?amount=2`, { account: pda.toBase58() }, 400, /account must be/],
      ["no account", `${ACTIONS}/offers/${offer}?amount=2`, {}, 400, /account must be/],
      ["no amount", `${ACTIONS}/offers/${offer}`, { account: wallet.publicKey.toBase58() }, 400, /amount must be/],
      ["a float amount", `${ACTIONS}/offers/${offer}?amount=1e3`, { account: wallet.publicKey.toBase58() }, 400, /amount must be/],
      [
        "below the minimum take",
        `${ACTIONS}/offers/${offer}?amount=0.5`,
        { account: wallet.publicKey.toBase58() },
        400,
        /at least the offer's minimumTakeMicros 1000000/,
      ],
      ["above what is left", `${ACTIONS}/offers/${offer}?amount=11`, { account: wallet.publicKey.toBase58() }, 409, /remainingTakerMicros is 10000000/],
      ["the creator's own wallet", `${ACTIONS}/offers/${offer}?amount=2`, { account: creator.user.wallet.toBase58() }, 400, /cannot take your own offer/],
      ["a closed offer", `${ACTIONS}/offers/${closedOffer}?amount=2`, { account: wallet.publicKey.toBase58() }, 409, /offer is Closed/],
      ["a wallet without SOL", `${ACTIONS}/offers/${offer}?amount=2`, { account: noToken.publicKey.toBase58() }, 400, /holds no SOL/],
      [
        "a wallet without a token account",
        `${ACTIONS}/offers/${offer}?amount=2`,
        { account: solOnly.publicKey.toBase58() },
        400,
        /has no token account of the stablecoin/,
      ],
      [
        "a wallet without the stablecoin",
        `${ACTIONS}/offers/${offer}?amount=2`,
        { account: poorWallet.publicKey.toBase58() },
        400,
        /insufficient balance: needed 2000000 micros, available 0 micros/,
      ],
      [
        "an unknown offer",
        `${ACTIONS}/offers/${Keypair.generate().publicKey.toBase58()}?amount=2`,
        { account: wallet.publicKey.toBase58() },
        404,
        /unknown offer/,
      ],
      [
        "a pool pick on no outcome",
        `${ACTIONS}/polls/derby?outcome=7&amount=2`,
        { account: wallet.publicKey.toBase58() },
        400,
        /not one of the pool's outcomes/,
      ],
    ];
    for (const [what, path, body, status, message] of cases) {
      const r = await actionPost(path, body);
      expect(r.status, what).toBe(status);
      const e = ActionErrorBody.parse(r.body);
      expect(e.message, what).toMatch(message);
      expect(r.headers.get("access-control-allow-origin"), what).toBe("*");
    }
    // Nothing was taken by any of them.
    expect((await getJson(s, `${BASE}/${offer}`)).body).toMatchObject({ remainingTakerMicros: String(10n * UNIT), positionCount: 0 });
  });

  it("builds a take the wallet signs and pays for itself; indexed under that wallet, completed, settled to its token account", async () => {
    const r = await actionPost(`${ACTIONS}/offers/${offer}?amount=4`, { account: wallet.publicKey.toBase58() });
    expect(r.status).toBe(200);
    const t = TxResponse.parse(r.body);
    const tx = Transaction.from(Buffer.from(t.transaction, "base64"));
    expect(tx.feePayer!.equals(wallet.publicKey)).toBe(true);
    expect(tx.recentBlockhash).toBeTruthy();
    expect(tx.instructions.map((i) => i.programId.toBase58())).toEqual([OFFERS_PROGRAM_ID.toBase58()]);
    // The wallet is the only signer the transaction needs.
    expect(tx.signatures.map((x) => x.publicKey.toBase58())).toEqual([wallet.publicKey.toBase58()]);
    const token = getAssociatedTokenAddressSync(await s.admin.mint(), wallet.publicKey, true);
    const before = await balance(s, token);
    const signature = await signAndSend(t.transaction, wallet);
    expect(await balance(s, token)).toBe(before - 4n * UNIT);

    const o = await until(async () => {
      const x = (await getJson(s, `${BASE}/${offer}`)).body;
      return x.positionCount === 1 ? x : null;
    });
    expect(o).toMatchObject({ takerFilledMicros: String(4n * UNIT), remainingTakerMicros: String(6n * UNIT) });
    // Indexed under the wallet: its public positions (REST and GraphQL) and the contract's book.
    const mine = await getJson(s, `${BASE}/wallets/${wallet.publicKey.toBase58()}/positions`);
    expect(mine.status).toBe(200);
    expect(mine.body.offers.map((x: { address: string }) => x.address)).toEqual([offer]);
    expect(mine.body.offers[0].viewer).toMatchObject({ role: "taker", position: { takerAmountMicros: String(4n * UNIT), status: "Open" } });
    const g = await gql(
      s,
      `query($w: Address!) { walletPositions(wallet: $w) { totalCount edges { node { address viewer { position { takerAmountMicros } } } } } }`,
      {
        w: wallet.publicKey.toBase58(),
      },
    );
    expect(g.body.data.walletPositions).toEqual({
      totalCount: 1,
      edges: [{ node: { address: offer, viewer: { position: { takerAmountMicros: String(4n * UNIT) } } } }],
    });
    const book = await getJson(s, `${BASE}/contracts/${contract.toBase58()}/book`);
    expect(book.status).toBe(200);
    expect(JSON.stringify(book.body)).toContain(String(6n * UNIT)); // the level shows what is left after the wallet's take
    expect((await getJson(s, `${BASE}/wallets/not-an-address/positions`)).status).toBe(400);
    const done = await actionPost(t.links.next.href, { account: wallet.publicKey.toBase58(), signature });
    expect(done.status).toBe(200);
    const d = DoneResponse.parse(done.body);
    expect(d.links.next.action).toMatchObject({ title: "Taken", label: "Taken" });
    expect(d.links.next.action.description).toContain("4 USDC");

    // The taker's side (Away, sideB) wins: the worker pays the settlement table's amount to the wallet's own token account.
    await s.chain.gateway.advance(3_601n);
    await s.admin.resolveContract(contract, "sideB");
    await s.worker.drain();
    const matched = (4n * 8n * UNIT) / 10n;
    const [, takerGets] = payouts(false, 1000, matched, 4n * UNIT);
    await until(async () => (await balance(s, token)) === before - 4n * UNIT + takerGets);
  });
});

// ---- the pool action ---------------------------------------------------------------------------

describe("a pool's action", () => {
  it("offers a pick on each outcome and builds a pick the wallet signs; the participant is its own", async () => {
    const a = GetResponse.parse((await getJson(s, `${ACTIONS}/polls/derby`)).body);
    expect(a.title).toBe("Who wins the derby?");
    const form = a.links!.actions[0];
    expect(form.href).toBe(`${ACTIONS}/polls/derby?outcome={outcome}&amount={amount}`);
    expect(form.parameters!.map((p) => p.name)).toEqual(["outcome", "amount"]);
    expect((form.parameters![0] as { options: unknown }).options).toEqual([
      { label: "Red", value: "0" },
      { label: "Blue", value: "1" },
    ]);
    const r = await actionPost(`${ACTIONS}/polls/derby?outcome=1&amount=3`, { account: wallet.publicKey.toBase58() });
    expect(r.status).toBe(200);
    const t = TxResponse.parse(r.body);
    const tx = Transaction.from(Buffer.from(t.transaction, "base64"));
    expect(tx.instructions.map((i) => i.programId.toBase58())).toEqual([POOLS_PROGRAM_ID.toBase58()]);
    const signature = await signAndSend(t.transaction, wallet);
    const embed = await until(async () => {
      const x = (await getJson(s, "/api/embed/v1/polls/derby")).body.data;
      return x?.participantCount === 2 ? x : null;
    });
    expect(embed.outcomes[1].totalOiMicros).toBe(String(3n * UNIT));
    const d = DoneResponse.parse((await actionPost(t.links.next.href, { account: wallet.publicKey.toBase58(), signature })).body);
    expect(d.links.next.action.title).toBe("Picked");
    const picks = (await getJson(s, `${BASE}/wallets/${wallet.publicKey.toBase58()}/positions`)).body.picks;
    expect(picks).toEqual([expect.objectContaining({ poolAddress: pool.toBase58(), totalMicros: String(3n * UNIT), state: "OPEN", settled: false })]);
    const g = await gql(s, `query($w: Address!) { walletPicks(wallet: $w) { poolAddress totalMicros state } }`, { w: wallet.publicKey.toBase58() });
    expect(g.body.data.walletPicks).toEqual([{ poolAddress: pool.toBase58(), totalMicros: String(3n * UNIT), state: "OPEN" }]);
    expect(d.links.next.action.description).toContain("3 USDC");

    // The wallet's outcome wins: after the dispute window the worker resolves and pays it to its own token account.
    const token = getAssociatedTokenAddressSync(await s.admin.mint(), wallet.publicKey, true);
    const before = await balance(s, token);
    await s.chain.gateway.advance(POOL_OPEN);
    await ops.propose(creator.name, pool, 1);
    await s.chain.gateway.advance(86_401n);
    await until(async () => {
      await s.worker.drain();
      return (await ops.read(pool)).state === "DISTRIBUTED";
    });
    const p = await ops.read(pool);
    // Pari-mutuel: the only winner gets the pot (3 + 2) less the fee on its profit (2).
    const fee = (2n * UNIT * BigInt(p.feeBps)) / 10_000n;
    expect(await balance(s, token)).toBe(before + 5n * UNIT - fee);
    expect(p.paidOut).toBe(5n * UNIT - fee);
    await until(async () => (await getJson(s, `${BASE}/wallets/${wallet.publicKey.toBase58()}/positions`)).body.picks[0]?.settled === true);
  });
});
