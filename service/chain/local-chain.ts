/**
 * The local chain of the stack: an in-process SVM with both programs, deployed upgradeable with
 * the service's wallet as their upgrade authority, a USDC-like mint (6 decimals) whose mint
 * authority is the service's wallet, the fee treasury, and the offers Config initialised with
 * the spec's launch settings (authority = the service's wallet).
 */
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import {
  ACCOUNT_SIZE,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createInitializeAccount3Instruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
} from "@solana/spl-token";
import { POOLS_PROGRAM_ID, PoolsClient } from "../../idl/client/pools";
import { LAUNCH_FEE_BPS, LAUNCH_LIMITS, OFFERS_PROGRAM_ID, OffersClient, decodeConfig, type LimitsArgs } from "../../idl/client/offers";
import { EngineGateway } from "./engine-gateway";
import type { EngineName } from "../../harness/engines";
import { DEPLOY_DIR } from "../../harness/chain";
import type { ChainGateway } from "./gateway";
import { sendAndConfirm } from "./submitter";

export function offersClientFor(payer: PublicKey, programId: PublicKey = OFFERS_PROGRAM_ID): OffersClient {
  return OffersClient.fromProvider({ publicKey: payer, wallet: { publicKey: payer } } as never, programId);
}

export function poolsClientFor(payer: PublicKey): PoolsClient {
  return PoolsClient.fromProvider({ publicKey: payer, wallet: { publicKey: payer } } as never);
}

/** What the service knows of a deployment, whatever chain it runs on. */
export interface ServiceChain<G extends ChainGateway = ChainGateway> {
  gateway: G;
  service: Keypair;
  mint: PublicKey;
  /** The fee treasury at start (the worker reads the Config's current one per settlement). */
  treasury: PublicKey;
  client: OffersClient;
  /** The pools program's client (its Config shares the mint and treasury). */
  pools: PoolsClient;
}

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

/**
 * On a chain where both programs are deployed and `service` holds SOL: a USDC-like mint whose
 * authority is the service, the treasury, and both Configs (authority = the service). Works over
 * any gateway: the local engines, or a validator / cluster through RpcGateway.
 */
export async function initializeChain(
  gateway: ChainGateway,
  opts: { service: Keypair; deployer?: Keypair; feeBps?: number; limits?: LimitsArgs; offersEnabled?: boolean },
): Promise<Omit<ServiceChain, "gateway">> {
  // Only the programs' upgrade authority may create the Configs (a deployment cannot be
  // front-run); by default that is the service key itself.
  const deployer = opts.deployer ?? opts.service;
  const signers = deployer === opts.service ? [opts.service] : [opts.service, deployer];
  const service = opts.service;
  const mint = Keypair.generate();
  const treasury = Keypair.generate();
  const [mintRent, accRent] = [await gateway.rentExempt(MINT_SIZE), await gateway.rentExempt(ACCOUNT_SIZE)];
  await sendAndConfirm(
    gateway,
    [
      SystemProgram.createAccount({
        fromPubkey: service.publicKey,
        newAccountPubkey: mint.publicKey,
        lamports: Number(mintRent),
        space: MINT_SIZE,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeMint2Instruction(mint.publicKey, 6, service.publicKey, null),
      SystemProgram.createAccount({
        fromPubkey: service.publicKey,
        newAccountPubkey: treasury.publicKey,
        lamports: Number(accRent),
        space: ACCOUNT_SIZE,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeAccount3Instruction(treasury.publicKey, mint.publicKey, service.publicKey),
    ],
    [service, mint, treasury],
  );
  const client = offersClientFor(service.publicKey);
  await sendAndConfirm(
    gateway,
    [
      await client.initializeConfig({
        authority: service.publicKey,
        mint: mint.publicKey,
        treasury: treasury.publicKey,
        feeBps: opts.feeBps ?? LAUNCH_FEE_BPS,
        offersEnabled: opts.offersEnabled ?? true,
        limits: opts.limits ?? LAUNCH_LIMITS,
        deployer: deployer.publicKey,
      }),
    ],
    signers,
  );
  const pools = poolsClientFor(service.publicKey);
  await sendAndConfirm(
    gateway,
    [
      await pools.initializeConfig({
        authority: service.publicKey,
        mint: mint.publicKey,
        treasury: treasury.publicKey,
        feeBps: opts.feeBps ?? LAUNCH_FEE_BPS,
        deployer: deployer.publicKey,
      }),
    ],
    signers,
  );
  return { service, mint: mint.publicKey, treasury: treasury.publicKey, client, pools };
}

/** Mints `amount` micro-units to a token account (local chain: the service is mint authority). */
export async function mintTo(gateway: ChainGateway, service: Keypair, mint: PublicKey, account: PublicKey, amount: bigint): Promise<void> {
  await sendAndConfirm(gateway, [createMintToInstruction(mint, account, service.publicKey, amount)], [service]);
}

export async function readConfig(gateway: ChainGateway, client: OffersClient) {
  const a = await gateway.getAccount(client.pda.config()[0]);
  if (!a) throw new Error("offers config not initialised");
  return decodeConfig(a.data);
}
