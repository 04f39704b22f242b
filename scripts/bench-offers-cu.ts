/**
 * Compute units per instruction of the offers program, measured in bankrun on the compiled
 * program (median of SAMPLES runs each), split into the program's own work and its CPI callees
 * (system and token programs), and the binary size. take_best is measured over 1, 5 and 10 offers
 * (10: the most a legacy transaction with a separate fee payer holds), filling each offer,
 * creating the taker's positions or increasing them; per offer: the slope between 1 and 10.
 *
 *   npm run bench:cu            (SAMPLES=20 by default)
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { OffersWorld, UNIT } from "../harness/offers-world";
import { DEPLOY_DIR, type TxResult } from "../harness/chain";
import { median, splitComputeUnits, type CuSplit } from "./cu-report";
import { exitOnError } from "../stack/config/cli";

const SAMPLES = Number(process.env.SAMPLES ?? 20);

async function main() {
  const w = await OffersWorld.create();
  const pid = w.client.program.programId.toBase58();
  const rows = new Map<string, CuSplit[]>();
  const record = (name: string, r: TxResult) => {
    if (!r.ok) throw new Error(`${name} failed: ${r.error}\n${r.logs.join("\n")}`);
    rows.set(name, [...(rows.get(name) ?? []), splitComputeUnits(r.logs, pid)]);
  };
  const users = [];
  for (let i = 0; i < 4; i++) users.push(await w.user(100_000n * UNIT));
  const [creator, t1, t2, stranger] = users;
  for (let i = 0; i < SAMPLES; i++) {
    const contract = await w.contract({ cutoffIn: 1_000n });
    const { r, offer } = await w.createOffer(creator, contract, { total: 80n * UNIT, target: 100n * UNIT });
    record("create_offer", r);
    record("take_offer (new position)", await w.take(t1, offer, 30n * UNIT));
    record("take_offer (existing position)", await w.take(t1, offer, 20n * UNIT));
    record("take_offer (fills the offer)", await w.take(t2, offer, 50n * UNIT));
    const { offer: o2 } = await w.createOffer(creator, contract, { total: 80n * UNIT, target: 100n * UNIT });
    await w.take(t2, o2, 10n * UNIT);
    record("close_offer (creator)", await w.close(creator.key, o2));
    const { offer: o3 } = await w.createOffer(creator, contract, { total: 8n * UNIT, target: 10n * UNIT });
    // An offer with an expiry (issue 26): created, taken before it, closed by anyone at it.
    const expiresAt = (await w.chain.now()) + 100n;
    const { r: re, offer: o4 } = await w.createOffer(creator, contract, { total: 8n * UNIT, target: 10n * UNIT, expiresAt });
    record("create_offer (with expiry)", re);
    record("take_offer (offer with expiry, new position)", await w.take(t1, o4, 5n * UNIT));
    await w.chain.setTime(expiresAt);
    record("close_offer (anyone, after expiry)", await w.close(stranger.key, o4));
    await w.chain.advance(1_000n);
    record("close_offer (anyone, after cutoff)", await w.close(stranger.key, o3));
    record("resolve_contract", await w.resolve(contract, i % 2 ? "sideA" : "sideB"));
    record("settle_position", await w.settle(w.positionOf(offer, t1)));
    const p = w.positionOf(offer, t2);
    await w.settle(p);
    const payer = w.chain.payer.publicKey;
    record("close_position", await w.send([await w.client.closePosition({ position: p, rentPayer: payer })]));
    record("close_offer_account", await w.closeOfferAccount(o3));
    const c2 = await w.contract({ cutoffIn: 10n, deadlineAfterCutoff: 10n });
    await w.chain.advance(21n);
    record("void_expired_contract", await w.send([await w.client.voidExpiredContract({ contract: c2 })]));
  }
  const ctx = w.chain;
  // create_contract, by the canonical bump of its address: every bump above it costs one
  // sha256 + one curve check in kit::pda::verify_canonical (the canonical-bump check).
  const byBump = new Map<string, number[]>();
  for (let i = 0; i < Math.max(SAMPLES * 4, 40); i++) {
    const now = await ctx.now();
    const [templateId, eventId] = [crypto.randomUUID(), crypto.randomUUID()];
    const bump = w.client.pda.contract(templateId, eventId)[1];
    const r = await w.send([await w.contractIx(now, { templateId, eventId, cutoffIn: 100n, deadlineAfterCutoff: 100n })], [w.authority]);
    record("create_contract", r);
    const key = bump >= 253 ? String(bump) : "<253";
    byBump.set(key, [...(byBump.get(key) ?? []), splitComputeUnits(r.logs, pid).ownExclInvoke]);
  }

  // withdraw_claim (and the claim credit it needs): the creator's token account is gone at close.
  for (let i = 0; i < SAMPLES; i++) {
    const contract = await w.contract({ cutoffIn: 1_000n });
    const u = await w.user(100n * UNIT);
    const { offer } = await w.createOffer(u, contract, { total: 8n * UNIT, target: 10n * UNIT });
    u.token = await w.mint.closeAccount(u.token, u.key);
    record("close_offer (refund credited to a new claim)", await w.close(u.key, offer));
    record("withdraw_claim", await w.withdrawClaim(u.key, u.token));
  }

  // take_best over n offers of 8 against 10 (creators on sideA), filling each: creating the
  // taker's positions, or increasing the ones a take_offer of 1 unit each made before.
  const SWEEPS = [1, 5, 10];
  for (let i = 0; i < SAMPLES; i++) {
    for (const n of SWEEPS) {
      for (const existing of [false, true]) {
        const contract = await w.contract({ cutoffIn: 1_000n });
        const offers = [];
        for (let j = 0; j < n; j++) offers.push((await w.createOffer(creator, contract, { total: 8n * UNIT, target: 10n * UNIT })).offer);
        if (existing) for (const o of offers) await w.take(t1, o, UNIT);
        const each = existing ? 9n * UNIT : 10n * UNIT;
        record(`take_best, ${n} offers (${existing ? "existing" : "new"} positions)`, await w.takeBest(t1, contract, offers, BigInt(n) * each));
      }
    }
  }

  const size = statSync(join(DEPLOY_DIR, "offers.so")).size;
  const header = "| instruction | total CU | CPI callees CU | CPIs | own CU (total - callees) | own CU excl. 1000/CPI invoke fee |";
  console.log(`offers.so: ${size} bytes; median of ${SAMPLES} samples per instruction\n`);
  console.log(header);
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const [name, xs] of rows) {
    const m = (k: keyof CuSplit) => median(xs.map((x) => x[k]));
    console.log(`| ${name} | ${m("total")} | ${m("callees")} | ${m("cpis")} | ${m("own")} | ${m("ownExclInvoke")} |`);
  }
  const slope = (kind: string) => {
    const at = (n: number) => median(rows.get(`take_best, ${n} offers (${kind})`)!.map((x) => x.total));
    return Math.round((at(10) - at(1)) / 9);
  };
  console.log(
    `\ntake_best CU per offer (slope from 1 to 10 offers): ${slope("new positions")} creating positions, ${slope("existing positions")} increasing them`,
  );
  console.log("\ncreate_contract own CU (excl. invoke fee) by the canonical bump of the contract's address:\n");
  console.log("| canonical bump | samples | median own CU excl. invoke |");
  console.log("|---|---:|---:|");
  for (const k of ["255", "254", "253", "<253"]) {
    const xs = byBump.get(k);
    if (xs) console.log(`| ${k} | ${xs.length} | ${median(xs)} |`);
  }
}

main().then(() => process.exit(0), exitOnError);
