/**
 * Pools finish by themselves against solana-test-validator (RpcGateway + RPC indexer): the
 * settlement worker retires a pool that closed without picks, refunds a pool its creator
 * withdrew, resolves and pays out a proposal every participant confirmed (DISTRIBUTED), and
 * escalates a proposal every participant voted on with a dispute, which the authority cancels
 * and the worker refunds (REFUNDED, cancelReason AUTHORITY through the API), with nothing but
 * wall time passing (pools close 20 s after creation: the program has no minimum open time, and
 * a resolution time may equal the close) and the participants' votes.
 *
 * What a real clock cannot reach in a test, and why (programs/pools/src/state.rs):
 * - an undisputed proposal that not everyone voted on stands only after the dispute window,
 *   DISPUTE_WINDOW_SECONDS = 24 h (it ends early only once every participant voted: used here);
 * - a pool nobody proposed for is escalated only after PROPOSAL_DEADLINE_SECONDS = 72 h past
 *   max(closes_at, resolution_at);
 * - an escalation the authority leaves undecided is canceled (cancelReason TIMEOUT) only after
 *   AUTHORITY_DEADLINE_SECONDS = 7 days.
 * The windows are fixed constants of the program, not settings; tests/writes/worker-pools.test.ts
 * and tests/api/embed-cancel.test.ts cover them on the local chain by moving its clock. Skipped
 * without the validator binary.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keypair, type PublicKey } from "@solana/web3.js";
import { RpcEngine } from "../../harness/rpc-engine";
import { TestValidator, validatorBinary } from "../../harness/validator";
import { startClusterStack, type ClusterStack } from "../../stack/cluster-stack";
import { ServiceKey } from "../../service/custody/crypto";
import { PoolOps } from "../../service/chain/pools-ops";
import { upsertPoolCatalog } from "../../indexer";
import { UNIT, balance, makeUser, type TestUser } from "../support/stack";
import { eventually } from "../support/wait";

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

  it("retires, refunds, resolves, distributes, escalates and refunds an authority's cancel with only time passing and votes", async () => {
    const closesAt = (await s.chain.gateway.now()) + 20n;
    const q = (n: string) => ({ question: `Validator pool ${n}?`, labels: ["Yes", "No"], closesAt });
    const empty = await ops.create(u[0].name, q("empty"));
    const withdrawn = await ops.create(u[0].name, q("withdrawn"));
    const decided = await ops.create(u[0].name, q("decided"));
    const disputed = await ops.create(u[0].name, q("disputed"));
    await upsertPoolCatalog(s.db, { pool: disputed.toBase58(), slug: "validator-disputed" });
    await ops.pick(u[1].name, disputed, 0, 2n * UNIT);
    await ops.pick(u[2].name, disputed, 1, 1n * UNIT);
    await ops.pick(u[1].name, withdrawn, 0, 3n * UNIT);
    await ops.pick(u[1].name, decided, 0, 6n * UNIT);
    await ops.pick(u[2].name, decided, 1, 4n * UNIT);
    await ops.cancel(u[0].name, withdrawn);

    // The creator's cancel is refunded without waiting for anything.
    await reaches(withdrawn, "REFUNDED");
    expect(await balance(s, u[1].user.tokenAccount)).toBe(100n * UNIT - 6n * UNIT - 2n * UNIT);

    await eventually(async () => expect(await s.chain.gateway.now()).toBeGreaterThanOrEqual(closesAt), 60_000, 1_000);
    await reaches(empty, "REFUNDED");
    await ops.propose(u[0].name, decided, 0);
    await ops.vote(u[1].name, decided, 0);
    await ops.vote(u[2].name, decided, 0); // everyone confirmed: no dispute can come
    await ops.propose(u[0].name, disputed, 0);
    await ops.vote(u[1].name, disputed, 0);
    await ops.vote(u[2].name, disputed, 1); // a dispute, and everyone voted: the window ends now
    await reaches(decided, "DISTRIBUTED");
    const p = await ops.read(decided);
    const gross = 10n * UNIT;
    const fee = ((gross - 6n * UNIT) * BigInt(p.feeBps)) / 10_000n;
    // Their stakes in the disputed pool (2 and 1) are still in the vault.
    expect(await balance(s, u[1].user.tokenAccount)).toBe(100n * UNIT - 6n * UNIT - 2n * UNIT + gross - fee);
    expect(await balance(s, u[2].user.tokenAccount)).toBe(95n * UNIT);

    // The worker escalated the disputed proposal; the authority (the service) cancels it, the worker refunds.
    await eventually(
      async () => {
        await s.worker.drain();
        expect((await ops.read(disputed)).escalatedAt).toBeGreaterThan(0n);
      },
      60_000,
      1_000,
    );
    await ops.authorityResolve(disputed, 255);
    await reaches(disputed, "REFUNDED");
    expect(await balance(s, u[1].user.tokenAccount)).toBe(100n * UNIT - 6n * UNIT + gross - fee);
    expect(await balance(s, u[2].user.tokenAccount)).toBe(96n * UNIT);
    expect(await balance(s, s.chain.pools.pda.vault()[0])).toBe(0n);
    const embed = await eventually(async () => {
      const r = (await (await fetch(`${s.url}/api/embed/v1/polls/validator-disputed`)).json()) as { data: { state: string; cancelReason: string } };
      expect(r.data.state).toBe("REFUNDED");
      return r.data;
    });
    expect(embed.cancelReason).toBe("AUTHORITY");
  });
});
