/**
 * What anyone may do with a keypair on a real cluster, for the steal reviews of both programs:
 * empty a system account and deploy a program (loader v3) at its address.
 */
import { Keypair, PublicKey, SystemProgram, SYSVAR_CLOCK_PUBKEY, SYSVAR_RENT_PUBKEY, TransactionInstruction } from "@solana/web3.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEPLOY_DIR, type TestChain } from "../../harness/chain";
import { LOADER_V3, programDataAddress } from "../../idl/client/common";

/**
 * Deploys a real program (loader v3: buffer, writes, DeployWithMaxDataLen) at the address of the
 * keypair `program`, as anyone holding a keypair may on a real cluster. The address must be empty.
 */
export async function deployProgramAt(chain: TestChain, program: Keypair, payer: Keypair): Promise<void> {
  const elf = readFileSync(join(DEPLOY_DIR, "offers.so"));
  const buffer = Keypair.generate();
  const bufLen = 37 + elf.length;
  let r = await chain.send(
    [
      SystemProgram.createAccount({
        fromPubkey: payer.publicKey,
        newAccountPubkey: buffer.publicKey,
        lamports: Number(await chain.rentExempt(bufLen)),
        space: bufLen,
        programId: LOADER_V3,
      }),
      new TransactionInstruction({
        programId: LOADER_V3,
        keys: [
          { pubkey: buffer.publicKey, isSigner: false, isWritable: true },
          { pubkey: payer.publicKey, isSigner: false, isWritable: false },
        ],
        data: Buffer.from([0, 0, 0, 0]),
      }),
    ],
    [payer, buffer],
    payer,
  );
  if (!r.ok) throw new Error(`buffer: ${r.error}\n${r.logs.join("\n")}`);
  const CHUNK = 900;
  for (let off = 0; off < elf.length; off += CHUNK) {
    const bytes = elf.subarray(off, off + CHUNK);
    const data = Buffer.alloc(4 + 4 + 8 + bytes.length);
    data.writeUInt32LE(1, 0);
    data.writeUInt32LE(off, 4);
    data.writeBigUInt64LE(BigInt(bytes.length), 8);
    bytes.copy(data, 16);
    r = await chain.send(
      [
        new TransactionInstruction({
          programId: LOADER_V3,
          keys: [
            { pubkey: buffer.publicKey, isSigner: false, isWritable: true },
            { pubkey: payer.publicKey, isSigner: true, isWritable: false },
          ],
          data,
        }),
      ],
      [payer],
      payer,
    );
    if (!r.ok) throw new Error(`write: ${r.error}`);
  }
  const programData = programDataAddress(program.publicKey);
  const deploy = Buffer.alloc(12);
  deploy.writeUInt32LE(2, 0);
  deploy.writeBigUInt64LE(BigInt(elf.length), 4);
  r = await chain.send(
    [
      SystemProgram.createAccount({
        fromPubkey: payer.publicKey,
        newAccountPubkey: program.publicKey,
        lamports: Number(await chain.rentExempt(36)),
        space: 36,
        programId: LOADER_V3,
      }),
      new TransactionInstruction({
        programId: LOADER_V3,
        keys: [
          { pubkey: payer.publicKey, isSigner: true, isWritable: true },
          { pubkey: programData, isSigner: false, isWritable: true },
          { pubkey: program.publicKey, isSigner: false, isWritable: true },
          { pubkey: buffer.publicKey, isSigner: false, isWritable: true },
          { pubkey: SYSVAR_RENT_PUBKEY, isSigner: false, isWritable: false },
          { pubkey: SYSVAR_CLOCK_PUBKEY, isSigner: false, isWritable: false },
          { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
          { pubkey: payer.publicKey, isSigner: true, isWritable: false },
        ],
        data: deploy,
      }),
    ],
    [payer, program],
    payer,
  );
  if (!r.ok) throw new Error(`deploy: ${r.error}\n${r.logs.join("\n")}`);
  const acc = await chain.account(program.publicKey);
  if (!acc || !acc.owner.equals(LOADER_V3) || acc.data.readUInt32LE(0) !== 2) throw new Error("deploy did not make a program account");
}

/** Moves every lamport out of a system account (it is deleted at the end of the transaction). */
export async function drain(chain: TestChain, k: Keypair, to: PublicKey): Promise<void> {
  const lamports = Number(await chain.lamports(k.publicKey));
  const r = await chain.send([SystemProgram.transfer({ fromPubkey: k.publicKey, toPubkey: to, lamports })], [k], chain.payer);
  if (!r.ok) throw new Error(`drain: ${r.error}`);
}
