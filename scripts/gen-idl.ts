/**
 * Writes each program's Anchor IDL (idl/<program>.json), its TypeScript type (idl/<program>.ts)
 * and the Rust discriminator constants (programs/<program>/src/discriminators.rs) from the
 * program's Rust sources, so the layout has one source of truth.
 *
 * The sources follow a small convention (see programs/offers/src/state.rs): `/// @account`,
 * `/// @type` and `/// @event` before `#[repr(C)]` structs; `/// @instruction <name>`,
 * `/// @accounts <name[:mut][,signer]> ...` and `/// @pda <account>: <seed> ...` before an
 * instruction's argument struct; error enums with `/// message` above `Name = code,`.
 *
 * PDA seeds go into the IDL so that Anchor resolves those accounts by itself and Codama renders
 * PDA helpers. A `@pda` seed is `"text"` (its UTF-8 bytes), `other_account` (its address),
 * `other_account.field` (a pubkey field of that account's data) or `args.field` (an argument,
 * encoded as the program reads it: a u64 as 8 bytes LE, a byte array as is). The program's
 * singletons need no line: an account named `config`, `vault` or `program_data` is always the
 * canonical one (see SINGLETON_SEEDS), as in addresses.rs.
 *
 *   tsx scripts/gen-idl.ts            write the files
 *   tsx scripts/gen-idl.ts --check    exit 1 if any written file would change
 */
import camelcase from "camelcase";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { PublicKey } from "@solana/web3.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

const WELL_KNOWN: Record<string, string> = {
  token_program: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
  system_program: "11111111111111111111111111111111",
};

const LOADER_V3 = new PublicKey("BPFLoaderUpgradeab1e11111111111111111111111");

type IdlType = string | { array: [IdlType, number] } | { defined: { name: string } };
interface Field {
  name: string;
  type: IdlType;
}
interface StructDef {
  name: string;
  docs: string[];
  tag: string;
  arg?: string;
  fields: Field[];
  accounts?: string;
  pdas?: string[];
}

type IdlSeed = { kind: "const"; value: number[] } | { kind: "arg"; path: string } | { kind: "account"; path: string; account?: string };
interface IdlPda {
  seeds: IdlSeed[];
  program?: IdlSeed;
}

/**
 * Seeds of the accounts every program has at one canonical address (kit::setup): the config,
 * the vault whose token owner it is, and the program's ProgramData under the upgradeable loader.
 * addresses.rs pins the same addresses, derived from these seeds.
 */
const SINGLETON_SEEDS = {
  config: (_id: PublicKey) => [Buffer.from("config")],
  vault: (_id: PublicKey) => [Buffer.from("vault")],
  program_data: (id: PublicKey) => [id.toBuffer()],
};
function singletonPda(name: string, id: PublicKey): IdlPda | undefined {
  const seeds = SINGLETON_SEEDS[name as keyof typeof SINGLETON_SEEDS]?.(id);
  if (!seeds) return undefined;
  const pda: IdlPda = { seeds: seeds.map((b) => ({ kind: "const", value: [...b] })) };
  if (name === "program_data") pda.program = { kind: "const", value: [...LOADER_V3.toBytes()] };
  return pda;
}

/**
 * One `@pda <account>: <seed> ...` line of an instruction, checked against its accounts, its
 * argument struct and the account structs, so that a typo fails here and not in a client.
 */
function parsePda(line: string, ix: StructDef, accountNames: string[], state: StructDef[]): [string, IdlPda] {
  const m = /^(\w+):\s*(.+)$/.exec(line);
  if (!m) throw new Error(`gen-idl: ${ix.arg}: bad @pda line "${line}"`);
  const [, account, rest] = m;
  if (!accountNames.includes(account)) throw new Error(`gen-idl: ${ix.arg}: @pda of unknown account ${account}`);
  const seeds = [...rest.matchAll(/"[^"]*"|\S+/g)].map(([tok]): IdlSeed => {
    if (tok.startsWith('"')) return { kind: "const", value: [...Buffer.from(tok.slice(1, -1), "utf8")] };
    const [head, field, ...more] = tok.split(".");
    if (more.length) throw new Error(`gen-idl: ${ix.arg}: seed ${tok} is nested too deep`);
    if (head === "args") {
      if (!ix.fields.some((f) => f.name === field)) throw new Error(`gen-idl: ${ix.arg}: seed ${tok} names no argument`);
      return { kind: "arg", path: field };
    }
    if (!accountNames.includes(head) || head === account) throw new Error(`gen-idl: ${ix.arg}: seed ${tok} names no other account of the instruction`);
    if (field === undefined) return { kind: "account", path: head };
    // Account data: the account's type is the @account struct named like it (offer -> Offer).
    const type = state.find((s) => s.tag === "account" && s.name === pascal(head));
    if (type?.fields.find((f) => f.name === field)?.type !== "pubkey")
      throw new Error(`gen-idl: ${ix.arg}: seed ${tok} is no pubkey field of an account ${pascal(head)}`);
    return { kind: "account", path: tok, account: type.name };
  });
  return [account, { seeds }];
}

