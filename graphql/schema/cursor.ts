/**
 * Keyset cursors: a cursor names the sort key of an item (offers: creation time and address;
 * offers by odds: the reduced taker ratio, creation time and address; fills: revision), never a position in a list, so it stays valid while offers arrive or leave.
 * Encoded as base64url of a short tagged text so clients treat it as opaque.
 */
import { GraphQLError } from "graphql";
import type { FillKey, OfferKey } from "../../service/read/read-service";
import type { OddsKey } from "../../service/read/offer-odds-order";

export type Cursor = { kind: "offer"; key: OfferKey } | { kind: "odds"; key: OddsKey } | { kind: "fill"; key: FillKey };

const OFFER = /^o1:(\d{1,15}):([1-9A-HJ-NP-Za-km-z]{32,44})$/;
const FILL = /^f1:(\d{1,15})$/;
// u64 amounts: a reduced ratio's terms have at most 20 digits (their sum, the numerator, 21).
const ODDS = /^b1:([1-9]\d{0,20}):([1-9]\d{0,19}):(\d{1,15}):([1-9A-HJ-NP-Za-km-z]{32,44})$/;

export function offerCursor(k: OfferKey): string {
  return Buffer.from(`o1:${k.createdAt}:${k.address}`).toString("base64url");
}

export function oddsCursor(k: OddsKey): string {
  return Buffer.from(`b1:${k.numerator}:${k.denominator}:${k.createdAt}:${k.address}`).toString("base64url");
}

export function fillCursor(k: FillKey): string {
  return Buffer.from(`f1:${k.revision}`).toString("base64url");
}

export function decodeCursor(v: unknown): Cursor {
  const bad = () => new GraphQLError("not a cursor returned by this API");
  if (typeof v !== "string" || v.length > 160 || !/^[A-Za-z0-9_-]+$/.test(v)) throw bad();
  const text = Buffer.from(v, "base64url").toString();
  const o = OFFER.exec(text);
  if (o) return { kind: "offer", key: { createdAt: Number(o[1]), address: o[2] } };
  const b = ODDS.exec(text);
  if (b) return { kind: "odds", key: { numerator: b[1], denominator: b[2], createdAt: Number(b[3]), address: b[4] } };
  const f = FILL.exec(text);
  if (f) return { kind: "fill", key: { revision: Number(f[1]) } };
  throw bad();
}
