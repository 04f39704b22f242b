/**
 * Why a pool was canceled, over real HTTP (embed endpoint and GraphQL): the spec's CANCELED
 * means "the creator canceled", but the program also cancels escalations (the authority's 255:
 * AUTHORITY; 7 days undecided, then anyone's cancel: TIMEOUT) and retires closed pools without
 * picks. `cancelReason` tells them apart and stays through REFUNDED, also when the authority's
 * cancel was refunded only after its 7 days (the pool account alone then looks like a timeout:
 * the cancel's event decides); a pool resolved for an outcome nobody backed is REFUNDED without
 * one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublicKey } from "@solana/web3.js";
import { upsertPoolCatalog } from "../../indexer";
import { PoolOps } from "../../service/chain/pools-ops";
import { apiStack, type ApiStack, makeUser, UNIT, type TestUser } from "../support/stack";
import { getJson, gql } from "../support/http";
import { until } from "../support/wait";

const EMBED = "/api/embed/v1/polls";
const DAY = 86_400n;
let s: ApiStack;
let ops: PoolOps;
let u: TestUser[];

beforeAll(async () => {
  s = await apiStack({ embedTtlMs: 0 });
  u = [await makeUser(s), await makeUser(s), await makeUser(s)];
  ops = new PoolOps({ gateway: s.chain.gateway, pools: s.chain.pools, custody: s.custody, service: s.chain.service, treasury: s.chain.treasury });
});
afterAll(async () => s?.stop());

async function listed(slug: string, question: string): Promise<PublicKey> {
  const now = await s.chain.gateway.now();
  const p = await ops.create(u[0].name, { question, labels: ["Yes", "No", "Maybe"], closesAt: now + 100n });
  await upsertPoolCatalog(s.db, { pool: p.toBase58(), slug });
  return p;
}

const embed = (slug: string, state: string) =>
  until(async () => {
    const d = (await getJson(s, `${EMBED}/${slug}`)).body.data;
    return d?.state === state ? d : null;
  });

describe("cancelReason", () => {
  it("names the creator, the authority's cancel, the 7-day timeout's cancel or a pool without picks; null otherwise", async () => {
    const withdrawn = await listed("withdrawn", "Withdrawn by its creator?");
    const authority = await listed("authority", "Canceled by the authority?");
    const lapsed = await listed("lapsed", "Left undecided?");
    const empty = await listed("empty", "Nobody picked?");
    const unbacked = await listed("unbacked", "Nobody backed the result?");
    for (const p of [withdrawn, authority, lapsed, unbacked]) await ops.pick(u[1].name, p, 0, 2n * UNIT);
    for (const p of [authority, lapsed]) await ops.pick(u[2].name, p, 1, 3n * UNIT);
    expect((await embed("withdrawn", "OPEN")).cancelReason).toBeNull();
    await ops.cancel(u[0].name, withdrawn);
    expect((await embed("withdrawn", "CANCELED")).cancelReason).toBe("CREATOR");

    await s.chain.gateway.advance(101n);
    for (const p of [authority, lapsed]) {
      await ops.propose(u[0].name, p, 0);
      await ops.vote(u[2].name, p, 1); // a dispute
    }
    await ops.propose(u[0].name, unbacked, 2); // an outcome nobody picked
    await ops.vote(u[1].name, unbacked, 2); // every participant confirmed: resolvable at once
    await ops.resolve(unbacked);
    await s.chain.gateway.advance(DAY + 1n);
    for (const p of [authority, lapsed]) await ops.resolve(p); // escalated
    expect((await embed("authority", "RESOLVING")).cancelReason).toBeNull();
    await ops.authorityResolve(authority, 255);
    expect((await embed("authority", "CANCELED")).cancelReason).toBe("AUTHORITY");

    // The worker does the rest: refunds, the retirement of the empty pool, the lapsed escalation.
    await s.chain.gateway.advance(7n * DAY);
    await s.worker.drain();
    expect((await embed("withdrawn", "REFUNDED")).cancelReason).toBe("CREATOR");
    expect((await embed("authority", "REFUNDED")).cancelReason).toBe("AUTHORITY");
    expect((await embed("lapsed", "REFUNDED")).cancelReason).toBe("TIMEOUT");
    // Both were last changed after the authority's deadline (the refunds): only the cancel's time differs.
    for (const p of [authority, lapsed]) {
      const row = await s.db.selectFrom("pools").select(["updated_at", "escalated_at"]).where("address", "=", p.toBase58()).executeTakeFirstOrThrow();
      expect(Number(row.updated_at)).toBeGreaterThanOrEqual(Number(row.escalated_at) + 7 * 86_400);
    }
    expect((await embed("empty", "REFUNDED")).cancelReason).toBe("NO_PICKS");
    expect((await ops.read(empty)).participantCount).toBe(0);
    expect((await embed("unbacked", "REFUNDED")).cancelReason).toBeNull();

    const g = await gql(s, `{ a: poll(identifier: "lapsed") { state cancelReason } b: poll(identifier: "unbacked") { state cancelReason } }`);
    expect(g.body.data).toEqual({ a: { state: "REFUNDED", cancelReason: "TIMEOUT" }, b: { state: "REFUNDED", cancelReason: null } });
  });
});
