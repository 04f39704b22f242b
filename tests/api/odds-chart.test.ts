/**
 * The share pages' odds chart (graphql/pages/odds-chart.ts) as a pure function of its points:
 * labels escaped, an empty history said in words, one point a dot, many points one line inside
 * the drawing, gaps where an interval had no price, and a drawing that scales to its box.
 */
import { describe, expect, it } from "vitest";
import { CHART_SIZE, fromFirstPrice, historySeries, oddsChart, type ChartPoint } from "../../graphql/pages/odds-chart";
import { oddsOf } from "../../idl/client/odds";
import type { HistoryPoint } from "../../service/read/history";

const render = (...a: Parameters<typeof oddsChart>) => String(oddsChart(...a));

/** Every x,y pair of every polyline and circle in the SVG. */
function coordinates(svg: string): [number, number][] {
  const out: [number, number][] = [];
  for (const m of svg.matchAll(/points="([^"]*)"/g)) for (const pair of m[1].trim().split(/\s+/)) out.push(pair.split(",").map(Number) as [number, number]);
  for (const m of svg.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)"/g)) out.push([Number(m[1]), Number(m[2])]);
  return out;
}

const polylines = (svg: string) => [...svg.matchAll(/<polyline/g)].length;
const circles = (svg: string) => [...svg.matchAll(/<circle/g)].length;

