/**
 * Fast account decoders compiled from an Anchor IDL at load time: for each account type, one
 * function that reads the Borsh fields in IDL order with a DataView. Same result as Anchor's
 * BorshAccountsCoder + bigint conversion (checked by tests/indexer/decoder.test.ts on real
 * accounts), several times faster: the indexer's ingestion is bound by decoding. No byte
 * offsets are kept by hand; they follow from the IDL's field types.
 *
 * Output: field names as in the (camelCased) IDL; u8/u16/u32/i8/i16/i32 as number, u64/i64/
 * u128/i128 as bigint, pubkey as base58 string, bool as boolean, fixed arrays as arrays,
 * defined structs as objects.
 */
import { PublicKey } from "@solana/web3.js";

type IdlType = string | { array: [IdlType, number] } | { defined: { name: string } } | { option: IdlType } | { vec: IdlType };
interface IdlField {
  name: string;
  type: IdlType;
}
interface IdlTypeDef {
  name: string;
  type: { kind: string; fields?: IdlField[] };
}
export interface DecodableIdl {
  accounts?: { name: string; discriminator: number[] }[];
  types?: IdlTypeDef[];
}

interface Cursor {
  v: DataView;
  b: Uint8Array;
  o: number;
}
type Reader = (c: Cursor) => unknown;

const B58_CACHE_MAX = 200_000;
const b58cache = new Map<string, string>();
/** base58 of 32 bytes, cached (addresses repeat across accounts: contracts, creators, mints). */
export function pubkeyAt(b: Uint8Array, o: number): string {
  const key = String.fromCharCode.apply(null, b.subarray(o, o + 32) as unknown as number[]);
  let s = b58cache.get(key);
  if (s === undefined) {
    if (b58cache.size >= B58_CACHE_MAX) b58cache.clear();
    s = new PublicKey(b.subarray(o, o + 32)).toBase58();
    b58cache.set(key, s);
  }
  return s;
}

function readerFor(t: IdlType, types: Map<string, IdlTypeDef>): Reader {
  if (typeof t === "string") {
    switch (t) {
      case "u8":
        return (c) => c.v.getUint8(c.o++);
      case "i8":
        return (c) => c.v.getInt8(c.o++);
      case "bool":
        return (c) => c.v.getUint8(c.o++) !== 0;
      case "u16":
        return (c) => {
          const x = c.v.getUint16(c.o, true);
          c.o += 2;
          return x;
        };
      case "i16":
        return (c) => {
          const x = c.v.getInt16(c.o, true);
          c.o += 2;
          return x;
        };
      case "u32":
        return (c) => {
          const x = c.v.getUint32(c.o, true);
          c.o += 4;
          return x;
        };
      case "i32":
        return (c) => {
          const x = c.v.getInt32(c.o, true);
          c.o += 4;
          return x;
        };
      case "u64":
        return (c) => {
          const x = c.v.getBigUint64(c.o, true);
          c.o += 8;
          return x;
        };
      case "i64":
        return (c) => {
          const x = c.v.getBigInt64(c.o, true);
          c.o += 8;
          return x;
        };
      case "u128":
        return (c) => {
          const lo = c.v.getBigUint64(c.o, true),
            hi = c.v.getBigUint64(c.o + 8, true);
          c.o += 16;
          return (hi << 64n) | lo;
        };
      case "i128":
        return (c) => {
          const lo = c.v.getBigUint64(c.o, true),
            hi = c.v.getBigInt64(c.o + 8, true);
          c.o += 16;
          return (hi << 64n) | lo;
        };
      case "pubkey":
        return (c) => {
          const s = pubkeyAt(c.b, c.o);
          c.o += 32;
          return s;
        };
      case "string":
        return (c) => {
          const n = c.v.getUint32(c.o, true);
          c.o += 4;
          const s = Buffer.from(c.b.buffer, c.b.byteOffset + c.o, n).toString("utf8");
          c.o += n;
          return s;
        };
      case "bytes":
        return (c) => {
          const n = c.v.getUint32(c.o, true);
          c.o += 4;
          const s = Buffer.from(c.b.subarray(c.o, c.o + n));
          c.o += n;
          return s;
        };
      default:
        throw new Error(`IDL type ${t} not supported`);
    }
  }
  if ("array" in t) {
    const [inner, n] = t.array;
    const r = readerFor(inner, types);
    return (c) => {
      const out = new Array(n);
      for (let i = 0; i < n; i++) out[i] = r(c);
      return out;
    };
  }
  if ("vec" in t) {
    const r = readerFor(t.vec, types);
    return (c) => {
      const n = c.v.getUint32(c.o, true);
      c.o += 4;
      const out = new Array(n);
      for (let i = 0; i < n; i++) out[i] = r(c);
      return out;
    };
  }
  if ("option" in t) {
    const r = readerFor(t.option, types);
    return (c) => (c.v.getUint8(c.o++) === 0 ? null : r(c));
  }
  if ("defined" in t) {
    const def = types.get(t.defined.name);
    if (!def || def.type.kind !== "struct") throw new Error(`IDL type ${t.defined.name} not supported`);
    return structReader(def, types);
  }
  throw new Error(`IDL type ${JSON.stringify(t)} not supported`);
}

function structReader(def: IdlTypeDef, types: Map<string, IdlTypeDef>): Reader {
  const fields = (def.type.fields ?? []).map((f) => [f.name, readerFor(f.type, types)] as const);
  return (c) => {
    const o: Record<string, unknown> = {};
    for (const [name, r] of fields) o[name] = r(c);
    return o;
  };
}

export interface CompiledAccount {
  name: string;
  discriminator: Uint8Array;
  decode(data: Uint8Array): Record<string, unknown>;
}

/** Decoders of every account type of the IDL, by name. */
export function compileAccountDecoders(idl: DecodableIdl): Map<string, CompiledAccount> {
  const types = new Map((idl.types ?? []).map((t) => [t.name, t]));
  const lower = new Map((idl.types ?? []).map((t) => [t.name.toLowerCase(), t]));
  const out = new Map<string, CompiledAccount>();
  for (const a of idl.accounts ?? []) {
    const def = types.get(a.name) ?? lower.get(a.name.toLowerCase());
    if (!def) throw new Error(`IDL account ${a.name} has no type`);
    const r = structReader(def, new Map([...types, ...lower]));
    out.set(a.name, {
      name: a.name,
      discriminator: Uint8Array.from(a.discriminator),
      decode(data) {
        return r({ v: new DataView(data.buffer, data.byteOffset, data.byteLength), b: data, o: 8 }) as Record<string, unknown>;
      },
    });
  }
  return out;
}

/** The account type of `data` by its 8-byte discriminator, among compiled decoders. */
export function accountKind(decoders: Map<string, CompiledAccount>, data: Uint8Array): CompiledAccount | null {
  if (data.length < 8) return null;
  outer: for (const d of decoders.values()) {
    for (let i = 0; i < 8; i++) if (data[i] !== d.discriminator[i]) continue outer;
    return d;
  }
  return null;
}