export function discriminator(prefix: string, name: string): number[] {
  return [...createHash("sha256").update(`${prefix}:${name}`).digest().subarray(0, 8)];
}

function rustType(t: string): IdlType {
  t = t.trim();
  const prim: Record<string, string> = {
    u8: "u8",
    PodU16: "u16",
    PodU32: "u32",
    PodU64: "u64",
    PodI64: "i64",
    Address: "pubkey",
  };
  if (prim[t]) return prim[t];
  const arr = /^\[(\w+);\s*(\d+)\]$/.exec(t);
  if (arr) return { array: [rustType(arr[1]), Number(arr[2])] };
  if (/^[A-Z]\w*$/.test(t)) return { defined: { name: t } };
  throw new Error(`gen-idl: unsupported field type ${t}`);
}

/** Annotated structs of a Rust file, with their doc lines and @tags. */
function parseStructs(src: string): StructDef[] {
  const out: StructDef[] = [];
  const re = /((?:[ \t]*\/\/\/[^\n]*\n)+)(?:[ \t]*#\[[^\n]*\]\n)*[ \t]*pub struct (\w+)\s*\{([^}]*)\}/g;
  for (const m of src.matchAll(re)) {
    const lines = m[1]
      .split("\n")
      .map((l) => l.replace(/^\s*\/\/\/ ?/, ""))
      .filter((l) => l.length);
    const tagLine = lines.find((l) => /^@(account|type|event|instruction)\b/.test(l));
    if (!tagLine) continue;
    const [tag, arg] = tagLine.slice(1).split(/\s+/, 2);
    const accountsLine = lines.find((l) => l.startsWith("@accounts"));
    const docs = lines.filter((l) => !l.startsWith("@"));
    const fields = [...m[3].matchAll(/pub (\w+):\s*([^,]+),/g)].map((f) => ({ name: f[1], type: rustType(f[2]) }));
    const def: StructDef = { name: m[2], docs, tag, arg, fields };
    if (accountsLine) def.accounts = accountsLine.slice("@accounts".length).trim();
    const pdas = lines.filter((l) => l.startsWith("@pda ")).map((l) => l.slice("@pda ".length).trim());
    if (pdas.length) def.pdas = pdas;
    out.push(def);
  }
  return out;
}

function parseErrors(src: string): { code: number; name: string; msg: string }[] {
  return [...src.matchAll(/\/\/\/ ([^\n]+)\n\s*(\w+) = (\d+),/g)].map((m) => ({ code: Number(m[3]), name: m[2], msg: m[1].trim() }));
}

/** Anchor's own conversion (convertIdlToCamelCase uses the same package and options). */
function camel(s: string): string {
  return s
    .split(".")
    .map((p) => camelcase(p, { locale: false }))
    .join(".");
}
function pascal(s: string): string {
  const c = camel(s);
  return c[0].toUpperCase() + c.slice(1);
}
function constName(s: string): string {
  return s.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
}

export function buildIdl(program: string, address: string) {
  const dir = join(root, "programs", program, "src");
  const read = (f: string) => readFileSync(join(dir, f), "utf8");
  const state = parseStructs(read("state.rs"));
  const events = existsSync(join(dir, "events.rs")) ? parseStructs(read("events.rs")) : [];
  const ixs = parseStructs(read("instructions/mod.rs")).filter((s) => s.tag === "instruction");
  const errors = [...parseErrors(readFileSync(join(root, "programs/kit/src/accounts.rs"), "utf8")), ...parseErrors(read("error.rs"))];
  const description = /description = "([^"]+)"/.exec(readFileSync(join(root, "programs", program, "Cargo.toml"), "utf8"))?.[1] ?? "";
  const programId = new PublicKey(address);

  const asType = (s: StructDef) => ({
    name: s.name,
    ...(s.docs.length ? { docs: s.docs } : {}),
    type: { kind: "struct", fields: s.fields },
  });
  const idl = {
    address,
    metadata: { name: program, version: "0.1.0", spec: "0.1.0", description },
    instructions: ixs.map((ix) => {
      const list = (ix.accounts ?? "")
        .split(/\s+/)
        .filter(Boolean)
        .map((a) => a.split(":") as [string, string?]);
      const names = list.map(([name]) => name);
      const pdas = new Map((ix.pdas ?? []).map((l) => parsePda(l, ix, names, state)));
      const accounts = list.map(([name, flags = ""]) => {
        const f = flags.split(",");
        const pda = pdas.get(name) ?? singletonPda(name, programId);
        return {
          name,
          ...(f.includes("mut") ? { writable: true } : {}),
          ...(f.includes("signer") ? { signer: true } : {}),
          ...(WELL_KNOWN[name] ? { address: WELL_KNOWN[name] } : {}),
          ...(pda ? { pda } : {}),
        };
      });
      return { name: ix.arg!, docs: ix.docs, discriminator: discriminator("global", ix.arg!), accounts, args: ix.fields };
    }),
    accounts: state.filter((s) => s.tag === "account").map((s) => ({ name: s.name, discriminator: discriminator("account", s.name) })),
    events: events.filter((s) => s.tag === "event").map((s) => ({ name: s.name, discriminator: discriminator("event", s.name) })),
    errors,
    types: [...state, ...events.filter((s) => s.tag === "event")].map(asType),
  };

  const hex = (b: number[]) => `[${b.map((x) => `0x${x.toString(16).padStart(2, "0")}`).join(", ")}]`;
  const u64 = (b: number[]) => `0x${Buffer.from(b).readBigUInt64LE().toString(16).padStart(16, "0")}`;
  const rust = [
    "//! Generated by scripts/gen-idl.ts from the annotated sources; do not edit.",
    "//! Instruction tags are the 8 discriminator bytes read as a little-endian u64.",
    "",
    ...idl.instructions.map((ix) => `pub const IX_${ix.name.toUpperCase()}: u64 = ${u64(ix.discriminator)};`),
    ...idl.accounts.map((a) => `pub const ACCOUNT_${constName(a.name)}: [u8; 8] = ${hex(a.discriminator)};`),
    ...idl.events.map((e) => `pub const EVENT_${constName(e.name)}: [u8; 8] = ${hex(e.discriminator)};`),
    "",
  ].join("\n");

  // The TypeScript type, as `anchor idl type` would write it: the IDL with camelCased names.
  const camelize = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => camelize(x));
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, camelize(x, k)]));
    if (typeof v === "string" && ["name", "path", "account", "relations", "generic"].includes(key ?? "")) return camel(v);
    return v;
  };
  const typeName = pascal(program);
  const ts = `/** Generated by scripts/gen-idl.ts from idl/${program}.json; do not edit. */\nexport type ${typeName} = ${JSON.stringify(camelize(idl), null, 2)};\n\nexport const ${camel(program)}Idl: ${typeName} = ${JSON.stringify(camelize(idl), null, 2)};\n`;
  return { idl, rust, ts, addresses: addressesRs(address) };
}

