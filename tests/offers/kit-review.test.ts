/**
 * Review of the kit-scaffold refactor (be47c22) for the offers program: the paths moved into kit
 * (kit::setup::{update, set_treasury, authorised}, kit::claim::{credit, withdraw}) still pin every
 * account with the same check and the same (program-specific where it was) error. Every test
 * asserts the SAFE behaviour.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Keypair, PublicKey } from "@solana/web3.js";
import { LAUNCH_LIMITS, OFFERS_ERRORS } from "../../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../../idl/client/pools";
import { OffersWorld, UNIT, type User } from "../../harness/offers-world";
import { TestMint } from "../../harness/token";
import type { TxResult } from "../../harness/chain";
import { expectError as expectErr, expectOk } from "../support/expect";
import { forgedClaim } from "../support/forged-claim";

const expectError = (r: TxResult, name: string) => expectErr(r, name, OFFERS_ERRORS);

let w: OffersWorld;
beforeAll(async () => {
  w = await OffersWorld.create();
});

async function users(n: number): Promise<User[]> {
  const out: User[] = [];
  for (let i = 0; i < n; i++) out.push(await w.user());
  return out;
}

/** A copy of the canonical Config with `authority` (and optionally `vault`) replaced, at a fresh address owned by offers. */
async function forgedConfig(authority: PublicKey, vault?: PublicKey): Promise<PublicKey> {
  const real = (await w.chain.account(w.client.pda.config()[0]))!;
  const data = Buffer.from(real.data);
  authority.toBuffer().copy(data, 8);
  if (vault) vault.toBuffer().copy(data, 8 + 96);
  const fake = Keypair.generate().publicKey;
  w.chain.setAccount(fake, { ...real, data });
  return fake;
}

describe("offers kit review: Config instructions and authority checks (kit::setup)", () => {
  it("a forged Config naming the attacker as authority is refused before it is read; a non-authority gets the program's Unauthorized", async () => {
    const [mallory] = await users(1);
    const before = await w.config();
    const fake = await forgedConfig(mallory.key.publicKey);
    const upd = (authority: PublicKey, config?: PublicKey) =>
      w.client.updateConfig({ authority, feeBps: 10_000, offersEnabled: true, limits: LAUNCH_LIMITS, config });
    expectError(await w.send([await upd(mallory.key.publicKey, fake)], [mallory.key]), "AccountMismatch");
    expectError(await w.send([await upd(mallory.key.publicKey)], [mallory.key]), "Unauthorized");
    const st = (authority: PublicKey, config?: PublicKey) => w.client.setTreasury({ authority, treasury: mallory.token, config });
    expectError(await w.send([await st(mallory.key.publicKey, fake)], [mallory.key]), "AccountMismatch");
    expectError(await w.send([await st(mallory.key.publicKey)], [mallory.key]), "Unauthorized");
    // create_contract (kit::setup::authorised) with the forged Config, and by a non-authority.
    const now = await w.chain.now();
    const cc = (config?: PublicKey) => w.contractIx(now, { by: mallory.key.publicKey, cutoffIn: 100n, deadlineAfterCutoff: 100n, config });
    expectError(await w.send([await cc(fake)], [mallory.key]), "AccountMismatch");
    expectError(await w.send([await cc()], [mallory.key]), "Unauthorized");
    // Unsigned real authority; read-only config.
    const unsigned = await upd(w.authority.publicKey);
    unsigned.keys[0].isSigner = false;
    expectError(await w.send([unsigned]), "MissingSignature");
    const ro = await upd(w.authority.publicKey);
    ro.keys[1].isWritable = false;
    expectError(await w.send([ro], [w.authority]), "AccountNotWritable");
    // set_treasury: another mint's account, the vault.
    const other = await TestMint.create(w.chain);
    const foreign = await other.account(w.authority.publicKey);
    expectError(await w.send([await w.client.setTreasury({ authority: w.authority.publicKey, treasury: foreign })], [w.authority]), "AccountMismatch");
    expectError(
      await w.send([await w.client.setTreasury({ authority: w.authority.publicKey, treasury: w.client.pda.vault()[0] })], [w.authority]),
      "AccountMismatch",
    );
    const after = await w.config();
    expect(after.feeBps).toBe(before.feeBps);
    expect(after.treasury.toBase58()).toBe(before.treasury.toBase58());
  });
});

