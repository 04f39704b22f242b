/**
 * Pools finish by themselves against solana-test-validator (RpcGateway + RPC indexer): the
 * settlement worker retires a pool that closed without picks, refunds a pool its creator
 * withdrew, and resolves and pays out a proposal every participant confirmed, with nothing but
 * wall time passing and the participants' votes. (The 24 h / 72 h / 7 day deadlines cannot pass
 * on a real clock: tests/writes/worker-pools.test.ts covers them on the local chain.) Skipped
 * without the validator binary.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keypair, type PublicKey } from "@solana/web3.js";
import { RpcEngine } from "../../harness/rpc-engine";
import { TestValidator, validatorBinary } from "../../harness/validator";
import { startClusterStack, type ClusterStack } from "../../stack/cluster-stack";
import { ServiceKey } from "../../service/custody/crypto";
import { PoolOps } from "../../service/chain/pools-ops";
import { UNIT, balance, makeUser, type TestUser } from "../writes/helpers";
import { eventually } from "../harness/wait";

const binary = validatorBinary();

describe.skipIf(!binary)("settlement worker: pools on solana-test-validator", () => {
  let validator: TestValidator;
  let s: ClusterStack;
  let ops: PoolOps;
  let u: TestUser[];

  beforeAll(async () => {
    const service = Keypair.generate();
    validator = await TestValidator.start({ upgradeAuthority: service });
    await new RpcEngine(validator.connection(), validator.payer).fund(service.publicKey, 1_000_000_000_000n);
    s = await startClusterStack({ serviceKey: ServiceKey.generate(), rpcUrl: validator.rpcUrl, wsUrl: validator.wsUrl, service, init: true, reconcileMs: 0 });
    u = [await makeUser(s, 100n * UNIT), await makeUser(s, 100n * UNIT), await makeUser(s, 100n * UNIT)];
    ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
  }, 240_000);

  afterAll(async () => {
    await s?.stop();
    await validator?.stop();
  });

  /** Runs worker passes until the pool reaches `state` on chain (the store follows the validator). */
  const reaches = (pool: PublicKey, state: string) =>
    eventually(
      async () => {
        await s.worker.drain();
        expect((await ops.read(pool)).state).toBe(state);
      },
      90_000,
      1_000,
    );

  it("retires, refunds, resolves and distributes with only time passing and votes", async () => {
    const closesAt = (await s.chain.gateway.now()) + 20n;
    const q = (n: string) => ({ question: `Validator pool ${n}?`, labels: ["Yes", "No"], closesAt });
    const empty = await ops.create(u[0].name, q("empty"));
    const withdrawn = await ops.create(u[0].name, q("withdrawn"));
    const decided = await ops.create(u[0].name, q("decided"));
    await ops.pick(u[1].name, withdrawn, 0, 3n * UNIT);
    await ops.pick(u[1].name, decided, 0, 6n * UNIT);
    await ops.pick(u[2].name, decided, 1, 4n * UNIT);
    await ops.cancel(u[0].name, withdrawn);

    // The creator's cancel is refunded without waiting for anything.
    await reaches(withdrawn, "REFUNDED");
    expect(await balance(s, u[1].user.tokenAccount)).toBe(100n * UNIT - 6n * UNIT);

    await eventually(async () => expect(await s.chain.gateway.now()).toBeGreaterThanOrEqual(closesAt), 60_000, 1_000);
    await reaches(empty, "REFUNDED");
    await ops.propose(u[0].name, decided, 0);
    await ops.vote(u[1].name, decided, 0);
    await ops.vote(u[2].name, decided, 0); // everyone confirmed: no dispute can come
    await reaches(decided, "DISTRIBUTED");
    const p = await ops.read(decided);
    const gross = 10n * UNIT;
    const fee = ((gross - 6n * UNIT) * BigInt(p.feeBps)) / 10_000n;
    expect(await balance(s, u[1].user.tokenAccount)).toBe(100n * UNIT - 6n * UNIT + gross - fee);
    expect(await balance(s, u[2].user.tokenAccount)).toBe(96n * UNIT);
    expect(await balance(s, s.chain.pools.pda.vault()[0])).toBe(0n);
  });
});
