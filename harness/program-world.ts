/**
 * What an offers and a pools deployment on the test chain share (harness/offers-world.ts,
 * harness/pools-world.ts): the chain, a mint, the config's authority and treasury, funded users
 * with a token account each, sending, raw account reads, claims and token balances.
 */
import type { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import type { ClaimAccount, ProgramPdas } from "../idl/client/common";
import type { TestChain, TxResult } from "./chain";
import { TestMint } from "./token";

export const UNIT = 1_000_000n;

export interface User {
  key: Keypair;
  token: PublicKey;
}

/** The parts of a program client a world uses whatever the program. */
export interface WorldClient {
  readonly pda: ProgramPdas;
  readonly program: { programId: PublicKey };
  withdrawClaim(a: { owner: PublicKey; destination: PublicKey; rentPayer: PublicKey; overrides?: { claim?: PublicKey } }): Promise<TransactionInstruction>;
}

/** A new deployment's mint (its freeze authority `freezeAuthority`), the config's authority and its treasury token account. */
export async function deploymentParts(
  chain: TestChain,
  freezeAuthority: PublicKey | null = null,
): Promise<{ mint: TestMint; authority: Keypair; treasury: PublicKey }> {
  const mint = await TestMint.create(chain, 6, freezeAuthority);
  const authority = await chain.fundedKeypair();
  const treasury = await mint.account(authority.publicKey);
  return { mint, authority, treasury };
}

export abstract class ProgramWorld<C extends WorldClient> {
  readonly users: User[] = [];
  private nonce = 0n;

  protected constructor(
    readonly chain: TestChain,
    readonly mint: TestMint,
    readonly client: C,
    readonly authority: Keypair,
    /** The config's fee treasury; `setTreasury` moves it. */
    public treasury: PublicKey,
  ) {}

  protected abstract decodeClaim(data: Buffer): ClaimAccount;

  /** Runs initialize_config as the program's upgrade authority; a refusal ends the set-up. */
  protected async initialize(ix: TransactionInstruction): Promise<void> {
    const r = await this.send([ix], [this.chain.upgradeAuthority]);
    if (!r.ok) throw new Error(`initialize_config failed: ${r.error}\n${r.logs.join("\n")}`);
  }

  send(ixs: TransactionInstruction[], signers: Keypair[] = []): Promise<TxResult> {
    return this.chain.send(ixs, signers);
  }

  async user(balance = 1_000n * UNIT): Promise<User> {
    const key = await this.chain.fundedKeypair();
    const u = { key, token: await this.mint.account(key.publicKey, balance) };
    this.users.push(u);
    return u;
  }

  nextNonce(): bigint {
    return ++this.nonce;
  }

  /** The account at `address` decoded; it must exist. */
  protected async read<T>(address: PublicKey, decode: (data: Buffer) => T): Promise<T> {
    const a = await this.chain.account(address);
    if (!a) throw new Error(`account ${address.toBase58()} does not exist`);
    return decode(a.data);
  }

  /** The owner's claim, or null when it has none (an address only pre-funded holds none either). */
  async claim(owner: PublicKey): Promise<ClaimAccount | null> {
    const a = await this.chain.account(this.client.pda.claim(owner)[0]);
    return a && a.owner.equals(this.client.program.programId) ? this.decodeClaim(a.data) : null;
  }

  /** The owner withdraws its whole claim to `destination`; the claim's rent goes back to its recorded payer. */
  protected async withdrawClaimAs(owner: Keypair, destination: PublicKey): Promise<TxResult> {
    const c = await this.claim(owner.publicKey);
    const ix = await this.client.withdrawClaim({ owner: owner.publicKey, destination, rentPayer: c?.rentPayer ?? this.chain.payer.publicKey });
    return this.send([ix], [owner]);
  }

  /**
   * `thief`'s withdraw_claim naming the account at `claim` in its claim's place (another
   * program's Claim, another account type), to its own token account, itself as the rent payer.
   */
  substitutedClaimIx(thief: User, claim: PublicKey): Promise<TransactionInstruction> {
    return this.client.withdrawClaim({ owner: thief.key.publicKey, destination: thief.token, rentPayer: thief.key.publicKey, overrides: { claim } });
  }

  /** A token balance, 0 for an account that no longer exists (closed by its owner). */
  balanceOf(account: PublicKey): Promise<bigint> {
    return this.mint.balanceOrZero(account);
  }

  /** Token balances of every user, the vault and the treasury; their sum changes only when a user moves tokens elsewhere. */
  async balances(): Promise<{ users: bigint[]; vault: bigint; treasury: bigint; total: bigint }> {
    const users = await Promise.all(this.users.map((u) => this.balanceOf(u.token)));
    const vault = await this.mint.balance(this.client.pda.vault()[0]);
    const treasury = await this.mint.balance(this.treasury);
    return { users, vault, treasury, total: users.reduce((a, b) => a + b, 0n) + vault + treasury };
  }
}
