/**
 * Idempotency rows are pruned after the retention period, and a key replayed after that cannot
 * do anything twice: the create's offer address derives from the key, which already exists.
 */
import { describe, expect, it } from "vitest";
import { RETENTION_SECONDS } from "../../service/writes/idempotency";
import { UNIT, balance, contract, createBody, writeSuite } from "../support/stack";
import { post } from "../support/http";

describe("idempotency retention", () => {
  const w = writeSuite({ alice: 100n * UNIT });

  it("keeps keys for 7 days after their last use, then forgets them; a late replay creates nothing", async () => {
    const c = await contract(w.s);
    const body = createBody(c);
    const first = await post(w.s, "/", body, w.alice.token);
    expect(first.status, first.text).toBe(200);
    const rows = () =>
      w.s.db
        .selectFrom("idempotency" as never)
        .selectAll()
        .execute() as Promise<{ idem_key: string; updated_at: number }[]>;
    const [row] = (await rows()).filter((r) => r.idem_key === body.idempotencyKey);
    expect(row).toBeDefined();
    // Within the retention period nothing goes; past it the row does.
    expect(await w.s.writes.idem.prune(RETENTION_SECONDS, row.updated_at + RETENTION_SECONDS)).toBe(0);
    expect(await w.s.writes.idem.prune(RETENTION_SECONDS, row.updated_at + RETENTION_SECONDS + 1)).toBe(1);
    expect((await rows()).some((r) => r.idem_key === body.idempotencyKey)).toBe(false);
    // The forgotten key replayed: treated as new, refused because its offer exists; no tokens move.
    const before = await balance(w.s, w.alice.user.tokenAccount);
    const late = await post(w.s, "/", body, w.alice.token);
    expect(late.status, late.text).toBeGreaterThanOrEqual(400);
    expect(late.status).toBeLessThan(500);
    expect(await balance(w.s, w.alice.user.tokenAccount)).toBe(before);
    expect((await w.s.db.selectFrom("offers").select("address").where("creator", "=", w.alice.user.wallet.toBase58()).execute()).length).toBe(1);
  });
});
