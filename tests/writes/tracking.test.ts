/**
 * The spec's tracking observables, read with GET over HTTP on the whole server (read API +
 * writes): after create the offer is readable and `viewer.role` is `creator`; after take the
 * revision is past `expectedRevision` and `viewer.position` is set; after close `status` is
 * `Closed` and `closedAt` is set. A lost create is not readable until its key is resent.
 */
import { describe, expect, it } from "vitest";
import { UNIT, createBody, key, writeSuite } from "../support/stack";
import { get, post } from "../support/http";

interface OfferView {
  address: string;
  status: string;
  revision: string;
  closedAt: string | null;
  remainingTakerMicros: string;
  creatorAllocatedMicros: string;
  viewer: { role: string; canTake: boolean; canClose: boolean; position: Record<string, unknown> | null };
}

describe("tracking a submission through GET", () => {
  const w = writeSuite({ alice: 100n * UNIT, bob: 100n * UNIT }, { contract: true });

  /** Polls GET like a client (here every 10 ms, up to 5 s); returns the first view passing `ok`. */
  async function track(address: string, token: string, ok: (o: OfferView) => boolean): Promise<OfferView> {
    const until = Date.now() + 5_000;
    for (;;) {
      const r = await get(w.s, `/${address}`, token);
      if (r.status === 200 && ok(r.body as unknown as OfferView)) return r.body as unknown as OfferView;
      if (Date.now() > until) throw new Error(`not visible: ${r.status} ${r.text.slice(0, 300)}`);
      await new Promise((x) => setTimeout(x, 10));
    }
  }

  it("create -> creator view; take -> revision moved and position set; close -> Closed with closedAt", async () => {
    const created = await post(w.s, "/", createBody(w.c), w.alice.token);
    expect(created.status, created.text).toBe(200);
    const offer = created.body.offerAddress as string;
    const v1 = await track(offer, w.alice.token, (o) => o.viewer.role === "creator");
    expect(v1.status).toBe("Open");
    expect(v1.revision).toBe("1");
    expect(v1.viewer.canClose).toBe(true);
    const asBob = await track(offer, w.bob.token, () => true);
    expect(asBob.viewer.canTake).toBe(true);
    expect(asBob.viewer.position).toBeNull();

    const took = await post(w.s, `/${offer}/take`, { takeAmountMicros: String(5n * UNIT), expectedRevision: v1.revision, idempotencyKey: key() }, w.bob.token);
    expect(took.status, took.text).toBe(200);
    const v2 = await track(offer, w.bob.token, (o) => BigInt(o.revision) > BigInt(v1.revision) && o.viewer.position !== null);
    expect(v2.remainingTakerMicros).toBe(String(5n * UNIT));
    expect(v2.creatorAllocatedMicros).toBe(String(4n * UNIT));

    const closed = await post(w.s, `/${offer}/close`, { expectedRevision: v2.revision, idempotencyKey: key() }, w.alice.token);
    expect(closed.status, closed.text).toBe(200);
    const v3 = await track(offer, w.alice.token, (o) => o.status === "Closed" && o.closedAt !== null);
    expect(BigInt(v3.revision)).toBe(BigInt(v2.revision) + 1n);
  });

  it("a lost create is not readable until resent under the same key; then it is, once", async () => {
    const body = createBody(w.c);
    w.s.chain.gateway.dropNext(1);
    const first = await post(w.s, "/", body, w.alice.token);
    expect(first.status).toBe(200);
    const offer = first.body.offerAddress as string;
    expect((await get(w.s, `/${offer}`, w.alice.token)).status).toBe(404);
    const again = await post(w.s, "/", body, w.alice.token);
    expect(again.status).toBe(200);
    expect(again.body.offerAddress).toBe(offer);
    const v = await track(offer, w.alice.token, (o) => o.viewer.role === "creator");
    expect(v.revision).toBe("1");
    const mine = await w.s.db.selectFrom("offers").select("address").where("creator", "=", w.alice.user.wallet.toBase58()).execute();
    expect(mine.filter((m) => m.address === offer)).toHaveLength(1);
  });
});
