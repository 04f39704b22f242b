/**
 * The operator endpoint of the local stack: the chain runs inside the stack's process, so
 * `scripts/admin.ts` reaches it over loopback. Every call needs `Authorization: Bearer <admin
 * token>` (a random token written to `<dataDir>/admin.token`, mode 0600). It listens on
 * 127.0.0.1 only and is not part of the public API.
 */
import { Hono } from "hono";
import { PublicKey } from "@solana/web3.js";
import { timingSafeEqual } from "node:crypto";
import type { AdminOps } from "../service/custody/admin";
import { TransactionFailed, describeFailure } from "../service/chain/submitter";
import { DEFAULT_TOKEN_TTL_SECONDS, type User } from "../service/custody/custody";
import { WORK_KINDS, WorkerFailures, type WorkKind } from "../service/worker/failures";

export type AdminCommand =
  | { op: "create-user"; name: string; displayName?: string; profileImageUrl?: string }
  | { op: "list-users" }
  /** `ttlSeconds`: absent, DEFAULT_TOKEN_TTL_SECONDS; null, a token that never expires; else positive. */
  | { op: "issue-token"; user: string; scopes?: string[]; ttlSeconds?: number | null; label?: string }
  | { op: "list-tokens"; user: string }
  | { op: "revoke-token"; tokenId: string }
  | { op: "revoke-all-tokens"; user: string }
  | { op: "block"; user: string; reason?: string }
  | { op: "unblock"; user: string }
  | { op: "fund"; user: string; micros: string }
  | { op: "fund-wallet"; address: string; micros: string; lamports: string }
  | {
      op: "create-contract";
      title: string;
      description?: string;
      event: string;
      sport: string;
      competition: string;
      startsAt?: number;
      cutoffAt?: number;
      resolutionDeadline?: number;
      cutoffIn?: number;
      deadlineAfter?: number;
      sideALabel: string;
      sideBLabel: string;
      visuals?: { src: string; alt: string }[];
    }
  | { op: "resolve-contract"; contract: string; result: "sideA" | "sideB" | "void" }
  | { op: "offers-enabled"; enabled: boolean; feeBps?: number }
  | { op: "set-treasury"; treasury: string }
  | { op: "advance-clock"; seconds: number }
  | { op: "run-worker" }
  | { op: "worker-failures"; kind?: string; limit?: number }
  | { op: "worker-retry"; item: string };

/**
 * A command this process must not carry out in its present state (e.g. `run-worker` where the
 * settlement worker does not act): answered 409 with the reason, unlike a bad command (400).
 */
export class AdminConflict extends Error {
  readonly status = 409;
}

const userView = (u: User) => ({
  id: u.id,
  name: u.name,
  displayName: u.displayName,
  wallet: u.wallet.toBase58(),
  tokenAccount: u.tokenAccount.toBase58(),
  blocked: u.blocked,
  blockedReason: u.blockedReason,
});

/** A number of seconds the endpoint takes: a positive integer (the CLI parses durations such as 1h into one). */
function positiveSeconds(v: unknown, name: string): void {
  if (!(typeof v === "number" && Number.isSafeInteger(v) && v > 0))
    throw new Error(`${name} must be a positive whole number of seconds, got ${JSON.stringify(v)}`);
}

