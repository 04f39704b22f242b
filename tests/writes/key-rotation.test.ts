/**
 * The service key: against a cluster it comes from the environment or a file outside the data
 * directory, never generated (scripts/start.ts --rpc refuses to start without one), and so does
 * the service wallet; the store
 * refuses any key but its own; `scripts/admin.ts rotate-service-key` re-seals every custodial
 * key and the sealed service wallet under a new key, and a rotation interrupted at any step
 * leaves a store that starts with the old key (before the switch) or the new one (after it).
 */
import { afterAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { openStore } from "../../indexer/store/db";
import { ServiceKey } from "../../service/custody/crypto";
import { Keypair } from "@solana/web3.js";
import { Custody, loadServiceWallet, serviceWalletFile } from "../../service/custody/custody";
import { rotateServiceKey } from "../../service/custody/key-rotation";
import { startLocalStack } from "../../stack/local-stack";
import { makeUser } from "../support/stack";
import { freshStore, type StoreTarget } from "../indexer/stores";

const ROOT = join(import.meta.dirname, "..", "..");
const dirs: string[] = [];
const tmp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};
const targets: StoreTarget[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const t of targets) await t.drop();
});
const keyFile = (dir: string, key = ServiceKey.generate()) => {
  const f = join(dir, `${Math.random().toString(36).slice(2)}.key`);
  writeFileSync(f, key.toHex() + "\n", { mode: 0o600 });
  return { f, key };
};
const clean = (env: Record<string, string | undefined>) => {
  const e: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const k of ["SERVICE_KEY", "SERVICE_KEY_FILE", "SERVICE_WALLET", "SERVICE_WALLET_FILE"]) if (env[k] === undefined) delete e[k];
  return e;
};

/** A store with three custodial users and a sealed service wallet under `key`; returns their wallets. */
async function populated(storeUrl: string, data: string, key: ServiceKey) {
  const service = loadServiceWallet(data, key, {});
  const s = await startLocalStack({ storeUrl, serviceKey: key, service });
  const users = [await makeUser(s, 0n), await makeUser(s, 0n), await makeUser(s, 0n)];
  await s.stop();
  return { service: service.publicKey.toBase58(), users: users.map((u) => ({ id: u.user.id, wallet: u.user.wallet.toBase58() })) };
}

async function opensWith(storeUrl: string, key: ServiceKey, users: { id: string; wallet: string }[]) {
  const store = await openStore(storeUrl);
  try {
    const c = await Custody.open(store.db as Kysely<unknown>, key);
    for (const u of users) expect((await c.signer(u.id)).publicKey.toBase58()).toBe(u.wallet);
  } finally {
    await store.close();
  }
}

