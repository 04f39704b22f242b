/**
 * A Solana Action end to end on solana-test-validator, as the README's "Solana Actions" walks
 * through it: a fresh keypair wallet is funded by the operator CLI (`scripts/admin.ts --rpc
 * --store fund-wallet`, a separate process on the same PostgreSQL store), GETs an offer's action,
 * POSTs its account, signs the returned transaction with its own key and sends it to the
 * validator itself. Then the position is indexed under that wallet (the public wallet positions
 * read), the offer's counts and the contract's book include it, the contract is resolved, the
 * worker settles it, and the wallet's own token account receives exactly the settlement table's
 * amount (idl/client/offers-rules.ts payouts). The same for a pool pick on the same validator: a
 * fresh wallet GETs the poll's action, POSTs its account with an outcome and an amount, signs and
 * sends; the pick is indexed under the wallet (REST and GraphQL walletPicks); the pool closes, its
 * creator proposes, every participant votes (the wallet signs its own castVote, the custodial
 * participant's goes through PoolOps), which ends the dispute window early, the worker distributes
 * and the wallet's token account receives exactly pickPayout (idl/client/pools-rules.ts).
 * Skipped without the validator binary.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Keypair, Transaction, sendAndConfirmTransaction, type PublicKey } from "@solana/web3.js";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { type TestValidator, validatorBinary } from "../../harness/validator";
import { ServiceKey } from "../../service/custody/crypto";
import { payouts } from "../../idl/client/offers-rules";
import { pickPayout } from "../../idl/client/pools-rules";
import { PoolOps } from "../../service/chain/pools-ops";
import { upsertPoolCatalog } from "../../indexer";
import type { ClusterStack } from "../../stack/cluster-stack";
import { validatorStack } from "./validator-stack";
import { UNIT, balance, contract, createBody, makeUser, type TestUser } from "../support/stack";
import { get, gql, post } from "../support/http";
import { eventually } from "../support/wait";
import { adminJson } from "../support/scripts";
import { freshStore } from "../indexer/stores";

const binary = validatorBinary();
const ROOT = join(import.meta.dirname, "..", "..");

describe.skipIf(!binary)("a Solana Action on solana-test-validator: a self-custody wallet takes, is indexed, settled and paid", () => {
  let validator: TestValidator;
  let s: ClusterStack;
  let service: Keypair;
  let creator: TestUser;
  const keyHex = randomBytes(32).toString("hex");
  const store = freshStore("postgres", "actions_e2e");
  const storeUrl = store.url;

  beforeAll(async () => {
    ({ validator, s, service } = await validatorStack({ storeUrl, serviceKey: ServiceKey.parse(keyHex) }));
    creator = await makeUser(s, 100n * UNIT);
  }, 240_000);

  afterAll(async () => {
    await s?.stop();
    await validator?.stop();
    await store.drop();
  });

  /** The operator CLI as the README runs it: against the validator and the stack's store, the service wallet and key from the environment. */
  async function admin(...args: string[]): Promise<Record<string, string>> {
    const env = { ...process.env, SERVICE_WALLET: JSON.stringify([...service.secretKey]), SERVICE_KEY: keyHex };
    return adminJson(["--rpc", validator.rpcUrl, "--store", storeUrl, ...args], { cwd: ROOT, env, timeout: 120_000 });
  }

  async function action(path: string, init: RequestInit = {}) {
    const r = await fetch(`${s.url}${path}`, init);
    return { status: r.status, body: (await r.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  /** POST an action for `wallet` as a wallet would: the unsigned transaction it answers, checked, signed by the wallet alone, sent and confirmed; with the completion link it names. */
  async function signAndSend(href: string, wallet: Keypair): Promise<{ signature: string; next: string }> {
    const built = await action(href, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ account: wallet.publicKey.toBase58() }),
    });
    expect(built.status, JSON.stringify(built.body)).toBe(200);
    expect(built.body.type).toBe("transaction");
    const tx = Transaction.from(Buffer.from(built.body.transaction as string, "base64"));
    expect(tx.feePayer!.equals(wallet.publicKey)).toBe(true);
    tx.partialSign(wallet);
    const connection = validator.connection();
    const signature = await connection.sendRawTransaction(tx.serialize());
    const confirmed = await connection.confirmTransaction(
      { signature, blockhash: tx.recentBlockhash!, lastValidBlockHeight: (await connection.getLatestBlockhash()).lastValidBlockHeight + 150 },
      "confirmed",
    );
    expect(confirmed.value.err).toBeNull();
    return { signature, next: built.body.links.next.href as string };
  }

  it("fund-wallet, GET the action, POST the account, sign and send; indexed, counted, in the book, settled to the wallet's token account", async () => {
    const wallet = Keypair.generate();
    const funded = await admin("fund-wallet", wallet.publicKey.toBase58(), "50000000");
    expect(funded).toMatchObject({ wallet: wallet.publicKey.toBase58(), funded: "50000000" });
    const token = getAssociatedTokenAddressSync(s.chain.mint, wallet.publicKey, true);
    expect(funded.tokenAccount).toBe(token.toBase58());
    expect(await balance(s, token)).toBe(50n * UNIT);

    // The worked example's offer (8 vs 10 on sideA): the wallet takes 5 on sideB.
    // The cutoff leaves room for the take (indexed 24 of 25 s before it at a load average of 30):
    // the suite waits for it afterwards.
    const c: PublicKey = await contract(s, 10n, 600n);
    const cutoffAt = (await s.chain.gateway.now()) + 10n;
    const created = await post(s, "/", createBody(c), creator.token);
    expect(created.status, created.text).toBe(200);
    const offer = created.body.offerAddress as string;
    await eventually(async () => expect((await get(s, `/${offer}`)).status).toBe(200));

    const described = await action(`/api/actions/offers/${offer}`);
    expect(described.status).toBe(200);
    expect(described.body.disabled).toBeFalsy();
    const custom = (described.body.links.actions as { href: string; parameters?: unknown[] }[]).find((a) => a.parameters);
    expect(custom?.href).toBe(`/api/actions/offers/${offer}?amount={amount}`);
    const { signature, next } = await signAndSend(custom!.href.replace("{amount}", "5"), wallet);
    expect(await balance(s, token)).toBe(45n * UNIT);

    // The RPC indexer sees it: under the wallet, in the offer's counts and fills, in the book.
    const mine = await eventually(async () => {
      const r = await get(s, `/wallets/${wallet.publicKey.toBase58()}/positions`);
      expect(r.status, r.text).toBe(200);
      expect((r.body.offers as { address: string }[]).map((o) => o.address)).toEqual([offer]);
      return r.body;
    });
    expect(mine.offers[0]).toMatchObject({ address: offer, takerFilledMicros: "5000000", positionCount: 1 });
    expect((await get(s, `/${offer}`)).body).toMatchObject({
      fillCount: 1,
      positionCount: 1,
      remainingTakerMicros: "5000000",
      creatorAllocatedMicros: "4000000",
    });
    const book = await get(s, `/contracts/${c.toBase58()}/book`);
    expect(book.status).toBe(200);
    expect(JSON.stringify(book.body)).toContain("5000000"); // the level shows what is left after the wallet's take
    const done = await action(next, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ account: wallet.publicKey.toBase58(), signature }),
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);

    // Past the cutoff the taker's side wins; the worker pays the settlement table's amount to the wallet's own token account.
    console.log(`the take was indexed ${cutoffAt - (await s.chain.gateway.now())} s before the cutoff`);
    await eventually(async () => expect(await s.chain.gateway.now()).toBeGreaterThan(cutoffAt), 60_000, 1_000);
    await s.admin.resolveContract(c, "sideB");
    await eventually(async () =>
      expect((await s.db.selectFrom("contracts").select("status").where("address", "=", c.toBase58()).executeTakeFirstOrThrow()).status).toBe("Resolved"),
    );
    const feeBps = (await get(s, "/contracts")).body.feeBps as number;
    const [creatorGets, takerGets, fee] = payouts(false, feeBps, 4n * UNIT, 5n * UNIT);
    await eventually(
      async () => {
        const r = await s.worker.drain();
        expect(r.errors).toEqual([]);
        expect(await balance(s, token)).toBe(45n * UNIT + takerGets);
      },
      60_000,
      1_000,
    );
    expect(creatorGets).toBe(0n);
    expect(await balance(s, s.chain.treasury)).toBe(fee);
    await eventually(async () =>
      expect((await get(s, `/wallets/${wallet.publicKey.toBase58()}/positions`)).body.offers[0]).toMatchObject({ address: offer, status: "Settled" }),
    );
  }, 240_000);

  it("fund-wallet, GET the poll's action, POST account, outcome and amount, sign and send; indexed, voted on by everyone, distributed to the wallet's token account", async () => {
    const wallet = Keypair.generate();
    const address = wallet.publicKey.toBase58();
    const funded = await admin("fund-wallet", address, "50000000");
    const token = getAssociatedTokenAddressSync(s.chain.mint, wallet.publicKey, true);
    expect(funded.tokenAccount).toBe(token.toBase58());
    const other = await makeUser(s, 100n * UNIT);
    const ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });

    // Closes 10 s ahead: time for the wallet's pick (indexed 13 of 15 s before the close at a load
    // average of 30), then the close comes by itself.
    const closesAt = (await s.chain.gateway.now()) + 10n;
    const pool = await ops.create(creator.name, { question: "Does the action pick land?", labels: ["Yes", "No"], closesAt });
    const slug = `action-pick-${randomBytes(4).toString("hex")}`;
    await upsertPoolCatalog(s.db, { pool: pool.toBase58(), slug });
    await ops.pick(other.name, pool, 1, 3n * UNIT);

    const described = await eventually(async () => {
      const r = await action(`/api/actions/polls/${slug}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.disabled).toBeFalsy();
      return r;
    });
    const pick = (described.body.links.actions as { href: string; parameters?: unknown[] }[]).find((a) => a.parameters);
    expect(pick?.href).toBe(`/api/actions/polls/${slug}?outcome={outcome}&amount={amount}`);
    const { signature, next } = await signAndSend(pick!.href.replace("{outcome}", "0").replace("{amount}", "5"), wallet);
    const connection = validator.connection();
    expect(await balance(s, token)).toBe(45n * UNIT);

    // Indexed under the wallet: the public REST read and GraphQL's walletPicks.
    await eventually(async () => {
      const r = await get(s, `/wallets/${address}/positions`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.picks).toEqual([expect.objectContaining({ poolAddress: pool.toBase58(), totalMicros: "5000000", settled: false })]);
    });
    const picked = await gql(s, "query($w: Address!) { walletPicks(wallet: $w) { poolAddress totalMicros settled } }", { w: address });
    expect(picked.body.errors).toBeUndefined();
    expect(picked.body.data.walletPicks).toEqual([{ poolAddress: pool.toBase58(), totalMicros: "5000000", settled: false }]);
    const done = await action(next, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ account: address, signature }),
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.links.next.action.title).toBe("Picked");

    console.log(`the pick was indexed ${closesAt - (await s.chain.gateway.now())} s before the pool closed`);
    // Closed: the creator proposes "Yes"; everyone votes (the wallet signs its own vote), so the
    // day-long dispute window ends now and the worker resolves and distributes.
    await eventually(async () => expect(await s.chain.gateway.now()).toBeGreaterThanOrEqual(closesAt), 60_000, 1_000);
    await ops.propose(creator.name, pool, 0);
    await ops.vote(other.name, pool, 0);
    const vote = new Transaction().add(await s.chain.pools.castVote({ voter: wallet.publicKey, pool, outcome: 0 }));
    await sendAndConfirmTransaction(connection, vote, [wallet], { commitment: "confirmed" });
    const feeBps = (await ops.read(pool)).feeBps;
    const [payout, fee] = pickPayout({ pot: 8n * UNIT, winnerTotal: 5n * UNIT, feeBps }, { stakeOnWinner: 5n * UNIT, total: 5n * UNIT });
    expect(fee).toBeGreaterThan(0n);
    await eventually(
      async () => {
        const r = await s.worker.drain();
        expect(r.errors).toEqual([]);
        expect((await ops.read(pool)).state).toBe("DISTRIBUTED");
      },
      90_000,
      1_000,
    );
    expect(await balance(s, token)).toBe(45n * UNIT + payout);
    expect(await balance(s, other.user.tokenAccount)).toBe(97n * UNIT);
    await eventually(async () =>
      expect((await get(s, `/wallets/${address}/positions`)).body.picks[0]).toMatchObject({
        poolAddress: pool.toBase58(),
        state: "DISTRIBUTED",
        settled: true,
      }),
    );
  }, 240_000);
});
