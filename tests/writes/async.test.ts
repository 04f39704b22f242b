/**
 * RPC-like submission on the local chain (EngineGateway.asyncSubmit: accepted at once, processed
 * afterwards, no preflight): races then fail on chain *after* `pending` was answered. The
 * idempotency record follows the signature (confirmed / failed); a replay of a failed take
 * answers the mapped program error (409), a replay of the winner its receipt; one position only.
 */
import { describe, expect, it } from "vitest";
import { UNIT, balance, contract, createBody, key, makeUser, writeSuite } from "../support/stack";
import { post } from "../support/http";

describe("asynchronous submission (RPC-like)", () => {
  const w = writeSuite();

  it("concurrent takes at one revision: one lands, the others fail on chain and replay as 409", async () => {
    const c = await contract(w.s);
    const alice = await makeUser(w.s, 100n * UNIT);
    const o = await post(w.s, "/", createBody(c, { creatorTotalMicros: String(50n * UNIT), takerTargetMicros: String(50n * UNIT) }), alice.token);
    expect(o.status).toBe(200);
    const offer = o.body.offerAddress as string;
    const takers = await Promise.all(Array.from({ length: 12 }, () => makeUser(w.s, 20n * UNIT)));
    w.s.chain.gateway.asyncSubmit = true;
    try {
      const bodies = takers.map(() => ({ takeAmountMicros: String(5n * UNIT), expectedRevision: "1", idempotencyKey: key() }));
      const rs = await Promise.all(takers.map((t, i) => post(w.s, `/${offer}/take`, bodies[i], t.token)));
      for (const r of rs) expect([200, 409]).toContain(r.status);
      const pending = rs.map((r, i) => ({ r, i })).filter((x) => x.r.status === 200);
      expect(pending.length).toBeGreaterThan(1); // several passed the checks before any landed
      const outcomes = await Promise.all(pending.map((x) => w.s.chain.gateway.waitFor(x.r.body.signature as string, 10_000)));
      expect(outcomes.filter((x) => x.state === "confirmed")).toHaveLength(1);
      expect(outcomes.filter((x) => x.state === "failed")).toHaveLength(pending.length - 1);
      // Replays: the winner gets its receipt, the losers the program's RevisionMismatch as 409.
      for (const [j, x] of pending.entries()) {
        const again = await post(w.s, `/${offer}/take`, bodies[x.i], takers[x.i].token);
        if (outcomes[j].state === "confirmed") {
          expect(again.status).toBe(200);
          expect(again.body.signature).toBe(x.r.body.signature);
        } else {
          expect(again.status, again.text).toBe(409);
          expect(again.body.error).toMatch(/changed since expectedRevision/);
        }
      }
      const rows = await w.s.custody.db.selectFrom("idempotency").select(["state"]).where("operation", "=", "take").execute();
      expect(rows.filter((r) => r.state === "confirmed")).toHaveLength(1);
      expect(rows.filter((r) => r.state === "failed")).toHaveLength(pending.length - 1);
      const paid = await Promise.all(takers.map((t) => balance(w.s, t.user.tokenAccount)));
      expect(paid.filter((b) => b === 15n * UNIT)).toHaveLength(1);
      expect(await w.s.db.selectFrom("positions").select("address").where("offer", "=", offer).execute()).toHaveLength(1);
    } finally {
      w.s.chain.gateway.asyncSubmit = false;
    }
  });
});
