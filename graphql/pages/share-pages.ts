/**
 * The pages the shared links open: `/offers/<address>` (the links of GET /shareable),
 * `/contracts/<address>` (a contract's book) and `/polls/<slug-or-address>` (a pool's
 * `canonicalUrl`). Server-rendered HTML from the same reads as the API (ReadService.offer and the
 * book as an anonymous caller, the embed's pool aggregate), so a page never shows what the API
 * would not.
 */
import { Hono, type Context } from "hono";
import type { HtmlEscapedString } from "hono/utils/html";
import { EMBED_CACHE_CONTROL } from "../rest/read-routes";
import { offerAddress } from "../../service/read/params";
import { BOOK_DEPTH, contractBook } from "../../service/read/book";
import { bookParams } from "../../service/read/book-params";
import { contractHistory } from "../../service/read/history";
import type { Side } from "../../service/read/book";
import { contractMeta, contractPage } from "./contract-view";
import { fromFirstPrice, historySeries, oddsChart } from "./odds-chart";
import type { ReadService } from "../../service/read/read-service";
import { notFoundPage, offerMeta, offerPage, poolMeta, poolPage, unavailablePage } from "./share-views";
import { RETRY_AFTER_SECONDS } from "../http-observability";
import { requestIdOf } from "../http-observability";
import type { ErrorLog } from "../../service/observability/log";

/**
 * No script, no frames, nothing fetched but the page itself: even a value that escaped the
 * escaping could not run.
 */
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
};

/**
 * The window the pages' odds charts show: the last 24 hours in 5-minute intervals (288 of the
 * history's at most 500 points), from the first interval with a price.
 */
export const CHART_HISTORY = { interval: "5m", points: 288, label: "last 24 hours" } as const;

const otherSide = (s: Side): Side => (s === "sideA" ? "sideB" : "sideA");

export interface SharePagesOptions {
  /** Path of the offers API (its resource is linked from each offer page). */
  offersBase: string;
  /** Path of the embed API (the pool aggregate linked from each poll page). */
  embedBase: string;
  log?: ErrorLog;
}

export function sharePages(read: ReadService, o: SharePagesOptions): Hono {
  const app = new Hono({ strict: false });
  // The same freshness as the embed: pages show data that is at most seconds old either way.
  const send = (c: Context, body: HtmlEscapedString | Promise<HtmlEscapedString>, status: 200 | 404) =>
    c.html(body, status, { ...SECURITY_HEADERS, "cache-control": EMBED_CACHE_CONTROL });
  const guarded = (what: "offer" | "poll" | "contract", render: (c: Context) => Promise<Response | null>) => async (c: Context) => {
    try {
      return (await render(c)) ?? send(c, notFoundPage(what), 404);
    } catch (e) {
      o.log?.(e, requestIdOf(c));
      return c.html(unavailablePage(), 503, { ...SECURITY_HEADERS, "cache-control": "no-store", "retry-after": String(RETRY_AFTER_SECONDS) });
    }
  };

  app.get(
    "/offers/:address",
    guarded("offer", async (c) => {
      let address: string;
      try {
        address = offerAddress(c.req.param("address") ?? "");
      } catch {
        return null; // not an address: the same 404 as an unknown one
      }
      const offer = await read.offer(address, null);
      if (!offer) return null;
      const meta = offerMeta(offer, `${read.publicBaseUrl}/offers/${address}`, `${read.publicBaseUrl}${o.offersBase}/${address}`);
      // The contract's history on the side this offer's takers back: what the market offered them, and what matched.
      const history = await contractHistory(read, offer.contract.address, otherSide(offer.creatorOutcome), CHART_HISTORY.interval, CHART_HISTORY.points);
      const chart = oddsChart({
        title: `Odds for takers backing "${offer.takerSideLabel}", ${CHART_HISTORY.label}`,
        series: fromFirstPrice([historySeries(history.points, "bestOdds", "best on offer"), historySeries(history.points, "lastOdds", "matched")]),
      });
      return send(c, offerPage(offer, meta, chart), 200);
    }),
  );
  app.get(
    "/contracts/:address",
    guarded("contract", async (c) => {
      let contract: string;
      try {
        contract = bookParams(c.req.param("address") ?? "", {}).contract;
      } catch {
        return null; // not an address: the same 404 as an unknown one, as for offers
      }
      const found = (await read.contractsByAddress([contract])).get(contract);
      if (!found) return null;
      const [book, now, ...histories] = await Promise.all([
        contractBook(read, contract, BOOK_DEPTH.default, null),
        read.now(),
        ...found.outcomes.map((x) => contractHistory(read, contract, x.side, CHART_HISTORY.interval, CHART_HISTORY.points)),
      ]);
      const meta = contractMeta(found, book, `${read.publicBaseUrl}/contracts/${contract}`, `${read.publicBaseUrl}${o.offersBase}/contracts/${contract}/book`);
      const chart = oddsChart({
        title: `Best odds on offer per side, ${CHART_HISTORY.label}`,
        series: fromFirstPrice(found.outcomes.map((x, i) => historySeries(histories[i].points, "bestOdds", `back ${x.label}`))),
      });
      return send(c, contractPage(found, book, meta, now, chart), 200);
    }),
  );
  app.get(
    "/polls/:identifier",
    guarded("poll", async (c) => {
      const pool = await read.poolAggregate(c.req.param("identifier") ?? "");
      if (!pool) return null;
      const meta = poolMeta(pool, `${read.publicBaseUrl}${o.embedBase}/polls/${encodeURIComponent(pool.slug ?? pool.id)}`);
      return send(c, poolPage(pool, meta), 200);
    }),
  );
  // Any other path under these names no offer, contract or poll: the same HTML 404.
  for (const [path, what] of [
    ["/offers", "offer"],
    ["/contracts", "contract"],
    ["/polls", "poll"],
  ] as const) {
    app.get(path, (c) => send(c, notFoundPage(what), 404));
    app.get(`${path}/*`, (c) => send(c, notFoundPage(what), 404));
  }
  return app;
}
