/**
 * The HTML of the share pages: an offer, a pool aggregate, and their 404. Every value goes
 * through hono's `html` template, which escapes what it interpolates (pool questions, titles,
 * labels and display names are user-written); only the nested templates below pass unescaped.
 * No script: the pages are read by link-preview crawlers and people, both without JavaScript.
 */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { PoolAggregate } from "../../indexer";
import type { Offer } from "../../service/read/read-service";
import { decimalOdds, formatBps, formatMicros, formatTime as when, takerTerms } from "../../service/read/share-format";

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** What a page's head carries for link previews (Open Graph, Twitter cards) and its JSON twin. */
export interface PageMeta {
  title: string;
  description: string;
  /** The page's public address (og:url, canonical). */
  url: string;
  /** The API resource the page shows. */
  jsonUrl: string;
  image?: string | null;
}

/** Only web addresses become og:image; anything else (javascript:, data:) is left out. */
export const webUrl = (u: string | null | undefined) => (u && /^https?:\/\//i.test(u) ? u : null);

/** The frame every share page shares: head with its preview tags, the one stylesheet, the card. */
export function page(meta: PageMeta | null, heading: string, body: Html): Html {
  const head = meta
    ? html`<link rel="canonical" href="${meta.url}" />
        <link rel="alternate" type="application/json" href="${meta.jsonUrl}" />
        <meta name="description" content="${meta.description}" />
        <meta property="og:type" content="website" />
        <meta property="og:title" content="${meta.title}" />
        <meta property="og:description" content="${meta.description}" />
        <meta property="og:url" content="${meta.url}" />
        ${meta.image ? html`<meta property="og:image" content="${meta.image}" />` : ""}
        <meta name="twitter:card" content="summary" />
        <meta name="twitter:title" content="${meta.title}" />
        <meta name="twitter:description" content="${meta.description}" />`
    : html`<meta name="robots" content="noindex" />`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${meta?.title ?? heading}</title>
        ${head}
        <style>
          body {
            font:
              16px/1.45 system-ui,
              sans-serif;
            margin: 0;
            background: #eef1f5;
            color: #1c2430;
            /* A long word (an address, a link, a title without spaces) wraps instead of widening the page. */
            overflow-wrap: anywhere;
          }
          main {
            max-width: 640px;
            margin: 32px auto;
            background: #fff;
            border-radius: 12px;
            padding: 24px 28px;
            box-shadow: 0 1px 4px #0002;
          }
          /* A phone (390 px and the like): the card is the screen. */
          @media (max-width: 520px) {
            main {
              margin: 0;
              border-radius: 0;
              padding: 16px;
            }
          }
          h1 {
            font-size: 1.45em;
            margin: 0 0 4px;
          }
          .sub {
            color: #5a6675;
            margin: 0 0 18px;
          }
          .badge {
            display: inline-block;
            padding: 2px 10px;
            border-radius: 99px;
            background: #dfe8f7;
            color: #1f4f99;
            font-weight: 600;
            font-size: 0.85em;
          }
          .sides {
            display: grid;
            grid-template-columns: repeat(auto-fit, minmax(140px, 1fr));
            gap: 12px;
            margin: 16px 0;
          }
          .side {
            border: 1px solid #d6dce4;
            border-radius: 10px;
            padding: 12px 14px;
          }
          .side h2 {
            font-size: 1.05em;
            margin: 0 0 6px;
          }
          dl {
            display: grid;
            grid-template-columns: max-content minmax(0, 1fr);
            gap: 4px 16px;
            margin: 12px 0;
          }
          dt {
            color: #5a6675;
          }
          dd {
            margin: 0;
            font-weight: 600;
          }
          table {
            width: 100%;
            border-collapse: collapse;
            margin: 12px 0;
          }
          td,
          th {
            text-align: left;
            padding: 6px 4px;
            border-bottom: 1px solid #e4e8ee;
          }
          .bar {
            height: 6px;
            background: #e4e8ee;
            border-radius: 3px;
          }
          .bar span {
            display: block;
            height: 6px;
            background: #3a7be0;
            border-radius: 3px;
          }
          .best {
            font-size: 1.8em;
            font-weight: 700;
          }
          h2.section {
            font-size: 1.1em;
            margin: 20px 0 0;
          }
          h3 {
            font-size: 1em;
            margin: 0;
          }
          /* Two depth tables side by side where they fit, one above the other on a phone. */
          .depth-sides {
            grid-template-columns: repeat(auto-fit, minmax(250px, 1fr));
          }
          .depth td,
          .depth th {
            padding: 4px 4px;
            font-size: 0.92em;
          }
          figure.chart {
            margin: 16px 0 0;
          }
          .chart-title {
            font-weight: 600;
            margin-bottom: 6px;
          }
          figcaption {
            font-size: 0.85em;
            color: #5a6675;
          }
          .legend {
            margin-right: 14px;
          }
          .legend svg {
            margin-right: 4px;
          }
          footer {
            margin-top: 18px;
            font-size: 0.9em;
            color: #5a6675;
          }
        </style>
      </head>
      <body>
        <main>${body}</main>
      </body>
    </html>`;
}

const OFFER_STATUS: Record<Offer["status"], string> = {
  Open: "Open: takes are accepted",
  Filled: "Filled: nothing left to take",
  Closed: "Closed by its creator or at the cutoff",
  Settled: "Settled",
};

function offerResult(o: Offer): string | null {
  const r = o.contract.result;
  if (r === null) return null;
  if (r === "void") return "Void: every stake refunded";
  return `${o.contract.outcomes.find((x) => x.side === r)?.label ?? r} won`;
}

/** The one-line preview of an offer: who backs what, what a taker stakes to win what, what is left. */
export function offerMeta(o: Offer, url: string, jsonUrl: string): PageMeta {
  const description = `${o.creator.displayName} backs "${o.creatorSideLabel}". ${takerTerms(o)}`;
  return { title: o.contract.title || o.contract.event, description, url, jsonUrl, image: webUrl(o.contract.visuals[0]?.src) };
}

/** The offer's page; `chart` (its contract's odds history, ./odds-chart.ts) goes under the terms. */
export function offerPage(o: Offer, meta: PageMeta, chart?: Html): Html {
  const result = offerResult(o);
  const c = o.contract;
  return page(
    meta,
    meta.title,
    html`<span class="badge" data-testid="status">${o.status}</span>
      <h1>${c.title || c.event}</h1>
      <p class="sub">${c.event}${c.competition ? html` · ${c.competition}` : ""} · ${c.sport} · starts ${when(c.startsAt)}</p>
      <div class="sides">
        <section class="side" data-testid="creator-side">
          <h2>${o.creatorSideLabel}</h2>
          <div>backed by ${o.creator.displayName}</div>
          <div>stake ${formatMicros(o.creatorTotalMicros)}</div>
          <div>odds ${decimalOdds(o.creatorTotalMicros, o.takerTargetMicros)}</div>
        </section>
        <section class="side" data-testid="taker-side">
          <h2>${o.takerSideLabel}</h2>
          <div>open to takers</div>
          <div>up to ${formatMicros(o.takerTargetMicros)}</div>
          <div>odds ${decimalOdds(o.takerTargetMicros, o.creatorTotalMicros)}</div>
        </section>
      </div>
      <dl>
        <dt>Remaining</dt>
        <dd data-testid="remaining">${formatMicros(o.remainingTakerMicros)}</dd>
        <dt>Taken so far</dt>
        <dd>${formatMicros(o.takerFilledMicros)} by ${o.positionCount} ${o.positionCount === 1 ? "taker" : "takers"}</dd>
        <dt>Smallest take</dt>
        <dd>${formatMicros(o.minimumTakeMicros)}</dd>
        <dt>Fee</dt>
        <dd>${formatBps(o.feeBps)} of the winner's profit</dd>
        <dt>Status</dt>
        <dd>${OFFER_STATUS[o.status] ?? o.status}${result ? html` · ${result}` : ""}</dd>
        <dt>Cutoff</dt>
        <dd>${when(c.cutoffAt)}</dd>
      </dl>
      ${chart ?? ""}
      <footer>Odds are decimal: what one unit staked returns on a win, before the fee. API resource: <a href="${meta.jsonUrl}">${meta.jsonUrl}</a></footer>`,
  );
}

const POOL_STATE: Record<PoolAggregate["state"], string> = {
  OPEN: "Picks are open",
  LOCKED: "Picks are closed; not resolving yet",
  RESOLVING: "Participants are voting on the outcome",
  RESOLVED: "Outcome decided; payouts pending",
  DISTRIBUTED: "Payouts settled",
  CANCELED: "Canceled",
  REFUNDED: "Every pick refunded",
};

const CANCEL_REASON: Record<NonNullable<PoolAggregate["cancelReason"]>, string> = {
  CREATOR: "(canceled by its creator)",
  AUTHORITY: "(canceled by the resolution authority after a disputed vote)",
  TIMEOUT: "(canceled after its vote stayed undecided for 7 days)",
  NO_PICKS: "(closed without a pick)",
};

export function poolMeta(p: PoolAggregate, jsonUrl: string): PageMeta {
  const shares = p.outcomes.map((o) => `${o.label} ${formatBps(o.shareBps)}`).join(" · ");
  const description = `${shares}. ${formatMicros(p.totalOiMicros)} from ${p.participantCount} ${p.participantCount === 1 ? "person" : "people"}. ${POOL_STATE[p.state]}.`;
  return { title: p.question, description, url: p.canonicalUrl, jsonUrl, image: webUrl(p.coverImageUrl) };
}

export function poolPage(p: PoolAggregate, meta: PageMeta): Html {
  return page(
    meta,
    meta.title,
    html`<span class="badge" data-testid="status">${p.state}</span>
      <h1>${p.question}</h1>
      <p class="sub">${POOL_STATE[p.state]}${p.cancelReason ? html` ${CANCEL_REASON[p.cancelReason]}` : ""}</p>
      <table data-testid="outcomes">
        <thead>
          <tr>
            <th>Outcome</th>
            <th>Share</th>
            <th>Backed</th>
            <th>Picks</th>
          </tr>
        </thead>
        <tbody>
          ${p.outcomes.map(
            (o) =>
              html`<tr>
                <td>${o.label}${o.isResolved ? html` <strong>✓ winner</strong>` : ""}</td>
                <td>
                  ${formatBps(o.shareBps)}
                  <div class="bar"><span style="width: ${Math.trunc(o.shareBps / 100)}%"></span></div>
                </td>
                <td>${formatMicros(o.totalOiMicros)}</td>
                <td>${o.wagerCount}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <dl>
        <dt>Total</dt>
        <dd data-testid="total">${formatMicros(p.totalOiMicros)}</dd>
        <dt>People</dt>
        <dd>${p.participantCount}</dd>
        <dt>Picks close</dt>
        <dd>${when(p.closesAt)}</dd>
        ${
          p.resolutionCriteria
            ? html`<dt>Rules</dt>
                <dd>${p.resolutionCriteria}</dd>`
            : ""
        }
      </dl>
      <footer>API resource: <a href="${meta.jsonUrl}">${meta.jsonUrl}</a></footer>`,
  );
}

const NOT_FOUND = {
  offer: "No offer is listed at this address.",
  poll: "No public poll goes by this name.",
  contract: "No contract is listed at this address.",
} as const;

export function notFoundPage(what: keyof typeof NOT_FOUND): Html {
  return page(
    null,
    "Not found",
    html`<h1>Not found</h1>
      <p class="sub">${NOT_FOUND[what]}</p>`,
  );
}

export function unavailablePage(): Html {
  return page(
    null,
    "Temporarily unavailable",
    html`<h1>Temporarily unavailable</h1>
      <p class="sub">Please try again in a few seconds.</p>`,
  );
}
