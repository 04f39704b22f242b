/** A USDC-like mint (6 decimals) and token accounts on the test chain, through SPL Token. */
import {
  MINT_SIZE, ACCOUNT_SIZE, TOKEN_PROGRAM_ID, createInitializeMint2Instruction, createInitializeAccount3Instruction,
  createMintToInstruction, AccountLayout,
} from "@solana/spl-token";
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import type { TestChain } from "./chain";

export class TestMint {
  private constructor(readonly chain: TestChain, readonly mint: PublicKey, readonly authority: Keypair) {}

  static async create(chain: TestChain, decimals = 6): Promise<TestMint> {
    const mint = Keypair.generate();
    const authority = chain.payer;
        const r = await chain.send(
      [
        SystemProgram.createAccount({ fromPubkey: chain.payer.publicKey, newAccountPubkey: mint.publicKey, lamports: Number(await chain.rentExempt(MINT_SIZE)), space: MINT_SIZE, programId: TOKEN_PROGRAM_ID }),
        createInitializeMint2Instruction(mint.publicKey, decimals, authority.publicKey, null),
      ],
      [mint],
    );
    if (!r.ok) throw new Error(`mint: ${r.error}`);
    return new TestMint(chain, mint.publicKey, authority);
  }

  /** A new token account of this mint owned by `owner`, holding `amount`. */
  async account(owner: PublicKey, amount = 0n): Promise<PublicKey> {
    const acc = Keypair.generate();
        const ixs = [
      SystemProgram.createAccount({ fromPubkey: this.chain.payer.publicKey, newAccountPubkey: acc.publicKey, lamports: Number(await this.chain.rentExempt(ACCOUNT_SIZE)), space: ACCOUNT_SIZE, programId: TOKEN_PROGRAM_ID }),
      createInitializeAccount3Instruction(acc.publicKey, this.mint, owner),
    ];
    if (amount > 0n) ixs.push(createMintToInstruction(this.mint, acc.publicKey, this.authority.publicKey, amount));
    const r = await this.chain.send(ixs, [acc]);
    if (!r.ok) throw new Error(`token account: ${r.error}`);
    return acc.publicKey;
  }

  async mintTo(account: PublicKey, amount: bigint): Promise<void> {
    const r = await this.chain.send([createMintToInstruction(this.mint, account, this.authority.publicKey, amount)]);
    if (!r.ok) throw new Error(`mint to: ${r.error}`);
  }

  async balance(account: PublicKey): Promise<bigint> {
    const a = await this.chain.account(account);
    if (!a) throw new Error(`no token account ${account.toBase58()}`);
    return AccountLayout.decode(a.data).amount;
  }
}
