/**
 * GraphQL types of odds (issue 23): `Odds` (a reduced ratio with its decimal and implied
 * probability) and `TakerOdds` (the same with the decimal after the fee), as the read service
 * gives them (service/read/odds.ts).
 */
import type { Odds, TakerOdds } from "../../service/read/odds";
import type { ApiBuilder } from "./builder";

export function defineOddsTypes(builder: ApiBuilder) {
  const fields = {
    numerator: "Numerator of the ratio in lowest terms (decimal integer string).",
    denominator: "Denominator of the ratio in lowest terms (decimal integer string).",
    decimal: "numerator / denominator with 4 decimals, rounded down.",
  } as const;
  const OddsT = builder.objectRef<Odds>("Odds").implement({
    description: "Odds as an exact ratio: what a unit staked returns when it wins, stake included, before fee.",
    fields: (t) => ({
      numerator: t.exposeString("numerator", { description: fields.numerator }),
      denominator: t.exposeString("denominator", { description: fields.denominator }),
      decimal: t.exposeString("decimal", { description: fields.decimal }),
      impliedProbabilityBps: t.exposeInt("impliedProbabilityBps", { description: "10000 × denominator / numerator, rounded to nearest (a half up)." }),
    }),
  });
  const TakerOddsT = builder.objectRef<TakerOdds>("TakerOdds").implement({
    description: "The taker's odds (T + S) : T of an offer with creator stake S and taker target T.",
    fields: (t) => ({
      numerator: t.exposeString("numerator", { description: fields.numerator }),
      denominator: t.exposeString("denominator", { description: fields.denominator }),
      decimal: t.exposeString("decimal", { description: fields.decimal }),
      impliedProbabilityBps: t.exposeInt("impliedProbabilityBps", { description: "10000 × denominator / numerator, rounded to nearest (a half up)." }),
      decimalAfterFee: t.exposeString("decimalAfterFee", {
        description: "(T + S − fee on S at the offer's feeBps) / T with 4 decimals, rounded down: what a unit returns net of fee.",
      }),
    }),
  });
  return { OddsT, TakerOddsT };
}