describe("offers kit review: withdraw_claim (kit::claim::withdraw) and credit (kit::claim::credit)", () => {
  it("every account of withdraw_claim is pinned, with the program's WrongMint / NotTokenOwner; another program's Claim is refused", async () => {
    const [carol, alice, mallory] = await users(3);
    const contract = await w.contract({ cutoffIn: 3_600n });
    const { r, offer } = await w.createOffer(carol, contract, { total: 8n * UNIT, target: 10n * UNIT });
    expectOk(r);
    expectOk(await w.take(alice, offer, 5n * UNIT));
    const position = w.positionOf(offer, alice);
    expectOk(await w.resolve(contract, "void"));
    expectOk(await w.close(carol.key, offer));
    const aliceNew = await w.mint.closeAccount(alice.token, alice.key);
    expectOk(await w.settle(position));
    const c = (await w.claim(alice.key.publicKey))!;
    expect(c.amount).toBeGreaterThan(0n);
    const vault = w.client.pda.vault()[0];
    const vaultBefore = await w.mint.balance(vault);
    const wd = (
      o: {
        owner?: PublicKey;
        destination?: PublicKey;
        rentPayer?: PublicKey;
        overrides?: Partial<Record<"config" | "vault" | "claim" | "tokenProgram", PublicKey>>;
      } = {},
    ) =>
      w.client.withdrawClaim({
        owner: o.owner ?? alice.key.publicKey,
        destination: o.destination ?? aliceNew,
        rentPayer: o.rentPayer ?? c.rentPayer,
        overrides: o.overrides,
      });

    const unsigned = await wd();
    unsigned.keys[0].isSigner = false;
    expectError(await w.send([unsigned]), "MissingSignature");
    expectError(await w.send([await wd({ overrides: { tokenProgram: Keypair.generate().publicKey } })], [alice.key]), "WrongProgram");
    const fake = await forgedConfig(alice.key.publicKey, mallory.token);
    expectError(await w.send([await wd({ overrides: { config: fake, vault: mallory.token } })], [alice.key]), "AccountMismatch");
    expectError(await w.send([await wd({ overrides: { vault: mallory.token } })], [alice.key]), "AccountMismatch");
    expectError(await w.send([await wd({ rentPayer: mallory.key.publicKey })], [alice.key]), "AccountMismatch");
    const other = await TestMint.create(w.chain);
    expectError(await w.send([await wd({ destination: await other.account(alice.key.publicKey) })], [alice.key]), "WrongMint");
    expectError(await w.send([await wd({ destination: mallory.token })], [alice.key]), "NotTokenOwner");
    expectError(await w.send([await wd({ destination: vault })], [alice.key]), "NotTokenOwner");
    const ro = await wd();
    ro.keys[2].isWritable = false;
    expectError(await w.send([ro], [alice.key]), "AccountNotWritable");
    // A pools-owned Claim (same kit layout and discriminator) naming mallory, for the whole vault.
    const poolsClaim = await forgedClaim(w.chain, POOLS_PROGRAM_ID, mallory.key.publicKey, vaultBefore, mallory.key.publicKey);
    expectError(await w.send([await w.substitutedClaimIx(mallory, poolsClaim)], [mallory.key]), "WrongAccountOwner");
    // Other offers accounts in the claim's place.
    for (const acct of [position, contract, w.client.pda.config()[0]]) {
      expectError(await w.send([await w.substitutedClaimIx(mallory, acct)], [mallory.key]), "WrongAccountType");
    }
    expect(await w.mint.balance(vault)).toBe(vaultBefore);
    expect((await w.claim(alice.key.publicKey))!.amount).toBe(c.amount);
    const destBefore = await w.mint.balance(aliceNew);
    expectOk(await w.withdrawClaim(alice.key, aliceNew));
    expect((await w.mint.balance(aliceNew)) - destBefore).toBe(c.amount);
    expect(await w.mint.balance(vault)).toBe(vaultBefore - c.amount);
    expect(await w.claim(alice.key.publicKey)).toBeNull();
  });
});
