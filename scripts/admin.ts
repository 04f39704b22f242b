/**
 * Operator CLI of the offers service.
 *
 *   tsx scripts/admin.ts local [--port 8787] [--admin-port 8788] [--data data/local] [--seed]
 *       Starts the local stack (offers program in bankrun, indexer, store, write API, worker) and
 *       an operator endpoint on 127.0.0.1:<admin-port>; writes <data>/admin.json for the commands
 *       below. --seed creates two funded demo users with tokens and an open contract.
 *
 *   tsx scripts/admin.ts <command> [options]      (against the running local stack by default;
 *       with --rpc <url> --store <url> against a Solana RPC and a store directly)
 *     create-user <name> [--display-name s] [--image url]
 *     list-users
 *     issue-token <user> [--scope bet:write] [--ttl seconds] [--label s]
 *     list-tokens <user> | revoke-token <tokenId> | revoke-all-tokens <user>
 *     block <user> [--reason s] | unblock <user>
 *     fund <user> <micros>                           (local chain: mints stablecoin)
 *     create-contract --title s --event s --sport s --competition s --side-a s --side-b s
 *                     --cutoff-in seconds [--deadline-after seconds] [--description s] [--visual url=alt]
 *     resolve-contract <address> <sideA|sideB|void>
 *     offers-enabled <true|false> [--fee-bps n]
 *     advance-clock <seconds> | run-worker         (local chain only)
 *     worker failures [--kind k] [--limit n]       the settlement worker's failing items: item, kind,
 *                                                  attempts, next retry, last reason
 *     worker retry <item>                          retry a failing item on the next pass
 *     rotate-service-key --new-key-file <path>     re-seal every custodial key and the service wallet
 *                                                  under a new key (service stopped; crash-safe)
 *
 * Environment: SERVICE_KEY (32-byte key sealing custodial wallets; else <data>/service.key),
 * SERVICE_WALLET (JSON secret key of the service's fee/rent payer and program authority; else
 * sealed in <data>/service-wallet.sealed).
 */
import { Command } from "commander";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { Kysely } from "kysely";
import { serve } from "@hono/node-server";
import { openStore } from "../indexer/store/db";
import { ServiceKey } from "../service/custody/crypto";
import { Custody, loadServiceWallet, serviceWalletFile } from "../service/custody/custody";
import { rotateServiceKey } from "../service/custody/key-rotation";
import { migrateCustody } from "../service/custody/schema";
import { AdminOps } from "../service/custody/admin";
import { adminApp, runAdminCommand, type AdminCommand } from "../graphql/admin-http";
import { RpcGateway } from "../service/chain/rpc-gateway";
import { offersClientFor } from "../service/chain/local-chain";
import { startLocalStack, OFFERS_BASE } from "../stack/local-stack";

const program = new Command()
  .name("admin")
  .description("Operator CLI of the offers service")
  .option("--data <dir>", "data directory", "data/local")
  .option("--rpc <url>", "Solana RPC URL (direct mode)")
  .option("--store <url>", "store URL (direct mode): SQLite path or postgres:// URL");

async function exec(cmd: AdminCommand): Promise<void> {
  const o = program.opts<{ data: string; rpc?: string; store?: string }>();
  let result: unknown;
  if (o.rpc) {
    const key = ServiceKey.load(o.data, process.env, { cluster: true });
    const store = await openStore(o.store ?? join(o.data, "store.sqlite"));
    const custody = await Custody.open(store.db as Kysely<unknown>, key);
    const service = loadServiceWallet(o.data, key);
    const ops = new AdminOps(custody, store.db, new RpcGateway(o.rpc), service, offersClientFor(service.publicKey));
    try {
      result = await runAdminCommand(ops, cmd);
    } finally {
      await store.close();
    }
  } else {
    const file = join(o.data, "admin.json");
    if (!existsSync(file)) throw new Error(`no local stack: ${file} missing (start one with: tsx scripts/admin.ts local), or pass --rpc and --store`);
    const { adminUrl, adminToken } = JSON.parse(readFileSync(file, "utf8")) as { adminUrl: string; adminToken: string };
    const r = await fetch(`${adminUrl}/admin`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(cmd),
    });
    const body = (await r.json()) as { result?: unknown; error?: string };
    if (!r.ok) throw new Error(body.error ?? `HTTP ${r.status}`);
    result = body.result;
  }
  console.log(JSON.stringify(result, (_k, v) => (typeof v === "bigint" ? String(v) : v), 2));
}