describe("odds chart", () => {
  it("escapes its title and series labels", () => {
    const svg = render({
      title: `Odds of "</title><script>alert(1)</script>`,
      series: [
        {
          label: `<img src=x onerror=alert(2)>`,
          points: [
            { at: 0, decimal: "2.0000" },
            { at: 60, decimal: "2.1000" },
          ],
        },
      ],
    });
    expect(svg).not.toContain("<script>");
    expect(svg).not.toContain("<img");
    expect(svg).toContain("&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(svg).toContain("&lt;img src=x onerror=alert(2)&gt;");
    expect(svg).toContain('aria-label="Odds of &quot;&lt;/title&gt;');
  });

  it("says in words that there is no history when nothing has a price", () => {
    for (const series of [[], [{ label: "Home", points: [] }], [{ label: "Home", points: [{ at: 0, decimal: null }] }]]) {
      const out = render({ title: "t", series });
      expect(out).toContain('data-testid="odds-chart-empty"');
      expect(out).toContain("t: no odds history yet");
      expect(out).not.toContain("<svg");
    }
  });

  it("draws one priced point as a dot in the middle of the drawing", () => {
    const svg = render({ title: "t", series: [{ label: "Home", points: [{ at: 1_700_000_000, decimal: "1.8000" }] }] });
    expect(polylines(svg)).toBe(0);
    expect(circles(svg)).toBe(1);
    const [[x, y]] = coordinates(svg);
    expect(x).toBeCloseTo(44 + (CHART_SIZE.width - 44 - 12) / 2, 0);
    expect(y).toBeGreaterThan(12);
    expect(y).toBeLessThan(CHART_SIZE.height - 26);
    expect(svg).toContain(">1.90<"); // the axis: room above and below the only value
    expect(svg).toContain(">1.70<");
  });

  it("draws many points as one line inside the drawing, higher odds higher up, time left to right", () => {
    const points: ChartPoint[] = Array.from({ length: 500 }, (_, i) => ({ at: 1_700_000_000 + i * 60, decimal: (1.5 + ((i * 37) % 100) / 40).toFixed(4) }));
    const svg = render({ title: "t", series: [{ label: "Home", points: [...points].reverse() }] });
    expect(polylines(svg)).toBe(1);
    const xy = coordinates(svg);
    expect(xy.length).toBe(500);
    for (const [x, y] of xy) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThanOrEqual(CHART_SIZE.width);
      expect(y).toBeGreaterThanOrEqual(0);
      expect(y).toBeLessThanOrEqual(CHART_SIZE.height);
    }
    // Sorted by time whatever the input order.
    for (let i = 1; i < xy.length; i++) expect(xy[i][0]).toBeGreaterThanOrEqual(xy[i - 1][0]);
    const hiIndex = points.findIndex((p) => p.decimal === Math.max(...points.map((q) => Number(q.decimal))).toFixed(4));
    const loIndex = points.findIndex((p) => p.decimal === Math.min(...points.map((q) => Number(q.decimal))).toFixed(4));
    expect(xy[hiIndex][1]).toBeLessThan(xy[loIndex][1]);
    expect(xy[0][0]).toBe(44);
    expect(xy[499][0]).toBe(CHART_SIZE.width - 12);
  });

  it("breaks the line where an interval had no price, and gives each series its own line", () => {
    const svg = render({
      title: "t",
      series: [
        {
          label: "Home",
          points: [
            { at: 0, decimal: "2.0000" },
            { at: 60, decimal: "2.2000" },
            { at: 120, decimal: null },
            { at: 180, decimal: "2.4000" },
            { at: 240, decimal: "2.3000" },
            { at: 300, decimal: null },
            { at: 360, decimal: "2.1000" },
          ],
        },
        {
          label: "Away",
          points: [
            { at: 0, decimal: "1.9000" },
            { at: 360, decimal: "1.7000" },
          ],
        },
      ],
    });
    expect(polylines(svg)).toBe(3); // Home's two runs and Away's line
    expect(circles(svg)).toBe(1); // Home's last point stands alone
    expect(svg).toContain(">Home</span");
    expect(svg).toContain(">Away</span");
  });

  it("scales to its box: a fixed drawing size, as wide as the container allows", () => {
    const svg = render({
      title: "t",
      series: [
        {
          label: "Home",
          points: [
            { at: 0, decimal: "2.0000" },
            { at: 60, decimal: "2.5000" },
          ],
        },
      ],
      width: 300,
      height: 120,
    });
    expect(svg).toContain('viewBox="0 0 300 120"');
    expect(svg).toContain('width="100%"');
    expect(svg).toContain("max-width: 300px");
    for (const [x, y] of coordinates(svg)) expect(x <= 300 && y <= 120).toBe(true);
  });

  it("takes a history window's best or matched odds at each interval's end, from the first interval with a price", () => {
    const point = (start: number, best: [bigint, bigint] | null, last: [bigint, bigint] | null): HistoryPoint => ({
      start: new Date(start * 1000).toISOString(),
      end: new Date((start + 300) * 1000).toISOString(),
      volumeMicros: last ? "5000000" : "0",
      fillCount: last ? 1 : 0,
      volumeWeightedOdds: last ? oddsOf(...last) : null,
      lastOdds: last ? oddsOf(...last) : null,
      bestOdds: best ? oddsOf(...best) : null,
    });
    const t = 1_700_000_100;
    const history = [
      point(t, null, null),
      point(t + 300, null, null),
      point(t + 600, [9n, 5n], null),
      point(t + 900, [5n, 2n], [9n, 5n]),
      point(t + 1200, null, null),
    ];
    const best = historySeries(history, "bestOdds", "best on offer");
    expect(best).toEqual({
      label: "best on offer",
      points: [
        { at: t + 300, decimal: null },
        { at: t + 600, decimal: null },
        { at: t + 900, decimal: "1.8000" },
        { at: t + 1200, decimal: "2.5000" },
        { at: t + 1500, decimal: null },
      ],
    });
    const matched = historySeries(history, "lastOdds", "matched");
    const trimmed = fromFirstPrice([best, matched]);
    expect(trimmed.map((x) => x.points.map((p) => p.at))).toEqual([
      [t + 900, t + 1200, t + 1500],
      [t + 900, t + 1200, t + 1500],
    ]);
    expect(trimmed[1].points.map((p) => p.decimal)).toEqual([null, "1.8000", null]);
    // Nothing priced: nothing to trim, and the chart says so.
    const empty = [historySeries([point(t, null, null)], "bestOdds", "x")];
    expect(fromFirstPrice(empty)).toEqual(empty);
  });
});
