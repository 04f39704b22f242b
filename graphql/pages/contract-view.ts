/**
 * The HTML of the contract share page (`/contracts/<address>`): both sides' best taker odds, the
 * book's depth per side as bars, the last match and the matched volume, from the same book the
 * API answers (service/read/book.ts, as an anonymous caller). Escaped and script-free like the
 * other share pages (./share-views.ts, whose frame it uses).
 */
import { html } from "hono/html";
import type { Book, BookSide } from "../../service/read/book";
import type { Contract } from "../../service/read/read-service";
import { formatMicros, formatTime as when, oddsText } from "../../service/read/share-format";
import { page, webUrl, type Html, type PageMeta } from "./share-views";

/** Where the contract stands for a taker: open, past its cutoff, or decided. */
export function contractState(c: Contract, book: Book, now: number): { badge: string; line: string } {
  if (c.result === "void") return { badge: "Void", line: "Voided: every stake refunded" };
  if (c.result !== null) return { badge: "Resolved", line: `${c.outcomes.find((o) => o.side === c.result)?.label ?? c.result} won` };
  if (Date.parse(c.cutoffAt) / 1000 <= now) return { badge: "Closed", line: "Past its cutoff: no more takes" };
  const offers = book.sides.reduce((n, s) => n + s.offerCount, 0);
  return { badge: "Open", line: `${offers} ${offers === 1 ? "offer" : "offers"} open to takers until ${when(c.cutoffAt)}` };
}

/** One side in a sentence: `Back "Home" at 2.25 (9:4), 120 USDC available` or that nothing is on offer. */
function sideSentence(s: BookSide): string {
  return s.best ? `Back "${s.label}" at ${oddsText(s.best)}, ${formatMicros(s.availableMicros)} available` : `Nothing on offer for "${s.label}"`;
}

export function contractMeta(c: Contract, book: Book, url: string, jsonUrl: string): PageMeta {
  const matched = book.matchedVolumeMicros === "0" ? "Nothing matched yet." : `${formatMicros(book.matchedVolumeMicros)} matched.`;
  const description = `${book.sides.map(sideSentence).join(". ")}. ${matched}`;
  return { title: c.title || c.event, description, url, jsonUrl, image: webUrl(c.visuals[0]?.src) };
}

/** Bar length of a level against the deepest level shown on either side, in whole percent (bigint: amounts are never JS numbers). */
function barPercent(available: string, deepest: bigint): number {
  if (deepest === 0n) return 0;
  const p = Number((BigInt(available) * 100n) / deepest);
  return Math.max(p, 1); // a level with something in it always shows
}

function depthTable(s: BookSide, deepest: bigint): Html {
  if (s.levels.length === 0) return html`<p class="sub" data-testid="depth-empty">Nothing on offer.</p>`;
  return html`<table class="depth" data-testid="depth-${s.side}">
    <thead>
      <tr>
        <th>Odds</th>
        <th>Available</th>
        <th>Offers</th>
      </tr>
    </thead>
    <tbody>
      ${s.levels.map(
        (l) =>
          html`<tr>
            <td>${oddsText(l.odds)}</td>
            <td>
              ${formatMicros(l.availableMicros)}
              <div class="bar"><span style="width: ${barPercent(l.availableMicros, deepest)}%"></span></div>
            </td>
            <td>${l.offerCount}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export function contractPage(c: Contract, book: Book, meta: PageMeta, now: number, chart?: Html): Html {
  const state = contractState(c, book, now);
  const deepest = book.sides.flatMap((s) => s.levels).reduce((m, l) => (BigInt(l.availableMicros) > m ? BigInt(l.availableMicros) : m), 0n);
  const last = book.lastMatch;
  const lastLabel = last ? (c.outcomes.find((o) => o.side === last.side)?.label ?? last.side) : null;
  return page(
    meta,
    meta.title,
    html`<span class="badge" data-testid="status">${state.badge}</span>
      <h1>${c.title || c.event}</h1>
      <p class="sub">${c.event}${c.competition ? html` · ${c.competition}` : ""} · ${c.sport} · starts ${when(c.startsAt)}</p>
      <p class="sub" data-testid="state">${state.line}</p>
      <div class="sides">
        ${book.sides.map(
          (s) =>
            html`<section class="side" data-testid="best-${s.side}">
              <h2>Back ${s.label}</h2>
              ${
                s.best
                  ? html`<div class="best">${s.best.decimal.slice(0, -2)}</div>
                      <div>best odds ${s.best.numerator}:${s.best.denominator}</div>
                      <div>${formatMicros(s.availableMicros)} available in ${s.offerCount} ${s.offerCount === 1 ? "offer" : "offers"}</div>`
                  : html`<div class="best">–</div>
                      <div>nothing on offer</div>`
              }
            </section>`,
        )}
      </div>
      <h2 class="section">Depth</h2>
      <div class="sides depth-sides">
        ${book.sides.map(
          (s) =>
            html`<section>
              <h3>Back ${s.label}</h3>
              ${depthTable(s, deepest)}
            </section>`,
        )}
      </div>
      <dl>
        <dt>Last match</dt>
        <dd data-testid="last-match">
          ${last && lastLabel !== null ? html`${formatMicros(last.amountMicros)} on ${lastLabel} at ${oddsText(last.odds)}, ${when(last.at)}` : "none yet"}
        </dd>
        <dt>Matched</dt>
        <dd data-testid="matched">${formatMicros(book.matchedVolumeMicros)}</dd>
        <dt>Cutoff</dt>
        <dd>${when(c.cutoffAt)}</dd>
      </dl>
      ${chart ?? ""}
      <footer>
        Odds are a taker's: decimal (what one unit staked returns on a win, stake included, before the fee) and the exact ratio. API resource:
        <a href="${meta.jsonUrl}">${meta.jsonUrl}</a>
      </footer>`,
  );
}
