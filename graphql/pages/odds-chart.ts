/**
 * A small odds chart for the share pages: decimal odds over time as an inline SVG, rendered on
 * the server (the pages run no script and fetch nothing, so a chart library that draws in the
 * browser or loads an image is out). A polyline per series is all the picture needs; a null
 * value (nothing matched or on offer in that interval) breaks the line instead of drawing a
 * slope through a time without a price. Every label goes through hono's `html`, which escapes it.
 *
 * The odds arrive as the API's decimal strings ("2.5000"): they become JS numbers here only to
 * place a point, never to compute an amount.
 */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { HistoryPoint } from "../../service/read/history";

export interface ChartPoint {
  /** Unix seconds. */
  at: number;
  /** Decimal odds as the API writes them ("2.5000"), or null for no price in that interval. */
  decimal: string | null;
}

export interface ChartSeries {
  label: string;
  points: ChartPoint[];
}

export interface OddsChartOptions {
  /** What the chart shows, read out by screen readers (the SVG's title). */
  title: string;
  series: ChartSeries[];
  /** The drawing's own size; the SVG scales down to its container (never wider than the screen). */
  width?: number;
  height?: number;
}

/** The chart's size in its own units; on a page it is as wide as its box allows, up to this. */
export const CHART_SIZE = { width: 560, height: 180 } as const;

/** One colour per series, told apart without colour by the legend's order and line style. */
const COLORS = ["#3a7be0", "#d9822b", "#2f9e6e", "#a34fc4"];
const DASHES = ["", "6 4", "2 3", "8 3 2 3"];
const PAD = { left: 44, right: 12, top: 12, bottom: 26 };

/** A coordinate with one decimal: enough for a screen, short in the page. */
const fmt = (v: number) => (Math.round(v * 10) / 10).toString();

const timeLabel = (at: number) => new Date(at * 1000).toISOString().slice(5, 16).replace("T", " ");

/** An axis end with 2 places ("2.50"): where the drawing stops, not a price anyone was offered. */
const oddsLabel = (v: number) => v.toFixed(2);

/**
 * The chart as an inline SVG, or a one-line note when no series has a price. Points are placed by
 * time (left to right) and odds (higher is up); a series with one priced point shows a dot.
 */
