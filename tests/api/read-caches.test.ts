/**
 * The read caches over real HTTP (service/read/read-cache.ts, service/custody/read-auth-cache.ts):
 * a signed-in read shares the anonymous page and still sees the caller's own new position the
 * moment the indexer applies it; a revoke and a compliance block take effect on the next read;
 * and, between two processes on one store (two Custody instances with their own connections, on
 * SQLite and PostgreSQL), a revoke or block made by one is seen by the other within its poll
 * bound.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Kysely } from "kysely";
import { PublicKey } from "@solana/web3.js";
import { randomBytes, randomUUID } from "node:crypto";
import { apiStack, type ApiStack, makeUser, contract as makeContract, createBody, key, UNIT, type TestUser } from "../support/stack";
import { getJson, gql, post } from "../support/http";
import { openStore, type Store } from "../../indexer/store/db";
import { Custody } from "../../service/custody/custody";
import { ServiceKey } from "../../service/custody/crypto";
import { ENGINES, freshStore, type StoreTarget } from "../indexer/stores";

const BASE = "/api/bets-usdc/offers";

describe("signed-in reads on the shared page", () => {
  let s: ApiStack;
  let creator: TestUser, taker: TestUser;
  let offer: string;

  /** Resolves once the indexer has committed a write touching an offer (`address`, or any). */
  const appliedFor = (address?: string) =>
    new Promise<void>((resolve) => {
      const off = s.writer.onApplied((c) => {
        if (address === undefined ? c.offers.length > 0 : c.offers.includes(address)) {
          off();
          resolve();
        }
      });
    });

  beforeAll(async () => {
    s = await apiStack();
    [creator, taker] = [await makeUser(s), await makeUser(s)];
    const contract = await makeContract(s);
    const applied = appliedFor();
    const r = await post(s, "/", createBody(contract, { creatorTotalMicros: String(8n * UNIT), takerTargetMicros: String(10n * UNIT) }), creator.token);
    expect(r.status).toBe(200);
    offer = r.body.offerAddress as string;
    await applied;
  });
  afterAll(async () => s?.stop());

  it("sees the caller's own new position, and the offer's new state, right after the indexer applies the take", async () => {
    // Warm every cache: the anonymous offer and page, the token, the blocked set.
    for (const token of [undefined, taker.token]) {
      expect((await getJson(s, `${BASE}/${offer}`, { token })).body.viewer.role).toBe("none");
      expect((await getJson(s, `${BASE}/?pageSize=50`, { token })).status).toBe(200);
    }
    expect((await getJson(s, `${BASE}/mine`, { token: taker.token })).body.offers).toEqual([]);
    const before = (await getJson(s, `${BASE}/${offer}`)).body;
    const applied = appliedFor(offer);
    const t = await post(s, `/${offer}/take`, { takeAmountMicros: String(3n * UNIT), expectedRevision: before.revision, idempotencyKey: key() }, taker.token);
    expect(t.status).toBe(200);
    await applied;
    // No waiting: the first read after the commit already shows it (the TTL is 1 s; only the drop on the write explains it).
    const one = (await getJson(s, `${BASE}/${offer}`, { token: taker.token })).body;
    expect(one.viewer.role).toBe("taker");
    expect(one.viewer.position.takerAmountMicros).toBe(String(3n * UNIT));
    expect(one.revision).not.toBe(before.revision);
    expect(BigInt(one.remainingTakerMicros)).toBe(BigInt(before.remainingTakerMicros) - 3n * UNIT);
    const listed = (await getJson(s, `${BASE}/?pageSize=50`, { token: taker.token })).body.offers.find((o: { address: string }) => o.address === offer);
    expect(listed.viewer.role).toBe("taker");
    expect(listed.remainingTakerMicros).toBe(one.remainingTakerMicros);
    const mine = (await getJson(s, `${BASE}/mine`, { token: taker.token })).body.offers;
    expect(mine.map((o: { address: string }) => o.address)).toEqual([offer]);
    // The shared page stays anonymous for everyone else.
    expect((await getJson(s, `${BASE}/${offer}`)).body.viewer.role).toBe("none");
    expect((await getJson(s, `${BASE}/${offer}`, { token: creator.token })).body.viewer.role).toBe("creator");
  });

  it("refuses a revoked token on the next read, and shows a block on the next read", async () => {
    const u = await makeUser(s);
    const extra = await s.custody.issueToken(u.user.id, { scopes: ["bet:read"] });
    expect((await getJson(s, `${BASE}/${offer}`, { token: extra.token })).body.viewer).toMatchObject({ canTake: true, takeRefusal: null });
    await s.custody.setBlocked(u.user.id, true, "review");
    expect((await getJson(s, `${BASE}/${offer}`, { token: extra.token })).body.viewer).toMatchObject({ canTake: false, takeRefusal: "callerBlocked" });
    await s.custody.setBlocked(u.user.id, false);
    expect((await getJson(s, `${BASE}/${offer}`, { token: extra.token })).body.viewer.canTake).toBe(true);
    expect(await s.custody.revokeToken(extra.id)).toBe(true);
    expect((await getJson(s, `${BASE}/${offer}`, { token: extra.token })).status).toBe(401);
    expect((await getJson(s, `${BASE}/?pageSize=5`, { token: u.token })).status).toBe(200);
    await s.custody.revokeAllTokens(u.user.id);
    expect((await getJson(s, `${BASE}/mine`, { token: u.token })).status).toBe(401);
  });

  it("shows a block on the next GraphQL read too, although the answer is cached per caller", async () => {
    const u = await makeUser(s);
    const Q = `query($a: Address!) { offer(address: $a) { viewer { canTake } } }`;
    const canTake = async () => (await gql(s, Q, { a: offer }, u.token)).body.data.offer.viewer.canTake;
    expect(await canTake()).toBe(true);
    expect(await canTake()).toBe(true); // now an answer of the response cache
    await s.custody.setBlocked(u.user.id, true, "review");
    expect(await canTake()).toBe(false);
    await s.custody.setBlocked(u.user.id, false);
    expect(await canTake()).toBe(true);
  });
});

