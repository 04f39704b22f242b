/**
 * Solana Actions (the links wallets and clients render as "blinks"): `/actions.json` maps the
 * share pages to the action routes; under ACTIONS_BASE an offer (take it) and a pool (pick an
 * outcome) each answer GET (the Action: icon, title, description, buttons), POST `{account}`
 * (an unsigned transaction for that wallet: service/actions/self-custody-writes.ts) and OPTIONS,
 * plus a completion action that reads the signature. Shapes are `@solana/actions-spec`'s; errors
 * are its `{message}` (with the API's `code`) under the API's status. Every answer here carries
 * the Actions CORS headers (any origin: ./actions-cors.ts); the rest of the API keeps its
 * allow-list.
 */
import { Hono, type Context } from "hono";
import { PublicKey } from "@solana/web3.js";
import type { ActionError, ActionGetResponse, ActionPostResponse, ActionsJson, CompletedAction, LinkedAction } from "@solana/actions-spec";
import { ApiError } from "../../service/api-error";
import type { ReadService, Offer } from "../../service/read/read-service";
import type { PoolAggregate } from "../../indexer";
import { offerAddress } from "../../service/read/params";
import { decimalOdds, formatMicros, takerTerms } from "../../service/read/share-format";
import { parseStablecoinAmount, stablecoinAmount } from "../../service/actions/stablecoin-amount";
import { SelfCustodyWrites, walletAddress } from "../../service/actions/self-custody-writes";
import type { TakeRefusal } from "../../service/read/offer-viewer";
import { ActionCards } from "../pages/action-cards";
import type { RequestLimiter } from "../../service/rate/request-limiter";
import { clientAddress, type RateLimitOptions } from "../rate-limit";
import { contractBook } from "../../service/read/book";
import { bookParams } from "../../service/read/book-params";
import { requestIdOf } from "../http-observability";
import type { ErrorLog } from "../../service/observability/log";

export const ACTIONS_BASE = "/api/actions";
/** Largest POST body of an action route: `{account, signature, type}` is under 300 bytes. */
export const ACTIONS_MAX_BODY_BYTES = 2_048;

const ANONYMOUS_REFUSAL: Record<TakeRefusal, string> = {
  offerNotOpen: "This offer is no longer open: nothing is left to take.",
  offerExpired: "This offer has expired: its creator set a time after which it takes no bets.",
  contractClosed: "The contract no longer takes bets: its cutoff has passed or it is decided.",
  offersDisabled: "Offers are switched off for now; try again later.",
  ownOffer: "You cannot take your own offer.",
  callerBlocked: "Your account is blocked from wagering.",
  creatorBlocked: "This offer cannot be taken: its creator is blocked from wagering.",
  maximumWager: "This offer cannot be taken: the position would exceed the maximum wager.",
  tooSmallToMatch: "What is left of this offer is too small to be matched.",
};

export interface ActionRoutesDeps {
  read: ReadService;
  writes: SelfCustodyWrites;
  /** The action routes' own buckets (per address; per account for POSTs), besides the general ones; none without it. */
  limiter?: RequestLimiter | null;
  rateLimit?: RateLimitOptions;
  log?: ErrorLog;
}

type Json = Record<string, unknown>;

/** The spec's error body, with the API's code beside the message, under the API's status. */
function actionError(c: Context, e: unknown, log?: ErrorLog) {
  if (e instanceof ApiError) return c.json({ message: e.message, code: e.code } satisfies ActionError & Json, e.status);
  log?.(e, requestIdOf(c));
  return c.json({ message: "temporarily unavailable; retry with backoff", code: "SERVICE_UNAVAILABLE" } satisfies ActionError & Json, 503);
}

