/**
 * The one configuration (stack/config): each kind of value accepts what the service guide
 * documents and refuses the rest; every setting (flag and variable) is listed in the guide's
 * "Configuration"; a variable goes through the same schema as its flag.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import {
  LIVE_SETTINGS,
  REQUEST_SETTINGS,
  SETTINGS,
  addSettings,
  liveLimitsOf,
  requestLimitsOf,
  settingsOf,
  type SettingName,
} from "../../stack/config/settings";
import { DEFAULT_ACTION_LIMITS, DEFAULT_REQUEST_LIMITS } from "../../service/rate/request-limits";
import { LIVE_LIMITS } from "../../service/read/live-updates";
import {
  amountValue,
  bpsValue,
  booleanValue,
  choicesValue,
  durationValue,
  enumValue,
  listValue,
  positiveValue,
  hostValue,
  lifetimeValue,
  portValue,
} from "../../stack/config/values";

const ok = <T>(schema: { safeParse(v: string): { success: boolean; data?: T } }, v: string) => {
  const r = schema.safeParse(v);
  expect(r.success, `${v} should be accepted`).toBe(true);
  return r.data as T;
};
const refused = (schema: { safeParse(v: string): { success: boolean } }, ...vs: string[]) => {
  for (const v of vs) expect(schema.safeParse(v).success, `${JSON.stringify(v)} should be refused`).toBe(false);
};

describe("value schemas", () => {
  it("booleans: the documented spellings in any case, nothing else", () => {
    for (const v of ["true", "TRUE", "1", "yes", "Yes", "on", "ON"]) expect(ok(booleanValue, v)).toBe(true);
    for (const v of ["false", "False", "0", "no", "NO", "off"]) expect(ok(booleanValue, v)).toBe(false);
    refused(booleanValue, "", "maybe", "2", "y", "enabled");
  });

  it("durations: whole seconds from a number and a unit; zero, signs, fractions and compounds refused", () => {
    expect(ok(durationValue, "90")).toBe(90);
    expect(ok(durationValue, "90s")).toBe(90);
    expect(ok(durationValue, "15m")).toBe(900);
    expect(ok(durationValue, "1h")).toBe(3_600);
    expect(ok(durationValue, "7d")).toBe(604_800);
    expect(ok(durationValue, "2w")).toBe(1_209_600);
    refused(durationValue, "0", "0s", "-10", "-5s", "1.5h", "1h30m", "1 h", "1H", "h", "", "36500000d");
  });

  it("lifetimes: a duration or never", () => {
    expect(ok(lifetimeValue, "never")).toBe("never");
    expect(ok(lifetimeValue, "30d")).toBe(2_592_000);
    refused(lifetimeValue, "0", "-5", "Never", "forever", "1x");
  });

  it("amounts are bigints of micro-units within a u64; bps within 0..10000; ports; hosts; enums exactly", () => {
    expect(ok(amountValue, "18446744073709551615")).toBe(18_446_744_073_709_551_615n);
    refused(amountValue, "0", "1.5", "-1", "1e6", "18446744073709551616", "01");
    expect(ok(bpsValue, "0")).toBe(0);
    expect(ok(bpsValue, "10000")).toBe(10_000);
    refused(bpsValue, "10%", "10.5", "10001", "-1", "");
    expect(ok(portValue, "65535")).toBe(65_535);
    refused(portValue, "0", "65536", "80a", "");
    for (const h of ["0.0.0.0", "::", "127.0.0.1", "localhost", "api.internal"]) expect(ok(hostValue, h)).toBe(h);
    refused(hostValue, "http://x", "a b", "", "x/y");
    const engine = enumValue(["bankrun", "litesvm"] as const);
    expect(ok(engine, "litesvm")).toBe("litesvm");
    refused(engine, "foo", "Bankrun", "");
  });

  it("lists of choices: known names, comma-separated, none repeated unless an order of runs; an unknown one refuses the whole list", () => {
    const cases = choicesValue(["browse", "offer", "mine"] as const);
    expect(ok(cases, "offer")).toEqual(["offer"]);
    expect(ok(cases, "mine,browse")).toEqual(["mine", "browse"]);
    refused(cases, "", "browse,", "browse,ofer", "browse,browse", "Browse");
    expect(cases.safeParse("browse,ofer").error?.issues[0].message).toBe('"ofer": expected one of browse, offer, mine');
    const levels = listValue(positiveValue);
    expect(ok(levels, "1,8")).toEqual([1, 8]);
    refused(levels, "1,0", "1,x", "8,8", "");
    // An order of runs (bench-api's --only): a name may come back, the order is kept, the rest as strict.
    const order = choicesValue(["browse", "offer", "mine"] as const, { repeats: true });
    expect(ok(order, "offer,browse,offer")).toEqual(["offer", "browse", "offer"]);
    refused(order, "", "offer,", "offer,ofer", "Offer");
  });
});

describe("settings", () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });
  const parse = (names: SettingName[], argv: string[]) => {
    const cmd = addSettings(new Command().exitOverride().configureOutput({ writeErr: () => undefined }), names);
    cmd.parse(argv, { from: "user" });
    return settingsOf(cmd, names);
  };

  it("a variable goes through its flag's schema; the flag wins over it", () => {
    process.env.TRUST_PROXY = "true";
    process.env.MAX_LAG_SLOTS = "300";
    process.env.HOST = "0.0.0.0";
    expect(parse(["trustProxy", "maxLagSlots", "host"], [])).toEqual({ trustProxy: true, maxLagSlots: 300, host: "0.0.0.0" });
    expect(parse(["trustProxy", "maxLagSlots"], ["--trust-proxy", "off", "--max-lag-slots", "5"])).toEqual({ trustProxy: false, maxLagSlots: 5 });
    process.env.TRUST_PROXY = "sometimes";
    expect(() => parse(["trustProxy"], [])).toThrow(/'sometimes' from env 'TRUST_PROXY' is invalid/);
    delete process.env.TRUST_PROXY;
    expect(parse(["trustProxy"], ["--trust-proxy"])).toEqual({ trustProxy: true });
    expect(parse(["trustProxy"], [])).toEqual({ trustProxy: false });
  });

  it("every live limit, the process's and each caller's share, is a setting: default LIVE_LIMITS, flag or variable, 0 refused", () => {
    expect(liveLimitsOf(parse(LIVE_SETTINGS, []))).toEqual(LIVE_LIMITS);
    process.env.LIVE_SUBSCRIPTIONS_PER_TOKEN = "3";
    process.env.LIVE_CONNECTIONS_PER_ADDRESS = "4";
    const flags = {
      "--live-max-per-connection": 1,
      "--live-max-subscriptions": 2,
      "--live-queue-limit": 5,
      "--live-auth-recheck-ms": 6,
      "--live-anonymous-subscriptions-per-address": 7,
      "--live-subscriptions-per-address": 8,
      "--live-max-anonymous-subscriptions": 9,
      "--live-anonymous-connections-per-address": 10,
      "--live-connections-per-token": 11,
      "--live-share-retry-after-seconds": 12,
      "--live-resume-window-ms": 13,
      "--live-max-detached": 14,
    };
    const argv = Object.entries(flags).flatMap(([f, v]) => [f, String(v)]);
    expect(liveLimitsOf(parse(LIVE_SETTINGS, argv))).toEqual({
      maxPerConnection: 1,
      maxPerProcess: 2,
      subscriptionsPerToken: 3,
      connectionsPerAddress: 4,
      queueLimit: 5,
      authRecheckMs: 6,
      anonymousSubscriptionsPerAddress: 7,
      subscriptionsPerAddress: 8,
      anonymousSubscriptionsPerProcess: 9,
      anonymousConnectionsPerAddress: 10,
      connectionsPerToken: 11,
      shareRetryAfterSeconds: 12,
      resumeWindowMs: 13,
      maxDetachedPerProcess: 14,
    });
    for (const f of Object.keys(flags))
      for (const bad of ["0", "-1", "2.5", "many"]) expect(() => parse(LIVE_SETTINGS, [f, bad]), `${f} ${bad}`).toThrow(/is invalid/);
    process.env.LIVE_SUBSCRIPTIONS_PER_TOKEN = "0";
    expect(() => parse(LIVE_SETTINGS, [])).toThrow(/'0' from env 'LIVE_SUBSCRIPTIONS_PER_TOKEN' is invalid/);
  });

  it("every request limit, the Solana Actions routes' included, is a setting: the documented defaults, flag or variable, 0 allowed, strict", () => {
    expect(requestLimitsOf(parse(REQUEST_SETTINGS, []))).toEqual({ ...DEFAULT_REQUEST_LIMITS, ...DEFAULT_ACTION_LIMITS });
    expect(DEFAULT_ACTION_LIMITS).toEqual({ actionIpBurst: 30, actionIpPerMinute: 120, actionAccountBurst: 10, actionAccountPerMinute: 30 });
    process.env.ACTION_ACCOUNT_PER_MINUTE = "7";
    const argv = ["--action-ip-burst", "5", "--action-ip-per-minute", "0", "--action-account-burst", "3", "--ip-burst", "9"];
    expect(requestLimitsOf(parse(REQUEST_SETTINGS, argv))).toEqual({
      ...DEFAULT_REQUEST_LIMITS,
      ipBurst: 9,
      actionIpBurst: 5,
      actionIpPerMinute: 0,
      actionAccountBurst: 3,
      actionAccountPerMinute: 7,
    });
    for (const f of ["--action-ip-burst", "--action-ip-per-minute", "--action-account-burst", "--action-account-per-minute"])
      for (const bad of ["-1", "2.5", "1e3", "010", "", "many"]) expect(() => parse(REQUEST_SETTINGS, [f, bad]), `${f} ${bad}`).toThrow(/is invalid/);
    process.env.ACTION_IP_BURST = "thirty";
    expect(() => parse(REQUEST_SETTINGS, [])).toThrow(/'thirty' from env 'ACTION_IP_BURST' is invalid/);
  });

  it("the service guide's Configuration names every setting's flag and variable", () => {
    const guide = readFileSync(join(import.meta.dirname, "..", "..", "docs", "service-guide.md"), "utf8");
    const section = guide.slice(guide.indexOf("## Configuration"), guide.indexOf("## Deployment"));
    const missing: string[] = [];
    for (const [name, make] of Object.entries(SETTINGS)) {
      const o = make();
      if (!section.includes(`\`${o.long}\``)) missing.push(`${name}: ${o.long}`);
      if (o.envVar && !section.includes(`\`${o.envVar}\``)) missing.push(`${name}: ${o.envVar}`);
    }
    expect(missing).toEqual([]);
  });
});