program
  .command("local")
  .description("start the local stack with an operator endpoint")
  .option("--port <n>", "API port", "8787")
  .option("--admin-port <n>", "operator port", "8788")
  .option("--seed", "demo users, tokens and a contract")
  .action(async (opts: { port: string; adminPort: string; seed?: boolean }) => {
    const data = resolve(program.opts<{ data: string }>().data);
    mkdirSync(data, { recursive: true });
    const key = ServiceKey.load(data);
    const service = loadServiceWallet(data, key);
    // The bankrun chain lives in this process only: a fresh store each start.
    const storeFile = join(data, "store.sqlite");
    for (const f of [storeFile, `${storeFile}-wal`, `${storeFile}-shm`]) rmSync(f, { force: true });
    const s = await startLocalStack({ storeUrl: storeFile, serviceKey: key, service, port: Number(opts.port) });
    s.worker.start(2_000);
    const adminToken = randomBytes(24).toString("base64url");
    const admin = adminApp(s.admin, adminToken, { advance: (x) => s.chain.gateway.advance(x), runWorker: () => s.worker.drain() });
    serve({ fetch: admin.fetch, port: Number(opts.adminPort), hostname: "127.0.0.1" });
    const adminUrl = `http://127.0.0.1:${opts.adminPort}`;
    writeFileSync(join(data, "admin.json"), JSON.stringify({ adminUrl, adminToken, apiUrl: s.url }) + "\n", { mode: 0o600 });
    console.log(`API      ${s.url}${OFFERS_BASE}`);
    console.log(`operator ${adminUrl} (token in ${join(data, "admin.json")})`);
    if (opts.seed) {
      const now = await s.chain.gateway.now();
      const contract = await s.admin.createContract({
        title: "Will the home side win?",
        event: "Home vs Away",
        sport: "football",
        competition: "League",
        startsAt: Number(now + 7_200n),
        cutoffAt: now + 7_200n,
        resolutionDeadline: now + 7_200n + 86_400n,
        sideALabel: "Home",
        sideBLabel: "Away",
      });
      for (const name of ["alice", "bob"]) {
        const u = await s.admin.createUser(name, name[0].toUpperCase() + name.slice(1));
        await s.admin.fund(name, 1_000_000_000n);
        const t = await s.custody.issueToken(u.id, { ttlSeconds: 30 * 86_400, label: "seed" });
        console.log(`user ${name} wallet ${u.wallet.toBase58()} token ${t.token}`);
      }
      console.log(`contract ${contract.toBase58()}`);
    }
    const stop = async () => {
      await s.stop();
      process.exit(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });

program
  .command("create-user <name>")
  .option("--display-name <s>")
  .option("--image <url>")
  .action((name: string, o: { displayName?: string; image?: string }) =>
    exec({ op: "create-user", name, displayName: o.displayName, profileImageUrl: o.image }),
  );
program.command("list-users").action(() => exec({ op: "list-users" }));
program
  .command("issue-token <user>")
  .option("--scope <s...>", "scopes", ["bet:write"])
  .option("--ttl <seconds>", "lifetime in seconds (default: none)")
  .option("--label <s>")
  .action((user: string, o: { scope: string[]; ttl?: string; label?: string }) =>
    exec({ op: "issue-token", user, scopes: o.scope, ttlSeconds: o.ttl ? Number(o.ttl) : null, label: o.label }),
  );
program.command("list-tokens <user>").action((user: string) => exec({ op: "list-tokens", user }));
program.command("revoke-token <tokenId>").action((tokenId: string) => exec({ op: "revoke-token", tokenId }));
program.command("revoke-all-tokens <user>").action((user: string) => exec({ op: "revoke-all-tokens", user }));
program
  .command("block <user>")
  .option("--reason <s>")
  .action((user: string, o: { reason?: string }) => exec({ op: "block", user, reason: o.reason }));
program.command("unblock <user>").action((user: string) => exec({ op: "unblock", user }));
program.command("fund <user> <micros>").action((user: string, micros: string) => exec({ op: "fund", user, micros }));
program
  .command("create-contract")
  .requiredOption("--title <s>")
  .requiredOption("--event <s>")
  .requiredOption("--sport <s>")
  .requiredOption("--competition <s>")
  .requiredOption("--side-a <s>")
  .requiredOption("--side-b <s>")
  .requiredOption("--cutoff-in <seconds>")
  .option("--deadline-after <seconds>", "resolution deadline after cutoff", "86400")
  .option("--description <s>")
  .option("--visual <url=alt...>")
  .action(
    (o: {
      title: string;
      event: string;
      sport: string;
      competition: string;
      sideA: string;
      sideB: string;
      cutoffIn: string;
      deadlineAfter: string;
      description?: string;
      visual?: string[];
    }) => {
      return exec({
        op: "create-contract",
        title: o.title,
        event: o.event,
        sport: o.sport,
        competition: o.competition,
        description: o.description,
        cutoffIn: Number(o.cutoffIn),
        deadlineAfter: Number(o.deadlineAfter),
        sideALabel: o.sideA,
        sideBLabel: o.sideB,
        visuals: (o.visual ?? []).map((v) => ({ src: v.split("=")[0], alt: v.split("=").slice(1).join("=") })),
      });
    },
  );
program.command("resolve-contract <address> <result>").action((contract: string, result: string) => {
  if (!["sideA", "sideB", "void"].includes(result)) throw new Error("result must be sideA, sideB or void");
  return exec({ op: "resolve-contract", contract, result: result as "sideA" });
});
program
  .command("offers-enabled <enabled>")
  .option("--fee-bps <n>")
  .action((enabled: string, o: { feeBps?: string }) =>
    exec({ op: "offers-enabled", enabled: enabled === "true", feeBps: o.feeBps ? Number(o.feeBps) : undefined }),
  );
program
  .command("set-treasury <tokenAccount>")
  .description("name a new fee treasury in both programs (a token account of the mint), e.g. when the old one was closed or frozen")
  .action((treasury: string) => exec({ op: "set-treasury", treasury }));
program.command("advance-clock <seconds>").action((seconds: string) => exec({ op: "advance-clock", seconds: Number(seconds) }));
program.command("run-worker").action(() => exec({ op: "run-worker" }));
const worker = program.command("worker").description("the settlement worker");
worker
  .command("failures")
  .description("items whose action keeps failing: item, kind, attempts, next retry, last reason")
  .option("--kind <k>", "void-contract | close-offer | settle-position | reclaim-position | reclaim-offer")
  .option("--limit <n>", "rows", "1000")
  .action((o: { kind?: string; limit: string }) => exec({ op: "worker-failures", kind: o.kind, limit: Number(o.limit) }));
worker
  .command("retry <item>")
  .description("make a failing item due on the next pass")
  .action((item: string) => exec({ op: "worker-retry", item }));

program
  .command("rotate-service-key")
  .description(
    "re-seal every custodial key (store) and the sealed service wallet (<data>) under a new service key; run with the service stopped; crash-safe: run it again to finish an interrupted rotation",
  )
  .requiredOption("--new-key-file <path>", "the new key (64 hex characters), outside the data directory; created with a fresh random key when missing")
  .action(async (o: { newKeyFile: string }) => {
    const g = program.opts<{ data: string; store?: string }>();
    const data = resolve(g.data);
    if (!process.env.SERVICE_KEY && !process.env.SERVICE_KEY_FILE && !existsSync(join(data, "service.key")))
      throw new Error("the current key: set SERVICE_KEY or SERVICE_KEY_FILE (or keep <data>/service.key)");
    const old = ServiceKey.load(data);
    const file = resolve(o.newKeyFile);
    if (!relative(data, file).startsWith(".."))
      throw new Error(`--new-key-file ${file} is inside the data directory: keep the key apart from the data it opens`);
    if (!existsSync(file)) writeFileSync(file, ServiceKey.generate().toHex() + "\n", { mode: 0o600, flag: "wx" });
    const next = ServiceKey.load(data, { SERVICE_KEY_FILE: file });
    const store = await openStore(g.store ?? join(data, "store.sqlite"));
    try {
      await migrateCustody(store.db as Kysely<unknown>);
      const r = await rotateServiceKey(store.db as never, old, next, { walletFile: serviceWalletFile(data) });
      console.log(
        JSON.stringify(
          { users: r.users, fingerprint: next.fingerprint(), keyFile: file, next: `start the service with SERVICE_KEY_FILE=${file} (and without the old key)` },
          null,
          2,
        ),
      );
    } finally {
      await store.close();
    }
  });

program.parseAsync().catch((e) => {
  console.error(`error: ${(e as Error).message}`);
  process.exit(1);
});
