/** The stacks the HTTP suites start (the local one; the read-API one), users with tokens, contracts, balances. */
import { afterAll, beforeAll } from "vitest";
import { AccountLayout } from "@solana/spl-token";
import type { PublicKey } from "@solana/web3.js";
import { startLocalStack, OFFERS_BASE, type LocalStack, type LocalStackOptions } from "../../stack/local-stack";
import type { ReadService } from "../../service/read/read-service";
import { serviceApp } from "../../stack/app";
import type { ChainGateway } from "../../service/chain/gateway";
import type { User } from "../../service/custody/custody";
import { workedExampleCreate } from "../../harness/api-requests";
import type { RequestLimits } from "../../service/rate/request-limits";

export const UNIT = 1_000_000n;
export { OFFERS_BASE };

export interface TestUser {
  user: User;
  token: string;
  name: string;
}

/** What the helpers use of a stack: the local one, or the cluster one (tests/rpc). */
export type AnyStack = Pick<LocalStack, "admin" | "custody" | "url"> & { chain: { gateway: ChainGateway } };

let seq = 0;

/** The local stack; WRITES_ENGINE=litesvm runs the chain on LiteSVM instead of bankrun. */
export async function stack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  return startLocalStack({ engine: (process.env.WRITES_ENGINE as "bankrun" | "litesvm" | undefined) ?? "bankrun", ...opts });
}

/** The local stack serving the read API (a ReadService without caches unless asked). */
export interface ApiStack extends LocalStack {
  read: ReadService;
}

export async function apiStack(
  opts: LocalStackOptions & { settingsTtlMs?: number; embedTtlMs?: number; responseCacheTtlMs?: number; requestLimits?: RequestLimits } = {},
): Promise<ApiStack> {
  let read!: ReadService;
  const s = await startLocalStack({
    ...opts,
    app: (parts) => {
      const built = serviceApp(parts, {
        publicUrl: "https://offers.example",
        graphiql: false,
        responseCacheTtlMs: opts.responseCacheTtlMs,
        requestLimits: opts.requestLimits,
        readCaches: { settingsTtlMs: opts.settingsTtlMs ?? 0, embedTtlMs: opts.embedTtlMs, clockCacheMs: 0 },
      });
      read = built.read;
      return built.app;
    },
  });
  return Object.assign(s, { read });
}

/** A write suite's shared state: the local stack `s`, its named users and (when asked for) a contract `c`. */
export type WriteSuite<N extends string> = { readonly s: LocalStack; readonly c: PublicKey } & { readonly [K in N]: TestUser };

/**
 * The set-up every write suite shares, registered on the calling `describe`: before its tests the
 * local stack starts, each of `users` is created holding its balance (in that order) and, with
 * `contract`, a contract is published; after them the stack stops.
 */
export function writeSuite<N extends string = never>(users: Record<N, bigint> = {} as Record<N, bigint>, opts: { contract?: boolean } = {}): WriteSuite<N> {
  const w = {} as { s: LocalStack; c: PublicKey } & Record<string, TestUser>;
  beforeAll(async () => {
    w.s = await stack();
    for (const [name, amount] of Object.entries<bigint>(users)) w[name] = await makeUser(w.s, amount);
    if (opts.contract) w.c = await contract(w.s);
  });
  afterAll(async () => w.s?.stop());
  return w as unknown as WriteSuite<N>;
}

export async function makeUser(s: AnyStack, balance = 1_000n * UNIT, name = `u${++seq}_${Math.random().toString(36).slice(2, 8)}`): Promise<TestUser> {
  const user = await s.admin.createUser(name, `User ${name}`);
  if (balance > 0n) await s.admin.fund(name, balance);
  const { token } = await s.custody.issueToken(user.id, { scopes: ["bet:write"], ttlSeconds: 3600 });
  return { user, token, name };
}

export async function contract(s: AnyStack, cutoffIn = 3_600n, deadlineAfterCutoff = 86_400n): Promise<PublicKey> {
  const now = await s.chain.gateway.now();
  return s.admin.createContract({
    title: "Will the home side win?",
    event: "Home vs Away",
    sport: "football",
    competition: "League",
    startsAt: Number(now + cutoffIn),
    cutoffAt: now + cutoffIn,
    resolutionDeadline: now + cutoffIn + deadlineAfterCutoff,
    sideALabel: "Home",
    sideBLabel: "Away",
    visuals: [{ src: "https://example.com/a.png", alt: "crest" }],
  });
}

export async function balance(s: AnyStack, account: PublicKey): Promise<bigint> {
  const a = await s.chain.gateway.getAccount(account);
  if (!a) throw new Error(`no token account ${account.toBase58()}`);
  return AccountLayout.decode(a.data).amount;
}

export function createBody(contract: PublicKey, o: Partial<Record<string, unknown>> = {}): Record<string, unknown> {
  return workedExampleCreate(contract, `key-${Math.random().toString(36).slice(2)}-${Date.now()}`, o);
}

export const key = () => `k-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
