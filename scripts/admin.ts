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
 *     issue-token <user> [--scope bet:write|bet:read ...] [--ttl 30d|12h|90s|never] [--label s]
 *     list-tokens <user> | revoke-token <tokenId> | revoke-all-tokens <user>
 *     block <user> [--reason s] | unblock <user>
 *     fund <user> <micros>                           (local chain: mints stablecoin)
 *     fund-wallet <address> <micros> [--lamports n]  (local chain: any wallet, e.g. one trying an Action:
 *                                                  its token account, stablecoin, and SOL for fees)
 *     create-contract --title s --event s --sport s --competition s --side-a s --side-b s
 *                     --cutoff-in 2h [--deadline-after 1d] [--description s] [--visual url=alt]
 *     resolve-contract <address> <sideA|sideB|void>
 *     offers-enabled <on|off> [--fee-bps n]       (true/false, yes/no, on/off, 1/0)
 *     advance-clock <duration> | run-worker        (local chain only; 90s, 15m, 1h, 7d)
 *     worker failures [--kind k] [--limit n]       the settlement worker's failing items: item, kind,
 *                                                  attempts, next retry, last reason
 *     worker retry <item>                          retry a failing item on the next pass
 *     rotate-service-key --new-key-file <path>     re-seal every custodial key and the service wallet
 *                                                  under a new key (service stopped; crash-safe)
 *
 * Values are parsed strictly (stack/config): durations 90s/15m/12h/30d (a bare number is seconds),
 * booleans true/false/yes/no/on/off/1/0, amounts in micro-units; anything else is one line naming
 * the bad value and exit code 2. --data / DATA_DIR, --rpc / RPC_URL, --store / STORE_URL as for
 * `npm start`.
 *
 * Environment: SERVICE_KEY (32-byte key sealing custodial wallets; else <data>/service.key),
 * SERVICE_WALLET (JSON secret key of the service's fee/rent payer and program authority) or
 * SERVICE_WALLET_FILE (that JSON in a file); with --rpc one of them is required, else it is
 * sealed in <data>/service-wallet.sealed.
 */
import { Argument, Command, Option } from "commander";
import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { Kysely } from "kysely";
// Only what parsing needs is imported here: a command talking to the local stack needs no more
// than fetch, and a refused value exits before the store, custody or chain code is loaded (those
// are imported where a command uses them).
import type { AdminCommand } from "../graphql/admin-http";
import { SCOPES } from "../service/custody/token-scopes";
import { WORK_KINDS } from "../service/worker/failures";
import { addSettings, settingsOf } from "../stack/config/settings";
import { amountValue, arg, booleanValue, solanaAddressValue, bpsValue, durationValue, enumValue, lifetimeValue, positiveValue } from "../stack/config/values";
import { exitOnError, isUsageError, strictExit } from "../stack/config/cli";
import { serverNodeOptions } from "./server-node-options";

// --data / DATA_DIR, --rpc / RPC_URL, --store / STORE_URL: the same settings as `npm start`'s, so a
// stack started with DATA_DIR=/srv/x is reached by the CLI under the same environment.
const program = addSettings(strictExit(new Command().name("admin").description("Operator CLI of the offers service")), ["data", "rpc", "store"]);
const globals = () => settingsOf(program, ["data", "rpc", "store"] as const);

async function exec(cmd: AdminCommand): Promise<void> {
  const o = globals();
  let result: unknown;
  if (o.rpc) {
    const [
      { openStore },
      { ServiceKey },
      { Custody, loadServiceWallet },
      { AdminOps },
      { adminErrorMessage, runAdminCommand },
      { RpcGateway },
      { offersClientFor },
    ] = await Promise.all([
      import("../indexer/store/db"),
      import("../service/custody/crypto"),
      import("../service/custody/custody"),
      import("../service/custody/admin"),
      import("../graphql/admin-http"),
      import("../service/chain/rpc-gateway"),
      import("../service/chain/service-chain"),
    ]);
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
    "start the local stack: the same as `npm start` (scripts/start.ts: same ports, demo data, operator endpoint); every option after `local` is passed on to it (e.g. --port, --admin-port, --no-seed; its options: tsx scripts/start.ts --help)",
  )
  .allowUnknownOption()
  .allowExcessArguments()
  .action((_o: unknown, cmd: Command) => {
    const data = globals().data;
    const child = spawn(process.execPath, [...serverNodeOptions(), "--import", "tsx", join(import.meta.dirname, "start.ts"), "--data", data, ...cmd.args], {
      stdio: "inherit",
    });
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
  .addOption(new Option("--ttl <duration>", "lifetime: 90s, 15m, 12h, 30d (a bare number is seconds), or never (default: 30d)").argParser(arg(lifetimeValue)))
  .option("--label <s>", "a note naming what the token is for")
  .action((user: string, o: { scope: string[]; ttl?: number | "never"; label?: string }) =>
    // Without --ttl the endpoint applies the default lifetime (DEFAULT_TOKEN_TTL_SECONDS); null is "never".
    exec({ op: "issue-token", user, scopes: o.scope, ttlSeconds: o.ttl === "never" ? null : o.ttl, label: o.label }),
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
  .command("fund")
  .argument("<user>", "user name or id")
  .addArgument(new Argument("<micros>", "amount in micro-units (1000000 = 1 unit)").argParser(arg(amountValue)))
  .description("mint stablecoin micro-units to the user's token account (local chain: the service is the mint authority)")
  .action((user: string, micros: bigint) => exec({ op: "fund", user, micros: String(micros) }));
program
  .command("fund-wallet")
  .argument("<address>", "the wallet's base58 address (any wallet: self-custody takers included)", arg(solanaAddressValue))
  .addArgument(new Argument("<micros>", "stablecoin in micro-units (1000000 = 1 unit)").argParser(arg(amountValue)))
  .addOption(new Option("--lamports <n>", "SOL for fees and rent, in lamports").argParser(arg(amountValue)).default(1_000_000_000n, "1 SOL"))
  .description("create the wallet's associated token account of the local mint, mint stablecoin to it and send it SOL (local chain)")
  .action((address: string, micros: bigint, o: { lamports: bigint }) =>
    exec({ op: "fund-wallet", address, micros: String(micros), lamports: String(o.lamports) }),
  );
program
  .command("create-contract")
  .description("create a contract on chain (the service is the offers authority) with its catalog entry")
  .requiredOption("--title <s>", "title shown to users")
  .requiredOption("--event <s>", "the event, e.g. 'Home vs Away'")
  .requiredOption("--sport <s>", "sport, for browsing")
  .requiredOption("--competition <s>", "competition, for browsing")
  .requiredOption("--side-a <s>", "label of side A")
  .requiredOption("--side-b <s>", "label of side B")
  .addOption(
    new Option("--cutoff-in <duration>", "offers and takes close this long from now (chain time): 90s, 2h, 3d")
      .argParser(arg(durationValue))
      .makeOptionMandatory(),
  )
  .addOption(
    new Option("--deadline-after <duration>", "resolution deadline after cutoff (past it the worker voids the contract)")
      .argParser(arg(durationValue))
      .default(86_400, "1d"),
  )
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
      cutoffIn: number;
      deadlineAfter: number;
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
        cutoffIn: o.cutoffIn,
        deadlineAfter: o.deadlineAfter,
        sideALabel: o.sideA,
        sideBLabel: o.sideB,
        visuals: (o.visual ?? []).map((v) => ({ src: v.split("=")[0], alt: v.split("=").slice(1).join("=") })),
      });
    },
  );
const RESULTS = ["sideA", "sideB", "void"] as const;
program
  .command("resolve-contract")
  .argument("<address>", "the contract's address")
  .addArgument(new Argument("<result>", RESULTS.join(" | ")).argParser(arg(enumValue(RESULTS))))
  .description("resolve a contract: sideA, sideB or void (the worker then settles its positions)")
  .action((contract: string, result: (typeof RESULTS)[number]) => exec({ op: "resolve-contract", contract, result }));
program
  .command("offers-enabled")
  .addArgument(new Argument("<enabled>", "on or off: true/false, yes/no, on/off, 1/0 (any case)").argParser(arg(booleanValue)))
  .description("switch offers on or off in the offers Config")
  .addOption(new Option("--fee-bps <n>", "set the fee in basis points (0-10000) at the same time (applies to new offers)").argParser(arg(bpsValue)))
  .action((enabled: boolean, o: { feeBps?: number }) => exec({ op: "offers-enabled", enabled, feeBps: o.feeBps }));
program
  .command("set-treasury <tokenAccount>")
  .description("name a new fee treasury in both programs (a token account of the mint), e.g. when the old one was closed or frozen")
  .action((treasury: string) => exec({ op: "set-treasury", treasury }));
program
  .command("advance-clock")
  .addArgument(new Argument("<duration>", "how far: 90s, 15m, 1h, 7d (a bare number is seconds)").argParser(arg(durationValue)))
  .description("move the local chain's clock forward (local chain only)")
  .action((seconds: number) => exec({ op: "advance-clock", seconds }));
program
  .command("run-worker")
  .description("run settlement worker passes now until one finds nothing to do")
  .action(() => exec({ op: "run-worker" }));
const worker = program.command("worker").description("the settlement worker");
worker
  .command("failures")
  .description("items whose action keeps failing: item, kind, attempts, next retry, last reason")
  .addOption(new Option("--kind <k>", WORK_KINDS.join(" | ")).argParser(arg(enumValue(WORK_KINDS))))
  .addOption(new Option("--limit <n>", "rows").argParser(arg(positiveValue)).default(1000))
  .action((o: { kind?: string; limit: number }) => exec({ op: "worker-failures", kind: o.kind, limit: o.limit }));
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
    const [{ openStore }, { ServiceKey }, { serviceWalletFile }, { rotateServiceKey }, { migrateCustody }] = await Promise.all([
      import("../indexer/store/db"),
      import("../service/custody/crypto"),
      import("../service/custody/custody"),
      import("../service/custody/key-rotation"),
      import("../service/custody/schema"),
    ]);
    const g = globals();
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
  program.parseAsync().catch((e: unknown) => {
    // A refusal of the command line exits 2 (exitOnError); a failed command says why and exits 1.
    if (isUsageError(e)) exitOnError(e);
    console.error(`error: ${(e as Error).message}`);
    process.exit(1);
  });
}
