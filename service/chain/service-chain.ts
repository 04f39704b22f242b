/**
 * What the service knows of a deployment on any chain (the local engines or a validator /
 * cluster through RpcGateway): the programs' clients for the service's wallet, the chain's
 * initialisation (mint, treasury, both Configs), minting on the local chain, and the offers
 * Config as it stands. Nothing here loads an SVM engine.
 */
import { Keypair, type PublicKey, SystemProgram } from "@solana/web3.js";
import {
  ACCOUNT_SIZE,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createInitializeAccount3Instruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
} from "@solana/spl-token";
import { PoolsClient } from "../../idl/client/pools";
import { LAUNCH_FEE_BPS, LAUNCH_LIMITS, OFFERS_PROGRAM_ID, OffersClient, decodeConfig, type LimitsArgs } from "../../idl/client/offers";
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