export function oddsChart(o: OddsChartOptions): HtmlEscapedString {
  const width = o.width ?? CHART_SIZE.width;
  const height = o.height ?? CHART_SIZE.height;
  const priced = o.series.flatMap((s) => s.points.filter((p) => p.decimal !== null && Number.isFinite(Number(p.decimal))));
  if (priced.length === 0)
    return html`<p class="sub chart-empty" data-testid="odds-chart-empty">
      ${o.title}: no odds history yet, nothing has been on offer or matched.
    </p>` as HtmlEscapedString;

  const times = o.series.flatMap((s) => s.points.map((p) => p.at));
  const values = priced.map((p) => Number(p.decimal));
  const [t0, t1] = [Math.min(...times), Math.max(...times)];
  let [lo, hi] = [Math.min(...values), Math.max(...values)];
  // A flat line sits in the middle, with room above and below.
  const margin = hi === lo ? Math.max(0.1, lo * 0.05) : (hi - lo) * 0.08;
  [lo, hi] = [Math.max(1, lo - margin), hi + margin];
  const plotW = width - PAD.left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom;
  const x = (at: number) => PAD.left + (t1 === t0 ? plotW / 2 : ((at - t0) / (t1 - t0)) * plotW);
  const y = (v: number) => PAD.top + (1 - (v - lo) / (hi - lo)) * plotH;

  const drawn = o.series.map((s, i) => {
    // Runs of priced points, split where a point has no price.
    const runs: ChartPoint[][] = [[]];
    for (const p of [...s.points].sort((a, b) => a.at - b.at)) {
      if (p.decimal === null || !Number.isFinite(Number(p.decimal))) {
        if (runs[runs.length - 1].length) runs.push([]);
      } else runs[runs.length - 1].push(p);
    }
    const color = COLORS[i % COLORS.length];
    const dash = DASHES[i % DASHES.length];
    // A lone point is a dot; each later series draws a smaller one, so dots at the same place all show.
    return runs
      .filter((r) => r.length)
      .map((r) =>
        r.length === 1
          ? html`<circle cx="${fmt(x(r[0].at))}" cy="${fmt(y(Number(r[0].decimal)))}" r="${Math.max(2, 5 - i)}" fill="${color}" />`
          : html`<polyline
              points="${r.map((p) => `${fmt(x(p.at))},${fmt(y(Number(p.decimal)))}`).join(" ")}"
              fill="none"
              stroke="${color}"
              stroke-width="2"
              ${dash ? html`stroke-dasharray="${dash}"` : ""}
              stroke-linejoin="round"
            />`,
      );
  });
  const baseY = fmt(PAD.top + plotH);
  return html`<figure class="chart" data-testid="odds-chart">
    <div class="chart-title">${o.title}</div>
    <svg
      xmlns="http://www.w3.org/2000/svg"
      viewBox="0 0 ${width} ${height}"
      width="100%"
      style="max-width: ${width}px; height: auto; display: block"
      role="img"
      aria-label="${o.title}"
    >
      <title>${o.title}</title>
      <line x1="${PAD.left}" y1="${fmt(PAD.top)}" x2="${PAD.left}" y2="${baseY}" stroke="#c5cdd8" />
      <line x1="${PAD.left}" y1="${baseY}" x2="${width - PAD.right}" y2="${baseY}" stroke="#c5cdd8" />
      <text x="${PAD.left - 4}" y="${fmt(PAD.top + 4)}" text-anchor="end" font-size="13" fill="#5a6675">${oddsLabel(hi)}</text>
      <text x="${PAD.left - 4}" y="${baseY}" text-anchor="end" font-size="13" fill="#5a6675">${oddsLabel(lo)}</text>
      <text x="${PAD.left}" y="${height - 8}" font-size="13" fill="#5a6675">${timeLabel(t0)}</text>
      ${t1 !== t0 ? html`<text x="${width - PAD.right}" y="${height - 8}" text-anchor="end" font-size="13" fill="#5a6675">${timeLabel(t1)} UTC</text>` : ""}
      ${drawn}
    </svg>
    <figcaption>
      ${o.series.map(
        (s, i) =>
          html`<span class="legend"
            ><svg width="18" height="8" aria-hidden="true">
              <line
                x1="0"
                y1="4"
                x2="18"
                y2="4"
                stroke="${COLORS[i % COLORS.length]}"
                stroke-width="2"
                ${DASHES[i % DASHES.length] ? html`stroke-dasharray="${DASHES[i % DASHES.length]}"` : ""}
              /></svg
            >${s.label}</span
          >`,
      )}
    </figcaption>
  </figure>` as HtmlEscapedString;
}

/** Unix seconds of an ISO time. */
const seconds = (isoTime: string) => Math.floor(Date.parse(isoTime) / 1000);

/**
 * A history window (service/read/history.ts) as one series: each interval's best odds at its end,
 * or its last matched odds. Leading intervals from before the market had any price are left out,
 * so a young market fills the chart instead of sitting at its right edge.
 */
export function historySeries(points: readonly HistoryPoint[], figure: "bestOdds" | "lastOdds", label: string): ChartSeries {
  return { label, points: points.map((p) => ({ at: seconds(p.end), decimal: p[figure]?.decimal ?? null })) };
}

/** Drops the intervals before the first that has a price in any series (the same span for every series). */
export function fromFirstPrice(series: ChartSeries[]): ChartSeries[] {
  const priced = series.flatMap((s) => s.points.filter((p) => p.decimal !== null).map((p) => p.at));
  if (priced.length === 0) return series;
  const from = Math.min(...priced);
  return series.map((s) => ({ ...s, points: s.points.filter((p) => p.at >= from) }));
}
