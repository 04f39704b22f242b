/**
 * A contract's price history in GraphQL (issue 23): `Contract.history(side, interval, points)`,
 * next to `book`, answering what GET /contracts/{contractAddress}/history answers
 * (service/read/history.ts).
 */
import type { ContractHistory, HistoryPoint } from "../../service/read/history";
import { contractHistory } from "../../service/read/history";
import { historyParams } from "../../service/read/history-params";
import type { ApiBuilder } from "./builder";
import type { ReadDeps, ReadTypes } from "./read-types";

export function addHistory(builder: ApiBuilder, d: ReadDeps, types: ReadTypes, guard: <T>(fn: () => Promise<T>) => Promise<T>) {
  const { OddsT, ContractT, enums } = types;
  const PointT = builder.objectRef<HistoryPoint>("HistoryPoint").implement({
    description: "One interval of a contract's history for one taker side.",
    fields: (t) => ({
      start: t.expose("start", { type: "DateTime" }),
      end: t.expose("end", { type: "DateTime", description: "Exclusive." }),
      volumeMicros: t.expose("volumeMicros", { type: "Amount", description: "Sum of the takers' stakes matched in the interval." }),
      fillCount: t.exposeInt("fillCount"),
      volumeWeightedOdds: t.expose("volumeWeightedOdds", {
        type: OddsT,
        nullable: true,
        description: "(Σ take + Σ creator matched) : Σ take over the interval's fills; null without fills.",
      }),
      lastOdds: t.expose("lastOdds", { type: OddsT, nullable: true, description: "Taker odds of the interval's last fill; null without fills." }),
      bestOdds: t.expose("bestOdds", {
        type: OddsT,
        nullable: true,
        description: "Best taker odds of the book in the interval's last second; null when nothing could be taken.",
      }),
    }),
  });
  const HistoryT = builder.objectRef<ContractHistory>("ContractHistory").implement({
    description: "A contract's price history for takers backing one outcome, per interval, oldest first.",
    fields: (t) => ({
      contract: t.expose("contract", { type: "Address" }),
      side: t.expose("side", { type: enums.Side, description: "The outcome the takers backed." }),
      interval: t.exposeString("interval", { description: "1m, 5m, 1h or 1d." }),
      intervalSeconds: t.exposeInt("intervalSeconds"),
      points: t.expose("points", { type: [PointT], description: "Oldest first, every interval of the window present." }),
    }),
  });
  builder.objectField(ContractT, "history", (t) =>
    t.field({
      type: HistoryT,
      args: {
        side: t.arg({ type: enums.Side, required: true, description: "The outcome the takers backed." }),
        interval: t.arg.string({ required: true, description: "1m, 5m, 1h or 1d (intervals aligned to UTC)." }),
        points: t.arg.int({ description: "Intervals returned, 1 to 500 (default 60), up to now or the cutoff once passed." }),
      },
      resolve: (c, a) =>
        guard(async () => {
          const p = historyParams(c.address, {
            side: a.side,
            interval: a.interval,
            points: a.points === null || a.points === undefined ? null : String(a.points),
          });
          return contractHistory(d.read, p.contract, p.side, p.interval, p.points);
        }),
    }),
  );
}
