/**
 * The cluster stack on a fresh solana-test-validator, as tests/rpc and the validator benchmarks
 * start it: the service deploys (it is both programs' upgrade authority, so it may initialise the
 * Configs), holds SOL, and the stack initialises the chain with its RPC indexer reconciling only
 * at start and reconnects.
 */
import { Keypair } from "@solana/web3.js";
import { RpcEngine } from "../harness/rpc-engine";
import { TestValidator } from "../harness/validator";
import { ServiceKey } from "../service/custody/crypto";
import { startClusterStack, type ClusterStack, type ClusterStackOptions } from "./cluster-stack";

export async function validatorStack(
  opts: Pick<ClusterStackOptions, "observability" | "storeUrl" | "walletLimits"> & { serviceKey?: ServiceKey } = {},
): Promise<{ validator: TestValidator; s: ClusterStack; service: Keypair }> {
  const { serviceKey = ServiceKey.generate(), ...rest } = opts;
  const service = Keypair.generate();
  const validator = await TestValidator.start({ upgradeAuthority: service });
  try {
    await new RpcEngine(validator.connection(), validator.payer).fund(service.publicKey, 1_000_000_000_000n);
    const s = await startClusterStack({
      serviceKey,
      rpcUrl: validator.rpcUrl,
      wsUrl: validator.wsUrl,
      service,
      init: true,
      reconcileMs: 0,
      ...rest,
    });
    return { validator, s, service };
  } catch (e) {
    await validator.stop();
    throw e;
  }
}
