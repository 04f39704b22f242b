/** A USDC-like mint (6 decimals) and token accounts on the test chain, through SPL Token. */
import {
  MINT_SIZE,
  ACCOUNT_SIZE,
  TOKEN_PROGRAM_ID,
  createInitializeMint2Instruction,
  createInitializeAccount3Instruction,
  createMintToInstruction,
  AccountLayout,
  createTransferInstruction,
  createCloseAccountInstruction,
  createSetAuthorityInstruction,
  AuthorityType,
  createFreezeAccountInstruction,
} from "@solana/spl-token";
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import type { TestChain } from "./chain";

export class TestMint {
  private constructor(
    readonly chain: TestChain,
    readonly mint: PublicKey,
    readonly authority: Keypair,
  ) {}

  static async create(chain: TestChain, decimals = 6, freezeAuthority: PublicKey | null = null): Promise<TestMint> {
    const mint = Keypair.generate();
    const authority = chain.payer;
    const r = await chain.send(
      [
        SystemProgram.createAccount({
          fromPubkey: chain.payer.publicKey,
          newAccountPubkey: mint.publicKey,
          lamports: Number(await chain.rentExempt(MINT_SIZE)),
          space: MINT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        }),
        createInitializeMint2Instruction(mint.publicKey, decimals, authority.publicKey, freezeAuthority),
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
      SystemProgram.createAccount({
        fromPubkey: this.chain.payer.publicKey,
        newAccountPubkey: acc.publicKey,
        lamports: Number(await this.chain.rentExempt(ACCOUNT_SIZE)),
        space: ACCOUNT_SIZE,
        programId: TOKEN_PROGRAM_ID,
      }),
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

  /** The balance of a token account, 0 when it does not exist (closed). */
  async balanceOrZero(account: PublicKey): Promise<bigint> {
    return (await this.chain.account(account)) ? this.balance(account) : 0n;
  }

  /** `owner` moves `amount` from one of its token accounts to any other. */
  async transfer(from: PublicKey, to: PublicKey, owner: Keypair, amount: bigint): Promise<void> {
    const r = await this.chain.send([createTransferInstruction(from, to, owner.publicKey, amount)], [owner]);
    if (!r.ok) throw new Error(`transfer: ${r.error}`);
  }

  /**
   * `owner` empties its token account `account` into a new account of its own and closes it (the
   * lamports go to the owner); returns the new account. A recorded payout account gone this way
   * cannot receive any more.
   */
  async closeAccount(account: PublicKey, owner: Keypair): Promise<PublicKey> {
    const next = await this.account(owner.publicKey);
    const amount = await this.balance(account);
    const ixs = [createCloseAccountInstruction(account, owner.publicKey, owner.publicKey)];
    if (amount > 0n) ixs.unshift(createTransferInstruction(account, next, owner.publicKey, amount));
    const r = await this.chain.send(ixs, [owner]);
    if (!r.ok) throw new Error(`close token account: ${r.error}`);
    return next;
  }

  /** Freezes `account` (the mint's freeze authority must be the chain's payer). */
  async freeze(account: PublicKey): Promise<void> {
    const r = await this.chain.send([createFreezeAccountInstruction(account, this.mint, this.authority.publicKey)]);
    if (!r.ok) throw new Error(`freeze: ${r.error}`);
  }

  /** `owner` hands its token account to `newOwner` (SPL SetAuthority, AccountOwner). */
  async reown(account: PublicKey, owner: Keypair, newOwner: PublicKey): Promise<void> {
    const r = await this.chain.send([createSetAuthorityInstruction(account, owner.publicKey, AuthorityType.AccountOwner, newOwner)], [owner]);
    if (!r.ok) throw new Error(`set owner: ${r.error}`);
  }
}