/** Executes one operator command (shared by the HTTP endpoint and the direct CLI backend). */
export async function runAdminCommand(
  ops: AdminOps,
  cmd: AdminCommand,
  extra: {
    advance?: (s: bigint) => Promise<void>;
    /** One settlement worker pass now; throws AdminConflict where this process's worker does not act (stack/roles.ts operatorRunWorker). */
    runWorker?: () => Promise<unknown>;
  } = {},
): Promise<unknown> {
  switch (cmd.op) {
    case "create-user":
      return userView(await ops.createUser(cmd.name, cmd.displayName, cmd.profileImageUrl));
    case "list-users":
      return (await ops.custody.listUsers()).map(userView);
    case "issue-token": {
      const ttlSeconds = cmd.ttlSeconds === undefined ? DEFAULT_TOKEN_TTL_SECONDS : cmd.ttlSeconds;
      // A token born expired is a mistake, never a lifetime: refused, as the CLI refuses it.
      if (ttlSeconds !== null) positiveSeconds(ttlSeconds, "ttlSeconds");
      const u = await ops.user(cmd.user);
      return ops.custody.issueToken(u.id, { scopes: cmd.scopes, ttlSeconds, label: cmd.label });
    }
    case "list-tokens":
      return ops.custody.listTokens((await ops.user(cmd.user)).id);
    case "revoke-token":
      return { revoked: await ops.custody.revokeToken(cmd.tokenId) };
    case "revoke-all-tokens":
      return { revoked: await ops.custody.revokeAllTokens((await ops.user(cmd.user)).id) };
    case "block":
      await ops.custody.setBlocked((await ops.user(cmd.user)).id, true, cmd.reason ?? null);
      return userView(await ops.user(cmd.user));
    case "unblock":
      await ops.custody.setBlocked((await ops.user(cmd.user)).id, false);
      return userView(await ops.user(cmd.user));
    case "fund":
      if (!/^[1-9][0-9]{0,19}$/.test(cmd.micros)) throw new Error("micros must be a positive integer string");
      await ops.fund(cmd.user, BigInt(cmd.micros));
      return { funded: cmd.micros };
    case "fund-wallet": {
      if (!/^[0-9]{1,20}$/.test(cmd.micros) || !/^[0-9]{1,20}$/.test(cmd.lamports)) throw new Error("micros and lamports must be whole-number strings");
      let wallet: PublicKey;
      try {
        wallet = new PublicKey(cmd.address);
      } catch {
        throw new Error("address must be a base58 Solana address");
      }
      const token = await ops.fundWallet(wallet, BigInt(cmd.micros), BigInt(cmd.lamports));
      return { wallet: wallet.toBase58(), tokenAccount: token.toBase58(), funded: cmd.micros, lamports: cmd.lamports };
    }
    case "create-contract": {
      if (cmd.cutoffIn !== undefined) positiveSeconds(cmd.cutoffIn, "cutoffIn");
      if (cmd.deadlineAfter !== undefined) positiveSeconds(cmd.deadlineAfter, "deadlineAfter");
      // Times relative to the chain's clock (`cutoffIn`, `deadlineAfter` seconds) or absolute.
      const now = await ops.gateway.now();
      const cutoffAt = cmd.cutoffIn !== undefined ? now + BigInt(cmd.cutoffIn) : BigInt(cmd.cutoffAt ?? 0);
      const resolutionDeadline = cmd.deadlineAfter !== undefined ? cutoffAt + BigInt(cmd.deadlineAfter) : BigInt(cmd.resolutionDeadline ?? 0);
      const address = await ops.createContract({ ...cmd, startsAt: cmd.startsAt ?? Number(cutoffAt), cutoffAt, resolutionDeadline });
      return { address: address.toBase58() };
    }
    case "resolve-contract":
      return { signature: await ops.resolveContract(new PublicKey(cmd.contract), cmd.result) };
    case "set-treasury":
      return { signature: await ops.setTreasury(new PublicKey(cmd.treasury)), treasury: cmd.treasury };
    case "offers-enabled":
      if (typeof cmd.enabled !== "boolean") throw new Error("enabled must be true or false");
      if (cmd.feeBps !== undefined && !(Number.isInteger(cmd.feeBps) && cmd.feeBps >= 0 && cmd.feeBps <= 10_000))
        throw new Error("feeBps must be an integer from 0 to 10000");
      await ops.setOffersEnabled(cmd.enabled, cmd.feeBps);
      return { offersEnabled: cmd.enabled };
    case "advance-clock":
      if (!extra.advance) throw new Error("advance-clock works on the local chain only");
      positiveSeconds(cmd.seconds, "seconds");
      await extra.advance(BigInt(cmd.seconds));
      return { advanced: cmd.seconds };
    case "run-worker":
      if (!extra.runWorker) throw new Error("no worker in this process");
      return extra.runWorker();
    case "worker-failures": {
      // The settlement worker's failing items (service/worker/failures.ts), soonest retry first.
      if (cmd.kind !== undefined && !(WORK_KINDS as readonly string[]).includes(cmd.kind)) throw new Error(`kind must be one of ${WORK_KINDS.join(", ")}`);
      if (cmd.limit !== undefined && !(Number.isInteger(cmd.limit) && cmd.limit > 0 && cmd.limit <= 100_000))
        throw new Error("limit must be an integer from 1 to 100000");
      const f = new WorkerFailures(ops.store);
      const now = Math.floor(Date.now() / 1000);
      const rows = await f.list({ kind: cmd.kind as WorkKind | undefined, limit: cmd.limit });
      return {
        now,
        summary: await f.summary(now),
        failures: rows.map((x) => ({
          item: x.item,
          kind: x.kind,
          attempts: x.attempts,
          nextRetryAt: x.nextRetryAt,
          nextRetry: new Date(x.nextRetryAt * 1000).toISOString(),
          nextRetryInSeconds: Math.max(0, x.nextRetryAt - now),
          lastReason: x.lastReason,
          firstFailedAt: x.firstFailedAt,
          lastFailedAt: x.lastFailedAt,
        })),
      };
    }
    case "worker-retry":
      return { item: cmd.item, due: await new WorkerFailures(ops.store).retryNow(cmd.item, Math.floor(Date.now() / 1000)) };
    default:
      throw new Error("unknown command");
  }
}

export function adminApp(ops: AdminOps, adminToken: string, extra: Parameters<typeof runAdminCommand>[2] = {}): Hono {
  const app = new Hono();
  const expected = Buffer.from(`Bearer ${adminToken}`);
  app.post("/admin", async (c) => {
    const got = Buffer.from(c.req.header("authorization") ?? "");
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) return c.json({ error: "unauthorized" }, 401);
    try {
      const cmd = (await c.req.json()) as AdminCommand;
      return c.json({ result: await runAdminCommand(ops, cmd, extra) });
    } catch (e) {
      return c.json({ error: adminErrorMessage(e) }, e instanceof AdminConflict ? e.status : 400);
    }
  });
  return app;
}

/**
 * What the operator reads of a failed command: a refused transaction by the program error's IDL
 * name (e.g. `ContractNotOpen`), without the runtime's log lines and hex codes.
 */
export function adminErrorMessage(e: unknown): string {
  if (e instanceof TransactionFailed) return `transaction failed: ${describeFailure(e.failure)}`;
  return (e as Error)?.message ?? String(e);
}
