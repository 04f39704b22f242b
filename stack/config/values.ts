/**
 * How every entry point reads a value from a flag or the environment: booleans, durations,
 * amounts, counts, ports, hosts and enums, each parsed strictly by one zod schema. A value the
 * schema does not understand is refused with a sentence naming what was expected; it is never
 * guessed (`"yes"` is not silently false, `"1h"` is not silently null).
 */
import { InvalidArgumentError } from "commander";
import { isIP } from "node:net";
import { z } from "zod";

/** One refusal of a schema, as the sentence the command line prints after the bad value. */
const refuse = (ctx: z.RefinementCtx<string>, message: string) => {
  ctx.addIssue({ code: "custom", message });
  return z.NEVER;
};

const TRUE = ["true", "1", "yes", "on"];
const FALSE = ["false", "0", "no", "off"];
/** true/false, 1/0, yes/no, on/off in any case; anything else is refused. */
export const booleanValue = z.string().transform((v, ctx) => {
  const s = v.trim().toLowerCase();
  if (TRUE.includes(s)) return true;
  if (FALSE.includes(s)) return false;
  return refuse(ctx, `expected a boolean: ${TRUE.join("/")} or ${FALSE.join("/")}`);
});

const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 } as const;
/** A hundred years: far beyond any lifetime or schedule the service sets, well inside a safe integer. */
export const MAX_DURATION_SECONDS = 100 * 365 * 86_400;
/**
 * A positive duration in whole seconds: `90` (seconds), `90s`, `15m`, `12h`, `30d`, `2w`. No
 * zero, sign, fraction, space or compound (`1h30m`): what is not plainly one of these is refused.
 */
export const durationValue = z.string().transform((v, ctx) => {
  const m = /^([1-9][0-9]{0,10})([smhdw]?)$/.exec(v);
  if (!m) return refuse(ctx, "expected a positive duration: a whole number with an optional unit s, m, h, d or w (90s, 15m, 12h, 30d)");
  const seconds = Number(m[1]) * UNIT_SECONDS[(m[2] || "s") as keyof typeof UNIT_SECONDS];
  if (seconds > MAX_DURATION_SECONDS) return refuse(ctx, `expected a duration of at most ${MAX_DURATION_SECONDS / 86_400}d`);
  return seconds;
});

/**
 * A token lifetime: a positive duration in seconds, or `"never"` for a token that does not expire
 * (a string, not null: commander turns an option value of null into "").
 */
export const lifetimeValue = z.string().transform((v, ctx): number | "never" => {
  if (v === "never") return "never";
  const r = durationValue.safeParse(v);
  return r.success ? r.data : refuse(ctx, `expected "never" or a positive duration (90s, 12h, 30d)`);
});

const U64_MAX = (1n << 64n) - 1n;
/** An amount in micro-units (a u64 on chain), as a bigint: digits only, no decimals, at least 1. */
export const amountValue = z.string().transform((v, ctx) => {
  if (!/^[1-9][0-9]{0,19}$/.test(v) || BigInt(v) > U64_MAX) return refuse(ctx, "expected a positive whole number of micro-units (1000000 = 1 unit)");
  return BigInt(v);
});

/** A Solana address (base58 of 32 bytes), as its string: a wallet the operator names. */
export const solanaAddressValue = z.string().transform((v, ctx) => {
  if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(v) || bs58Length(v) !== 32) return refuse(ctx, "expected a base58 Solana address (32 bytes)");
  return v;
});

/** The byte length of a base58 string (no library needed for a length: each leading "1" is a zero byte). */
function bs58Length(v: string): number {
  const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  let n = 0n;
  for (const c of v) n = n * 58n + BigInt(ALPHABET.indexOf(c));
  const zeros = /^1*/.exec(v)![0].length;
  return zeros + (n === 0n ? 0 : Math.ceil(n.toString(16).length / 2));
}

