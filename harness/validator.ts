/**
 * A solana-test-validator with the compiled programs loaded at their declared addresses as
 * upgradeable programs (loader v3) whose upgrade authority is `upgradeAuthority`, on
 * loopback ports of its own, with a fresh ledger in a temporary directory. Built by
 * scripts/setup-test-validator.sh; `validatorBinary()` says where it is (or null).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir, homedir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import { Connection, Keypair, type Commitment, type PublicKey } from "@solana/web3.js";
import { DEPLOY_DIR } from "./chain";
import { RpcEngine } from "./rpc-engine";
import { OFFERS_PROGRAM_ID } from "../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../idl/client/pools";

export const AGAVE_VERSION = process.env.AGAVE_VERSION ?? "4.2.2";

/** SOLANA_TEST_VALIDATOR, else the setup script's default install, else PATH; null when none. */
export function validatorBinary(): string | null {
  const candidates = [
    process.env.SOLANA_TEST_VALIDATOR,
    join(process.env.AGAVE_ROOT ?? join(homedir(), ".cache", "offers-tools", `agave-${AGAVE_VERSION}`), "bin", "solana-test-validator"),
  ].filter((c): c is string => !!c);
  for (const c of candidates) if (existsSync(c)) return c;
  const which = spawnSync("sh", ["-c", "command -v solana-test-validator"], { encoding: "utf8" });
  return which.status === 0 ? which.stdout.trim() : null;
}

/**
 * A free TCP port on loopback with `span - 1` free-looking ports after it (the validator's range).
 * The range ends below 32768, where the kernel's ephemeral ports begin: an outgoing connection
 * could otherwise take one of the validator's ports between the check and its bind. Test servers
 * take 10000-19999 (tests/support/ports.ts), so the two never meet.
 */
async function freePortBase(span: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * (32_768 - 20_000 - span));
    const ok = await Promise.all([0, 1, 2, span - 1].map((d) => portFree(base + d)));
    if (ok.every(Boolean)) return base;
  }
  throw new Error("no free port range on loopback");
}

export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

/** Both programs of the project, at their declared addresses. */
export const PROGRAMS = [
  { name: "offers", programId: OFFERS_PROGRAM_ID },
  { name: "pools", programId: POOLS_PROGRAM_ID },
];

export interface ValidatorOptions {
  programs?: { name: string; programId: PublicKey }[];
  /** The programs' upgrade authority (funded by the validator); by default the payer. */
  upgradeAuthority?: Keypair;
}

export class TestValidator {
  private constructor(
    readonly process: ChildProcess,
    readonly ledger: string,
    readonly rpcUrl: string,
    readonly wsUrl: string,
    readonly wsPort: number,
    readonly payer: Keypair,
    /** The programs' upgrade authority, funded: it signs initialize_config. */
    readonly upgradeAuthority: Keypair,
  ) {}

  connection(commitment: Commitment = "confirmed"): Connection {
    return new Connection(this.rpcUrl, { commitment, wsEndpoint: this.wsUrl });
  }

  static async start(opts: ValidatorOptions = {}): Promise<TestValidator> {
    const bin = validatorBinary();
    if (!bin) throw new Error("solana-test-validator not found: run bash scripts/setup-test-validator.sh");
    const ledger = mkdtempSync(join(tmpdir(), "offers-validator-"));
    const payer = Keypair.generate();
    // The payer by default, so an RpcEngine built from (connection, payer) knows the authority.
    const authority = opts.upgradeAuthority ?? payer;
    const base = await freePortBase(40);
    const [rpc, faucet, gossip] = [base, base + 2, base + 3];
    const args = [
      "--ledger",
      ledger,
      "--reset",
      "--quiet",
      "--bind-address",
      "127.0.0.1",
      "--rpc-port",
      String(rpc),
      "--faucet-port",
      String(faucet),
      "--gossip-port",
      String(gossip),
      "--dynamic-port-range",
      `${base + 4}-${base + 39}`,
      // The payer is the genesis mint: every transfer and fee comes from it.
      "--mint",
      payer.publicKey.toBase58(),
      // Upgradeable (loader v3), so each program has a ProgramData account naming the authority.
      ...(opts.programs ?? PROGRAMS).flatMap((p) => [
        "--upgradeable-program",
        p.programId.toBase58(),
        join(DEPLOY_DIR, `${p.name}.so`),
        authority.publicKey.toBase58(),
      ]),
    ];
    const log = openSync(join(ledger, "stdout.log"), "a");
    const child = spawn(bin, args, { stdio: ["ignore", log, log], detached: false });
    const v = new TestValidator(child, ledger, `http://127.0.0.1:${rpc}`, `ws://127.0.0.1:${rpc + 1}`, rpc + 1, payer, authority);
    const conn = v.connection();
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`solana-test-validator exited with ${child.exitCode}; see ${ledger}/validator.log`);
      try {
        // Ready once it has produced a few slots and funded the mint.
        if ((await conn.getSlot("confirmed")) > 2 && (await conn.getBalance(payer.publicKey, "confirmed")) > 0) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) {
        await v.stop();
        throw new Error(`solana-test-validator not ready after 120 s; see ${ledger}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    if (authority !== payer) await v.engine().fund(authority.publicKey, 100_000_000_000n);
    return v;
  }

  /** The harness's Engine over this validator, with its payer and upgrade authority. */
  engine(commitment: Commitment = "confirmed"): RpcEngine {
    return new RpcEngine(this.connection(commitment), this.payer, commitment, this.upgradeAuthority);
  }

  async stop(): Promise<void> {
    if (this.process.exitCode === null) {
      const exited = new Promise((r) => this.process.once("exit", r));
      this.process.kill("SIGTERM");
      const t = setTimeout(() => this.process.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    }
    rmSync(this.ledger, { recursive: true, force: true });
  }
}
