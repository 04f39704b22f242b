/**
 * Compute units per instruction of the pools program, measured in bankrun on the compiled
 * program (median of SAMPLES runs each), split into the program's own work and its CPI callees
 * (system and token programs, from their "Program X consumed N" log lines), and the binary size.
 * The 1.18 runtime also charges 1000 CU per CPI invocation to the caller; the last column
 * removes it.
 *
 *   npx tsx scripts/bench-pools-cu.ts      (SAMPLES=20 by default)
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { PoolsWorld, UNIT } from "../tests/harness/pools-world";
import { DEPLOY_DIR, type TxResult } from "../tests/harness/chain";
import { median, splitComputeUnits, type CuSplit } from "./cu-report";

const SAMPLES = Number(process.env.SAMPLES ?? 20);

async function main() {
  const w = await PoolsWorld.create({ feeBps: 500 });
  const pid = w.client.program.programId.toBase58();
  const rows = new Map<string, CuSplit[]>();
  const record = (name: string, r: TxResult) => {
    if (!r.ok) throw new Error(`${name} failed: ${r.error}\n${r.logs.join("\n")}`);
    rows.set(name, [...(rows.get(name) ?? []), splitComputeUnits(r.logs, pid)]);
  };
  const [creator, a, b, c] = [await w.user(100_000n * UNIT), await w.user(100_000n * UNIT), await w.user(100_000n * UNIT), await w.user(100_000n * UNIT)];
  const long = { question: "q".repeat(160), criteria: "c".repeat(280), coverUrl: "https://example.com/" + "u".repeat(108) };
  for (let i = 0; i < SAMPLES; i++) {
    const two = await w.createPool(creator, { closesIn: 1_000n });
    record("create_pool (2 outcomes, default labels)", two.r);
    const many = await w.createPool(creator, { closesIn: 1_000n, labels: Array.from({ length: 8 }, (_, k) => `Outcome number ${k} xx`), ...long });
    record("create_pool (8 outcomes, every text at its limit)", many.r);
    const pool = two.pool;
    record("place_pick (first pick: creates participant)", await w.pick(a, pool, 0, 30n * UNIT));
    record("place_pick (later pick)", await w.pick(a, pool, 1, 5n * UNIT));
    await w.pick(b, pool, 1, 20n * UNIT);
    await w.pick(c, pool, 0, 7n * UNIT);
    await w.pick(a, many.pool, 0, UNIT);
    await w.chain.advance(1_000n);
    record("start_vote", await w.startVote(c.key, pool));
    record("cast_vote", await w.vote(a, pool, 0));
    await w.vote(b, pool, 1);
    record("resolve_pool", await w.resolve(c.key, pool));
    record("settle_participant (winner)", await w.settle(pool, a.key.publicKey));
    record("settle_participant (loser)", await w.settle(pool, b.key.publicKey));
    record("settle_participant (last: dust, DISTRIBUTED)", await w.settle(pool, c.key.publicKey));
    record("cancel_pool (creator)", await w.cancel(creator.key, many.pool));
    record("refund_participant (last: REFUNDED)", await w.refund(many.pool, a.key.publicKey));
    record("update_config", await w.send([await w.client.updateConfig({ authority: w.authority.publicKey, feeBps: 500 })], [w.authority]));
  }

  const size = statSync(join(DEPLOY_DIR, "pools.so")).size;
  console.log(`pools.so: ${size} bytes; median of ${SAMPLES} samples per instruction\n`);
  console.log("| instruction | total CU | CPI callees CU | CPIs | own CU (total - callees) | own CU excl. 1000/CPI invoke fee |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const [name, xs] of rows) {
    const m = (k: keyof CuSplit) => median(xs.map((x) => x[k]));
    console.log(`| ${name} | ${m("total")} | ${m("callees")} | ${m("cpis")} | ${m("own")} | ${m("ownExclInvoke")} |`);
  }
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
