/**
 * Operator CLI of the offers service.
 *
 *   tsx scripts/admin.ts [--data data/local] local [start options]
 *       The local stack, exactly as `npm start` (scripts/start.ts, its ports, demo data and
 *       operator endpoint; options after `local` are passed on, e.g. --port, --no-seed). It
 *       writes <data>/admin.json for the commands below.
 *
 *   tsx scripts/admin.ts <command> [options]      (against the running local stack by default;
 *       with --rpc <url> --store <url> against a Solana RPC and a store directly)
 *     create-user <name> [--display-name s] [--image url]
 *     list-users
 *     issue-token <user> [--scope bet:write|bet:read ...] [--ttl seconds] [--label s]
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
 * SERVICE_WALLET (JSON secret key of the service's fee/rent payer and program authority) or
 * SERVICE_WALLET_FILE (that JSON in a file); with --rpc one of them is required, else it is
 * sealed in <data>/service-wallet.sealed.
 */
import { Command, Option } from "commander";
import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { Kysely } from "kysely";
import { openStore } from "../indexer/store/db";
import { ServiceKey } from "../service/custody/crypto";
import { Custody, SCOPES, loadServiceWallet, serviceWalletFile } from "../service/custody/custody";
import { rotateServiceKey } from "../service/custody/key-rotation";
import { migrateCustody } from "../service/custody/schema";
import { AdminOps } from "../service/custody/admin";
import { adminErrorMessage, runAdminCommand, type AdminCommand } from "../graphql/admin-http";
import { RpcGateway } from "../service/chain/rpc-gateway";
import { offersClientFor } from "../service/chain/service-chain";
import { WORK_KINDS } from "../service/worker/failures";

const program = new Command()
  .name("admin")
  .description("Operator CLI of the offers service")
  .option("--data <dir>", "data directory (admin.json of the running stack, keys, store)", "data/local")
  .option("--rpc <url>", "Solana RPC URL: act directly on the chain and the store instead of through the running stack")
  .option("--store <url>", "store URL (with --rpc, and for rotate-service-key): SQLite path or postgres:// URL (default <data>/store.sqlite)");

async function exec(cmd: AdminCommand): Promise<void> {
  const o = program.opts<{ data: string; rpc?: string; store?: string }>();
  let result: unknown;
  if (o.rpc) {
    const key = ServiceKey.load(o.data, process.env, { cluster: true });
    const store = await openStore(o.store ?? join(o.data, "store.sqlite"));
    const custody = await Custody.open(store.db as Kysely<unknown>, key);
    const service = loadServiceWallet(o.data, key, process.env, { cluster: true });
    const ops = new AdminOps(custody, store.db, new RpcGateway(o.rpc), service, offersClientFor(service.publicKey));
    try {
      result = await runAdminCommand(ops, cmd).catch((e: unknown) => {
        throw new Error(adminErrorMessage(e));
      });
    } finally {
      await store.close();
    }
  } else {
    const file = join(o.data, "admin.json");
    if (!existsSync(file))
      throw new Error(`no local stack: ${file} missing (start one with: npm start, or tsx scripts/admin.ts local), or pass --rpc and --store`);
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
  .description(
    "start the local stack: the same as `npm start` (scripts/start.ts: same ports, demo data, operator endpoint); every option after `local` is passed on to it (e.g. --port, --admin-port, --no-seed)",
  )
  .allowUnknownOption()
  .allowExcessArguments()
  .helpOption(false)
  .action((_o: unknown, cmd: Command) => {
    const data = program.opts<{ data: string }>().data;
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "start.ts"), "--data", data, ...cmd.args], { stdio: "inherit" });
    for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => child.kill(sig));
    child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  });

program
  .command("create-user <name>")
  .description("create a custodial user: a fresh wallet sealed under the service key, and its token account on chain")
  .option("--display-name <s>", "name shown to others (default: the user name)")
  .option("--image <url>", "profile image URL")
  .action((name: string, o: { displayName?: string; image?: string }) =>
    exec({ op: "create-user", name, displayName: o.displayName, profileImageUrl: o.image }),
  );
program
  .command("list-users")
  .description("every user: name, wallet, token account, blocked")
  .action(() => exec({ op: "list-users" }));
