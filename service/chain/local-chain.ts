/**
 * The local chain of the stack: an in-process SVM with both programs, deployed upgradeable with
 * the service's wallet as their upgrade authority, then initialised as any chain is
 * (./service-chain.ts initializeChain). Only the local stack imports this module: it is the one
 * path from the service to the SVM engines (solana-bankrun, LiteSVM), which cluster roles never
 * load (tests/docs/layout.test.ts).
 */
import { type Keypair, SystemProgram } from "@solana/web3.js";
import { POOLS_PROGRAM_ID } from "../../idl/client/pools";
import { OFFERS_PROGRAM_ID, type LimitsArgs } from "../../idl/client/offers";
import { EngineGateway } from "./engine-gateway";
import type { EngineName } from "../../harness/engines";
import { DEPLOY_DIR } from "../../harness/chain";
import { initializeChain, type ServiceChain } from "./service-chain";

/** The in-process chain of the local stack (bankrun or LiteSVM). */
export type LocalChain = ServiceChain<EngineGateway>;

/**
 * Starts an engine with both programs (upgrade authority = the service, which initialize_config
 * requires) and initialises mint, treasury and both Configs.
 */
export async function startLocalChain(opts: {
  service: Keypair;
  engine?: EngineName;
  feeBps?: number;
  limits?: LimitsArgs;
  offersEnabled?: boolean;
  /** Runs before the first transaction (e.g. attach the indexer so it sees the Config created). */
  beforeInit?: (gateway: EngineGateway) => Promise<void> | void;
}): Promise<LocalChain> {
  const gateway = await EngineGateway.start(
    DEPLOY_DIR,
    [
      { name: "offers", programId: OFFERS_PROGRAM_ID },
      { name: "pools", programId: POOLS_PROGRAM_ID },
    ],
    opts.engine ?? "bankrun",
    { upgradeAuthority: opts.service.publicKey },
  );
  // LiteSVM's clock starts at unix 0 (a 0 time reads as "unset" in the store): start at wall time.
  if ((await gateway.now()) < 1_000_000_000n) await gateway.setTime(BigInt(Math.floor(Date.now() / 1000)));
  await opts.beforeInit?.(gateway);
  gateway.engine.setAccount(opts.service.publicKey, {
    lamports: 1_000_000 * 1_000_000_000,
    data: Buffer.alloc(0),
    owner: SystemProgram.programId,
    executable: false,
    rentEpoch: 0,
  });
  return { gateway, ...(await initializeChain(gateway, opts)) };
}