/** A count or limit: a non-negative integer (0 usually switches the limit off). */
export const countValue = z.string().transform((v, ctx) => {
  if (!/^(0|[1-9][0-9]{0,8})$/.test(v)) return refuse(ctx, "expected a non-negative whole number");
  return Number(v);
});

/** A positive integer (a size, a number of users or actions). */
export const positiveValue = z.string().transform((v, ctx) => {
  if (!/^[1-9][0-9]{0,8}$/.test(v)) return refuse(ctx, "expected a positive whole number");
  return Number(v);
});

/** Basis points of a fee: 0 to 10000 (100%), digits only (`10%` is refused, not read as 10). */
export const bpsValue = z.string().transform((v, ctx) => {
  if (!/^(0|[1-9][0-9]{0,4})$/.test(v) || Number(v) > 10_000) return refuse(ctx, "expected basis points: a whole number from 0 to 10000 (1000 = 10%)");
  return Number(v);
});

/** A TCP port: 1 to 65535 (0, "any free port", only where a caller says so). */
export const portValue = z.string().transform((v, ctx) => {
  if (!/^[1-9][0-9]{0,4}$/.test(v) || Number(v) > 65_535) return refuse(ctx, "expected a port from 1 to 65535");
  return Number(v);
});

/** An address to bind: an IPv4 or IPv6 literal, or a host name (localhost). */
export const hostValue = z.string().transform((v, ctx) => {
  if (isIP(v) || /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(v)) return v;
  return refuse(ctx, "expected an IP address (0.0.0.0, ::, 127.0.0.1) or a host name");
});

/** An http(s) or ws(s) URL. */
export const urlValue = z.string().transform((v, ctx) => {
  try {
    const u = new URL(v);
    if (["http:", "https:", "ws:", "wss:"].includes(u.protocol)) return v;
  } catch {
    // refused below
  }
  return refuse(ctx, "expected an http(s):// or ws(s):// URL");
});

/** One of `choices`, exactly as written (no case folding: they are names). */
export function enumValue<const T extends readonly [string, ...string[]]>(choices: T) {
  return z.string().transform((v, ctx): T[number] => {
    if ((choices as readonly string[]).includes(v)) return v as T[number];
    return refuse(ctx, `expected one of ${choices.join(", ")}`);
  });
}

/**
 * A comma-separated list of values of `item` (`browse,offer`, `1,8`), none repeated, at least one:
 * a benchmark's cases, modes, engines or levels. A value `item` refuses refuses the whole list,
 * never skipped. `repeats`: the list is an order of runs, where a value may come back
 * (bench-api's `--only offer,browse,offer`).
 */
export function listValue<T>(item: z.ZodType<T, string>, o: { repeats?: boolean } = {}) {
  return z.string().transform((v, ctx): T[] => {
    const parts = v.split(",").map((n) => n.trim());
    if (!o.repeats && new Set(parts).size !== parts.length) return refuse(ctx, "a value is repeated");
    const values: T[] = [];
    for (const p of parts) {
      const r = item.safeParse(p);
      if (!r.success) return refuse(ctx, `${JSON.stringify(p)}: ${r.error.issues[0]?.message ?? "invalid value"}`);
      values.push(r.data);
    }
    return values;
  });
}

/** A comma-separated list of `choices` (listValue of enumValue). */
export function choicesValue<const T extends readonly [string, ...string[]]>(choices: T, o: { repeats?: boolean } = {}) {
  return listValue(enumValue(choices), o);
}

/** pino's levels. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/**
 * The schema as commander's argument parser: the typed value, or commander's refusal, which names
 * the option, the bad value and where it came from (flag or environment variable) on one line.
 */
export function arg<T>(schema: z.ZodType<T, string>): (v: string) => T {
  return (v) => {
    const r = schema.safeParse(v);
    if (r.success) return r.data;
    throw new InvalidArgumentError(r.error.issues[0]?.message ?? "invalid value");
  };
}
