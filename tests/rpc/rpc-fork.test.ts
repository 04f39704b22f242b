/**
 * The RPC source against forks (indexer/sources/rpc.ts, "Forks"), on a real solana-test-validator
 * and SQLite store. A validator can run one transaction in banks of two forks and notify the one
 * that is later abandoned: the roles suite (tests/rpc/roles.test.ts) once ended with a settlement
 * recorded live at slot 170 that the chain's history has at 171 (its time one second later). A
 * single validator cannot be made to fork on demand, so the notification the source receives is
 * altered on its way in (the websocket callback of a real Connection); chain, program, store and
 * every RPC read stay real:
 * - a take notified with the slot before its own: the row ends with the chain's slot;
 * - a take notified under a signature the chain never had (the transaction of a fork that never
 *   landed), its own notification lost: the ghost's row is retracted and the chain's take indexed.
 * Both stores end equal to a backfill from the chain. Without the fork handling the first row
 * keeps the wrong slot and the ghost's row stays.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connection, Keypair, type Context, type Logs } from "@solana/web3.js";
import { utils } from "@coral-xyz/anchor";
import { TestChain } from "../../harness/chain";
import { RpcEngine } from "../../harness/rpc-engine";
import { TestValidator, validatorBinary } from "../../harness/validator";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { RpcSource } from "../../indexer/sources/rpc";
import { StoreWriter } from "../../indexer/store/writer";
import { openStore, type Store } from "../../indexer/store/db";
import { storeChecksum, tableDiff } from "../../indexer/store/checksum";
import { backfill, CHAIN_TABLES } from "../../indexer/backfill";
import { OFFERS_PROGRAM, POOLS_PROGRAM } from "../../indexer/decode";
import { freshStore, type StoreTarget } from "../indexer/stores";
import { eventually } from "../support/wait";

const binary = validatorBinary();

/** What the source's logs callback receives instead of one notification (none: dropped). */
type Alter = (l: Logs, ctx: Context) => [Logs, Context][];

