/**
 * Claim credits in the store (indexer/decode.ts, table claim_credits), on both stores, from real
 * program runs (bankrun): the offer creator's token account is frozen, so closing its offer credits
 * the unmatched refund to its Claim; a pool participant's token account is closed, so its refund
 * of the canceled pool goes to its Claim. Each credit is stored with the event's exact amounts, re-applying
 * the transaction (live again, or read back from history) adds no row, and a fork's retraction of
 * the transaction deletes it like the transaction's other rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestChain } from "../../harness/chain";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { PoolsWorld } from "../../harness/pools-world";
import { OFFERS_PROGRAM_ID } from "../../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../../idl/client/pools";
import { decodeEvents, OFFERS_PROGRAM, POOLS_PROGRAM } from "../../indexer/decode";
import { openStore, type Store } from "../../indexer/store/db";
import { StoreWriter } from "../../indexer/store/writer";
import type { Batch, TxEvent } from "../../indexer/sources/types";
import { recordBatches } from "./attach";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

let batches: Batch[] = [];
let credit: TxEvent;
let owner = "";
let participant = "";
beforeAll(async () => {
  const chain = await TestChain.start([
    { name: "offers", programId: OFFERS_PROGRAM_ID },
    { name: "pools", programId: POOLS_PROGRAM_ID },
  ]);
  const recorded = await recordBatches(chain, [OFFERS_PROGRAM, POOLS_PROGRAM]);
  batches = recorded.batches;
  const w = await OffersWorld.create({ chain, freezableMint: true });
  const [creator, taker] = [await w.user(), await w.user()];
  owner = creator.key.publicKey.toBase58();
  const contract = await w.contract({ cutoffIn: 3_600n, deadlineAfterCutoff: 600n });
  const { offer } = await w.createOffer(creator, contract, { side: "sideA", total: 8n * UNIT, target: 10n * UNIT });
  expect((await w.take(taker, offer, 5n * UNIT)).error).toBeNull();
  await w.mint.freeze(creator.token);
  expect((await w.close(creator.key, offer)).error).toBeNull();
  const p = await PoolsWorld.create({ chain });
  const [poolCreator, a] = [await p.user(), await p.user(3n * UNIT)];
  participant = a.key.publicKey.toBase58();
  const { pool } = await p.createPool(poolCreator, { labels: ["Yes", "No"] });
  expect((await p.pick(a, pool, 1, 3n * UNIT)).error).toBeNull();
  expect((await p.cancel(poolCreator.key, pool)).error).toBeNull();
  await p.closeTokenAccount(a);
  expect((await p.refund(pool, a.key.publicKey)).error).toBeNull();
  await recorded.source.drain();
  credit = batches.flatMap((b) => b.transactions).find((t) => decodeEvents([t]).claimCredits.some((c) => c.program === OFFERS_PROGRAM))!;
  expect(credit).toBeDefined();
});

describe.each(ENGINES)("claim credits on %s", (engine) => {
  const targets: StoreTarget[] = [];
  const stores: Store[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const t of targets) await t.drop();
  });

  it("credits of both programs are stored once with the events' amounts; a retraction of the transaction deletes its credit", async () => {
    const t = freshStore(engine, "claims");
    targets.push(t);
    const store = await openStore(t.url);
    stores.push(store);
    const w = await StoreWriter.open(store, "t");
    for (const b of batches) await w.apply(b);
    // 8 staked, 5 of 10 taken matches 4: the unmatched 4 are refunded into the new claim.
    const expected = {
      signature: credit.signature,
      program: OFFERS_PROGRAM,
      event_index: 0,
      slot: credit.slot,
      owner,
      amount_micros: String(4n * UNIT),
      total_micros: String(4n * UNIT),
    };
    const rows = () => store.db.selectFrom("claim_credits").selectAll().where("program", "=", OFFERS_PROGRAM).execute();
    const stored = await rows();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject(expected);
    expect(Number(stored[0].credited_at)).toBeGreaterThan(0);
    // The pools program's credit: the participant's whole 3 units, refunded into its new claim.
    const pools = await store.db.selectFrom("claim_credits").selectAll().where("program", "=", POOLS_PROGRAM).execute();
    expect(pools).toMatchObject([{ owner: participant, amount_micros: String(3n * UNIT), total_micros: String(3n * UNIT) }]);

    const batch = (x: TxEvent): Batch => ({ slot: x.slot, writeVersion: 0, accounts: [], transactions: [x], cursor: "" });
    await w.apply(batch(credit));
    await w.apply(batch({ ...credit, fromHistory: true }));
    expect(await rows()).toHaveLength(1);

    await w.apply(batch({ signature: credit.signature, slot: credit.slot, writeVersion: 0, err: null, logs: [], retracted: true }));
    expect(await rows()).toEqual([]);
    // The chain's transaction read back afterwards takes its key again.
    await w.apply(batch({ ...credit, fromHistory: true }));
    expect(await rows()).toMatchObject([expected]);
  });
});
