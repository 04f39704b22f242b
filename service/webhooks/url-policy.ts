/**
 * Where a webhook may point (SSRF): https:// only, to a public address. With `allowLocalTargets`
 * (tests and the local stack) http:// and loopback, private and link-local addresses are allowed.
 * Checked at registration (the URL, and an address literal) and again before every send on the
 * addresses the host name resolves to, so a name that later points inside the network is refused
 * at delivery (the attempt is recorded with why). node's BlockList holds the ranges; no package.
 */
import { BlockList, isIP } from "node:net";
import { lookup } from "node:dns/promises";
import { ApiError } from "../api-error";

const INTERNAL = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 3],
] as const)
  INTERNAL.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  INTERNAL.addSubnet(net, bits, "ipv6");

/** Loopback, private, link-local, shared, multicast or unspecified (IPv4-mapped IPv6 included). */
export function isInternalAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return INTERNAL.check(mapped[1], "ipv4");
  const v = isIP(ip);
  if (v === 0) return true;
  return INTERNAL.check(ip, v === 4 ? "ipv4" : "ipv6");
}

const bare = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host);

/** The endpoint URL as registered, or a 400 saying what is wrong. */
export function checkWebhookUrl(raw: unknown, o: { allowLocalTargets: boolean; maxUrlLength: number }): string {
  if (typeof raw !== "string" || raw.length === 0) throw new ApiError(400, "url: an https:// URL is required");
  if (raw.length > o.maxUrlLength) throw new ApiError(400, `url: at most ${o.maxUrlLength} characters`);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ApiError(400, "url: not a valid absolute URL");
  }
  if (u.username || u.password) throw new ApiError(400, "url: credentials in the URL are refused; authenticate the deliveries by their signature");
  if (u.hash) throw new ApiError(400, "url: a fragment (#...) is refused");
  const host = bare(u.hostname).toLowerCase();
  const local = host === "localhost" || host.endsWith(".localhost") || (isIP(host) !== 0 && isInternalAddress(host));
  if (u.protocol === "http:") {
    if (!(o.allowLocalTargets && local)) throw new ApiError(400, "url: must be https:// (http:// only to loopback, when the service allows local targets)");
  } else if (u.protocol !== "https:") throw new ApiError(400, "url: must be https://");
  if (local && !o.allowLocalTargets) throw new ApiError(400, `url: ${host} is a loopback, private or link-local target, refused (SSRF)`);
  return u.toString();
}

/** Before a send: the addresses the host resolves to, each public unless local targets are allowed; else why not. */
export async function refusedTarget(url: string, allowLocalTargets: boolean): Promise<string | null> {
  if (allowLocalTargets) return null;
  const host = bare(new URL(url).hostname);
  const addrs = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (addrs.length === 0) return `${host} does not resolve`;
  const bad = addrs.find(isInternalAddress);
  return bad ? `${host} resolves to ${bad}, a loopback, private or link-local address (SSRF): refused` : null;
}