describe.skipIf(!binary)("RPC source and forks", () => {
  let validator: TestValidator;
  const targets: StoreTarget[] = [];
  const stores: Store[] = [];
  const sources: RpcSource[] = [];
  let alter: Alter | null = null;
  /** The next reads of a transaction that fail (a node refusing): a retraction must survive them. */
  let failReads = 0;
  const retracted: string[] = [];

  beforeAll(async () => {
    validator = await TestValidator.start();
  }, 240_000);

  afterAll(async () => {
    for (const s of sources) await s.stop().catch(() => undefined);
    for (const s of stores) await s.close().catch(() => undefined);
    await validator?.stop();
    for (const t of targets) await t.drop();
  });

  async function indexer(tag: string) {
    const t = freshStore("sqlite", tag);
    targets.push(t);
    const store = await openStore(t.url);
    stores.push(store);
    const writer = await StoreWriter.open(store, tag);
    return { store, writer, source: await startSource(writer, tag) };
  }

  /** A source from the writer's checkpoint, its notifications passing through `alter`. */
  async function startSource(writer: StoreWriter, tag: string) {
    const connection = validator.connection("confirmed");
    const getTransaction = connection.getTransaction.bind(connection);
    connection.getTransaction = ((...args: Parameters<Connection["getTransaction"]>) => {
      if (failReads > 0) {
        failReads--;
        return Promise.reject(new Error("getTransaction: refused by the test"));
      }
      return getTransaction(...args);
    }) as Connection["getTransaction"];
    const onLogs = connection.onLogs.bind(connection);
    connection.onLogs = ((filter, callback, commitment) =>
      onLogs(
        filter,
        (l, ctx) => {
          for (const [x, c] of alter ? alter(l, ctx) : [[l, ctx] as const]) callback(x, c);
        },
        commitment,
      )) as Connection["onLogs"];
    const source = new RpcSource({
      url: validator.rpcUrl,
      connection,
      programs: [OFFERS_PROGRAM, POOLS_PROGRAM],
      name: tag,
      reconcileMs: 0,
      gapCheckMs: 300,
      orphanSlots: 25,
      flushMs: 50,
      onRetract: (sigs) => retracted.push(...sigs),
    });
    sources.push(source);
    await source.start(await writer.checkpoint(), (b) => writer.apply(b));
    return source;
  }

  async function equalsBackfill(store: Store) {
    const t = freshStore("sqlite", "fork-bf");
    targets.push(t);
    const bf = await openStore(t.url);
    stores.push(bf);
    await backfill(bf, new RpcSource({ url: validator.rpcUrl, wsUrl: validator.wsUrl, programs: [OFFERS_PROGRAM, POOLS_PROGRAM] }));
    const diff = await tableDiff(
      store.db,
      bf.db,
      CHAIN_TABLES.filter((t) => t !== "checkpoints"),
      "content",
    );
    expect(diff).toEqual([]);
    expect(await storeChecksum(store.db, "content")).toBe(await storeChecksum(bf.db, "content"));
  }

  it("a take notified at another bank's slot, and one under a signature the chain never had, end as the chain has them", async () => {
    const offers = await OffersWorld.create({ chain: TestChain.over(new RpcEngine(validator.connection("confirmed"), validator.payer)) });
    const [creator, t1, t2, t3] = [await offers.user(), await offers.user(), await offers.user(), await offers.user()];
    const contract = await offers.contract({ cutoffIn: 3_600n, deadlineAfterCutoff: 600n });
    const { r, offer } = await offers.createOffer(creator, contract, { total: 10n * UNIT, target: 20n * UNIT });
    expect(r.error).toBeNull();
    const { store, writer, source } = await indexer("fork");
    const fill = (revision: number) =>
      store.db
        .selectFrom("fills")
        .select(["signature", "slot", "taker"])
        .where("offer", "=", offer.toBase58())
        .where("revision", "=", revision)
        .executeTakeFirst();
    const revision = Number((await offers.offer(offer)).revision);
    const hasEvent = (l: Logs) => l.logs.some((x) => x.startsWith("Program data: "));

    // 1. The other bank's slot; the first read after the rewind fails (the retraction stays pending).
    alter = (l, ctx) => (hasEvent(l) ? [[l, { slot: ctx.slot - 1 }]] : [[l, ctx]]);
    const a = await offers.take(t1, offer, 2n * UNIT);
    expect(a.error).toBeNull();
    await eventually(async () => expect((await fill(revision + 1))?.slot).toBeDefined(), 30_000, 20);
    failReads = 1;
    const aSlot = (await validator.connection("confirmed").getTransaction(a.signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 }))!.slot;
    let at = performance.now();
    await eventually(
      async () => expect(await fill(revision + 1)).toEqual({ signature: a.signature, slot: aSlot, taker: t1.key.publicKey.toBase58() }),
      30_000,
      50,
    );
    console.log(`forks: a take notified at the slot before its own has the chain's slot ${(performance.now() - at).toFixed(0)} ms after it confirmed`);

    // 2. Notified twice: first at the slot before (the fork's bank), then at its own.
    alter = (l, ctx) =>
      hasEvent(l)
        ? [
            [l, { slot: ctx.slot - 1 }],
            [l, ctx],
          ]
        : [[l, ctx]];
    const c = await offers.take(t3, offer, 1n * UNIT);
    expect(c.error).toBeNull();
    const cSlot = (await validator.connection("confirmed").getTransaction(c.signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 }))!.slot;
    at = performance.now();
    await eventually(
      async () => expect(await fill(revision + 2)).toEqual({ signature: c.signature, slot: cSlot, taker: t3.key.publicKey.toBase58() }),
      30_000,
      50,
    );
    console.log(
      `forks: a take notified at the slot before its own and then at its own has the chain's slot ${(performance.now() - at).toFixed(0)} ms after it confirmed`,
    );

    // 3. A ghost: the take's logs under a signature no bank of the chain has; its own lost. The
    // source restarts from its checkpoint while the ghost waits: the checkpoint remembers it.
    const ghost = utils.bytes.bs58.encode(Keypair.generate().secretKey);
    alter = (l, ctx) => (hasEvent(l) ? [[{ ...l, signature: ghost }, ctx]] : [[l, ctx]]);
    const b = await offers.take(t2, offer, 3n * UNIT);
    expect(b.error).toBeNull();
    // The ghost's row comes first (live), the chain's take cannot replace it (another transaction).
    await eventually(async () => expect((await fill(revision + 3))?.signature).toBe(ghost), 30_000, 50);
    alter = null;
    at = performance.now();
    // Waiting longer than one gap check (300 ms): kept in the checkpoint's cursor.
    await eventually(async () => expect(JSON.parse((await writer.checkpoint())!.cursor)._unconfirmed).toEqual([[ghost, expect.any(Number)]]), 10_000, 50);
    await source.stop();
    await startSource(writer, "fork");
    await eventually(async () => expect(await fill(revision + 3)).toMatchObject({ signature: b.signature, taker: t2.key.publicKey.toBase58() }), 60_000, 100);
    console.log(
      `forks: a ghost's row (orphanSlots 25, a restart between) retracted and the chain's take indexed ${(performance.now() - at).toFixed(0)} ms after the ghost was stored`,
    );
    expect(retracted).toEqual([a.signature, c.signature, ghost]);
    // The refused read happened (and was retried).
    expect(failReads).toBe(0);

    await equalsBackfill(store);
  }, 180_000);
});
