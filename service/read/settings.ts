/**
 * The offers program's settings (the Config row) as the API shows them, read at most every
 * `ttlMs` (about 30 s, like the spec's settings refresh) and dropped when a change names the Config.
 */
import type { Kysely } from "kysely";
import type { ConfigTable, Database } from "../../indexer";
import { ApiError } from "../api-error";
import type { Settings } from "./read-model";

export class SettingsReader {
  private cached: { at: number; config: ConfigTable | null; value: Settings | null } | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ttlMs: number,
  ) {}

  /** The config row (null before the program is configured). */
  async configRow(): Promise<ConfigTable | null> {
    if (!this.cached || Date.now() - this.cached.at > this.ttlMs) {
      const config = (await this.db.selectFrom("config").selectAll().where("deleted", "=", 0).executeTakeFirst()) ?? null;
      this.cached = { at: Date.now(), config, value: config ? toSettings(config) : null };
    }
    return this.cached.config;
  }

  async settings(): Promise<Settings> {
    await this.configRow();
    const v = this.cached?.value;
    if (!v) throw new ApiError(503, "offers are not configured yet; retry later");
    return v;
  }

  drop(): void {
    this.cached = null;
  }
}

function toSettings(c: ConfigTable): Settings {
  return {
    feeBps: Number(c.fee_bps),
    offersEnabled: Number(c.offers_enabled) === 1,
    limits: {
      minimumCreatorMicros: c.minimum_creator_micros,
      minimumTakeMicros: c.minimum_take_micros,
      maximumWagerMicros: c.maximum_wager_micros,
      warningRatioNumerator: c.warning_ratio_numerator,
      warningRatioDenominator: c.warning_ratio_denominator,
      minimumOddsNumerator: c.minimum_odds_numerator,
      minimumOddsDenominator: c.minimum_odds_denominator,
      maximumOddsNumerator: c.maximum_odds_numerator,
      maximumOddsDenominator: c.maximum_odds_denominator,
    },
  };
}
