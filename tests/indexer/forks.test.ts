/**
 * The writer's side of forks (indexer/store/writer.ts, indexer/sources/rpc.ts "Forks"), on both
 * stores, with the transactions of a real program run (bankrun):
 * - a live delivery names the bank of another fork: the same transaction read back from history
 *   (TxEvent.fromHistory) replaces its row (slot and time are the chain's); a live re-delivery
 *   never does;
 * - a history row of another transaction under the same key does not replace the stored one (the
 *   first row of a key stays, as before);
 * - a retracted transaction's rows are deleted and its offer, taker and position announced as
 *   changed, after which the
 *   chain's transaction under the same key is inserted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestChain } from "../../harness/chain";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { decodeEvents } from "../../indexer/decode";
import { openStore, type Store } from "../../indexer/store/db";
import { StoreWriter } from "../../indexer/store/writer";
import type { ChangeSet } from "../../indexer/changes";
import type { Batch, TxEvent } from "../../indexer/sources/types";
import { recordBatches } from "./attach";
import { ENGINES, freshStore, type StoreTarget } from "./stores";

let batches: Batch[] = [];
let take: TxEvent;
beforeAll(async () => {
  const chain = await TestChain.start();
  const recorded = await recordBatches(chain);
  const source = recorded.source;
  batches = recorded.batches;
  const w = await OffersWorld.create({ chain });
  const [creator, taker] = [await w.user(), await w.user()];
  const contract = await w.contract({ cutoffIn: 3_600n, deadlineAfterCutoff: 600n });
  const { offer } = await w.createOffer(creator, contract, { total: 10n * UNIT, target: 20n * UNIT });
  expect((await w.take(taker, offer, 2n * UNIT)).error).toBeNull();
  await source.drain();
  take = batches.flatMap((b) => b.transactions).find((t) => decodeEvents([t]).fills.length === 1)!;
  expect(take).toBeDefined();
});

const otherSignature = (sig: string) => (sig[0] === "1" ? "2" : "1") + sig.slice(1);

describe.each(ENGINES)("forks on %s", (engine) => {
  const targets: StoreTarget[] = [];
  const stores: Store[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const t of targets) await t.drop();
  });

  async function writer() {
    const t = freshStore(engine, "fork");
    targets.push(t);
    const store = await openStore(t.url);
    stores.push(store);
    const w = await StoreWriter.open(store, "t");
    // Everything before the take, as delivered.
    for (const b of batches) await w.apply({ ...b, transactions: b.transactions.filter((x) => x.signature !== take.signature) });
    const fill = () => store.db.selectFrom("fills").select(["signature", "slot"]).executeTakeFirst();
    return { store, w, fill };
  }
  const batch = (t: TxEvent): Batch => ({ slot: t.slot, writeVersion: 0, accounts: [], transactions: [t], cursor: "" });

  it("history replaces a live row of the same transaction at another slot; live never does", async () => {
    const { w, fill } = await writer();
    await w.apply(batch({ ...take, slot: take.slot - 1 }));
    expect(await fill()).toEqual({ signature: take.signature, slot: take.slot - 1 });
    await w.apply(batch({ ...take, fromHistory: true }));
    expect(await fill()).toEqual({ signature: take.signature, slot: take.slot });
    // A late live notification of the other bank changes nothing; history again neither.
    await w.apply(batch({ ...take, slot: take.slot - 1 }));
    await w.apply(batch({ ...take, fromHistory: true }));
    expect(await fill()).toEqual({ signature: take.signature, slot: take.slot });
  });

  it("a history row of another transaction under the same key leaves the stored row", async () => {
    const { w, fill } = await writer();
    await w.apply(batch(take));
    await w.apply(batch({ ...take, signature: otherSignature(take.signature), slot: take.slot + 5, fromHistory: true }));
    expect(await fill()).toEqual({ signature: take.signature, slot: take.slot });
  });

  it("a retracted transaction's rows go, its offer, taker and position are announced, and the chain's row can take the key", async () => {
    const { w, fill } = await writer();
    const changes: ChangeSet[] = [];
    w.onApplied((c) => changes.push(c));
    const ghost = { ...take, signature: otherSignature(take.signature), slot: take.slot - 1 };
    await w.apply(batch(ghost));
    await w.apply(batch({ ...take, fromHistory: true }));
    // The ghost holds the key: the chain's row waits for the retraction.
    expect(await fill()).toEqual({ signature: ghost.signature, slot: ghost.slot });
    changes.length = 0;
    await w.apply(batch({ signature: ghost.signature, slot: ghost.slot, writeVersion: 0, err: null, logs: [], retracted: true }));
    expect(await fill()).toBeUndefined();
    const f = decodeEvents([take]).fills[0];
    expect(changes.map((c) => [c.offers, c.wallets, c.positions])).toEqual([[[f.offer], [f.taker], [f.position]]]);
    await w.apply(batch({ ...take, fromHistory: true }));
    expect(await fill()).toEqual({ signature: take.signature, slot: take.slot });
  });

  it("a retraction and the chain's row in one batch: the row is replaced in one transaction", async () => {
    const { w, fill } = await writer();
    const ghost = { ...take, signature: otherSignature(take.signature), slot: take.slot - 1 };
    await w.apply(batch(ghost));
    await w.apply({
      ...batch(take),
      transactions: [
        { signature: ghost.signature, slot: ghost.slot, writeVersion: 0, err: null, logs: [], retracted: true },
        { ...take, fromHistory: true },
      ],
    });
    expect(await fill()).toEqual({ signature: take.signature, slot: take.slot });
  });
});
