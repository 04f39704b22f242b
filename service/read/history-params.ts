/**
 * Parameters of the history endpoint (GET /contracts/{contractAddress}/history, Contract.history
 * in GraphQL), parsed strictly like the book's (./book-params.ts): `side` and `interval` are
 * required and must be one of their values, `points` an integer from 1 to 500; otherwise 400.
 */
import { z } from "zod";
import { parseWith } from "../validation";
import { ContractAddressPath } from "./book-params";
import type { Side } from "./book";
import { HISTORY_INTERVALS, HISTORY_POINTS, type HistoryInterval } from "./history";
import { intParam } from "./params";

const SIDES = ["sideA", "sideB"] as const;
const INTERVALS = Object.keys(HISTORY_INTERVALS) as HistoryInterval[];
const got = (v: unknown) => (v === undefined ? "nothing" : JSON.stringify(String(v).slice(0, 40)));

export const HistoryQuery = z.object({
  side: z
    .enum(SIDES, { error: (iss) => `side must be one of ${SIDES.join(", ")}; got ${got(iss.input)}` })
    .meta({ description: "the outcome the takers backed" }),
  interval: z
    .enum(INTERVALS as [HistoryInterval, ...HistoryInterval[]], { error: (iss) => `interval must be one of ${INTERVALS.join(", ")}; got ${got(iss.input)}` })
    .meta({ description: "length of one point, aligned to UTC" }),
  points: intParam("points", HISTORY_POINTS.default, 1, HISTORY_POINTS.max, "intervals returned, up to now (or the cutoff once passed), oldest first"),
});

export interface HistoryParams {
  contract: string;
  side: Side;
  interval: HistoryInterval;
  points: number;
}

type Query = { side?: string | null; interval?: string | null; points?: string | null };

/** The contract, side, interval and number of points of a history request, from a path segment and the raw query. */
export function historyParams(contractAddress: string, q: Query): HistoryParams {
  const contract = parseWith(ContractAddressPath, { contractAddress }).contractAddress;
  const present = Object.fromEntries(Object.entries(q).filter(([, v]) => v !== null && v !== undefined));
  const p = parseWith(HistoryQuery, present);
  return { contract, side: p.side, interval: p.interval, points: p.points ? Number(p.points) : HISTORY_POINTS.default };
}
