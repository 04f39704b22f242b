/**
 * Any wallet's pool picks over GraphQL (its offers: `walletPositions` in read-schema.ts; REST:
 * GET /wallets/<address>/positions): picks are public on chain, and a taker who keeps their own
 * keys has no token for `mine`.
 */
import type { ApiBuilder } from "./builder";
import type { ReadDeps, ReadTypes } from "./read-types";
import type { WalletPick } from "../../service/read/wallet-picks";

export function addWalletQueries(builder: ApiBuilder, d: ReadDeps, types: ReadTypes, guard: <T>(fn: () => Promise<T>) => Promise<T>) {
  const WalletPickT = builder.objectRef<WalletPick>("WalletPick").implement({
    description: "A wallet's picks on one pool, all outcomes together.",
    fields: (t) => ({
      poolAddress: t.exposeString("poolAddress"),
      participantAddress: t.exposeString("participantAddress"),
      question: t.exposeString("question"),
      state: t.expose("state", { type: types.enums.PoolState }),
      totalMicros: t.exposeString("totalMicros", { description: "Micro-units the wallet has on the pool." }),
      settled: t.exposeBoolean("settled", { description: "Paid, marked a loser, or refunded." }),
      winningOutcome: t.exposeInt("winningOutcome", { nullable: true }),
    }),
  });
  builder.queryFields((t) => ({
    walletPicks: t.field({
      type: [WalletPickT],
      args: { wallet: t.arg({ type: "Address", required: true }) },
      description: "Any wallet's pool picks, newest first (at most 100).",
      resolve: (_r, a) => guard(() => d.read.walletPicks(a.wallet)),
    }),
  }));
}
