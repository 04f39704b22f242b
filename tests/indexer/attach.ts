/** Wires the indexer to a TestChain: BankrunSource fed by TestChain's observer hook, writing to a store. */
import { TestChain } from "../../harness/chain";
import { BankrunSource } from "../../indexer/sources/bankrun";
import { StoreWriter } from "../../indexer/store/writer";
import { openStore, type Store } from "../../indexer/store/db";
import { OFFERS_PROGRAM } from "../../indexer/decode";

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