describe.each(ENGINES)("read auth cache between two processes on %s", (engine) => {
  let target: StoreTarget;
  const stores: Store[] = [];
  let a: Custody, b: Custody;
  const POLL_MS = 200;

  beforeAll(async () => {
    target = freshStore(engine, "authcache");
    const key = ServiceKey.generate();
    for (let i = 0; i < 2; i++) stores.push(await openStore(target.url));
    a = await Custody.open(stores[0].db as Kysely<unknown>, key, { pollMs: POLL_MS });
    b = await Custody.open(stores[1].db as Kysely<unknown>, key, { pollMs: POLL_MS });
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await target?.drop();
  });

  const newUser = async () => {
    const id = randomUUID();
    const wallet = new PublicKey(randomBytes(32)).toBase58();
    await a.db
      .insertInto("users")
      .values({
        id,
        name: `u${id.slice(0, 8)}`,
        display_name: "u",
        wallet,
        token_account: wallet,
        wallet_secret_enc: "x",
        wallet_secret_enc_next: null,
        blocked: 0,
        blocked_reason: null,
        created_at: 0,
      })
      .execute();
    return { id, wallet };
  };

  /** How long until `check` holds, polled every 10 ms; throws past `bound`. */
  const within = async (bound: number, check: () => Promise<boolean>) => {
    const t = Date.now();
    while (!(await check())) {
      if (Date.now() - t > bound) throw new Error(`not within ${bound} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return Date.now() - t;
  };

  it("a revoke in one process is refused by the other within its poll bound, and at once in its own", async () => {
    const u = await newUser();
    const t1 = await a.issueToken(u.id);
    const t2 = await a.issueToken(u.id);
    expect((await a.authenticateRead(t1.token))?.user.id).toBe(u.id);
    expect((await b.authenticateRead(t1.token))?.user.id).toBe(u.id);
    expect((await b.authenticateRead(t2.token))?.user.id).toBe(u.id);
    await a.revokeToken(t1.id);
    expect(await a.authenticateRead(t1.token)).toBeNull();
    // b held t1 as valid: it lets go within POLL_MS (plus the query).
    await within(POLL_MS + 300, async () => (await b.authenticateRead(t1.token)) === null);
    expect((await b.authenticateRead(t2.token))?.user.id).toBe(u.id);
    await b.revokeAllTokens(u.id);
    expect(await b.authenticateRead(t2.token)).toBeNull();
    await within(POLL_MS + 300, async () => (await a.authenticateRead(t2.token)) === null);
  });

  it("a block in one process shows in the other's blocked set within its poll bound", async () => {
    const u = await newUser();
    expect(await b.blockedWallets([u.wallet])).toEqual(new Set());
    await a.setBlocked(u.id, true, "review");
    expect(await a.blockedWallets([u.wallet])).toEqual(new Set([u.wallet]));
    await within(POLL_MS + 300, async () => (await b.blockedWallets([u.wallet])).has(u.wallet));
  });

  it("an expired token is refused from the cache too", async () => {
    const u = await newUser();
    const t = await a.issueToken(u.id, { ttlSeconds: 2 });
    expect((await a.authenticateRead(t.token))?.user.id).toBe(u.id);
    await within(4_000, async () => (await a.authenticateRead(t.token)) === null);
  });
});
