/**
 * Claim credits in the store (indexer/decode.ts, table claim_credits), on both stores, from a real
 * program run (bankrun): the creator's token account is frozen, so closing its offer credits the
 * unmatched refund to its Claim. The credit is stored with the event's exact amounts, re-applying
 * the transaction (live again, or read back from history) adds no row, and a fork's retraction of
 * the transaction deletes it like the transaction's other rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestChain } from "../../harness/chain";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { decodeEvents, OFFERS_PROGRAM } from "../../indexer/decode";
import { openStore, type Store } from "../../indexer/store/db";
import { StoreWriter } from "../../indexer/store/writer";
import type { Batch, TxEvent } from "../../indexer/sources/types";
import { recordBatches } from "./attach";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

let batches: Batch[] = [];
let credit: TxEvent;
let owner = "";
beforeAll(async () => {
  const chain = await TestChain.start();
  const recorded = await recordBatches(chain);
  batches = recorded.batches;
  const w = await OffersWorld.create({ chain, freezableMint: true });
  const [creator, taker] = [await w.user(), await w.user()];
  owner = creator.key.publicKey.toBase58();
  const contract = await w.contract({ cutoffIn: 3_600n, deadlineAfterCutoff: 600n });
  const { offer } = await w.createOffer(creator, contract, { side: "sideA", total: 8n * UNIT, target: 10n * UNIT });
  expect((await w.take(taker, offer, 5n * UNIT)).error).toBeNull();
  await w.mint.freeze(creator.token);
  expect((await w.close(creator.key, offer)).error).toBeNull();
  await recorded.source.drain();
  credit = batches.flatMap((b) => b.transactions).find((t) => decodeEvents([t]).claimCredits.length === 1)!;
  expect(credit).toBeDefined();
});

describe.each(ENGINES)("claim credits on %s", (engine) => {
  const targets: StoreTarget[] = [];
  const stores: Store[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const t of targets) await t.drop();
  });

  it("a credit is stored once with the event's amounts; a retraction of its transaction deletes it", async () => {
    const t = freshStore(engine, "claims");
    targets.push(t);
    const store = await openStore(t.url);
    stores.push(store);
    const w = await StoreWriter.open(store, "t");
    for (const b of batches) await w.apply(b);
    const rows = () => store.db.selectFrom("claim_credits").selectAll().execute();
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
    const stored = await rows();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject(expected);
    expect(Number(stored[0].credited_at)).toBeGreaterThan(0);

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