/** A POST body of at most ACTIONS_MAX_BODY_BYTES: `{account, ...}` (NextActionPostRequest adds `signature`). */
async function postBody(c: Context): Promise<{ account: unknown; signature?: unknown }> {
  const text = await c.req.text();
  if (text.length > ACTIONS_MAX_BODY_BYTES) throw new ApiError(400, `request body too large: at most ${ACTIONS_MAX_BODY_BYTES} bytes`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'the body must be JSON: {"account": "<wallet address>"}');
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new ApiError(400, "the body must be a JSON object with account");
  return body as { account: unknown; signature?: unknown };
}

const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;

export function actionRoutes(d: ActionRoutesDeps): Hono {
  const app = new Hono({ strict: false });
  const cards = new ActionCards();
  const base = () => d.read.publicBaseUrl;
  const guarded = (run: (c: Context) => Promise<Response>) => async (c: Context) => {
    try {
      return await run(c);
    } catch (e) {
      return actionError(c, e, d.log);
    }
  };

  // Their own rate (service/rate/request-limits.ts DEFAULT_ACTION_LIMITS), refused in the spec's
  // error shape; the Actions CORS headers are already on every answer here (graphql/server.ts).
  const tooMany = (what: string, seconds: number) => new ApiError(429, `too many action requests for this ${what}; retry in ${seconds} s`, seconds);
  if (d.limiter) {
    const limiter = d.limiter;
    app.use(`${ACTIONS_BASE}/*`, async (c, next) => {
      if (c.req.method !== "GET" && c.req.method !== "POST") return next();
      const wait = await limiter.actionIp(clientAddress(c, d.rateLimit));
      if (wait > 0) {
        c.header("retry-after", String(wait));
        return actionError(c, tooMany("address", wait), d.log);
      }
      return next();
    });
  }
  /** The POST's wallet, after its own bucket (an address that is not a wallet is refused first). */
  const limitedAccount = async (c: Context, account: unknown): Promise<PublicKey> => {
    const wallet = walletAddress(account);
    const wait = d.limiter ? await d.limiter.actionAccount(wallet.toBase58()) : 0;
    if (wait > 0) {
      c.header("retry-after", String(wait));
      throw tooMany("account", wait);
    }
    return wallet;
  };

  app.get("/actions.json", (c) =>
    c.json({
      rules: [
        { pathPattern: "/offers/*", apiPath: `${ACTIONS_BASE}/offers/*` },
        { pathPattern: "/polls/*", apiPath: `${ACTIONS_BASE}/polls/*` },
        { pathPattern: "/contracts/*", apiPath: `${ACTIONS_BASE}/contracts/*` },
        { pathPattern: `${ACTIONS_BASE}/**`, apiPath: `${ACTIONS_BASE}/**` },
      ],
    } satisfies ActionsJson),
  );

  const loadOffer = async (raw: string): Promise<Offer> => {
    let address: string;
    try {
      address = offerAddress(raw);
    } catch {
      throw new ApiError(400, "not an offer address");
    }
    const o = await d.read.offer(address, null);
    if (!o) throw new ApiError(404, "unknown offer address");
    return o;
  };
  const loadPool = async (identifier: string): Promise<PoolAggregate> => {
    const p = await d.read.poolAggregate(identifier);
    if (!p) throw new ApiError(404, "no public poll goes by this name");
    return p;
  };
  // Links are paths on this server (the spec resolves them against the action's own URL, so the
  // same answer works behind any host name); the icon is absolute, as the spec requires.
  const offerHref = (o: Offer, tail = "") => `${ACTIONS_BASE}/offers/${o.address}${tail}`;

  // ---- offers ------------------------------------------------------------------------------

  const offerAction = (o: Offer): ActionGetResponse => {
    const v = o.viewer;
    const remaining = BigInt(o.remainingTakerMicros);
    const max = BigInt(v.maxTakeMicros);
    const min = BigInt(o.minimumTakeMicros) < remaining ? BigInt(o.minimumTakeMicros) : remaining;
    const c = o.contract;
    const description =
      `${c.title || c.event} (${c.event}, ${c.sport}). ${o.creator.displayName} backs "${o.creatorSideLabel}" with ${formatMicros(o.creatorTotalMicros)} ` +
      `(odds ${decimalOdds(o.creatorTotalMicros, o.takerTargetMicros)}). ${takerTerms(o)} Smallest take ${formatMicros(String(min))}.`;
    // Presets a taker can always make: the smallest take, half of the most, the most (distinct, in range).
    const presets = [...new Set([min, (min + max) / 2n, max].filter((x) => x >= min && x <= max && x > 0n).map(String))].map(BigInt);
    const actions: LinkedAction[] = v.canTake
      ? [
          ...presets.map((m) => ({
            type: "transaction" as const,
            label: `Take ${stablecoinAmount(m)} USDC`,
            href: offerHref(o, `?amount=${stablecoinAmount(m)}`),
          })),
          {
            type: "transaction",
            label: "Take",
            href: offerHref(o, "?amount={amount}"),
            parameters: [
              {
                type: "number",
                name: "amount",
                label: `USDC, ${stablecoinAmount(min)} to ${stablecoinAmount(max)}`,
                required: true,
                // Display bounds for the client's form; the POST checks the exact micro-units.
                min: Number(stablecoinAmount(min)),
                max: Number(stablecoinAmount(max)),
              },
            ],
          },
        ]
      : [];
    return {
      type: "action",
      icon: base() + offerHref(o, "/card.png"),
      title: `${o.creator.displayName} backs "${o.creatorSideLabel}": take "${o.takerSideLabel}"`,
      description,
      label: `Take "${o.takerSideLabel}"`,
      ...(v.canTake ? { links: { actions } } : { disabled: true, error: { message: ANONYMOUS_REFUSAL[v.takeRefusal ?? "offerNotOpen"] } }),
    };
  };

  app.get(
    `${ACTIONS_BASE}/offers/:address`,
    guarded(async (c) => c.json(offerAction(await loadOffer(c.req.param("address") ?? "")))),
  );
  // ---- contracts: the best offer of each side --------------------------------------------------

  // A contract share page is a market, not one offer: its Action takes the best-priced offer of
  // the side the visitor backs (the book's first level, its oldest offer), through that offer's
  // own POST route, so every rule and message is the offer's. Its icon is that offer's card.
  const contractAction = async (raw: string): Promise<ActionGetResponse> => {
    let contract: string;
    try {
      contract = bookParams(raw, {}).contract;
    } catch {
      throw new ApiError(400, "not a contract address");
    }
    const found = (await d.read.contractsByAddress([contract])).get(contract);
    if (!found) throw new ApiError(404, "unknown contract address");
    const book = await contractBook(d.read, contract, 1, null);
    const best = (await Promise.all(book.sides.map(async (side) => (side.levels[0] ? d.read.offer(side.levels[0].offers[0], null) : null)))).filter(
      (o): o is Offer => o !== null && o.viewer.canTake,
    );
    const title = found.title || found.event;
    if (best.length === 0) {
      return {
        type: "action",
        icon: found.visuals[0]?.src?.startsWith("http") ? found.visuals[0].src : `${base()}/contracts/${contract}`,
        title,
        description: `${found.event}: no offer to take right now.`,
        label: "No offers",
        disabled: true,
        error: { message: "no offer on this contract can be taken now" },
      };
    }
    return {
      type: "action",
      icon: base() + offerHref(best[0], "/card.png"),
      title,
      description: `${found.event} (${found.sport}). The best offer of each side: ${best.map((o) => takerTerms(o)).join(" ")}`,
      label: "Take the best offer",
      links: {
        actions: best.map((o) => ({
          type: "transaction" as const,
          label: `Back "${o.takerSideLabel}" at ${decimalOdds(o.takerTargetMicros, o.creatorTotalMicros)}`,
          href: offerHref(o, "?amount={amount}"),
          parameters: [{ type: "number" as const, name: "amount", label: `USDC on "${o.takerSideLabel}"`, required: true }],
        })),
      },
    };
  };
  app.get(
    `${ACTIONS_BASE}/contracts/:address`,
    guarded(async (c) => c.json(await contractAction(c.req.param("address") ?? ""))),
  );

  app.get(
    `${ACTIONS_BASE}/offers/:address/card.png`,
    guarded(async (c) =>
      c.body(new Uint8Array(cards.offer(await loadOffer(c.req.param("address") ?? ""))), 200, {
        "content-type": "image/png",
        "cache-control": "public, max-age=10",
      }),
    ),
  );
  app.post(
    `${ACTIONS_BASE}/offers/:address`,
    guarded(async (c) => {
      const body = await postBody(c);
      const wallet = await limitedAccount(c, body.account);
      const amount = parseStablecoinAmount(c.req.query("amount"));
      const o = await loadOffer(c.req.param("address") ?? "");
      const built = await d.writes.takeOffer(new PublicKey(o.address), wallet, amount);
      return c.json({
        type: "transaction",
        transaction: built.transaction,
        message: `Take ${formatMicros(String(amount))} on "${o.takerSideLabel}" (${o.contract.title || o.contract.event}). ${built.message}`,
        links: { next: { type: "post", href: offerHref(o, `/done?amount=${stablecoinAmount(amount)}`) } },
      } satisfies ActionPostResponse);
    }),
  );
  app.post(
    `${ACTIONS_BASE}/offers/:address/done`,
    guarded(async (c) => {
      const body = await postBody(c);
      const wallet = await limitedAccount(c, body.account);
      if (typeof body.signature !== "string" || !SIGNATURE.test(body.signature))
        throw new ApiError(400, "signature must be the base58 signature of the sent transaction");
      const o = await loadOffer(c.req.param("address") ?? "");
      const r = await d.writes.outcome(body.signature);
      const held = await d.writes.positionTotal(new PublicKey(o.address), wallet);
      const done: CompletedAction = {
        type: "completed",
        icon: base() + offerHref(o, "/card.png"),
        title: r.state === "failed" ? "The take failed" : r.state === "confirmed" ? "Taken" : "Sent",
        description:
          r.state === "failed"
            ? `The chain refused the transaction (${r.error ?? "no detail"}); nothing was taken. Your position on this offer: ${formatMicros(String(held))}.`
            : r.state === "confirmed"
              ? `Your position on "${o.takerSideLabel}" is now ${formatMicros(String(held))}. It is settled to your wallet's token account when the contract is decided.`
              : "The transaction is not confirmed yet; check your wallet in a few seconds.",
        label: r.state === "confirmed" ? "Taken" : r.state === "failed" ? "Failed" : "Pending",
        ...(r.state === "failed" ? { error: { message: "the transaction failed" } } : {}),
      };
      return c.json({ type: "post", message: done.description, links: { next: { type: "inline", action: done } } } satisfies ActionPostResponse);
    }),
  );

  // ---- pools -------------------------------------------------------------------------------

  const poolHref = (p: PoolAggregate, tail = "") => `${ACTIONS_BASE}/polls/${encodeURIComponent(p.slug ?? p.id)}${tail}`;
  const poolAction = (p: PoolAggregate): ActionGetResponse => {
    const open = p.state === "OPEN";
    const shares = p.outcomes.map((o) => `${o.label} ${(o.shareBps / 100).toFixed(2)}%`).join(" · ");
    return {
      type: "action",
      icon: base() + poolHref(p, "/card.png"),
      title: p.question,
      description: `${shares}. ${formatMicros(p.totalOiMicros)} from ${p.participantCount} ${p.participantCount === 1 ? "person" : "people"}.${p.resolutionCriteria ? ` Rules: ${p.resolutionCriteria}` : ""}`,
      label: "Pick",
      ...(open
        ? {
            links: {
              actions: [
                {
                  type: "transaction",
                  label: "Pick",
                  href: poolHref(p, "?outcome={outcome}&amount={amount}"),
                  parameters: [
                    {
                      type: "radio",
                      name: "outcome",
                      label: "Outcome",
                      required: true,
                      options: p.outcomes.map((o, i) => ({ label: o.label, value: String(i) })),
                    },
                    { type: "number", name: "amount", label: "USDC", required: true, min: 0.000001 },
                  ],
                },
              ],
            },
          }
        : { disabled: true, error: { message: `This poll takes no more picks (${p.state}).` } }),
    };
  };
  const parseOutcome = (raw: string | undefined): number => {
    if (!raw || !/^\d{1,2}$/.test(raw)) throw new ApiError(400, "outcome must be the index of one of the pool's outcomes");
    return Number(raw);
  };

  app.get(
    `${ACTIONS_BASE}/polls/:identifier`,
    guarded(async (c) => c.json(poolAction(await loadPool(c.req.param("identifier") ?? "")))),
  );
  app.get(
    `${ACTIONS_BASE}/polls/:identifier/card.png`,
    guarded(async (c) =>
      c.body(new Uint8Array(cards.pool(await loadPool(c.req.param("identifier") ?? ""))), 200, {
        "content-type": "image/png",
        "cache-control": "public, max-age=10",
      }),
    ),
  );
  app.post(
    `${ACTIONS_BASE}/polls/:identifier`,
    guarded(async (c) => {
      const body = await postBody(c);
      const wallet = await limitedAccount(c, body.account);
      const outcome = parseOutcome(c.req.query("outcome"));
      const amount = parseStablecoinAmount(c.req.query("amount"));
      const p = await loadPool(c.req.param("identifier") ?? "");
      const built = await d.writes.placePick(new PublicKey(p.id), outcome, wallet, amount);
      return c.json({
        type: "transaction",
        transaction: built.transaction,
        message: `Pick ${formatMicros(String(amount))} on "${p.outcomes[outcome]?.label ?? outcome}". ${built.message}`,
        links: { next: { type: "post", href: poolHref(p, `/done?outcome=${outcome}`) } },
      } satisfies ActionPostResponse);
    }),
  );
  app.post(
    `${ACTIONS_BASE}/polls/:identifier/done`,
    guarded(async (c) => {
      const body = await postBody(c);
      const wallet = await limitedAccount(c, body.account);
      if (typeof body.signature !== "string" || !SIGNATURE.test(body.signature))
        throw new ApiError(400, "signature must be the base58 signature of the sent transaction");
      const p = await loadPool(c.req.param("identifier") ?? "");
      const r = await d.writes.outcome(body.signature);
      const total = await d.writes.participantTotal(new PublicKey(p.id), wallet);
      const done: CompletedAction = {
        type: "completed",
        icon: base() + poolHref(p, "/card.png"),
        title: r.state === "failed" ? "The pick failed" : r.state === "confirmed" ? "Picked" : "Sent",
        description:
          r.state === "failed"
            ? `The chain refused the transaction (${r.error ?? "no detail"}); nothing was picked.`
            : r.state === "confirmed"
              ? `Your picks on this poll total ${formatMicros(String(total))}. Winnings go to your wallet's token account when the poll is decided.`
              : "The transaction is not confirmed yet; check your wallet in a few seconds.",
        label: r.state === "confirmed" ? "Picked" : r.state === "failed" ? "Failed" : "Pending",
        ...(r.state === "failed" ? { error: { message: "the transaction failed" } } : {}),
      };
      return c.json({ type: "post", message: done.description, links: { next: { type: "inline", action: done } } } satisfies ActionPostResponse);
    }),
  );

  // Any other path under the actions base: the spec's error body, not the API's.
  app.all(`${ACTIONS_BASE}/*`, (c) => c.json({ message: "no action at this path", code: "NOT_FOUND" }, 404));
  return app;
}
