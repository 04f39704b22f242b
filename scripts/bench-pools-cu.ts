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
import { PoolsWorld, UNIT } from "../harness/pools-world";
import { DEPLOY_DIR, type TxResult } from "../harness/chain";
import { median, splitComputeUnits, type CuSplit } from "./cu-report";
import { exitOnError } from "../stack/config/cli";

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
  const DAY = 86_400n;
  for (let i = 0; i < SAMPLES; i++) {
    // d's token account is closed before its payouts: they go to its claim.
    const d = await w.user(3n * UNIT);
    const two = await w.createPool(creator, { closesIn: 1_000n });
    record("create_pool (2 outcomes, default labels)", two.r);
    const many = await w.createPool(creator, { closesIn: 1_000n, labels: Array.from({ length: 8 }, (_, k) => `Outcome number ${k} xx`), ...long });
    record("create_pool (8 outcomes, every text at its limit)", many.r);
    const [pool, disputed, silent, stale] = [
      two.pool,
      (await w.createPool(creator, { closesIn: 1_000n })).pool,
      (await w.createPool(creator, { closesIn: 1_000n })).pool,
      (await w.createPool(creator, { closesIn: 1_000n })).pool,
    ];
    record("place_pick (first pick: creates participant)", await w.pick(a, pool, 0, 30n * UNIT));
    record("place_pick (later pick)", await w.pick(a, pool, 1, 5n * UNIT));
    await w.pick(b, pool, 1, 20n * UNIT);
    await w.pick(c, pool, 0, 7n * UNIT);
    await w.pick(d, pool, 0, 2n * UNIT);
    await w.pick(a, many.pool, 0, UNIT);
    await w.pick(d, many.pool, 1, UNIT);
    await w.pick(a, disputed, 0, UNIT);
    await w.pick(b, disputed, 1, UNIT);
    await w.pick(a, silent, 0, UNIT);
    await w.pick(a, stale, 0, UNIT);
    await w.closeTokenAccount(d);
    record("cancel_pool (creator, picks open)", await w.cancel(creator.key, many.pool));
    record("refund_participant (to a new claim)", await w.refund(many.pool, d.key.publicKey));
    record("refund_participant (last: REFUNDED)", await w.refund(many.pool, a.key.publicKey));
    await w.chain.advance(1_000n);
    record("propose_outcome", await w.propose(creator.key, pool, 0));
    record("cast_vote (confirms the proposal)", await w.vote(a, pool, 0));
    await w.propose(creator.key, disputed, 0);
    record("cast_vote (dispute)", await w.vote(b, disputed, 1));
    await w.chain.advance(DAY);
    record("resolve_pool (undisputed: RESOLVED)", await w.resolve(c.key, pool));
    record("resolve_pool (disputed: escalated)", await w.resolve(c.key, disputed));
    record("authority_resolve (an outcome)", await w.authorityResolve(disputed, 0));
    record("settle_participant (winner)", await w.settle(pool, a.key.publicKey));
    record("settle_participant (loser)", await w.settle(pool, b.key.publicKey));
    record("settle_participant (winner, to an existing claim)", await w.settle(pool, d.key.publicKey));
    record("settle_participant (last: dust, DISTRIBUTED)", await w.settle(pool, c.key.publicKey));
    record("withdraw_claim", await w.withdrawClaim(d, await w.mint.account(d.key.publicKey)));
    await w.chain.advance(2n * DAY);
    record("resolve_pool (no proposal after 72 h: escalated)", await w.resolve(c.key, silent));
    record("authority_resolve (cancel)", await w.authorityResolve(silent, 255));
    await w.resolve(c.key, stale);
    await w.chain.advance(7n * DAY);
    record("cancel_pool (anyone: escalation unanswered 7 days)", await w.cancel(c.key, stale));
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

main().then(() => process.exit(0), exitOnError);
