/**
 * How amounts, odds, shares and times read to people, and the one sentence that describes an
 * offer: used by the share pages (graphql/pages) and the `/shareable` chat text alike, so a link
 * and the page it opens say the same thing in the same words.
 */
import type { Odds } from "../../idl/client/odds";
import type { Offer, ShareableOffer } from "./read-model";

/** "1,234.5 USDC" from a micro-unit decimal string, in bigint arithmetic (never a JS number for money). */
export function formatMicros(micros: string): string {
  const v = BigInt(micros);
  const whole = (v / 1_000_000n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const frac = (v % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return `${whole}${frac ? `.${frac}` : ""} USDC`;
}

/** Decimal odds (what one unit staked returns on a win, before the fee on profit), rounded down to 2 places. */
export function decimalOdds(stakeMicros: string, againstMicros: string): string {
  const stake = BigInt(stakeMicros);
  if (stake === 0n) return "-";
  const hundredths = ((stake + BigInt(againstMicros)) * 100n) / stake;
  return `${hundredths / 100n}.${(hundredths % 100n).toString().padStart(2, "0")}`;
}

/** Odds as a person reads them: `2.25 (9:4)`, the decimal rounded down to 2 places, then the exact ratio. */
export const oddsText = (o: Odds) => `${o.decimal.slice(0, -2)} (${o.numerator}:${o.denominator})`;

/** "33.34%" from basis points. */
export const formatBps = (bps: number) => `${Math.trunc(bps / 100)}.${String(bps % 100).padStart(2, "0")}%`;

/** "2026-11-24 18:00 UTC" from an ISO timestamp (minutes are what people plan by). */
export const formatTime = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "not set");

/**
 * What a taker is offered, for people: `Take "No": 45 USDC to win 15 USDC (odds 1.33), 45 USDC
 * left. Open, cutoff 2026-11-24 18:00 UTC.` The page's description and the chat text both end so.
 */
export function takerTerms(o: Offer): string {
  return (
    `Take "${o.takerSideLabel}": ${formatMicros(o.takerTargetMicros)} to win ${formatMicros(o.creatorTotalMicros)} ` +
    `(odds ${decimalOdds(o.takerTargetMicros, o.creatorTotalMicros)}), ${formatMicros(o.remainingTakerMicros)} left. ` +
    `${o.status}, cutoff ${formatTime(o.contract.cutoffAt)}.`
  );
}

/** The `/shareable` line: who backs what on which contract, the taker's terms, the page's link. */
export function shareText(o: Offer, url: string): string {
  const title = o.contract.title || o.contract.event || o.contract.address;
  // A title is usually a question: its own mark ends the sentence.
  const end = /[.?!]$/.test(title) ? "" : ".";
  return `${o.creator.displayName} backs "${o.creatorSideLabel}" on ${title}${end} ${takerTerms(o)} ${url}`;
}

/** `o` as chat text linking to its page under `publicBaseUrl` (`/shareable`, GraphQL `shareable`). */
export function shareableOf(o: Offer, publicBaseUrl: string): ShareableOffer {
  const url = `${publicBaseUrl}/offers/${o.address}`;
  return { address: o.address, text: shareText(o, url), url, offer: o };
}
