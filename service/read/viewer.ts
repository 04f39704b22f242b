/**
 * Who is calling a read: no token = anonymous; a valid token (any scope) = that user's wallet;
 * a token that is present but invalid, revoked or expired = 401, so a client never mistakes an
 * expired session for an anonymous view.
 */
import type { PublicKey } from "@solana/web3.js";
import type { Custody } from "../custody/custody";
import { bearerToken } from "../custody/custody";
import { ApiError } from "../api-error";

export interface ReadViewer {
  wallet: string;
  userId: string;
}

export async function resolveViewer(custody: Custody | null, authorization: string | null | undefined): Promise<ReadViewer | null> {
  if (authorization === null || authorization === undefined || authorization === "") return null;
  const token = bearerToken(authorization);
  if (!token || !custody) throw new ApiError(401, "malformed Authorization header; use: Bearer <token>");
  const p = await custody.authenticateRead(token);
  if (!p) throw new ApiError(401, "invalid, revoked or expired token");
  return { wallet: base58Of(p.user.wallet), userId: p.user.id };
}

/** A cached principal brings the same key object on every read: encode it once. */
const encoded = new WeakMap<PublicKey, string>();
function base58Of(key: PublicKey): string {
  let s = encoded.get(key);
  if (s === undefined) encoded.set(key, (s = key.toBase58()));
  return s;
}