describe("service key", () => {
  it("against a cluster: never generated, never inside the data directory; start --rpc refuses without one", () => {
    const data = tmp("data-");
    expect(() => ServiceKey.load(data, {}, { cluster: true })).toThrow(/SERVICE_KEY or SERVICE_KEY_FILE/);
    expect(existsSync(join(data, "service.key"))).toBe(false);
    const inside = keyFile(data);
    expect(() => ServiceKey.load(data, { SERVICE_KEY_FILE: inside.f }, { cluster: true })).toThrow(/inside the data directory/);
    const outside = keyFile(tmp("keys-"));
    expect(ServiceKey.load(data, { SERVICE_KEY_FILE: outside.f }, { cluster: true }).fingerprint()).toBe(outside.key.fingerprint());

    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/start.ts", "--rpc", "http://127.0.0.1:9", "--data", join(data, "svc")], {
      cwd: ROOT,
      env: clean({}),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(/service key must come from SERVICE_KEY or SERVICE_KEY_FILE/);
    expect(existsSync(join(data, "svc", "service.key"))).toBe(false);
  });

  it("against a cluster the service wallet is never generated nor read from the data directory; start --rpc refuses without one", () => {
    const data = tmp("data-");
    const key = ServiceKey.generate();
    expect(() => loadServiceWallet(data, key, {}, { cluster: true })).toThrow(/service wallet must come from SERVICE_WALLET .* or SERVICE_WALLET_FILE/);
    expect(existsSync(serviceWalletFile(data))).toBe(false);
    // A wallet sealed there by a local run is not taken either, and the refusal says so.
    loadServiceWallet(data, key, {});
    expect(() => loadServiceWallet(data, key, {}, { cluster: true })).toThrow(/service-wallet.sealed is not read against a cluster/);
    const wallet = Keypair.generate();
    const json = JSON.stringify([...wallet.secretKey]);
    const inside = join(data, "wallet.json");
    writeFileSync(inside, json, { mode: 0o600 });
    expect(() => loadServiceWallet(data, key, { SERVICE_WALLET_FILE: inside }, { cluster: true })).toThrow(/inside the data directory/);
    const outside = join(tmp("keys-"), "wallet.json");
    writeFileSync(outside, json, { mode: 0o600 });
    expect(loadServiceWallet(data, key, { SERVICE_WALLET_FILE: outside }, { cluster: true }).publicKey.equals(wallet.publicKey)).toBe(true);
    expect(loadServiceWallet(data, key, { SERVICE_WALLET: json }, { cluster: true }).publicKey.equals(wallet.publicKey)).toBe(true);
    expect(() => loadServiceWallet(data, key, { SERVICE_WALLET: "[1,2,3]" }, { cluster: true })).toThrow(
      /SERVICE_WALLET must be a JSON array of the wallet's 64 secret-key bytes/,
    );

    // With a service key from outside, start --rpc still refuses before it reaches the RPC URL or writes anything.
    const svc = join(data, "svc");
    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/start.ts", "--rpc", "http://127.0.0.1:9", "--data", svc], {
      cwd: ROOT,
      env: clean({ SERVICE_KEY_FILE: keyFile(tmp("keys-")).f }),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(/service wallet must come from SERVICE_WALLET .* or SERVICE_WALLET_FILE/);
    expect(existsSync(svc)).toBe(false);
  });

  it("rotate-service-key re-seals every custodial key and the service wallet; the store then refuses the old key", async () => {
    const data = tmp("data-");
    const keys = tmp("keys-");
    const old = keyFile(keys);
    const storeUrl = join(data, "store.sqlite");
    const before = await populated(storeUrl, data, old.key);
    const newFile = join(keys, "new.key");
    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/admin.ts", "--data", data, "rotate-service-key", "--new-key-file", newFile], {
      cwd: ROOT,
      env: clean({ SERVICE_KEY_FILE: old.f }),
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const next = ServiceKey.load(data, { SERVICE_KEY_FILE: newFile });
    expect(JSON.parse(run.stdout)).toMatchObject({ users: 3, fingerprint: next.fingerprint(), keyFile: newFile });
    expect(next.fingerprint()).not.toBe(old.key.fingerprint());

    await opensWith(storeUrl, next, before.users);
    await expect(opensWith(storeUrl, old.key, before.users)).rejects.toThrow(/not the store's/);
    expect(loadServiceWallet(data, next, {}).publicKey.toBase58()).toBe(before.service);
    expect(() => loadServiceWallet(data, old.key, {})).toThrow();
  });

  it("an interrupted rotation leaves the old key in force before the switch, the new one after it (PostgreSQL)", async () => {
    const target = freshStore("postgres", "keyrot");
    targets.push(target);
    const data = tmp("data-");
    const [k1, k2, k3] = [ServiceKey.generate(), ServiceKey.generate(), ServiceKey.generate()];
    const before = await populated(target.url, data, k1);
    const crash = (at: string) => (step: string) => {
      if (step === at) throw new Error(`crash after ${step}`);
    };
    const rotate = async (from: ServiceKey, to: ServiceKey, at: string) => {
      const store = await openStore(target.url);
      try {
        return await rotateServiceKey(store.db as never, from, to, { walletFile: join(data, "service-wallet.sealed"), after: crash(at) });
      } finally {
        await store.close();
      }
    };

    // Crash after the new ciphertexts were written beside the old: still the old key's store.
    await expect(rotate(k1, k2, "prepared")).rejects.toThrow(/crash after prepared/);
    await opensWith(target.url, k1, before.users);
    await expect(opensWith(target.url, k2, before.users)).rejects.toThrow(/did not finish/);
    expect(loadServiceWallet(data, k1, {}).publicKey.toBase58()).toBe(before.service);

    // Crash after the switch, before the wallet file was renamed: the new key's store, and the
    // service wallet found beside the old file.
    await expect(rotate(k1, k3, "switched")).rejects.toThrow(/crash after switched/);
    await opensWith(target.url, k3, before.users);
    await expect(opensWith(target.url, k1, before.users)).rejects.toThrow(/not the store's/);
    expect(existsSync(join(data, "service-wallet.sealed.next"))).toBe(true);
    expect(loadServiceWallet(data, k3, {}).publicKey.toBase58()).toBe(before.service);
    expect(existsSync(join(data, "service-wallet.sealed.next"))).toBe(false);
    // Running the rotation again once it is done changes nothing.
    expect(await rotate(k1, k3, "never")).toEqual({ users: 0 });
    await opensWith(target.url, k3, before.users);
  });
});
