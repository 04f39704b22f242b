/**
 * Who a request counts against, one rule for every limit (request rates and live-capacity shares)
 * on HTTP and WebSocket alike:
 *
 * - a token by the token itself as authentication parses it (`bearerToken`), so `BeARer  pat_…`
 *   and `Bearer pat_…` are one bucket; a header that does not parse is keyed on its raw bytes (it
 *   is refused 401 anyway, and still limited);
 * - an address by itself (IPv4), or by its /64 for IPv6, the block one subscriber line gets: a
 *   client holding a /64 would otherwise have 2^64 addresses to spread over.
 */
import { createHash } from "node:crypto";
import { isIPv6 } from "node:net";
import { bearerToken } from "../custody/custody";

/** The token's bucket key: a hash of the parsed token, never the token. */
export function tokenBucketKey(authorization: string): string {
  const token = bearerToken(authorization);
  return createHash("sha256")
    .update(token === null ? `raw:${authorization}` : `token:${token}`)
    .digest("hex")
    .slice(0, 32);
}

/** The address group a client address counts in: IPv4 (and IPv4-mapped IPv6) as is, IPv6 by /64. */
export function addressGroup(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head, tail] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail === undefined ? [] : tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(":")}::/64`;
}

/**
 * The one caller a request counts as for its share of the server's reads (./admission.ts): its
 * token when it carries one (a bad token is refused 401 before any read), else its address group.
 */
export function callerKey(authorization: string | null | undefined, addressGroup: string): string {
  return authorization ? `token:${tokenBucketKey(authorization)}` : `address:${addressGroup}`;
}
