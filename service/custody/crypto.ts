/**
 * Encryption at rest of custodial keys: AES-256-GCM under the service key.
 *
 * The service key (32 bytes, 64 hex characters or base64) comes from env SERVICE_KEY, or from the
 * file env SERVICE_KEY_FILE names, or in local mode only from `<dataDir>/service.key`, generated
 * on first start with mode 0600. Against a cluster the key must come from the environment or a
 * file outside the data directory (a copy of the data directory, or a backup of it, must not
 * carry the key that opens it), and it is never generated: a random key there would seal new
 * wallets under a key nobody kept. The store records the key's fingerprint (custody.ts), so a
 * wrong key is refused at start instead of sealing anything. Each secret is
 * sealed with a fresh 12-byte IV and authenticated with associated data (the wallet address), so a
 * ciphertext moved to another user's row does not decrypt.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve, isAbsolute } from "node:path";

export class ServiceKey {
  private constructor(private readonly key: Buffer) {}

  static fromBytes(b: Uint8Array): ServiceKey {
    if (b.length !== 32) throw new Error("service key must be 32 bytes");
    return new ServiceKey(Buffer.from(b));
  }

  /** "hex64" or base64 of 32 bytes. */
  static parse(s: string): ServiceKey {
    const t = s.trim();
    if (/^[0-9a-fA-F]{64}$/.test(t)) return ServiceKey.fromBytes(Buffer.from(t, "hex"));
    const b = Buffer.from(t, "base64");
    if (b.length === 32) return ServiceKey.fromBytes(b);
    throw new Error("SERVICE_KEY must be 32 bytes as 64 hex characters or base64");
  }

  /**
   * env SERVICE_KEY if set, else the file env SERVICE_KEY_FILE names; else, in local mode only,
   * `<dataDir>/service.key` (created when missing). `cluster`: refuse a key file inside the data
   * directory and refuse to go without a key.
   */
  static load(dataDir: string, env: NodeJS.ProcessEnv = process.env, o: { cluster?: boolean } = {}): ServiceKey {
    if (env.SERVICE_KEY) return ServiceKey.parse(env.SERVICE_KEY);
    if (env.SERVICE_KEY_FILE) {
      const file = resolve(env.SERVICE_KEY_FILE);
      if (o.cluster && isInside(file, dataDir))
        throw new Error(`SERVICE_KEY_FILE ${file} is inside the data directory ${resolve(dataDir)}: keep the key apart from the data it opens`);
      return ServiceKey.parse(readFileSync(file, "utf8"));
    }
    if (o.cluster)
      throw new Error(
        "against a cluster the service key must come from SERVICE_KEY or SERVICE_KEY_FILE (a file outside the data directory); it is never generated",
      );
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, "service.key");
    if (!existsSync(file)) {
      writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" });
    }
    chmodSync(file, 0o600);
    return ServiceKey.parse(readFileSync(file, "utf8"));
  }

  /** Names the key without revealing it (a keyed digest): what the store records to refuse a wrong key. */
  fingerprint(): string {
    return this.digest("service-key-fingerprint").subarray(0, 16).toString("hex");
  }

  /** The key as 64 hex characters, for writing it where the operator keeps it. */
  toHex(): string {
    return this.key.toString("hex");
  }

  static generate(): ServiceKey {
    return new ServiceKey(randomBytes(32));
  }

  seal(plain: Uint8Array, aad: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", this.key, iv);
    c.setAAD(Buffer.from(aad, "utf8"));
    const ct = Buffer.concat([c.update(plain), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), ct]).toString("base64");
  }

  open(sealed: string, aad: string): Buffer {
    const b = Buffer.from(sealed, "base64");
    if (b.length < 29) throw new Error("sealed secret too short");
    const d = createDecipheriv("aes-256-gcm", this.key, b.subarray(0, 12));
    d.setAAD(Buffer.from(aad, "utf8"));
    d.setAuthTag(b.subarray(12, 28));
    return Buffer.concat([d.update(b.subarray(28)), d.final()]);
  }

  /** Keyed digest, for deriving values that must not be guessable from public data. */
  digest(...parts: string[]): Buffer {
    const h = createHash("sha256").update(this.key);
    for (const p of parts) h.update("\u0000").update(p);
    return h.digest();
  }
}

/** Whether `file` lies inside `dir` (or is it): a key must not travel with the data it opens. */
export function isInside(file: string, dir: string): boolean {
  const r = relative(resolve(dir), file);
  return r === "" || (!r.startsWith("..") && !isAbsolute(r));
}

export function sha256Hex(s: string | Buffer): string {
  return createHash("sha256").update(s).digest("hex");
}
