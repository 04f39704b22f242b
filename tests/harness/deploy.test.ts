/**
 * The engines deploy the programs as a real cluster does: upgradeable (loader v3), a program
 * account pointing at its ProgramData account, which names the upgrade authority and holds the
 * ELF. Runs once per SVM project (SVM_ENGINE).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair, type PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { OFFERS_PROGRAM_ID } from "../../idl/client/offers";
import { POOLS_PROGRAM_ID } from "../../idl/client/pools";
import { DEPLOY_DIR, TestChain } from "../../harness/chain";
import { LOADER_V3, PROGRAM_DATA_METADATA_SIZE, decodeProgramData, programDataAddress } from "../../harness/engines";
import { OffersWorld } from "../../harness/offers-world";
import { PoolsWorld } from "../../harness/pools-world";

const PROGRAMS = [
  { name: "offers", programId: OFFERS_PROGRAM_ID },
  { name: "pools", programId: POOLS_PROGRAM_ID },
];

async function expectDeployed(chain: TestChain, name: string, programId: PublicKey, authority: PublicKey): Promise<void> {
  const dataAddress = programDataAddress(programId);
  const program = await chain.account(programId);
  expect(program).not.toBeNull();
  expect(program!.owner.equals(LOADER_V3)).toBe(true);
  expect(program!.executable).toBe(true);
  expect(program!.data.length).toBe(36);
  expect(program!.data.readUInt32LE(0)).toBe(2);
  expect(program!.data.subarray(4, 36).equals(dataAddress.toBuffer())).toBe(true);
  expect(BigInt(program!.lamports)).toBeGreaterThanOrEqual(await chain.rentExempt(36));

  const data = await chain.account(dataAddress);
  expect(data).not.toBeNull();
  expect(data!.owner.equals(LOADER_V3)).toBe(true);
  expect(data!.executable).toBe(false);
  expect(data!.data.readUInt32LE(0)).toBe(3);
  expect(data!.data[12]).toBe(1);
  const state = decodeProgramData(data!.data);
  expect(state.slot).toBe(0n);
  expect(state.upgradeAuthority?.toBase58()).toBe(authority.toBase58());
  const elf = readFileSync(join(DEPLOY_DIR, `${name}.so`));
  expect(data!.data.length).toBe(PROGRAM_DATA_METADATA_SIZE + elf.length);
  expect(state.elf.equals(elf)).toBe(true);
  expect(BigInt(data!.lamports)).toBeGreaterThanOrEqual(await chain.rentExempt(data!.data.length));
}

describe(`upgradeable deployment (${process.env.SVM_ENGINE || "bankrun"})`, () => {
  it("programs are loader-v3 programs whose ProgramData names the chain's (funded) upgrade authority", async () => {
    const chain = await TestChain.start(PROGRAMS);
    expect(chain.upgradeAuthority).toBeInstanceOf(Keypair);
    expect(await chain.lamports(chain.upgradeAuthority.publicKey)).toBeGreaterThan(0n);
    for (const p of PROGRAMS) await expectDeployed(chain, p.name, p.programId, chain.upgradeAuthority.publicKey);
  });

  it("a given upgrade authority is the one deployed", async () => {
    const authority = Keypair.generate();
    const chain = await TestChain.start(PROGRAMS, { upgradeAuthority: authority });
    expect(chain.upgradeAuthority).toBe(authority);
    expect(await chain.lamports(authority.publicKey)).toBeGreaterThan(0n);
    for (const p of PROGRAMS) await expectDeployed(chain, p.name, p.programId, authority.publicKey);
  });

  it("both programs run from their ProgramData accounts", async () => {
    const chain = await TestChain.start(PROGRAMS);
    const offers = await OffersWorld.create({ chain });
    const contract = await offers.contract();
    expect((await offers.contractAccount(contract)).cutoffAt).toBeGreaterThan(0n);
    const pools = await PoolsWorld.create({ chain });
    expect((await pools.config()).feeBps).toBe(500);
  });
});
