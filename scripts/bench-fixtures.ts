/**
 * What the HTTP benchmarks set up alike on a local stack: a read service of the stack's store
 * with its caches as a case asks, and a football match a day ahead to post offers on.
 */
import type { PublicKey } from "@solana/web3.js";
import type { LocalStack } from "../stack/local-stack";
import { ReadService, type ReadServiceOptions } from "../service/read/read-service";
import { writerChanges } from "../service/read/read-cache";

/** A read service on the stack's store and clock, its caches set by `caches` (e.g. `{ anonymousTtlMs: 0 }`: every read uncached). */
export function benchReads(
  s: Pick<LocalStack, "db" | "chain" | "writer">,
  caches: Pick<ReadServiceOptions, "anonymousTtlMs" | "viewerTtlMs"> = {},
): ReadService {
  return new ReadService({
    db: s.db,
    now: async () => Number(await s.chain.gateway.now()),
    publicBaseUrl: "https://offers.example",
    changes: writerChanges(s.writer),
    ...caches,
  });
}

/** A football match kicking off a day from the chain's clock (the offers' cutoff), resolvable a day later. */
export async function benchMatch(s: Pick<LocalStack, "admin" | "chain">, title: string, competition = "League"): Promise<PublicKey> {
  const now = await s.chain.gateway.now();
  return s.admin.createContract({
    title,
    event: "Home vs Away",
    sport: "football",
    competition,
    startsAt: Number(now + 86_400n),
    cutoffAt: now + 86_400n,
    resolutionDeadline: now + 172_800n,
    sideALabel: "Home",
    sideBLabel: "Away",
  });
}
