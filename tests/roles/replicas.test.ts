/**
 * Roles on one PostgreSQL store, in one process on bankrun: the local stack (indexer, worker and
 * API replica A, its changes sent through NOTIFY) and an `api` replica B (stack/roles.ts) on the
 * same chain and store. A change applied by the indexer reaches B's feed and drops B's caches: the
 * Config's fee, cached 30 s by the read service, shows through B as soon as the feed brings it, and
 * a new offer is in B's anonymous browse at once. The same idempotency key sent to A and B at once
 * acts once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Hono } from "hono";
import { serviceApp } from "../../stack/app";
import type { ChangeSet } from "../../indexer/changes";
import { PgChangeFeed } from "../../service/changes/pg-change-feed";
import { startApiReplica } from "../../stack/roles";
import type { AppParts } from "../../stack/service-parts";
import type { LocalStack } from "../../stack/local-stack";
import { freshStore, type StoreTarget } from "../indexer/stores";
import { UNIT, balance, contract, createBody, key, makeUser, stack, type AnyStack } from "../support/stack";
import { get, post } from "../support/http";
import { until } from "../support/wait";

/** The production app (stack/app.ts, as scripts/start.ts builds it): the read service's own cache lifetimes, following the feed. */
const productionApp = (p: AppParts): Hono => serviceApp(p).app;

describe("API replicas on one PostgreSQL store", () => {
  let target: StoreTarget;
  let a: LocalStack;
  let b: Awaited<ReturnType<typeof startApiReplica>>;
  let bStack: AnyStack;
  const heardByB: ChangeSet[] = [];

  beforeAll(async () => {
    target = freshStore("postgres", "roles");
    a = await stack({ storeUrl: target.url, changes: "postgres", app: productionApp });
    b = await startApiReplica({ chain: a.chain, storeUrl: target.url, serviceKey: a.custody.key, app: productionApp });
    b.changes.subscribe((c) => heardByB.push(c));
    bStack = { url: b.url, admin: b.admin, custody: b.custody, chain: a.chain };
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await target?.drop();
  });

  it("a Config change applied by the indexer reaches replica B's feed and drops its settings cache at once", async () => {
    expect(b.changes).toBeInstanceOf(PgChangeFeed);
    const before = await get(bStack, "/contracts");
    expect(before.status).toBe(200);
    const fee = Number(before.body.feeBps);
    // B now holds the settings for 30 s; only the feed can make it drop them sooner.
    await a.admin.setOffersEnabled(true, fee + 100);
    const slot = (await a.writer.checkpoint())!.slot;
    await until(async () => (heardByB.some((c) => c.config && c.slot >= slot) ? true : null), 10_000, 5);
    const after = await get(bStack, "/contracts");
    expect(after.body.feeBps).toBe(fee + 100);
    await a.admin.setOffersEnabled(true, fee);
    await until(async () => ((await get(bStack, "/contracts")).body.feeBps === fee ? true : null), 10_000, 20);
  });

  it("an offer created through A is in B's anonymous browse as soon as B's feed has it", async () => {
    const c = await contract(a);
    const u = await makeUser(a, 100n * UNIT);
    const warm = await get(bStack, "/?view=browse&pageSize=50");
    expect(warm.status).toBe(200);
    const r = await post(a, "/", createBody(c), u.token);
    expect(r.status, r.text).toBe(200);
    const offer = r.body.offerAddress as string;
    await until(async () => (heardByB.some((ch) => ch.offers.includes(offer)) ? true : null), 10_000, 5);
    const seen = await get(bStack, "/?view=browse&pageSize=50");
    expect((seen.body.offers as { address: string }[]).map((o) => o.address)).toContain(offer);
  });

  it("the same idempotency key sent to A and B at once creates one offer", async () => {
    const c = await contract(a);
    const u = await makeUser(a, 100n * UNIT);
    const body = createBody(c, { idempotencyKey: key() });
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => post(i % 2 ? bStack : a, "/", body, u.token)));
    const ok = rs.filter((r) => r.status === 200);
    // The loser of the insert race answers "in progress" (409) while the winner checks and submits.
    for (const r of rs) expect([200, 409], r.text).toContain(r.status);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((r) => r.body.signature)).size).toBe(1);
    const offer = ok[0].body.offerAddress as string;
    // Once done, both replicas replay the one result.
    for (const s of [a, bStack]) expect((await post(s, "/", body, u.token)).body).toEqual(ok[0].body);
    await until(async () => ((await a.db.selectFrom("offers").select("address").where("address", "=", offer).executeTakeFirst()) ? true : null), 10_000);
    const mine = await a.db.selectFrom("offers").select("address").where("creator", "=", u.user.wallet.toBase58()).execute();
    expect(mine.map((o) => o.address)).toEqual([offer]);
    expect(await balance(a, u.user.tokenAccount)).toBe(92n * UNIT);
  });
});
