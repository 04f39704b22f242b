/** Wires the indexer to a TestChain: BankrunSource fed by TestChain's observer hook, writing to a store. */
import { TestChain } from "../../harness/chain";
import { BankrunSource } from "../../indexer/sources/bankrun";
import { StoreWriter } from "../../indexer/store/writer";
import { openStore, type Store } from "../../indexer/store/db";
import { OFFERS_PROGRAM } from "../../indexer/decode";
import type { Batch } from "../../indexer/sources/types";

export interface Attached {
  chain: TestChain;
  source: BankrunSource;
  store: Store;
  writer: StoreWriter;
  detach(): void;
}

export function chainReader(chain: TestChain) {
  return { getAccount: (a: Parameters<TestChain["account"]>[0]) => chain.account(a), getSlot: () => chain.slot() };
}

export async function attachIndexer(chain: TestChain, url: string, programs: string[] = [OFFERS_PROGRAM]): Promise<Attached> {
  const store = await openStore(url);
  const writer = await StoreWriter.open(store, "bankrun");
  const source = new BankrunSource(chainReader(chain), { programs });
  await source.start(await writer.checkpoint(), (b) => writer.apply(b));
  const detach = chain.observe((tx) => source.onTransaction(tx));
  return { chain, source, store, writer, detach };
}

/**
 * A BankrunSource on the chain that keeps every batch it delivers, in order (a stream the tests
 * replay into writers); `also` sees each batch too. Drain the source before reading `batches`.
 */
export async function recordBatches(
  chain: TestChain,
  programs: string[] = [OFFERS_PROGRAM],
  also?: (b: Batch) => Promise<void>,
): Promise<{ source: BankrunSource; batches: Batch[] }> {
  const batches: Batch[] = [];
  const source = new BankrunSource(chainReader(chain), { programs });
  await source.start(null, async (b) => {
    batches.push(b);
    await also?.(b);
  });
  chain.observe((tx) => source.onTransaction(tx));
  return { source, batches };
}