program
  .command("issue-token <user>")
  .description("issue a Personal Access Token for the user (printed once; only its hash is stored)")
  .addOption(new Option("--scope <s...>", "scopes: bet:write (writes and reads), bet:read (reads only)").choices(SCOPES).default(["bet:write"]))
  .option("--ttl <seconds>", "lifetime in seconds (default: none)")
  .option("--label <s>", "a note naming what the token is for")
  .action((user: string, o: { scope: string[]; ttl?: string; label?: string }) =>
    exec({ op: "issue-token", user, scopes: o.scope, ttlSeconds: o.ttl ? Number(o.ttl) : null, label: o.label }),
  );
program
  .command("list-tokens <user>")
  .description("the user's tokens: id, label, scopes, expiry, revoked (never the token)")
  .action((user: string) => exec({ op: "list-tokens", user }));
program
  .command("revoke-token <tokenId>")
  .description("revoke one token at once")
  .action((tokenId: string) => exec({ op: "revoke-token", tokenId }));
program
  .command("revoke-all-tokens <user>")
  .description("revoke every token of the user")
  .action((user: string) => exec({ op: "revoke-all-tokens", user }));
program
  .command("block <user>")
  .description("refuse every write of the user (compliance); reads stay open")
  .option("--reason <s>", "why, kept with the user")
  .action((user: string, o: { reason?: string }) => exec({ op: "block", user, reason: o.reason }));
program
  .command("unblock <user>")
  .description("allow the user's writes again")
  .action((user: string) => exec({ op: "unblock", user }));
program
  .command("fund <user> <micros>")
  .description("mint stablecoin micro-units to the user's token account (local chain: the service is the mint authority)")
  .action((user: string, micros: string) => exec({ op: "fund", user, micros }));
program
  .command("create-contract")
  .description("create a contract on chain (the service is the offers authority) with its catalog entry")
  .requiredOption("--title <s>", "title shown to users")
  .requiredOption("--event <s>", "the event, e.g. 'Home vs Away'")
  .requiredOption("--sport <s>", "sport, for browsing")
  .requiredOption("--competition <s>", "competition, for browsing")
  .requiredOption("--side-a <s>", "label of side A")
  .requiredOption("--side-b <s>", "label of side B")
  .requiredOption("--cutoff-in <seconds>", "offers and takes close this many seconds from now (chain time)")
  .option("--deadline-after <seconds>", "resolution deadline after cutoff (past it the worker voids the contract)", "86400")
  .option("--description <s>", "longer description")
  .option("--visual <url=alt...>", "images: URL=alt text, repeatable")
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
program
  .command("resolve-contract <address> <result>")
  .description("resolve a contract: sideA, sideB or void (the worker then settles its positions)")
  .action((contract: string, result: string) => {
    if (!["sideA", "sideB", "void"].includes(result)) throw new Error("result must be sideA, sideB or void");
    return exec({ op: "resolve-contract", contract, result: result as "sideA" });
  });
program
  .command("offers-enabled <enabled>")
  .description("switch offers on or off (true | false) in the offers Config")
  .option("--fee-bps <n>", "set the fee in basis points at the same time (applies to new offers)")
  .action((enabled: string, o: { feeBps?: string }) =>
    exec({ op: "offers-enabled", enabled: enabled === "true", feeBps: o.feeBps ? Number(o.feeBps) : undefined }),
  );
program
  .command("set-treasury <tokenAccount>")
  .description("name a new fee treasury in both programs (a token account of the mint), e.g. when the old one was closed or frozen")
  .action((treasury: string) => exec({ op: "set-treasury", treasury }));
program
  .command("advance-clock <seconds>")
  .description("move the local chain's clock forward (local chain only)")
  .action((seconds: string) => exec({ op: "advance-clock", seconds: Number(seconds) }));
program
  .command("run-worker")
  .description("run settlement worker passes now until one finds nothing to do")
  .action(() => exec({ op: "run-worker" }));
const worker = program.command("worker").description("the settlement worker");
worker
  .command("failures")
  .description("items whose action keeps failing: item, kind, attempts, next retry, last reason")
  .option("--kind <k>", WORK_KINDS.join(" | "))
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

/** The command tree (tests/writes/admin-cli.test.ts checks every command and option is described). */
export { program };

// Run only as the entry point, not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  program.parseAsync().catch((e) => {
    console.error(`error: ${(e as Error).message}`);
    process.exit(1);
  });
}
