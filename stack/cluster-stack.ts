/**
 * The service against a real validator or cluster, in one process: RpcGateway for writes and
 * reads of the chain, the RPC indexer source feeding the store, and the same service parts and
 * HTTP app as the local stack (./service-parts.ts). tests/rpc drives it against
 * solana-test-validator; `scripts/start.ts --rpc` runs it.
 *
 * `init: true` creates the mint, treasury and both Configs (the service is their authority and
 * must hold SOL); otherwise the Configs must exist and name the service as authority.
 */
import type { Keypair } from "@solana/web3.js";
import type { ServerType } from "@hono/node-server";
import type { Kysely } from "kysely";
import { openStore, type Store } from "../indexer/store/db";
import { StoreWriter } from "../indexer/store/writer";
import { RpcSource } from "../indexer/sources/rpc";
import type { Database } from "../indexer/store/schema";
import { OFFERS_PROGRAM_ID } from "../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../idl/client/pools";
import { RpcGateway } from "../service/chain/rpc-gateway";
import { initializeChain, offersClientFor, poolsClientFor, readConfig, type ServiceChain } from "../service/chain/local-chain";
import type { ServiceKey } from "../service/custody/crypto";
import { assembleStack, observabilityOf, type AppBuilder, type ServiceParts, type ServicePartsOptions } from "./service-parts";

export interface ClusterStackOptions extends ServicePartsOptions {
  rpcUrl: string;
  wsUrl?: string;
  storeUrl?: string;
  service: Keypair;
  /** Required: against a cluster the key must be the operator's (scripts/start.ts: SERVICE_KEY or SERVICE_KEY_FILE). */
  serviceKey: ServiceKey;
  init?: boolean;
  commitment?: "confirmed" | "finalized";
  /** The indexer's periodic reconcile (ms); 0 = only at start and after reconnects. */
  reconcileMs?: number;
  /** Builds the HTTP app; default: the server's `createApp` (reads, writes, GraphQL). */
  app?: AppBuilder<Omit<ClusterStack, "server" | "url" | "stop">>;
  port?: number;
}

export interface ClusterStack extends ServiceParts {
  chain: ServiceChain<RpcGateway>;
  store: Store;
  db: Kysely<Database>;
  source: RpcSource;
  writer: StoreWriter;
  server: ServerType;
  url: string;
  stop(): Promise<void>;
}

export async function startClusterStack(opts: ClusterStackOptions): Promise<ClusterStack> {
  const commitment = opts.commitment ?? "confirmed";
  const gateway = new RpcGateway(opts.rpcUrl, commitment);
  const service = opts.service;
  const obs = observabilityOf(opts);
  const store = await openStore(opts.storeUrl ?? ":memory:");
  const name = `rpc:${opts.rpcUrl}`;
  const writer = await StoreWriter.open(store, name);
  const source = new RpcSource({
    url: opts.rpcUrl,
    wsUrl: opts.wsUrl,
    programs: [OFFERS_PROGRAM_ID, POOLS_PROGRAM_ID],
    commitment,
    name,
    known: writer.knownAccounts(),
    reconcileMs: opts.reconcileMs,
    onError: (e) => obs.log.error({ err: e }, "rpc source"),
  });
  await source.start(await writer.checkpoint(), obs.indexerSink(writer));
  let chain: ClusterStack["chain"];
  if (opts.init) chain = { gateway, ...(await initializeChain(gateway, { service })) };
  else {
    const client = offersClientFor(service.publicKey);
    const config = await readConfig(gateway, client);
    if (!config.authority.equals(service.publicKey)) throw new Error(`the offers Config's authority is ${config.authority.toBase58()}, not the service`);
    chain = { gateway, service, mint: config.mint, treasury: config.treasury, client, pools: poolsClientFor(service.publicKey) };
  }
  return assembleStack({ chain, store, source, writer }, { ...opts, obs, headSlot: () => gateway.connection.getSlot(commitment) });
}
