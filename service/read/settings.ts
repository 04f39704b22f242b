/**
 * The offers program's settings (the Config row) as the API shows them, read at most every
 * `ttlMs` (about 30 s, like the spec's settings refresh) and dropped when a change names the Config.
 */
import type { Kysely } from "kysely";
import type { ConfigTable, Database } from "../../indexer";
import { ApiError } from "../api-error";
import type { Settings } from "./read-model";

export class SettingsReader {
  /** `row`: the config as a settled promise, handed to every read until it expires (no promise made per read). */
  private cached: { at: number; config: ConfigTable | null; value: Settings | null; row: Promise<ConfigTable | null> } | null = null;
  /**
   * The read under way, shared: when the row expires (or is dropped) under load, the requests
   * already in flight would otherwise each read it again (issue 21's distinct-query load).
   */
  private reading: Promise<ConfigTable | null> | null = null;
  /** Counts drop(): a read that began before the latest one is not kept. */
  private drops = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ttlMs: number,
  ) {}

  /** The config row (null before the program is configured). */
  configRow(): Promise<ConfigTable | null> {
    if (this.cached && Date.now() - this.cached.at <= this.ttlMs) return this.cached.row;
    return (this.reading ??= this.read());
  }

  private async read(): Promise<ConfigTable | null> {
    const drops = this.drops;
    try {
      const config = (await this.db.selectFrom("config").selectAll().where("deleted", "=", 0).executeTakeFirst()) ?? null;
      // Kept unless dropped meanwhile (a change named the Config after this read began).
      if (this.drops === drops) this.cached = { at: Date.now(), config, value: config ? toSettings(config) : null, row: Promise.resolve(config) };
      return config;
    } finally {
      if (this.drops === drops) this.reading = null;
    }
  }

  async settings(): Promise<Settings> {
    const config = await this.configRow();
    const v = this.cached?.config === config ? this.cached.value : config && toSettings(config);
    if (!v) throw new ApiError(503, "offers are not configured yet; retry later");
    return v;
  }

  drop(): void {
    this.cached = null;
    // The next caller reads again rather than joining a read that began before the change.
    this.reading = null;
    this.drops++;
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
