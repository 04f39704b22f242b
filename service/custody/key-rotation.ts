/**
 * The service key's identity in the store, and its rotation.
 *
 * The store records the fingerprint of the key the custodial wallets are sealed under
 * (`service_key`, one row). A start with another key is refused before anything is sealed
 * (`adoptServiceKey`), so a wrong or lost key never mixes wallets sealed under two keys.
 *
 * Rotation (`rotateServiceKey`, operator command `scripts/admin.ts rotate-service-key`, run while
 * the service is stopped), crash-safe at every step:
 * 1. one transaction: every custodial key re-sealed under the new key into
 *    `wallet_secret_enc_next`, and `next_fingerprint` set; the old ciphertexts stay in force;
 * 2. the sealed service wallet file re-sealed beside the old one (`<file>.next`, written to a
 *    temporary name and renamed, so it is whole or absent);
 * 3. one transaction, the switch: `wallet_secret_enc = wallet_secret_enc_next` for every user
 *    (one created since step 1 is re-sealed here), every webhook secret re-sealed,
 *    `fingerprint` = the new key's;
 * 4. `<file>.next` renamed over the wallet file.
 * A crash before 3 leaves the store on the old key (start with it, or run the rotation again); a
 * crash after 3 leaves it on the new key, and `adoptServiceKey` / `loadServiceWallet` finish
 * what is left (a half-done switch cannot exist: it is one transaction).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { Kysely } from "kysely";
import type { ServiceKey } from "./crypto";
import type { CustodyDatabase } from "./schema";

type Db = Kysely<CustodyDatabase>;

/**
 * Checks `key` against the store's recorded key (recording it on a store without one, once it
 * opens the wallets already there); finishes a switch to `key` that a crash interrupted.
 */
export async function adoptServiceKey(db: Db, key: ServiceKey): Promise<void> {
  const fp = key.fingerprint();
  let row = await db.selectFrom("service_key").selectAll().where("id", "=", 1).executeTakeFirst();
  if (!row) {
    const u = await db.selectFrom("users").select(["wallet", "wallet_secret_enc"]).limit(1).executeTakeFirst();
    if (u) {
      try {
        key.open(u.wallet_secret_enc, u.wallet);
      } catch {
        throw new Error("the service key does not open the custodial wallets of this store: start with the key they were sealed under");
      }
    }
    await db
      .insertInto("service_key")
      .values({ id: 1, fingerprint: fp, next_fingerprint: null })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
    row = await db.selectFrom("service_key").selectAll().where("id", "=", 1).executeTakeFirstOrThrow();
  }
  if (row.fingerprint === fp) return;
  if (row.next_fingerprint === fp)
    throw new Error(
      `the store is being rotated to this service key (fingerprint ${fp}) but the rotation did not finish: run scripts/admin.ts rotate-service-key again`,
    );
  throw new Error(
    `the service key (fingerprint ${fp}) is not the store's (fingerprint ${row.fingerprint}): start with the key its custodial wallets are sealed under`,
  );
}

export interface RotationHooks {
  /** Called after each step (tests stop there to play a crash). */
  after?: (step: "prepared" | "wallet-file" | "switched") => void | Promise<void>;
}

/** Re-seals every custodial key (and the sealed service wallet file, if given) under `next`; returns the users re-sealed. */
export async function rotateServiceKey(db: Db, old: ServiceKey, next: ServiceKey, o: { walletFile?: string } & RotationHooks = {}): Promise<{ users: number }> {
  // A store from before fingerprints: the old key must open its wallets, and is recorded.
  if (!(await db.selectFrom("service_key").select("id").executeTakeFirst())) await adoptServiceKey(db, old);
  const row = await db.selectFrom("service_key").selectAll().where("id", "=", 1).executeTakeFirstOrThrow();
  const done = row.fingerprint === next.fingerprint();
  if (!done && row.fingerprint !== old.fingerprint())
    throw new Error(`the old key (fingerprint ${old.fingerprint()}) is not the store's (fingerprint ${row.fingerprint})`);
  const reseal = (enc: string, wallet: string) => next.seal(old.open(enc, wallet), wallet);
  /** Writes every user's (or, with `onlyMissing`, every not yet re-sealed user's) key under `next` beside the old one. */
  const resealUsers = async (trx: Db, onlyMissing: boolean): Promise<number> => {
    let q = trx.selectFrom("users").select(["id", "wallet", "wallet_secret_enc"]);
    if (onlyMissing) q = q.where("wallet_secret_enc_next", "is", null);
    const rows = await q.execute();
    for (const u of rows)
      await trx
        .updateTable("users")
        .set({ wallet_secret_enc_next: reseal(u.wallet_secret_enc, u.wallet) })
        .where("id", "=", u.id)
        .execute();
    return rows.length;
  };
  let users = 0;
  if (!done) {
    // 1. New ciphertexts beside the old ones.
    await db.transaction().execute(async (trx) => {
      users += await resealUsers(trx, false);
      await trx.updateTable("service_key").set({ next_fingerprint: next.fingerprint() }).where("id", "=", 1).execute();
    });
    await o.after?.("prepared");
  }
  // 2. The service wallet beside the old file.
  if (o.walletFile && existsSync(o.walletFile)) {
    const cur = JSON.parse(readFileSync(o.walletFile, "utf8")) as { publicKey: string; sealed: string };
    let secret: Buffer | null = null;
    try {
      secret = old.open(cur.sealed, "service-wallet");
    } catch {
      // Already under the new key (a rotation that stopped after its switch).
      next.open(cur.sealed, "service-wallet");
    }
    if (secret) {
      const tmp = `${o.walletFile}.next.tmp`;
      writeFileSync(tmp, JSON.stringify({ publicKey: cur.publicKey, sealed: next.seal(secret, "service-wallet") }) + "\n", { mode: 0o600 });
      renameSync(tmp, `${o.walletFile}.next`);
    }
    await o.after?.("wallet-file");
  }
  if (!done) {
    // 3. The switch, in one transaction.
    await db.transaction().execute(async (trx) => {
      users += await resealUsers(trx, true);
      await trx
        .updateTable("users")
        .set((eb) => ({ wallet_secret_enc: eb.fn.coalesce("wallet_secret_enc_next", "wallet_secret_enc"), wallet_secret_enc_next: null }))
        .execute();
      // Webhook secrets (service/webhooks/endpoints.ts) move to the new key in the same switch.
      for (const e of await trx.selectFrom("webhook_endpoints").select(["id", "secret_enc"]).execute())
        await trx
          .updateTable("webhook_endpoints")
          .set({ secret_enc: next.seal(old.open(e.secret_enc, `webhook:${e.id}`), `webhook:${e.id}`) })
          .where("id", "=", e.id)
          .execute();
      await trx.updateTable("service_key").set({ fingerprint: next.fingerprint(), next_fingerprint: null }).where("id", "=", 1).execute();
    });
    await o.after?.("switched");
  }
  // 4. The wallet file.
  if (o.walletFile) finishWalletFile(o.walletFile, next);
  return { users };
}

/** Renames `<file>.next` over `file` when it is the one `key` opens (the end of a rotation). */
export function finishWalletFile(file: string, key: ServiceKey): void {
  const pending = `${file}.next`;
  if (!existsSync(pending)) return;
  const opens = (f: string) => {
    try {
      key.open((JSON.parse(readFileSync(f, "utf8")) as { sealed: string }).sealed, "service-wallet");
      return true;
    } catch {
      return false;
    }
  };
  if (existsSync(file) && opens(file)) return; // the rotation has not switched yet: the old file stays in force
  if (opens(pending)) renameSync(pending, file);
}
