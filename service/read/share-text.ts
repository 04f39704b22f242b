/** An offer as a line of chat text and its link (`/shareable`, GraphQL `shareable`). */
import type { Offer, ShareableOffer } from "./read-model";

/** Micro-units as whole units with the fraction's trailing zeros left out ("12.5"). */
function units(micros: bigint): string {
  const whole = micros / 1_000_000n;
  const frac = (micros % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : `${whole}`;
}

/** `o` as chat text linking to its page under `publicBaseUrl`. */
export function shareableOf(o: Offer, publicBaseUrl: string): ShareableOffer {
  const url = `${publicBaseUrl}/offers/${o.address}`;
  const text =
    `${o.creator.displayName} backs "${o.creatorSideLabel}" on ${o.contract.title || o.contract.address}: ` +
    `take "${o.takerSideLabel}" at ${units(BigInt(o.takerTargetMicros))} to ${units(BigInt(o.creatorTotalMicros))}, ` +
    `${units(BigInt(o.remainingTakerMicros))} left, cutoff ${o.contract.cutoffAt}. ${url}`;
  return { address: o.address, text, url, offer: o };
}
