/**
 * The offer and pool cards as PNGs: the icons of their Solana Actions. An SVG built from the same
 * views and the same words as the share pages (service/read/share-format.ts), rasterized by resvg
 * (Rust, no browser) with the system's fonts. Cards are kept by what they show (address, status,
 * amounts, result), so a card is rendered once per change, not per request.
 */
import { Resvg } from "@resvg/resvg-js";
import { LRUCache } from "lru-cache";
import type { PoolAggregate } from "../../indexer";
import type { Offer } from "../../service/read/read-service";
import { decimalOdds, formatBps, formatMicros, formatTime } from "../../service/read/share-format";

/** Square, the aspect Action clients show an icon in. */
export const CARD_SIZE = 600;
/** ~40 KB a card: 500 cards stay under 20 MB. */
const CARD_CACHE_ENTRIES = 500;

const xml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** A line of at most `n` characters (titles and names are user-written and unbounded in width). */
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

type Line = [x: number, y: number, fill: string, text: string, size?: number, bold?: boolean];

function cardSvg(lines: Line[]): string {
  const text = lines
    .map(
      ([x, y, fill, s, size, bold]) => `<text x="${x}" y="${y}" fill="${fill}" font-size="${size ?? 26}"${bold ? ' font-weight="bold"' : ""}>${xml(s)}</text>`,
    )
    .join("");
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CARD_SIZE}" height="${CARD_SIZE}" viewBox="0 0 ${CARD_SIZE} ${CARD_SIZE}">` +
    `<rect width="100%" height="100%" fill="#eef1f5"/><rect x="20" y="20" width="560" height="560" rx="24" fill="#ffffff"/>` +
    `<g font-family="DejaVu Sans, sans-serif">${text}</g></svg>`
  );
}

export function offerCardSvg(o: Offer): string {
  const c = o.contract;
  return cardSvg([
    [48, 64, "#5a6675", clip(`${c.sport} · ${c.event}`, 44)],
    [48, 112, "#1c2430", clip(c.title || c.event, 30), 38, true],
    [48, 190, "#5a6675", clip(`${o.creator.displayName} backs`, 40)],
    [48, 228, "#1c2430", clip(`"${o.creatorSideLabel}" · odds ${decimalOdds(o.creatorTotalMicros, o.takerTargetMicros)}`, 36), 26, true],
    [48, 300, "#5a6675", "Take"],
    [48, 340, "#1f4f99", clip(`"${o.takerSideLabel}" · odds ${decimalOdds(o.takerTargetMicros, o.creatorTotalMicros)}`, 36), 26, true],
    [48, 410, "#5a6675", "Left to take"],
    [48, 452, "#1c2430", formatMicros(o.remainingTakerMicros), 38, true],
    [48, 530, "#5a6675", clip(`${o.status} · cutoff ${formatTime(c.cutoffAt)}`, 46)],
  ]);
}

export function poolCardSvg(p: PoolAggregate): string {
  const outcomes: Line[] = p.outcomes.slice(0, 6).map((o, i) => [48, 200 + i * 48, "#1c2430", clip(`${o.label} · ${formatBps(o.shareBps)}`, 40), 28, i === 0]);
  return cardSvg([
    [48, 64, "#5a6675", clip(`Poll · ${p.state}`, 44)],
    [48, 118, "#1c2430", clip(p.question, 30), 34, true],
    ...outcomes,
    [48, 530, "#5a6675", clip(`${formatMicros(p.totalOiMicros)} from ${p.participantCount} · closes ${formatTime(p.closesAt)}`, 46)],
  ]);
}

const render = (svg: string) => new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" } }).render().asPng();

export class ActionCards {
  private readonly cache = new LRUCache<string, Buffer>({ max: CARD_CACHE_ENTRIES });

  private cached(key: string, svg: () => string): Buffer {
    let png = this.cache.get(key);
    if (!png) {
      png = render(svg());
      this.cache.set(key, png);
    }
    return png;
  }

  /** The offer card's PNG, from the cache while the offer shows the same. */
  offer(o: Offer): Buffer {
    return this.cached(`o|${[o.address, o.status, o.takerFilledMicros, o.contract.result ?? "", o.contract.title, o.creator.displayName].join("|")}`, () =>
      offerCardSvg(o),
    );
  }

  /** The pool card's PNG, from the cache while the pool shows the same (its revision moves with every change). */
  pool(p: PoolAggregate): Buffer {
    return this.cached(`p|${p.id}|${p.revision}|${p.state}`, () => poolCardSvg(p));
  }
}