/**
 * The program's singleton addresses as Rust constants: the canonical config and vault PDAs with
 * their bumps, and the ProgramData account of the upgradeable loader (whose upgrade authority
 * alone may initialise the config). Pinning them at build time costs a 32-byte comparison per
 * instruction instead of a PDA derivation.
 */
function addressesRs(address: string): string {
  const id = new PublicKey(address);
  const [config, configBump] = PublicKey.findProgramAddressSync(SINGLETON_SEEDS.config(id), id);
  const [vault, vaultBump] = PublicKey.findProgramAddressSync(SINGLETON_SEEDS.vault(id), id);
  const [programData] = PublicKey.findProgramAddressSync(SINGLETON_SEEDS.program_data(id), LOADER_V3);
  const arr = (k: PublicKey) => `Address::new_from_array([${[...k.toBytes()].join(", ")}])`;
  return [
    "//! Generated by scripts/gen-idl.ts from the program id in Anchor.toml; do not edit.",
    "//! The program's singletons: canonical config and vault PDAs, and its ProgramData account.",
    "",
    "use kit::{setup::Canonical, Address};",
    "",
    `/// ${address}`,
    `pub const PROGRAM_ID: Address = ${arr(id)};`,
    "",
    `/// config ${config.toBase58()} (bump ${configBump}), vault ${vault.toBase58()} (bump ${vaultBump}), program data ${programData.toBase58()}`,
    "pub const CANONICAL: Canonical = Canonical {",
    `    config: ${arr(config)},`,
    `    config_bump: ${configBump},`,
    `    vault: ${arr(vault)},`,
    `    vault_bump: ${vaultBump},`,
    `    program_data: ${arr(programData)},`,
    "};",
    "",
  ].join("\n");
}

function programIds(): Record<string, string> {
  const toml = readFileSync(join(root, "Anchor.toml"), "utf8");
  const section = toml.split("[programs.localnet]")[1].split("\n[")[0];
  return Object.fromEntries([...section.matchAll(/^(\w+) = "(\w+)"/gm)].map((m) => [m[1], m[2]]));
}

function main() {
  const check = process.argv.includes("--check");
  let stale = false;
  for (const [program, address] of Object.entries(programIds())) {
    if (!existsSync(join(root, "programs", program, "src", "instructions", "mod.rs"))) continue;
    const { idl, rust, ts, addresses } = buildIdl(program, address);
    const files: [string, string][] = [
      [join(root, "idl", `${program}.json`), JSON.stringify(idl, null, 2) + "\n"],
      [join(root, "idl", `${program}.ts`), ts],
      [join(root, "programs", program, "src", "discriminators.rs"), rust],
      [join(root, "programs", program, "src", "addresses.rs"), addresses],
    ];
    for (const [path, text] of files) {
      const old = existsSync(path) ? readFileSync(path, "utf8") : "";
      if (old === text) continue;
      if (check) {
        console.error(`gen-idl: ${path} is out of date; run npm run gen:idl`);
        stale = true;
      } else writeFileSync(path, text);
    }
  }
  if (stale) process.exit(1);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
